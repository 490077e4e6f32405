package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/catalog"
	"github.com/mediacatalog/service/shared/postgres"
)

// contribFixture is a small catalog of its own: clients 1 and 2, users alice (1)
// and bob (2), and contributors whose ids the tests name.
type contribFixture struct {
	db      *testenv.DB
	counter *postgres.QueryCounter
}

const (
	contribAlice int64 = 1
	contribBob   int64 = 2
)

func newContribFixture(t *testing.T) contribFixture {
	t.Helper()
	counter := &postgres.QueryCounter{}
	db := testenv.NewDB(t, postgres.WithTracer(counter))
	contribExec(t, db, `
INSERT INTO clients (id, name) VALUES (1, 'Manga'), (2, 'Comics');
INSERT INTO users (id, slug, username) VALUES (1, 'alice', 'alice'), (2, 'bob', 'bob');
INSERT INTO contributors (id, client_id, first_name, last_name, slug, gender, type, public, image) VALUES
	(1, 1, 'Naoki', 'Urasawa', 'naoki-urasawa', 'male', 'mangaka', true, 'contributors/1/abc'),
	(2, 1, 'Takehiko', 'Inoue', 'takehiko-inoue', NULL, NULL, false, NULL),
	(3, 1, 'Rumiko', 'Takahashi', 'rumiko-takahashi', 'female', NULL, false, NULL),
	(4, 1, 'CLAMP', NULL, 'clamp', NULL, 'group', false, NULL),
	(5, 1, 'Osamu', 'Tezuka', 'osamu-tezuka', NULL, NULL, false, NULL),
	(6, 1, 'Naoko', 'Takeuchi', 'naoko-takeuchi', NULL, NULL, false, NULL),
	(7, 1, '100%', 'Percent_Man', '100-percent-man', NULL, NULL, false, NULL),
	(8, 2, 'Alan', 'Moore', 'alan-moore', NULL, NULL, false, NULL);
INSERT INTO contributor_links (id, contributor_id, url) VALUES
	(1, 1, 'https://www.Urasawa-Naoki.com/profile'),
	(2, 1, 'en.wikipedia.org/wiki/Naoki_Urasawa'),
	(3, 2, 'https://inoue.example/');
INSERT INTO contributor_aliases (id, contributor_id, title, language) VALUES
	(1, 1, '浦沢直樹', 'Japanese'), (2, 1, 'Urasawa', 'English'), (3, 2, '井上雄彦', 'Japanese');
INSERT INTO contributor_descriptions (id, contributor_id, description, language, source) VALUES
	(1, 1, 'Manga artist.', 'English', 'Wikipedia'), (2, 1, 'Mangaka.', 'German', ''),
	(3, 2, 'Author of Slam Dunk.', 'English', '');
INSERT INTO contributor_relations (id, contributor_id, related_id, type) VALUES
	(1, 1, 2, 'friend'), (2, 1, 3, 'colleague'), (3, 2, 1, 'friend'), (4, 3, 1, 'colleague');
INSERT INTO series (id, client_id, name, slug, type) VALUES (1, 1, 'Monster', 'monster', 'manga');
INSERT INTO series_contributors (series_id, contributor_id, role) VALUES (1, 1, 'author'), (1, 2, 'artist');
SELECT setval(pg_get_serial_sequence(t, 'id'), 100) FROM unnest(ARRAY['contributors', 'contributor_links',
	'contributor_aliases', 'contributor_descriptions', 'contributor_relations', 'users']) AS t;
`)
	counter.Reset()
	return contribFixture{db: db, counter: counter}
}

func contribExec(t *testing.T, db *testenv.DB, sql string, args ...any) {
	t.Helper()
	if _, err := db.Pool.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("exec %.80q: %v", sql, err)
	}
}

func contribInt(t *testing.T, db *testenv.DB, sql string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := db.Pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("query %.80q: %v", sql, err)
	}
	return n
}

// contributorState is everything stored about a contributor, as JSON, to prove that a
// rejected edit changed nothing.
func contribState(t *testing.T, db *testenv.DB, id int64) string {
	t.Helper()
	var s string
	err := db.Pool.QueryRow(context.Background(), `
SELECT jsonb_build_object(
	'row', (SELECT to_jsonb(c) FROM contributors c WHERE c.id = $1),
	'links', (SELECT jsonb_agg(to_jsonb(x) ORDER BY x.id) FROM contributor_links x WHERE x.contributor_id = $1),
	'aliases', (SELECT jsonb_agg(to_jsonb(x) ORDER BY x.id) FROM contributor_aliases x WHERE x.contributor_id = $1),
	'descriptions', (SELECT jsonb_agg(to_jsonb(x) ORDER BY x.id) FROM contributor_descriptions x WHERE x.contributor_id = $1),
	'relations', (SELECT jsonb_agg(to_jsonb(x) ORDER BY x.id) FROM contributor_relations x WHERE x.contributor_id = $1),
	'locks', (SELECT jsonb_agg(to_jsonb(x)) FROM contributor_locks x WHERE x.contributor_id = $1))::text`, id).Scan(&s)
	if err != nil {
		t.Fatalf("contributor state %d: %v", id, err)
	}
	return s
}

func contribWantCode(t *testing.T, err error, want apperr.Code, msg string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatalf("error %v, want none", err)
		}
		return
	}
	e, ok := apperr.As(err)
	if !ok || e.Code != want || (msg != "" && e.Message != msg) {
		t.Fatalf("error %v, want %s %q", err, want, msg)
	}
}

func TestContributorsList(t *testing.T) {
	f := newContribFixture(t)
	ctx := context.Background()
	contribExec(t, f.db, `INSERT INTO contributor_locks (contributor_id, locked_by, expires_at) VALUES
		(1, 1, now() + interval '10 minutes'), (2, 2, now() - interval '1 second')`)
	all := catalog.ContributorQuery{Client: 1, Limit: 100}
	tests := []struct {
		name      string
		q         func(q catalog.ContributorQuery) catalog.ContributorQuery
		wantIDs   []int64
		wantTotal int64
	}{
		{"name-asc by first name, last name, id", func(q catalog.ContributorQuery) catalog.ContributorQuery { return q },
			[]int64{7, 4, 1, 6, 5, 3, 2}, 7},
		{"name-desc", func(q catalog.ContributorQuery) catalog.ContributorQuery { q.Descending = true; return q },
			[]int64{2, 3, 5, 6, 1, 4, 7}, 7},
		{"search first name, any case", func(q catalog.ContributorQuery) catalog.ContributorQuery { q.Search = "naO"; return q },
			[]int64{1, 6}, 2},
		{"search last name", func(q catalog.ContributorQuery) catalog.ContributorQuery { q.Search = "taka"; return q },
			[]int64{3}, 1},
		{"search full name across the space", func(q catalog.ContributorQuery) catalog.ContributorQuery { q.Search = "ki ura"; return q },
			[]int64{1}, 1},
		{"percent sign is literal", func(q catalog.ContributorQuery) catalog.ContributorQuery { q.Search = "0%"; return q },
			[]int64{7}, 1},
		{"underscore is literal", func(q catalog.ContributorQuery) catalog.ContributorQuery { q.Search = "t_m"; return q },
			[]int64{7}, 1},
		{"no match", func(q catalog.ContributorQuery) catalog.ContributorQuery { q.Search = "zzz"; return q },
			[]int64{}, 0},
		{"limit and offset", func(q catalog.ContributorQuery) catalog.ContributorQuery { q.Limit, q.Offset = 2, 1; return q },
			[]int64{4, 1}, 7},
		{"offset past the end keeps the total", func(q catalog.ContributorQuery) catalog.ContributorQuery { q.Offset = 50; return q },
			[]int64{}, 7},
		{"limit zero", func(q catalog.ContributorQuery) catalog.ContributorQuery { q.Limit = 0; return q },
			[]int64{}, 7},
		{"largest safe limit", func(q catalog.ContributorQuery) catalog.ContributorQuery { q.Limit = 9007199254740991; return q },
			[]int64{7, 4, 1, 6, 5, 3, 2}, 7},
		{"other client", func(q catalog.ContributorQuery) catalog.ContributorQuery { q.Client = 2; return q },
			[]int64{8}, 1},
		{"unknown client", func(q catalog.ContributorQuery) catalog.ContributorQuery { q.Client = 99; return q },
			[]int64{}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.counter.Reset()
			page, err := f.db.Contributors(ctx, tt.q(all))
			if err != nil {
				t.Fatal(err)
			}
			if n := f.counter.Count(); n != 1 {
				t.Errorf("%d queries, want 1", n)
			}
			ids := []int64{}
			for _, c := range page.Contributors {
				ids = append(ids, c.ID)
			}
			if !slices.Equal(ids, tt.wantIDs) || page.Total != tt.wantTotal {
				t.Errorf("ids %v total %d, want %v total %d", ids, page.Total, tt.wantIDs, tt.wantTotal)
			}
		})
	}

	t.Run("items", func(t *testing.T) {
		page, err := f.db.Contributors(ctx, catalog.ContributorQuery{Client: 1, Search: "a", Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		byID := map[int64]catalog.ContributorListItem{}
		for _, c := range page.Contributors {
			byID[c.ID] = c
		}
		got, _ := json.Marshal([]catalog.ContributorListItem{byID[1], byID[2], byID[4]})
		want := `[{"id":1,"first_name":"Naoki","last_name":"Urasawa","slug":"naoki-urasawa","image":"contributors/1/abc","locked_by":{"id":1,"username":"alice"}},` +
			`{"id":2,"first_name":"Takehiko","last_name":"Inoue","slug":"takehiko-inoue","image":"","locked_by":null},` +
			`{"id":4,"first_name":"CLAMP","last_name":null,"slug":"clamp","image":"","locked_by":null}]`
		if string(got) != want {
			t.Errorf("items\n got %s\nwant %s", got, want)
		}
	})
}

func TestContributorDetail(t *testing.T) {
	f := newContribFixture(t)
	ctx := context.Background()

	t.Run("shape", func(t *testing.T) {
		f.counter.Reset()
		c, err := f.db.Contributor(ctx, 1, catalog.LockRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if n := f.counter.Count(); n != 1 {
			t.Errorf("%d queries, want 1", n)
		}
		got, _ := json.Marshal(c)
		want := `{"id":1,"first_name":"Naoki","last_name":"Urasawa","slug":"naoki-urasawa","image":"contributors/1/abc",` +
			`"gender":"male","type":"mangaka","public":true,` +
			`"links":[{"url":"https://www.Urasawa-Naoki.com/profile","domain":"urasawa-naoki.com"},{"url":"https://en.wikipedia.org/wiki/Naoki_Urasawa","domain":"en.wikipedia.org"}],` +
			`"aliases":[{"id":1,"title":"浦沢直樹","language":"Japanese"},{"id":2,"title":"Urasawa","language":"English"}],` +
			`"descriptions":[{"id":1,"description":"Manga artist.","language":"English","source":"Wikipedia"},{"id":2,"description":"Mangaka.","language":"German","source":""}],` +
			`"relations":[{"id":1,"relation_id":2,"type":"friend","name":"Takehiko Inoue","image":"","slug":"takehiko-inoue"},` +
			`{"id":2,"relation_id":3,"type":"colleague","name":"Rumiko Takahashi","image":"","slug":"rumiko-takahashi"}]}`
		if string(got) != want {
			t.Errorf("detail\n got %s\nwant %s", got, want)
		}
	})

	t.Run("empty arrays and unset fields", func(t *testing.T) {
		c, err := f.db.Contributor(ctx, 4, catalog.LockRequest{})
		if err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal(c)
		want := `{"id":4,"first_name":"CLAMP","last_name":null,"slug":"clamp","image":"","gender":"","type":"group","public":false,` +
			`"links":[],"aliases":[],"descriptions":[],"relations":[]}`
		if string(got) != want {
			t.Errorf("detail\n got %s\nwant %s", got, want)
		}
	})

	t.Run("not found", func(t *testing.T) {
		for _, lock := range []catalog.LockRequest{{}, {By: contribAlice, TTL: time.Minute}} {
			_, err := f.db.Contributor(ctx, 999, lock)
			contribWantCode(t, err, apperr.NotFound, postgres.MsgContributorNotFound)
		}
		if n := contribInt(t, f.db, `SELECT count(*) FROM contributor_locks`); n != 0 {
			t.Errorf("%d locks after reading unknown contributors", n)
		}
	})

	type lockRow struct {
		by               int64
		acquired, expiry time.Time
	}
	readLock := func(t *testing.T, id int64) (lockRow, bool) {
		t.Helper()
		var l lockRow
		err := f.db.Pool.QueryRow(ctx, `SELECT locked_by, acquired_at, expires_at FROM contributor_locks
			WHERE contributor_id = $1`, id).Scan(&l.by, &l.acquired, &l.expiry)
		return l, err == nil
	}

	t.Run("lock", func(t *testing.T) {
		const id = 3
		steps := []struct {
			name   string
			before string // SQL run first
			lock   catalog.LockRequest
			wantBy int64 // 0: no lock row
			// refreshed: the expiry moved on; kept: acquired_at unchanged since the last step
			refreshed, kept bool
		}{
			{name: "a reader without edit permission takes nothing", lock: catalog.LockRequest{}, wantBy: 0},
			{name: "an editor takes the lock", lock: catalog.LockRequest{By: contribAlice, TTL: 10 * time.Minute}, wantBy: contribAlice, refreshed: true},
			{name: "the holder refreshes it", before: `UPDATE contributor_locks SET expires_at = now() + interval '1 minute'`,
				lock: catalog.LockRequest{By: contribAlice, TTL: 10 * time.Minute}, wantBy: contribAlice, refreshed: true, kept: true},
			{name: "another editor does not take a live lock", lock: catalog.LockRequest{By: contribBob, TTL: 10 * time.Minute}, wantBy: contribAlice, kept: true},
			{name: "a plain reader leaves it", lock: catalog.LockRequest{}, wantBy: contribAlice, kept: true},
			{name: "another editor takes an expired lock", before: `UPDATE contributor_locks SET expires_at = now() - interval '1 second'`,
				lock: catalog.LockRequest{By: contribBob, TTL: 10 * time.Minute}, wantBy: contribBob, refreshed: true},
		}
		var last lockRow
		for _, s := range steps {
			t.Run(s.name, func(t *testing.T) {
				if s.before != "" {
					contribExec(t, f.db, s.before)
					last, _ = readLock(t, id)
				}
				f.counter.Reset()
				if _, err := f.db.Contributor(ctx, id, s.lock); err != nil {
					t.Fatal(err)
				}
				if n := f.counter.Count(); n != 1 {
					t.Errorf("%d queries, want 1", n)
				}
				l, ok := readLock(t, id)
				if s.wantBy == 0 {
					if ok {
						t.Fatalf("lock by %d, want none", l.by)
					}
					return
				}
				if !ok || l.by != s.wantBy {
					t.Fatalf("lock %+v (present %v), want by %d", l, ok, s.wantBy)
				}
				if s.refreshed && !l.expiry.After(last.expiry) {
					t.Errorf("expiry %v not after %v", l.expiry, last.expiry)
				}
				if s.refreshed && l.expiry.Sub(l.acquired) < 9*time.Minute {
					t.Errorf("lock lasts %v, want the TTL", l.expiry.Sub(l.acquired))
				}
				if s.kept != l.acquired.Equal(last.acquired) {
					t.Errorf("acquired_at %v, before %v; want kept=%v", l.acquired, last.acquired, s.kept)
				}
				if !s.refreshed && !l.expiry.Equal(last.expiry) {
					t.Errorf("expiry changed from %v to %v", last.expiry, l.expiry)
				}
				last = l
			})
		}
	})
}

func TestAddContributor(t *testing.T) {
	f := newContribFixture(t)
	ctx := context.Background()
	str := func(s string) *string { return &s }
	tests := []struct {
		name     string
		add      catalog.NewContributor
		wantCode apperr.Code
		wantMsg  string
		wantSlug string
	}{
		{"new name", catalog.NewContributor{Client: 1, FirstName: "Hirohiko", LastName: str("Araki"), Slug: "hirohiko-araki"}, "", "", "hirohiko-araki"},
		{"no last name", catalog.NewContributor{Client: 1, FirstName: "ONE", Slug: "one"}, "", "", "one"},
		{"taken slug gets a suffix", catalog.NewContributor{Client: 2, FirstName: "Naoki", LastName: str("Urasawa"), Slug: "naoki-urasawa"}, "", "", "naoki-urasawa-2"},
		{"next suffix", catalog.NewContributor{Client: 2, FirstName: "Naoki", LastName: str("Urasawa!"), Slug: "naoki-urasawa"}, "", "", "naoki-urasawa-3"},
		// Suffixes of any length count: one of 31 digits (past the 30 a suffix once could
		// have) is not chosen again.
		{"a suffix of 30 digits", catalog.NewContributor{Client: 2, FirstName: "Zed", Slug: "zed-999999999999999999999999999999"}, "", "", "zed-999999999999999999999999999999"},
		{"zed", catalog.NewContributor{Client: 2, FirstName: "Zed!", Slug: "zed"}, "", "", "zed"},
		{"past it", catalog.NewContributor{Client: 2, FirstName: "Zed?", Slug: "zed"}, "", "", "zed-1000000000000000000000000000000"},
		{"and past that", catalog.NewContributor{Client: 2, FirstName: "Zed.", Slug: "zed"}, "", "", "zed-1000000000000000000000000000001"},
		{"a suffix that is not a number", catalog.NewContributor{Client: 2, FirstName: "Zed X", Slug: "zed-x"}, "", "", "zed-x"},
		{"still the next number", catalog.NewContributor{Client: 2, FirstName: "Zed,", Slug: "zed"}, "", "", "zed-1000000000000000000000000000002"},
		{"slug lower-cased", catalog.NewContributor{Client: 1, FirstName: "Éric", LastName: str("Ölçer"), Slug: "Eric-Olcer"}, "", "", "eric-olcer"},
		{"no slug", catalog.NewContributor{Client: 1, FirstName: "★"}, "", "", "contributor"},
		{"no slug again", catalog.NewContributor{Client: 1, FirstName: "☆"}, "", "", "contributor-2"},
		{"name taken", catalog.NewContributor{Client: 1, FirstName: "Naoki", LastName: str("Urasawa")}, apperr.Conflict, postgres.MsgContributorExists, ""},
		{"name taken, other case", catalog.NewContributor{Client: 1, FirstName: "NAOKI", LastName: str("urasawa")}, apperr.Conflict, postgres.MsgContributorExists, ""},
		{"name taken without last name", catalog.NewContributor{Client: 1, FirstName: "clamp"}, apperr.Conflict, postgres.MsgContributorExists, ""},
		{"unknown client", catalog.NewContributor{Client: 99, FirstName: "Nobody"}, apperr.Invalid, apperr.MsgMissingParams, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := contribInt(t, f.db, `SELECT count(*) FROM contributors`)
			id, err := f.db.AddContributor(ctx, tt.add)
			contribWantCode(t, err, tt.wantCode, tt.wantMsg)
			if tt.wantCode != "" {
				if after := contribInt(t, f.db, `SELECT count(*) FROM contributors`); after != before {
					t.Errorf("%d contributors after a failed add, want %d", after, before)
				}
				return
			}
			c, err := f.db.Contributor(ctx, id, catalog.LockRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if c.Slug != tt.wantSlug || c.FirstName != tt.add.FirstName || !contribPtrEqual(c.LastName, tt.add.LastName) {
				t.Errorf("added %+v, want slug %q and the name %q %v", c, tt.wantSlug, tt.add.FirstName, tt.add.LastName)
			}
		})
	}

	t.Run("slug never changes on edit", func(t *testing.T) {
		if err := f.db.EditContributor(ctx, 1, contribAlice, catalog.ContributorEdit{FirstName: "Renamed"}); err != nil {
			t.Fatal(err)
		}
		c, err := f.db.Contributor(ctx, 1, catalog.LockRequest{})
		if err != nil || c.Slug != "naoki-urasawa" || c.FirstName != "Renamed" {
			t.Errorf("after rename %+v %v", c, err)
		}
	})

	t.Run("racing adds of one name", func(t *testing.T) {
		const rounds, racers = 20, 8
		for round := range rounds {
			var wg sync.WaitGroup
			errs := make([]error, racers)
			for i := range racers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					// The same name, in upper or lower case.
					first := fmt.Sprintf("Racer %d", round)
					if i%2 == 1 {
						first = strings.ToUpper(first)
					}
					_, errs[i] = f.db.AddContributor(ctx, catalog.NewContributor{Client: 1, FirstName: first, LastName: str("Runner"), Slug: fmt.Sprintf("racer-%d-runner", round)})
				}()
			}
			wg.Wait()
			ok := 0
			for _, err := range errs {
				switch apperr.CodeOf(err) {
				case apperr.Conflict:
				default:
					if err != nil {
						t.Fatalf("round %d: %v", round, err)
					}
					ok++
				}
			}
			if ok != 1 {
				t.Fatalf("round %d: %d adds succeeded, want 1", round, ok)
			}
		}
	})

	t.Run("racing adds of names with one slug", func(t *testing.T) {
		const racers = 8
		var wg sync.WaitGroup
		errs := make([]error, racers)
		for i := range racers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Different names, one slug.
				_, errs[i] = f.db.AddContributor(ctx, catalog.NewContributor{
					Client: 1, FirstName: "Same" + strings.Repeat("-", i+1) + "Slug", Slug: "same-slug"})
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		if n := contribInt(t, f.db, `SELECT count(DISTINCT slug) FROM contributors WHERE slug ~ '^same-slug(-[0-9]+)?$'`); n != racers {
			t.Errorf("%d distinct slugs, want %d", n, racers)
		}
	})
}

// TestContributorSearchText: the kept search text (the full name folded, migration 00022)
// follows every write of a name, a direct write to it is overwritten, and a search
// matches exactly the contributors whose folded full name contains the folded term as a
// literal substring (case and accents ignored: "e" finds "é", "pokemon" finds
// "Pokémon"), for any term, through the kept counts for one or two letters as through
// the trigram index.
func TestContributorSearchText(t *testing.T) {
	f := newContribFixture(t)
	ctx := context.Background()
	steps := []struct{ name, sql string }{
		{"fixture", ``},
		{"added", `INSERT INTO contributors (id, client_id, first_name, last_name, slug) VALUES
			(20, 1, 'Émile', 'ZOLA', 'emile-zola'), (21, 1, 'Ünal', NULL, 'unal'),
			(22, 1, 'Pokémon', 'Straße', 'pokemon'), (23, 1, 'POKE' || U&'\0301' || 'MON', 'ŒUVRE', 'pokemon-2'),
			(24, 1, 'Łukasz', 'Ｐｏｋéｍｏｎ', 'lukasz'), (25, 1, '進撃の巨人', NULL, 'shingeki')`},
		{"first name renamed", `UPDATE contributors SET first_name = 'Kazuo' WHERE id = 2`},
		{"last name cleared", `UPDATE contributors SET last_name = NULL WHERE id = 3`},
		{"last name set", `UPDATE contributors SET last_name = 'Koike' WHERE id = 4`},
		{"search written directly", `UPDATE contributors SET search = 'forged' WHERE id = 5`},
		{"other column only", `UPDATE contributors SET public = true WHERE id = 6`},
	}
	for _, step := range steps {
		if step.sql != "" {
			contribExec(t, f.db, step.sql)
		}
		if n := contribInt(t, f.db, `SELECT count(*) FROM contributors
			WHERE search IS DISTINCT FROM search_fold(first_name || ' ' || coalesce(last_name, ''))`); n != 0 {
			t.Errorf("after %s: %d contributors with a stale search text", step.name, n)
		}
	}
	// Through EditContributor as well.
	if err := f.db.EditContributor(ctx, 1, contribAlice, catalog.ContributorEdit{FirstName: "Naoki", LastName: nil}); err != nil {
		t.Fatal(err)
	}
	if n := contribInt(t, f.db, `SELECT count(*) FROM contributors WHERE id = 1 AND search = 'naoki '`); n != 1 {
		t.Error("the search text did not follow EditContributor")
	}

	// One or two letters take the kept counts, longer searches count.
	for _, search := range []string{"a", "KO", "zola", "émile", "ÉMILE", "Ünal", "ünal", "o k", "kazuo ", "0%", "t_m", "forged", "\\", "x",
		"é", "É", "Ün", "%", "_", "%%", " ", "o ", "a\\", "zz",
		"pokemon", "POKÉMON", "pokémon", "Poke\u0301mon", "emile", "e", "E", "u", "strasse", "STRASSE", "ß", "ss", "oeuvre", "œ",
		"lukasz", "ł", "łukasz", "Ｐｏｋ", "進撃", "巨", "％", "＿", "\u0301", "ｚｚ"} {
		t.Run(search, func(t *testing.T) {
			var want []int64
			rows, err := f.db.Pool.Query(ctx, `SELECT id FROM contributors WHERE client_id = 1
				AND strpos(search_fold(first_name || ' ' || coalesce(last_name, '')), search_fold($1)) > 0
				ORDER BY first_name, last_name, id`, search)
			if err == nil {
				want, err = pgx.CollectRows(rows, pgx.RowTo[int64])
			}
			if err != nil {
				t.Fatal(err)
			}
			page, err := f.db.Contributors(ctx, catalog.ContributorQuery{Client: 1, Search: search, Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			got := []int64{}
			for _, c := range page.Contributors {
				got = append(got, c.ID)
			}
			if want == nil {
				want = []int64{}
			}
			if !slices.Equal(got, want) || page.Total != int64(len(want)) {
				t.Errorf("ids %v total %d, want %v (the folded names containing the folded term)", got, page.Total, want)
			}
			if must, ok := foldedContributors[search]; ok && !slices.Equal(want, must) {
				t.Errorf("the rule gives %v, want %v", want, must)
			}
		})
	}
}

// foldedContributors are the folding's examples, stated: each search and the contributors
// of TestContributorSearchText it finds, in the list's order.
var foldedContributors = map[string][]int64{
	"pokemon": {23, 22, 24},
	"POKÉMON": {23, 22, 24},
	"pokémon": {23, 22, 24},
	"emile":   {20},
	"strasse": {22},
	"ß":       {22},
	"œ":       {23},
	"łukasz":  {24},
	"進撃":      {25},
}

// TestContributorCount: the totals of the list kept by triggers follow every write
// that adds, removes, renames or moves contributors: clients.contributor_count
// (the baseline schema), the total without a search, and contributor_search_grams,
// the totals of the searches of one or two letters.
func TestContributorCount(t *testing.T) {
	f := newContribFixture(t)
	ctx := context.Background()
	contribExec(t, f.db, `INSERT INTO clients (id, name) VALUES (3, 'Empty')`)
	steps := []struct{ name, sql string }{
		{"fixture", ``},
		{"added", `INSERT INTO contributors (client_id, first_name, slug) VALUES (1, 'A', 'a'), (2, 'B', 'b'), (2, 'C', 'c')`},
		{"added with letters of two bytes", `INSERT INTO contributors (client_id, first_name, last_name, slug)
			VALUES (1, 'Émile', 'Zöla', 'emile-zola'), (2, '手塚', '治虫', 'tezuka')`},
		{"renamed only", `UPDATE contributors SET first_name = first_name || 'x'`},
		{"one renamed", `UPDATE contributors SET last_name = 'Tanaka' WHERE id = 2`},
		{"search text written directly", `UPDATE contributors SET search = 'forged'`},
		{"other column only", `UPDATE contributors SET public = NOT public`},
		{"moved to another client", `UPDATE contributors SET client_id = 3 WHERE id IN (1, 8)`},
		{"swapped clients", `UPDATE contributors SET client_id = CASE client_id WHEN 1 THEN 2 ELSE 1 END WHERE client_id IN (1, 2)`},
		{"deleted", `DELETE FROM contributors WHERE id IN (2, 3)`},
		{"all of a client deleted", `DELETE FROM contributors WHERE client_id = 3`},
		{"truncated", `TRUNCATE contributors CASCADE`},
		{"added after truncate", `INSERT INTO contributors (client_id, first_name, slug) VALUES (1, 'D', 'd')`},
	}
	checks := []struct{ name, sql string }{
		{"contributor_count", `SELECT count(*) FROM clients cl
			WHERE cl.contributor_count <> (SELECT count(*) FROM contributors c WHERE c.client_id = cl.id)`},
		{"search substring count", staleSearchGrams},
	}
	for _, step := range steps {
		if step.sql != "" {
			contribExec(t, f.db, step.sql)
		}
		for _, c := range checks {
			if n := contribInt(t, f.db, c.sql); n != 0 {
				t.Errorf("after %s: %d rows with a stale %s", step.name, n, c.name)
			}
		}
	}
	if n := contribInt(t, f.db, `SELECT count(*) FROM contributor_search_grams WHERE n < 0`); n != 0 {
		t.Errorf("%d search substring counts below zero", n)
	}
	page, err := f.db.Contributors(ctx, catalog.ContributorQuery{Client: 1, Limit: 0})
	if err != nil || page.Total != 1 {
		t.Errorf("total %d, %v; want 1", page.Total, err)
	}
}

// staleSearchGrams counts the (client, substring) pairs whose kept count in
// contributor_search_grams (the baseline schema) differs from a count of the contributors.
const staleSearchGrams = `WITH kept AS (SELECT client_id, gram, n FROM contributor_search_grams WHERE n <> 0),
	counted AS (SELECT c.client_id, g.gram, count(*) AS n
	            FROM contributors c, search_grams(c.search) g(gram) GROUP BY 1, 2)
	SELECT count(*) FROM ((TABLE kept EXCEPT TABLE counted) UNION ALL (TABLE counted EXCEPT TABLE kept)) d`

// TestContributorSearchGramsConcurrentWriters: writers of one client whose names share
// substrings, taken in other orders, update the same kept counts at once, and the
// counts come out exact. Writers that add (or remove) contributors queue on the
// client's row (contributor_count, whose trigger fires first); writers that only
// rename lock the counts row by row, and each statement's upsert takes them in key
// order, so two renames wait for each other and never deadlock.
func TestContributorSearchGramsConcurrentWriters(t *testing.T) {
	f := newContribFixture(t)
	ctx := context.Background()
	const writers, rounds = 6, 15
	letters := "abcdefghijklmnopqrstuvwxyz"
	concurrently := func(name string, write func(w, i int, first string) error) {
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for w := 0; w < writers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Each writer's name runs through the alphabet from its own letter, one
				// way or the other, so its substrings are the others' in another order.
				k := w * 3 % len(letters)
				first := letters[k:] + letters[:k]
				if w%2 == 1 {
					r := []byte(first)
					slices.Reverse(r)
					first = string(r)
				}
				for i := 0; i < rounds; i++ {
					if err := write(w, i, first); err != nil {
						errs <- fmt.Errorf("%s: writer %d, round %d: %w", name, w, i, err)
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if n := contribInt(t, f.db, staleSearchGrams); n != 0 {
			t.Errorf("%s: %d stale search substring counts", name, n)
		}
	}
	concurrently("adds", func(w, i int, first string) error {
		return pgx.BeginFunc(ctx, f.db.Pool, func(tx pgx.Tx) error {
			slug := fmt.Sprintf("w%d-%d", w, i)
			if _, err := tx.Exec(ctx, `INSERT INTO contributors (client_id, first_name, last_name, slug)
				VALUES (1, $1, $2, $2), (1, upper($1), $2 || 'b', $2 || 'b')`, first, slug); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `UPDATE contributors SET first_name = reverse(first_name) WHERE slug = $1`, slug)
			return err
		})
	})
	concurrently("renames", func(w, i int, _ string) error {
		_, err := f.db.Pool.Exec(ctx, `UPDATE contributors SET first_name = reverse(first_name) || $2
			WHERE slug LIKE $1`, fmt.Sprintf("w%d-%%", w), letters[i%len(letters):i%len(letters)+1])
		return err
	})
}

func contribPtrEqual(a, b *string) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}

func TestEditContributor(t *testing.T) {
	ctx := context.Background()
	str := func(s string) *string { return &s }
	base := catalog.ContributorEdit{FirstName: "Naoki", LastName: str("Urasawa")}
	with := func(fn func(e *catalog.ContributorEdit)) catalog.ContributorEdit {
		e := base
		fn(&e)
		return e
	}
	tests := []struct {
		name     string
		id       int64
		edit     catalog.ContributorEdit
		wantCode apperr.Code
		wantMsg  string
		// check, for a successful edit, is SQL that must return true afterwards.
		check string
	}{
		{name: "fields", id: 1, edit: catalog.ContributorEdit{FirstName: "Naoki", LastName: nil, Gender: str("x"), Type: str("artist"), Public: false},
			check: `SELECT last_name IS NULL AND gender = 'x' AND type = 'artist' AND NOT public FROM contributors WHERE id = 1`},
		{name: "null fields clear", id: 1, edit: base,
			check: `SELECT gender IS NULL AND type IS NULL AND last_name = 'Urasawa' FROM contributors WHERE id = 1`},
		{name: "links replaced", id: 1, edit: with(func(e *catalog.ContributorEdit) { e.Links = []string{"https://b.example", "https://a.example"} }),
			check: `SELECT array_agg(url ORDER BY id) = ARRAY['https://b.example', 'https://a.example'] FROM contributor_links WHERE contributor_id = 1`},
		{name: "no links removes them", id: 1, edit: base,
			check: `SELECT count(*) = 0 FROM contributor_links WHERE contributor_id = 1`},
		{name: "added aliases", id: 1, edit: with(func(e *catalog.ContributorEdit) {
			e.AddedAliases = []catalog.NewContributorAlias{{Title: "A", Language: "English"}, {Title: "B", Language: "French"}}
		}), check: `SELECT count(*) = 4 AND bool_or(title = 'B' AND language = 'French') FROM contributor_aliases WHERE contributor_id = 1`},
		{name: "removed aliases", id: 1, edit: with(func(e *catalog.ContributorEdit) { e.RemovedAliases = []int64{1, 2, 1} }),
			check: `SELECT array_agg(title ORDER BY id) = ARRAY['A', 'B'] FROM contributor_aliases WHERE contributor_id = 1`},
		{name: "removed alias of another contributor", id: 1, edit: with(func(e *catalog.ContributorEdit) { e.RemovedAliases = []int64{101, 3} }),
			wantCode: apperr.Invalid, wantMsg: apperr.MsgMissingParams},
		{name: "removed unknown alias", id: 1, edit: with(func(e *catalog.ContributorEdit) { e.RemovedAliases = []int64{9999} }),
			wantCode: apperr.Invalid, wantMsg: apperr.MsgMissingParams},
		{name: "added descriptions", id: 1, edit: with(func(e *catalog.ContributorEdit) {
			e.AddedDescriptions = []catalog.NewContributorDescription{{Description: "Neu.", Language: "German", Source: "Wiki"}}
		}), check: `SELECT count(*) = 3 AND bool_or(description = 'Neu.' AND source = 'Wiki') FROM contributor_descriptions WHERE contributor_id = 1`},
		{name: "modified descriptions", id: 1, edit: with(func(e *catalog.ContributorEdit) {
			e.ModifiedDescriptions = []catalog.ContributorDescription{{ID: 1, Description: "Changed.", Language: "English", Source: ""}}
		}), check: `SELECT description = 'Changed.' AND source = '' FROM contributor_descriptions WHERE id = 1`},
		{name: "modified description of another contributor", id: 1, edit: with(func(e *catalog.ContributorEdit) {
			e.ModifiedDescriptions = []catalog.ContributorDescription{{ID: 1, Description: "x", Language: "x"}, {ID: 3, Description: "x", Language: "x"}}
		}), wantCode: apperr.Invalid, wantMsg: apperr.MsgMissingParams},
		{name: "removed descriptions", id: 1, edit: with(func(e *catalog.ContributorEdit) { e.RemovedDescriptions = []int64{1, 2} }),
			check: `SELECT array_agg(description) = ARRAY['Neu.'] FROM contributor_descriptions WHERE contributor_id = 1`},
		{name: "removed description of another contributor", id: 1, edit: with(func(e *catalog.ContributorEdit) { e.RemovedDescriptions = []int64{3} }),
			wantCode: apperr.Invalid, wantMsg: apperr.MsgMissingParams},
		{name: "added relations", id: 1, edit: with(func(e *catalog.ContributorEdit) {
			e.AddedRelations = []catalog.NewContributorRelation{{RelationID: 4, Type: "member"}, {RelationID: 5, Type: "student"}}
		}), check: `SELECT count(*) = 4 AND bool_or(related_id = 5 AND type = 'student') FROM contributor_relations WHERE contributor_id = 1`},
		{name: "relation to itself", id: 1, edit: with(func(e *catalog.ContributorEdit) {
			e.AddedRelations = []catalog.NewContributorRelation{{RelationID: 1, Type: "self"}}
		}), wantCode: apperr.Invalid, wantMsg: apperr.MsgMissingParams},
		{name: "relation to an unknown contributor", id: 1, edit: with(func(e *catalog.ContributorEdit) {
			e.AddedRelations = []catalog.NewContributorRelation{{RelationID: 6, Type: "ok"}, {RelationID: 9999, Type: "x"}}
		}), wantCode: apperr.Invalid, wantMsg: apperr.MsgMissingParams},
		{name: "relation to another client's contributor", id: 1, edit: with(func(e *catalog.ContributorEdit) {
			e.AddedRelations = []catalog.NewContributorRelation{{RelationID: 8, Type: "x"}}
		}), wantCode: apperr.Invalid, wantMsg: apperr.MsgMissingParams},
		{name: "modified relations", id: 1, edit: with(func(e *catalog.ContributorEdit) {
			e.ModifiedRelations = []catalog.ContributorRelationChange{{ID: 1, RelationID: 6, Type: "rival"}}
		}), check: `SELECT related_id = 6 AND type = 'rival' FROM contributor_relations WHERE id = 1`},
		{name: "modified relation of another contributor", id: 1, edit: with(func(e *catalog.ContributorEdit) {
			e.ModifiedRelations = []catalog.ContributorRelationChange{{ID: 3, RelationID: 6, Type: "x"}}
		}), wantCode: apperr.Invalid, wantMsg: apperr.MsgMissingParams},
		{name: "modified relation to itself", id: 1, edit: with(func(e *catalog.ContributorEdit) {
			e.ModifiedRelations = []catalog.ContributorRelationChange{{ID: 1, RelationID: 1, Type: "x"}}
		}), wantCode: apperr.Invalid, wantMsg: apperr.MsgMissingParams},
		{name: "modified relation to an unknown contributor", id: 1, edit: with(func(e *catalog.ContributorEdit) {
			e.ModifiedRelations = []catalog.ContributorRelationChange{{ID: 1, RelationID: 9999, Type: "x"}}
		}), wantCode: apperr.Invalid, wantMsg: apperr.MsgMissingParams},
		{name: "removed relations", id: 1, edit: with(func(e *catalog.ContributorEdit) { e.RemovedRelations = []int64{1, 2} }),
			check: `SELECT array_agg(related_id ORDER BY related_id) = ARRAY[4, 5]::bigint[] FROM contributor_relations WHERE contributor_id = 1`},
		{name: "removed relation of another contributor", id: 1, edit: with(func(e *catalog.ContributorEdit) { e.RemovedRelations = []int64{3} }),
			wantCode: apperr.Invalid, wantMsg: apperr.MsgMissingParams},
		{name: "everything at once, one foreign id spoils it all", id: 1, edit: with(func(e *catalog.ContributorEdit) {
			e.FirstName, e.Links, e.Public = "Other", []string{"https://x.example"}, true
			e.AddedAliases = []catalog.NewContributorAlias{{Title: "T", Language: "L"}}
			e.AddedDescriptions = []catalog.NewContributorDescription{{Description: "D", Language: "L"}}
			e.AddedRelations = []catalog.NewContributorRelation{{RelationID: 6, Type: "t"}}
			e.RemovedRelations = []int64{4}
		}), wantCode: apperr.Invalid, wantMsg: apperr.MsgMissingParams},
		{name: "rename to a taken name", id: 1, edit: catalog.ContributorEdit{FirstName: "takehiko", LastName: str("INOUE")},
			wantCode: apperr.Conflict, wantMsg: postgres.MsgContributorExists},
		{name: "unknown contributor", id: 9999, edit: base, wantCode: apperr.NotFound, wantMsg: postgres.MsgContributorNotFound},
		{name: "unknown contributor with foreign ids", id: 9999, edit: with(func(e *catalog.ContributorEdit) { e.RemovedAliases = []int64{3} }),
			wantCode: apperr.NotFound, wantMsg: postgres.MsgContributorNotFound},
	}
	// One fixture for the whole sequence: each step starts from what the last left.
	f := newContribFixture(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := map[int64]string{}
			for _, id := range []int64{1, 2, 3} {
				before[id] = contribState(t, f.db, id)
			}
			err := f.db.EditContributor(ctx, tt.id, contribAlice, tt.edit)
			contribWantCode(t, err, tt.wantCode, tt.wantMsg)
			if tt.wantCode != "" {
				for id, state := range before {
					if after := contribState(t, f.db, id); after != state {
						t.Errorf("contributor %d changed by a rejected edit:\nbefore %s\nafter  %s", id, state, after)
					}
				}
				return
			}
			if contribInt(t, f.db, `SELECT (`+tt.check+`)::int`) != 1 {
				t.Errorf("after the edit, %s is not true; state %s", tt.check, contribState(t, f.db, tt.id))
			}
			for _, id := range []int64{2, 3} {
				if after := contribState(t, f.db, id); after != before[id] {
					t.Errorf("contributor %d changed by an edit of %d", id, tt.id)
				}
			}
		})
	}

	t.Run("an edit releases the editor's lock only", func(t *testing.T) {
		contribExec(t, f.db, `INSERT INTO contributor_locks (contributor_id, locked_by, expires_at) VALUES
			(1, $1, now() + interval '1 hour'), (2, $2, now() + interval '1 hour')`, contribAlice, contribBob)
		for _, id := range []int64{1, 2} {
			if err := f.db.EditContributor(ctx, id, contribAlice, catalog.ContributorEdit{FirstName: fmt.Sprint("Name ", id)}); err != nil {
				t.Fatal(err)
			}
		}
		if n := contribInt(t, f.db, `SELECT count(*) FROM contributor_locks WHERE contributor_id = 1`); n != 0 {
			t.Errorf("contribAlice's lock of 1 survived her edit")
		}
		if n := contribInt(t, f.db, `SELECT count(*) FROM contributor_locks WHERE contributor_id = 2 AND locked_by = $1`, contribBob); n != 1 {
			t.Errorf("bob's lock of 2 is gone after contribAlice's edit")
		}
	})

	t.Run("a rejected edit keeps the lock", func(t *testing.T) {
		contribExec(t, f.db, `INSERT INTO contributor_locks (contributor_id, locked_by, expires_at) VALUES (3, $1, now() + interval '1 hour')`, contribAlice)
		err := f.db.EditContributor(ctx, 3, contribAlice, catalog.ContributorEdit{FirstName: "Rumiko", RemovedAliases: []int64{1}})
		contribWantCode(t, err, apperr.Invalid, apperr.MsgMissingParams)
		if n := contribInt(t, f.db, `SELECT count(*) FROM contributor_locks WHERE contributor_id = 3`); n != 1 {
			t.Errorf("the lock is gone after a rejected edit")
		}
	})
}

func TestDeleteContributor(t *testing.T) {
	f := newContribFixture(t)
	ctx := context.Background()
	contribExec(t, f.db, `INSERT INTO contributor_locks (contributor_id, locked_by, expires_at) VALUES (1, 1, now() + interval '1 hour')`)
	// Everything that hangs on contributor 1, in every table, in both directions.
	const leftovers = `SELECT
		(SELECT count(*) FROM contributors WHERE id = 1) +
		(SELECT count(*) FROM contributor_links WHERE contributor_id = 1) +
		(SELECT count(*) FROM contributor_aliases WHERE contributor_id = 1) +
		(SELECT count(*) FROM contributor_descriptions WHERE contributor_id = 1) +
		(SELECT count(*) FROM contributor_relations WHERE contributor_id = 1 OR related_id = 1) +
		(SELECT count(*) FROM series_contributors WHERE contributor_id = 1) +
		(SELECT count(*) FROM contributor_locks WHERE contributor_id = 1)`
	if n := contribInt(t, f.db, leftovers); n != 1+2+2+2+4+1+1 {
		t.Fatalf("fixture: %d rows about contributor 1", n)
	}
	tests := []struct {
		name      string
		id        int64
		wantImage string
		wantCode  apperr.Code
	}{
		{name: "with everything", id: 1, wantImage: "contributors/1/abc"},
		{name: "again", id: 1, wantCode: apperr.NotFound},
		{name: "without an image", id: 4, wantImage: ""},
		{name: "unknown", id: 9999, wantCode: apperr.NotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			otherBefore := contribState(t, f.db, 5)
			image, err := f.db.DeleteContributor(ctx, tt.id)
			if tt.wantCode != "" {
				contribWantCode(t, err, tt.wantCode, postgres.MsgContributorNotFound)
				return
			}
			if err != nil || image != tt.wantImage {
				t.Fatalf("delete: image %q, %v; want %q", image, err, tt.wantImage)
			}
			if n := contribInt(t, f.db, `SELECT count(*) FROM contributors WHERE id = $1`, tt.id); n != 0 {
				t.Errorf("contributor %d still there", tt.id)
			}
			if after := contribState(t, f.db, 5); after != otherBefore {
				t.Errorf("contributor 5 changed by deleting %d", tt.id)
			}
		})
	}
	if n := contribInt(t, f.db, leftovers); n != 0 {
		t.Errorf("%d rows about contributor 1 survive its delete", n)
	}
	// What belongs to others stays: 2's own rows, less its relation to 1.
	if n := contribInt(t, f.db, `SELECT count(*) FROM contributor_aliases WHERE contributor_id = 2`); n != 1 {
		t.Errorf("contributor 2 has %d aliases, want 1", n)
	}
	if n := contribInt(t, f.db, `SELECT count(*) FROM series_contributors WHERE contributor_id = 2`); n != 1 {
		t.Errorf("contributor 2 lost its series")
	}
}

// TestRelationsOfItsClient: a relation whose other contributor has moved to another
// client is not in the contributor's detail (a relation is to a contributor of the
// same client).
func TestRelationsOfItsClient(t *testing.T) {
	f := newContribFixture(t)
	before, err := f.db.Contributor(context.Background(), 1, catalog.LockRequest{})
	if err != nil {
		t.Fatal(err)
	}
	related := false
	for _, r := range before.Relations {
		related = related || r.RelationID == 2
	}
	if !related {
		t.Fatal("the fixture's contributor 1 has no relation to contributor 2")
	}
	contribExec(t, f.db, `INSERT INTO clients (id, name) VALUES (3, 'Third'); UPDATE contributors SET client_id = 3 WHERE id = 2`)
	c, err := f.db.Contributor(context.Background(), 1, catalog.LockRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range c.Relations {
		if r.RelationID == 2 {
			t.Errorf("client 1's contributor 1 lists relation %d to contributor 2 (%s) of client 3", r.ID, r.Name)
		}
	}
}
