package admincontributors_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mediacatalog/service/infra/local/demo"
	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/admincontributors"
	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/auth"
	"github.com/mediacatalog/service/shared/httpapi"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// Demo contributors the tests name (infra/local/demo: ids in the order of its list).
const (
	oda     = 1  // Eiichiro Oda
	kubo    = 3  // Tite Kubo, no links
	togashi = 9  // Yoshihiro Togashi, related to Naoko Takeuchi both ways
	one     = 18 // ONE, no last name, related to Yusuke Murata both ways
	murata  = 19
	asano   = 20 // Inio Asano
	unknown = 9999
)

// server is the group's handler over a database with the demo data, and the cookies
// of the demo users.
type server struct {
	*testenv.Group
	avatars *recordingAvatars
}

func newServer(t *testing.T) *server { return newServerCounting(t, 0) }

// newServerCounting is newServer with maxExact the store's threshold of exactly counted
// matches (0: the default).
func newServerCounting(t *testing.T, maxExact int64) *server {
	t.Helper()
	avatars := &recordingAvatars{}
	g := testenv.NewGroup(t, func(db *testenv.DB, sessions *auth.Sessions) []httpapi.Route {
		store := *db.DB
		store.MaxExact = maxExact
		return admincontributors.Routes(admincontributors.Deps{
			Store: &store, Auth: sessions, LockTTL: testenv.AuthConfig(t).LockTTL, Avatars: avatars,
		})
	})
	return &server{Group: g, avatars: avatars}
}

// state is everything stored about contributor id, as JSON.
func (s *server) state(t *testing.T, id int64) string {
	t.Helper()
	var out string
	err := s.DB.Pool.QueryRow(context.Background(), `
SELECT jsonb_build_object(
	'row', (SELECT to_jsonb(c) FROM contributors c WHERE c.id = $1),
	'links', (SELECT jsonb_agg(to_jsonb(x) ORDER BY x.id) FROM contributor_links x WHERE x.contributor_id = $1),
	'aliases', (SELECT jsonb_agg(to_jsonb(x) ORDER BY x.id) FROM contributor_aliases x WHERE x.contributor_id = $1),
	'descriptions', (SELECT jsonb_agg(to_jsonb(x) ORDER BY x.id) FROM contributor_descriptions x WHERE x.contributor_id = $1),
	'relations', (SELECT jsonb_agg(to_jsonb(x) ORDER BY x.id) FROM contributor_relations x WHERE x.contributor_id = $1))::text`,
		id).Scan(&out)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// allState is every contributor row and every row about contributors, as JSON.
func (s *server) allState(t *testing.T) string {
	t.Helper()
	var out string
	err := s.DB.Pool.QueryRow(context.Background(), `
SELECT jsonb_build_object(
	'c', (SELECT jsonb_agg(to_jsonb(x) ORDER BY x.id) FROM contributors x),
	'l', (SELECT jsonb_agg(to_jsonb(x) ORDER BY x.id) FROM contributor_links x),
	'a', (SELECT jsonb_agg(to_jsonb(x) ORDER BY x.id) FROM contributor_aliases x),
	'd', (SELECT jsonb_agg(to_jsonb(x) ORDER BY x.id) FROM contributor_descriptions x),
	'r', (SELECT jsonb_agg(to_jsonb(x) ORDER BY x.id) FROM contributor_relations x),
	's', (SELECT jsonb_agg(to_jsonb(x) ORDER BY x.series_id, x.contributor_id, x.role) FROM series_contributors x))::text`).Scan(&out)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// recordingAvatars records the avatar keys removed after deletes; the avatar routes
// themselves belong to the media code and are not under test here.
type recordingAvatars struct {
	mu      sync.Mutex
	removed []string
}

// The avatar routes are the media code's, under test in avatar_test.go: here the
// instance is not a file service, so a request that reaches them answers 503.
func (a *recordingAvatars) Available() error {
	return apperr.New(apperr.Unavailable, apperr.MsgNoFileService)
}
func (a *recordingAvatars) MaxBodyBytes() int64 { return 0 }
func (a *recordingAvatars) UpdateContributorAvatar(context.Context, int64, string) error {
	return errNotUnderTest
}
func (a *recordingAvatars) DeleteContributorAvatar(context.Context, int64) error {
	return errNotUnderTest
}

var errNotUnderTest = errors.New("the avatar routes are not under test here")

func (a *recordingAvatars) RemoveContributorAvatar(_ context.Context, key string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.removed = append(a.removed, key)
	return nil
}

func (a *recordingAvatars) taken() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := a.removed
	a.removed = nil
	return out
}

type message struct {
	Data string `json:"data"`
	Code int    `json:"code"`
}

func wantMessage(t *testing.T, status int, body []byte, wantStatus int, want string) {
	t.Helper()
	if status != wantStatus {
		t.Fatalf("status %d, want %d; body %s", status, wantStatus, body)
	}
	if m := testenv.Decode[message](t, body); m.Data != want || m.Code != wantStatus {
		t.Fatalf("body %+v, want {%q %d}", m, want, wantStatus)
	}
}

type listItem struct {
	ID        int64   `json:"id"`
	FirstName string  `json:"first_name"`
	LastName  *string `json:"last_name"`
	Slug      string  `json:"slug"`
	Image     string  `json:"image"`
	LockedBy  *struct {
		ID       int64  `json:"id"`
		Username string `json:"username"`
	} `json:"locked_by"`
}

type listBody struct {
	Contributors []listItem `json:"contributors"`
	Max          int64      `json:"max"`
	MaxExact     *bool      `json:"max_exact"`
	From         int64      `json:"from"`
	To           int64      `json:"to"`
}

func TestPermissionMatrix(t *testing.T) {
	s := newServer(t)
	rows := testenv.AuthMatrix{
		Handler: s.Handler,
		DB:      s.DB,
		Config:  s.Config,
		Routes: []testenv.AuthRoute{
			{Method: "GET", Path: "/admin-contributors?client=1", Permission: auth.PermViewContributors},
			{Method: "GET", Path: "/admin-contributors/id/1", Permission: auth.PermViewContributors},
			{Method: "POST", Path: "/admin-contributors/add", Body: map[string]any{"first_name": "Matrix", "last_name": nil},
				Permission: auth.PermAddContributors, Message: "Contributor added successfully"},
			{Method: "POST", Path: "/admin-contributors/edit/2", Body: map[string]any{"first_name": "Masashi", "last_name": "Kishimoto"},
				Permission: auth.PermEditContributors, Message: "Contributor updated successfully"},
			{Method: "DELETE", Path: "/admin-contributors/delete/20", Permission: auth.PermDeleteContributors,
				Message: "Contributor deleted successfully"},
		},
	}.Run(t)
	if rows != 5*8 {
		t.Errorf("%d matrix rows, want 40", rows)
	}
}

func TestList(t *testing.T) {
	s := newServer(t)
	s.DB.Exec(t, `INSERT INTO clients (id, name) VALUES (2, 'Other') ON CONFLICT DO NOTHING`)
	s.DB.Exec(t, `INSERT INTO contributors (client_id, first_name, last_name, slug) VALUES (2, 'Alan', 'Moore', 'alan-moore-c2')`)
	tests := []struct {
		name       string
		query      string
		wantStatus int
		wantFirst  []string // first names in order, when 200
		max, from  int64
	}{
		{"defaults: name-asc, everything", "?client=1", 200,
			[]string{"Akira", "Eiichiro", "Gege", "Hajime", "Hiromu", "Inio", "Kentaro", "Kohei", "Koyoharu", "Makoto",
				"Masashi", "Naoki", "Naoko", "ONE", "Rumiko", "Takehiko", "Tatsuki", "Tite", "Yoshihiro", "Yusuke"}, 20, 0},
		{"name-desc with a page", "?client=1&order=name-desc&limit=3&offset=1", 200, []string{"Yoshihiro", "Tite", "Tatsuki"}, 20, 1},
		{"search first name, any case", "?client=1&search=NAO", 200, []string{"Naoki", "Naoko"}, 2, 0},
		{"search last name", "?client=1&search=taka", 200, []string{"Rumiko"}, 1, 0},
		{"search full name", "?client=1&search=ko%20taKE", 200, []string{"Naoko"}, 1, 0},
		{"search without match", "?client=1&search=zzz", 200, []string{}, 0, 0},
		{"offset past the end", "?client=1&offset=100", 200, []string{}, 20, 100},
		{"limit 0", "?client=1&limit=0", 200, []string{}, 20, 0},
		{"other client", "?client=2", 200, []string{"Alan"}, 1, 0},
		{"client without contributors", "?client=77", 200, []string{}, 0, 0},
		{"missing client", "", 400, nil, 0, 0},
		{"non-numeric client", "?client=abc", 400, nil, 0, 0},
		{"zero client", "?client=0", 400, nil, 0, 0},
		{"unknown order", "?client=1&order=added-asc", 400, nil, 0, 0},
		{"negative limit", "?client=1&limit=-1", 400, nil, 0, 0},
		{"non-numeric offset", "?client=1&offset=x", 400, nil, 0, 0},
		{"search of 100 characters", "?client=1&search=" + strings.Repeat("a", 100), 200, []string{}, 0, 0},
		{"search of 101 characters", "?client=1&search=" + strings.Repeat("a", 101), 400, nil, 0, 0},
		{"search with a right-to-left override", "?client=1&search=a%E2%80%AEb", 400, nil, 0, 0},
	}
	// The 400s' messages other than Required parameters missing.
	messages := map[string]string{
		"search of 101 characters":             "Invalid search: at most 100 characters",
		"search with a right-to-left override": "Invalid search: control characters and invisible formatting characters (such as U+202E) are not allowed",
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s.Counter.Reset()
			status, body := s.Do(t, "GET", "/admin-contributors"+tt.query, nil, s.Editor)
			if tt.wantStatus != 200 {
				want, ok := messages[tt.name]
				if !ok {
					want = "Required parameters missing"
				}
				wantMessage(t, status, body, tt.wantStatus, want)
				return
			}
			if status != 200 {
				t.Fatalf("status %d: %s", status, body)
			}
			if n := s.Counter.Count(); n > 2 {
				t.Errorf("%d round trips, want at most 2", n)
			}
			got := testenv.Decode[listBody](t, body)
			var names []string
			for _, c := range got.Contributors {
				names = append(names, c.FirstName)
			}
			if strings.Join(names, ",") != strings.Join(tt.wantFirst, ",") {
				t.Errorf("first names %v, want %v", names, tt.wantFirst)
			}
			if got.Max != tt.max || got.From != tt.from || got.To != tt.from+int64(len(tt.wantFirst)) {
				t.Errorf("envelope max %d from %d to %d, want %d %d %d", got.Max, got.From, got.To, tt.max, tt.from, tt.from+int64(len(tt.wantFirst)))
			}
			if got.MaxExact == nil || !*got.MaxExact { // below the threshold: exact
				t.Errorf("max_exact %v, want true", got.MaxExact)
			}
		})
	}

	t.Run("item", func(t *testing.T) {
		_, body := s.Do(t, "GET", "/admin-contributors?client=1&search=one", nil, s.Editor)
		got := testenv.Decode[struct {
			Contributors []json.RawMessage `json:"contributors"`
		}](t, body)
		want := `{"first_name":"ONE","id":18,"image":"","last_name":null,"locked_by":null,"slug":"one"}`
		if len(got.Contributors) != 1 || compact(t, got.Contributors[0]) != want {
			t.Errorf("items %s, want [%s]", got.Contributors, want)
		}
	})
}

// TestListPastThreshold: with a threshold T of 2, a search of three letters or more
// matching more contributors reports max as a lower bound (at least T and to,
// max_exact false) on a full page, and exactly on a page shorter than its limit or
// within T of the end (a page at or past T counts up to offset+T). Searches of one or
// two letters and the list without a search read kept counts: always exact.
func TestListPastThreshold(t *testing.T) {
	s := newServerCounting(t, 2)
	tests := []struct {
		query     string
		wantFirst []string
		max, from int64
		exact     bool
	}{
		{"?client=1&limit=3", []string{"Akira", "Eiichiro", "Gege"}, 20, 0, true},
		{"?client=1&search=ko&limit=1", []string{"Kohei"}, 6, 0, true},
		{"?client=1&search=shi&limit=1", []string{"Kohei"}, 2, 0, false},
		{"?client=1&search=shi&limit=2&offset=1", []string{"Masashi", "Rumiko"}, 3, 1, false},
		{"?client=1&search=shi&limit=3&offset=1", []string{"Masashi", "Rumiko", "Yoshihiro"}, 4, 1, false},
		{"?client=1&search=shi&limit=4&offset=1", []string{"Masashi", "Rumiko", "Yoshihiro"}, 4, 1, true},
		{"?client=1&search=shi&limit=1&offset=2", []string{"Rumiko"}, 4, 2, true},
		{"?client=1&search=shi&order=name-desc&offset=3", []string{"Kohei"}, 4, 3, true},
		{"?client=1&search=shi&offset=7", []string{}, 4, 7, true},
		{"?client=1&search=kubo&limit=1", []string{"Tite"}, 1, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			status, body := s.Do(t, "GET", "/admin-contributors"+tt.query, nil, s.Editor)
			if status != 200 {
				t.Fatalf("status %d: %s", status, body)
			}
			got := testenv.Decode[listBody](t, body)
			names := []string{}
			for _, c := range got.Contributors {
				names = append(names, c.FirstName)
			}
			if !slices.Equal(names, tt.wantFirst) || got.Max != tt.max || got.From != tt.from ||
				got.To != tt.from+int64(len(names)) || got.MaxExact == nil || *got.MaxExact != tt.exact {
				t.Errorf("got %s, want first names %v max %d exact %t from %d", body, tt.wantFirst, tt.max, tt.exact, tt.from)
			}
		})
	}
}

func compact(t *testing.T, raw []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func TestDetail(t *testing.T) {
	s := newServer(t)
	s.DB.Exec(t, `UPDATE contributors SET image = 'contributors/19/v1' WHERE id = $1`, murata)
	t.Run("shape", func(t *testing.T) {
		s.Counter.Reset()
		status, body := s.Do(t, "GET", fmt.Sprint("/admin-contributors/id/", one), nil, s.Editor)
		if status != 200 {
			t.Fatalf("status %d: %s", status, body)
		}
		if n := s.Counter.Count(); n > 2 {
			t.Errorf("%d round trips, want at most 2", n)
		}
		want := `{"aliases":[{"id":18,"language":"Japanese","title":"ワン"}],` +
			`"descriptions":[{"description":"Manga artist known by his pen name, creator of One-Punch Man and Mob Psycho 100.","id":19,"language":"English","source":"Wikipedia"}],` +
			`"first_name":"ONE","gender":"male","id":18,"image":"","last_name":null,` +
			`"links":[{"domain":"en.wikipedia.org","url":"https://en.wikipedia.org/wiki/One_(manga_artist)"}],` +
			`"public":true,"relations":[{"id":1,"image":"contributors/19/v1","name":"Yusuke Murata","relation_id":19,"slug":"yusuke-murata","type":"Collaborator"}],` +
			`"slug":"one","type":"person"}`
		if got := compact(t, body); got != want {
			t.Errorf("detail\n got %s\nwant %s", got, want)
		}
	})
	// Links and sources stored past the request checks (written before them, by an
	// import, by SQL) are served only when they are links: the API never hands a
	// frontend a javascript: or data: URL to render.
	t.Run("stored links that are not links", func(t *testing.T) {
		s.DB.Exec(t, `INSERT INTO contributor_links (contributor_id, url) VALUES
			($1, 'javascript:alert(document.cookie)'), ($1, ' JavaScript:alert(1)'), ($1, 'data:text/html,x'),
			($1, 'twitter.com/one'), ($1, 'https://x.example/one')`, murata)
		s.DB.Exec(t, `INSERT INTO contributor_descriptions (contributor_id, description, language, source) VALUES
			($1, 'a', 'English', 'javascript:alert(1)'), ($1, 'b', 'English', E'java\tscript:alert(1)'),
			($1, 'c', 'English', 'Wikipedia'), ($1, 'd', 'English', 'https://x.example/src')`, murata)
		status, body := s.Do(t, "GET", fmt.Sprint("/admin-contributors/id/", murata), nil, s.Editor)
		if status != 200 {
			t.Fatalf("status %d: %s", status, body)
		}
		var d struct {
			Links        []struct{ URL, Domain string }
			Descriptions []struct{ Description, Source string }
		}
		if err := json.Unmarshal(body, &d); err != nil {
			t.Fatal(err)
		}
		var urls, sources []string
		for _, l := range d.Links {
			urls = append(urls, l.URL)
		}
		for _, x := range d.Descriptions {
			sources = append(sources, x.Description+"="+x.Source)
		}
		if got := strings.Join(urls, " "); !strings.HasSuffix(got, "https://twitter.com/one https://x.example/one") ||
			strings.Contains(got, "script") || strings.Contains(got, "data:") {
			t.Errorf("links served: %q, want of the stored five the https one and twitter.com/one with https://", urls)
		}
		if got := strings.Join(sources, " "); !strings.HasSuffix(got, "a= b= c=Wikipedia d=https://x.example/src") {
			t.Errorf("sources served: %q, want the javascript: ones empty", sources)
		}
	})
	for _, tt := range []struct {
		name, id   string
		wantStatus int
		wantMsg    string
	}{
		{"non-numeric id", "abc", 400, "Required parameters missing"},
		{"zero id", "0", 400, "Required parameters missing"},
		{"negative id", "-3", 400, "Required parameters missing"},
		{"fraction", "1.5", 400, "Required parameters missing"},
		{"unknown id", "9999", 404, "Contributor not found"},
		{"id beyond int64", "99999999999999999999", 400, "Required parameters missing"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, body := s.Do(t, "GET", "/admin-contributors/id/"+tt.id, nil, s.Admin)
			wantMessage(t, status, body, tt.wantStatus, tt.wantMsg)
		})
	}
}

// TestLock: the edit lock seen from the list, through the routes.
func TestLock(t *testing.T) {
	s := newServer(t)
	viewer := testenv.SessionCookie(t, testenv.NewSessions(t, s.DB, s.Config),
		testenv.NewUser(t, s.DB, "viewer", auth.PermViewContributors))
	lockOf := func(t *testing.T, id int64) string {
		t.Helper()
		_, body := s.Do(t, "GET", "/admin-contributors?client=1", nil, s.Admin)
		for _, c := range testenv.Decode[listBody](t, body).Contributors {
			if c.ID == id {
				if c.LockedBy == nil {
					return ""
				}
				return fmt.Sprintf("%d:%s", c.LockedBy.ID, c.LockedBy.Username)
			}
		}
		t.Fatalf("contributor %d not in the list", id)
		return ""
	}
	steps := []struct {
		name   string
		method string
		path   string
		body   any
		cookie *http.Cookie
		want   string // lock of kubo afterwards
	}{
		{"nobody has opened it", "", "", nil, nil, ""},
		{"a viewer without edit permission opens it", "GET", "/admin-contributors/id/3", nil, viewer, ""},
		{"the editor opens it", "GET", "/admin-contributors/id/3", nil, s.Editor, "2:editor"},
		{"the admin opens it while the editor's lock lives", "GET", "/admin-contributors/id/3", nil, s.Admin, "2:editor"},
		{"the admin edits it: the editor's lock stays", "POST", "/admin-contributors/edit/3",
			map[string]any{"first_name": "Tite", "last_name": "Kubo"}, s.Admin, "2:editor"},
		{"the editor opens it again", "GET", "/admin-contributors/id/3", nil, s.Editor, "2:editor"},
		{"the editor edits it: the lock is gone", "POST", "/admin-contributors/edit/3",
			map[string]any{"first_name": "Tite", "last_name": "Kubo"}, s.Editor, ""},
		{"the admin opens it", "GET", "/admin-contributors/id/3", nil, s.Admin, "1:admin"},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			if st.method != "" {
				if status, body := s.Do(t, st.method, st.path, st.body, st.cookie); status != 200 {
					t.Fatalf("status %d: %s", status, body)
				}
			}
			if got := lockOf(t, kubo); got != st.want {
				t.Errorf("locked_by %q, want %q", got, st.want)
			}
		})
	}
	t.Run("an expired lock counts as absent", func(t *testing.T) {
		s.DB.Exec(t, `UPDATE contributor_locks SET expires_at = now() - interval '1 second' WHERE contributor_id = $1`, kubo)
		if got := lockOf(t, kubo); got != "" {
			t.Errorf("locked_by %q after expiry", got)
		}
		s.Do(t, "GET", "/admin-contributors/id/3", nil, s.Editor)
		if got := lockOf(t, kubo); got != "2:editor" {
			t.Errorf("locked_by %q, want the editor's new lock", got)
		}
	})
}

func TestAdd(t *testing.T) {
	s := newServer(t)
	s.DB.Exec(t, `INSERT INTO clients (id, name) VALUES (2, 'Other') ON CONFLICT DO NOTHING`)
	const missing = "Required parameters missing"
	tests := []struct {
		name       string
		target     string
		body       any
		wantStatus int
		wantMsg    string
		// wantRow, for 200: client, first name, last name (or <nil>), slug of the new row.
		wantRow string
	}{
		{"first and last name", "", `{"first_name":"Junji","last_name":"Ito"}`, 200, "Contributor added successfully", "1|Junji|Ito|junji-ito"},
		{"first name only", "", `{"first_name":"Boichi"}`, 200, "Contributor added successfully", "1|Boichi|<nil>|boichi"},
		{"null last name, trimmed", "", `{"first_name":"  Riichiro ","last_name":null}`, 200, "Contributor added successfully", "1|Riichiro|<nil>|riichiro"},
		{"client in the body", "", `{"first_name":"Junji","last_name":"Ito","client":2}`, 200, "Contributor added successfully", "2|Junji|Ito|junji-ito-2"},
		{"client in the query", "?client=2", `{"first_name":"Boichi"}`, 200, "Contributor added successfully", "2|Boichi|<nil>|boichi-2"},
		{"unknown fields are ignored", "", `{"first_name":"Q","extra":[1]}`, 200, "Contributor added successfully", "1|Q|<nil>|q"},
		{"taken name", "", `{"first_name":"Eiichiro","last_name":"Oda"}`, 409, "Contributor with this Name exists already.", ""},
		{"taken name, other case", "", `{"first_name":"eiichiro","last_name":"ODA"}`, 409, "Contributor with this Name exists already.", ""},
		{"taken name without last name", "", `{"first_name":"one","last_name":""}`, 409, "Contributor with this Name exists already.", ""},
		{"missing first name", "", `{"last_name":"Ito"}`, 400, missing, ""},
		{"null first name", "", `{"first_name":null}`, 400, missing, ""},
		{"blank first name", "", `{"first_name":"   "}`, 400, missing, ""},
		{"numeric first name", "", `{"first_name":5}`, 400, missing, ""},
		{"numeric last name", "", `{"first_name":"A","last_name":5}`, 400, missing, ""},
		{"string client", "", `{"first_name":"A","client":"2"}`, 400, missing, ""},
		{"zero client", "", `{"first_name":"A","client":0}`, 400, missing, ""},
		{"fractional client", "", `{"first_name":"A","client":1.5}`, 400, missing, ""},
		{"unknown client", "", `{"first_name":"A","client":77}`, 400, missing, ""},
		{"bad query client", "?client=x", `{"first_name":"A"}`, 400, missing, ""},
		{"malformed JSON", "", `{"first_name":"A"`, 400, missing, ""},
		{"trailing data", "", `{"first_name":"A"} {}`, 400, missing, ""},
		{"array body", "", `["A"]`, 400, missing, ""},
		{"empty body", "", ``, 400, missing, ""},
		// A name's search texts and substring counts grow with its length: an
		// unbounded name would keep the database busy until the statement timeout.
		{"a first name of 100,000 characters", "", `{"first_name":"` + strings.Repeat("x", 100000) + `"}`, 400, "Invalid first_name: at most 100 characters", ""},
		{"a last name of 100,000 characters", "", `{"first_name":"A","last_name":"` + strings.Repeat("x", 100000) + `"}`, 400, "Invalid last_name: at most 100 characters", ""},
		{"a right-to-left override", "", `{"first_name":"Jun\u202Eji"}`, 400, "Invalid first_name: control characters and invisible formatting characters (such as U+202E) are not allowed", ""},
		{"a line break", "", `{"first_name":"Jun\nji"}`, 400, "Invalid first_name: control characters and invisible formatting characters (such as U+000A) are not allowed", ""},
		{"a name of 100 characters", "", `{"first_name":"` + strings.Repeat("é", 100) + `"}`, 200, "Contributor added successfully", "1|" + strings.Repeat("é", 100) + "|<nil>|" + strings.Repeat("e", 100)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := s.DB.Int(t, `SELECT max(id) FROM contributors`)
			status, body := s.Do(t, "POST", "/admin-contributors/add"+tt.target, tt.body, s.Editor)
			wantMessage(t, status, body, tt.wantStatus, tt.wantMsg)
			after := s.DB.Int(t, `SELECT max(id) FROM contributors`)
			if tt.wantRow == "" {
				if after != before {
					t.Errorf("a rejected add inserted a row")
				}
				return
			}
			var row string
			if err := s.DB.Pool.QueryRow(context.Background(), `SELECT client_id || '|' || first_name || '|' ||
				coalesce(last_name, '<nil>') || '|' || slug FROM contributors WHERE id = $1`, after).Scan(&row); err != nil {
				t.Fatal(err)
			}
			if after == before || row != tt.wantRow {
				t.Errorf("row %q, want %q", row, tt.wantRow)
			}
		})
	}
}

// TestRacingAdds: adds of one name at once answer one 200 and otherwise 409, never 500.
func TestRacingAdds(t *testing.T) {
	s := newServer(t)
	const rounds, racers = 15, 8
	for round := range rounds {
		statuses := make([]int, racers)
		var wg sync.WaitGroup
		for i := range racers {
			wg.Go(func() {
				first := fmt.Sprintf("Racer%d", round)
				if i%2 == 1 {
					first = strings.ToUpper(first)
				}
				status, _ := s.Do(t, "POST", "/admin-contributors/add", map[string]any{"first_name": first, "last_name": "Same"}, s.Editor)
				statuses[i] = status
			})
		}
		wg.Wait()
		count := map[int]int{}
		for _, st := range statuses {
			count[st]++
		}
		if count[200] != 1 || count[409] != racers-1 {
			t.Fatalf("round %d: statuses %v, want one 200 and %d 409", round, count, racers-1)
		}
	}
	if n := s.DB.Int(t, `SELECT count(*) FROM contributors WHERE last_name = 'Same'`); n != rounds {
		t.Errorf("%d racers stored, want %d", n, rounds)
	}
}

func TestEdit(t *testing.T) {
	s := newServer(t)
	s.DB.Exec(t, `INSERT INTO clients (id, name) VALUES (2, 'Other') ON CONFLICT DO NOTHING`)
	s.DB.Exec(t, `INSERT INTO contributors (id, client_id, first_name, slug) VALUES (500, 2, 'Elsewhere', 'elsewhere')`)
	// Ids of rows that belong to other contributors than oda.
	foreignAlias := s.DB.Int(t, `SELECT min(id) FROM contributor_aliases WHERE contributor_id = $1`, kubo)
	foreignDesc := s.DB.Int(t, `SELECT min(id) FROM contributor_descriptions WHERE contributor_id = $1`, kubo)
	foreignRel := s.DB.Int(t, `SELECT min(id) FROM contributor_relations WHERE contributor_id = $1`, togashi)
	const missing = "Required parameters missing"
	const notLink = "Invalid links: not an http or https address"
	name := `"first_name":"Eiichiro","last_name":"Oda"`
	long := func(n int) string { return strings.Repeat("a", n) }
	invisible := func(field string, r rune) string {
		return fmt.Sprintf("Invalid %s: control characters and invisible formatting characters (such as U+%04X) are not allowed", field, r)
	}

	// Rejected edits: nothing may change anywhere.
	rejected := []struct {
		name, id, body string
		wantStatus     int
		wantMsg        string
	}{
		{"non-numeric id", "abc", `{` + name + `}`, 400, missing},
		{"zero id", "0", `{` + name + `}`, 400, missing},
		{"malformed JSON", "1", `{` + name, 400, missing},
		{"empty body", "1", ``, 400, missing},
		{"missing first_name", "1", `{"last_name":"Oda"}`, 400, missing},
		{"blank first_name", "1", `{"first_name":" "}`, 400, missing},
		{"numeric first_name", "1", `{"first_name":1}`, 400, missing},
		{"gender of the wrong type", "1", `{` + name + `,"gender":true}`, 400, missing},
		{"public of the wrong type", "1", `{` + name + `,"public":"yes"}`, 400, missing},
		{"links not an array", "1", `{` + name + `,"links":"https://x.example"}`, 400, missing},
		{"a link not a string", "1", `{` + name + `,"links":[1]}`, 400, missing},
		{"a blank link", "1", `{` + name + `,"links":["https://x.example"," "]}`, 400, missing},
		{"a javascript: link", "1", `{` + name + `,"links":["javascript:alert(document.cookie)"]}`, 400, notLink},
		{"a JavaScript: link in capitals", "1", `{` + name + `,"links":["https://x.example"," JavaScript:alert(1)"]}`, 400, notLink},
		{"a data: link", "1", `{` + name + `,"links":["data:text/html,<script>alert(1)</script>"]}`, 400, notLink},
		{"an ftp link", "1", `{` + name + `,"links":["ftp://x.example/file"]}`, 400, notLink},
		{"a link without a scheme", "1", `{` + name + `,"links":["twitter.com/oda"]}`, 400, notLink},
		{"a protocol-relative link", "1", `{` + name + `,"links":["//evil.example/x"]}`, 400, notLink},
		{"a link without a host", "1", `{` + name + `,"links":["https:///path"]}`, 400, notLink},
		// Bounded, printable text: each field has its maximum in characters
		// and names refuse control and invisible formatting characters.
		{"a first_name of 100,000 characters", "1", `{"first_name":"` + long(100000) + `"}`, 400, "Invalid first_name: at most 100 characters"},
		{"a first_name of 101 characters", "1", `{"first_name":"` + long(101) + `"}`, 400, "Invalid first_name: at most 100 characters"},
		{"a first_name of 101 characters of 4 bytes", "1", `{"first_name":"` + strings.Repeat("😀", 101) + `"}`, 400, "Invalid first_name: at most 100 characters"},
		{"a last_name of 101 characters", "1", `{"first_name":"E","last_name":"` + long(101) + `"}`, 400, "Invalid last_name: at most 100 characters"},
		{"a right-to-left override in first_name", "1", `{"first_name":"Eii\u202Echiro"}`, 400, invisible("first_name", 0x202E)},
		{"a zero-width space in last_name", "1", `{"first_name":"E","last_name":"O\u200Bda"}`, 400, invisible("last_name", 0x200B)},
		{"a tab in first_name", "1", `{"first_name":"Eii\tchiro"}`, 400, invisible("first_name", 0x09)},
		{"a Hangul filler in first_name", "1", `{"first_name":"E\u3164"}`, 400, invisible("first_name", 0x3164)},
		{"a variation selector in last_name", "1", `{"first_name":"E","last_name":"Oda\uFE0F"}`, 400, invisible("last_name", 0xFE0F)},
		{"a gender of 51 characters", "1", `{` + name + `,"gender":"` + long(51) + `"}`, 400, "Invalid gender: at most 50 characters"},
		{"a bidi isolate in type", "1", `{` + name + `,"type":"a\u2066b"}`, 400, invisible("type", 0x2066)},
		{"a link of 2,049 characters", "1", `{` + name + `,"links":["https://x.example/` + long(2049-len("https://x.example/")) + `"]}`, 400, "Invalid links: at most 2048 characters"},
		{"an alias title of 201 characters", "1", `{` + name + `,"added_aliases":[{"title":"` + long(201) + `","language":"English"}]}`, 400, "Invalid added_aliases.title: at most 200 characters"},
		{"an alias language of 33 characters", "1", `{` + name + `,"added_aliases":[{"title":"T","language":"` + long(33) + `"}]}`, 400, "Invalid added_aliases.language: at most 32 characters"},
		{"a description of 10,001 characters", "1", `{` + name + `,"added_descriptions":[{"description":"` + long(10001) + `","language":"English"}]}`, 400, "Invalid added_descriptions.description: at most 10000 characters"},
		{"a right-to-left override in a description", "1", `{` + name + `,"added_descriptions":[{"description":"a\u202Eb","language":"English"}]}`, 400, invisible("added_descriptions.description", 0x202E)},
		{"a javascript: source", "1", `{` + name + `,"added_descriptions":[{"description":"D","language":"English","source":"javascript:alert(1)"}]}`, 400, "Invalid added_descriptions.source: an address other than http or https"},
		{"a javascript: source with a tab", "1", `{` + name + `,"added_descriptions":[{"description":"D","language":"English","source":"java\tscript:alert(1)"}]}`, 400, invisible("added_descriptions.source", 0x09)},
		{"a data: source, modified", "1", `{` + name + `,"modified_descriptions":[{"id":1,"description":"D","language":"English","source":"data:text/html,x"}]}`, 400, "Invalid modified_descriptions.source: an address other than http or https"},
		{"a relation type of 51 characters", "1", `{` + name + `,"added_relations":[{"relation_id":2,"type":"` + long(51) + `"}]}`, 400, "Invalid added_relations.type: at most 50 characters"},
		{"removed_aliases of strings", "1", `{` + name + `,"removed_aliases":["1"]}`, 400, missing},
		{"removed_aliases not an array", "1", `{` + name + `,"removed_aliases":1}`, 400, missing},
		{"added alias without title", "1", `{` + name + `,"added_aliases":[{"language":"English"}]}`, 400, missing},
		{"added alias with a numeric title", "1", `{` + name + `,"added_aliases":[{"title":1,"language":"English"}]}`, 400, missing},
		{"added description without language", "1", `{` + name + `,"added_descriptions":[{"description":"x"}]}`, 400, missing},
		{"modified description twice", "1", `{` + name + `,"modified_descriptions":[{"id":1,"description":"a","language":"x"},{"id":1,"description":"b","language":"x"}]}`, 400, missing},
		{"modified description without id", "1", `{` + name + `,"modified_descriptions":[{"description":"a","language":"x"}]}`, 400, missing},
		{"added relation without type", "1", `{` + name + `,"added_relations":[{"relation_id":2}]}`, 400, missing},
		{"added relation with a string id", "1", `{` + name + `,"added_relations":[{"relation_id":"2","type":"x"}]}`, 400, missing},
		{"removed alias of another contributor", "1", fmt.Sprintf(`{%s,"removed_aliases":[1,%d]}`, name, foreignAlias), 400, missing},
		{"removed unknown alias", "1", `{` + name + `,"removed_aliases":[99999]}`, 400, missing},
		{"removed description of another contributor", "1", fmt.Sprintf(`{%s,"removed_descriptions":[%d]}`, name, foreignDesc), 400, missing},
		{"modified description of another contributor", "1", fmt.Sprintf(`{%s,"modified_descriptions":[{"id":%d,"description":"x","language":"English"}]}`, name, foreignDesc), 400, missing},
		{"removed relation of another contributor", "1", fmt.Sprintf(`{%s,"removed_relations":[%d]}`, name, foreignRel), 400, missing},
		{"modified relation of another contributor", "1", fmt.Sprintf(`{%s,"modified_relations":[{"id":%d,"relation_id":2,"type":"x"}]}`, name, foreignRel), 400, missing},
		{"relation to itself", "1", `{` + name + `,"added_relations":[{"relation_id":1,"type":"self"}]}`, 400, missing},
		{"relation to an unknown contributor", "1", `{` + name + `,"added_relations":[{"relation_id":99999,"type":"x"}]}`, 400, missing},
		{"relation to another client's contributor", "1", `{` + name + `,"added_relations":[{"relation_id":500,"type":"x"}]}`, 400, missing},
		{"good changes spoiled by one foreign id", "1", fmt.Sprintf(`{"first_name":"Changed","links":["https://x.example"],"public":true,`+
			`"added_aliases":[{"title":"T","language":"L"}],"added_descriptions":[{"description":"D","language":"L"}],`+
			`"added_relations":[{"relation_id":2,"type":"t"}],"removed_aliases":[%d]}`, foreignAlias), 400, missing},
		{"unknown contributor", "9999", `{` + name + `}`, 404, "Contributor not found"},
		{"rename to a taken name", "1", `{"first_name":"tite","last_name":"KUBO"}`, 409, "Contributor with this Name exists already."},
	}
	for _, tt := range rejected {
		t.Run(tt.name, func(t *testing.T) {
			before := s.allState(t)
			status, body := s.Do(t, "POST", "/admin-contributors/edit/"+tt.id, tt.body, s.Editor)
			wantMessage(t, status, body, tt.wantStatus, tt.wantMsg)
			if after := s.allState(t); after != before {
				t.Errorf("a rejected edit changed the data")
			}
		})
	}

	// Accepted edits, one after another on oda; each is checked through the detail.
	type detail struct {
		FirstName string  `json:"first_name"`
		LastName  *string `json:"last_name"`
		Gender    string  `json:"gender"`
		Type      string  `json:"type"`
		Public    bool    `json:"public"`
		Slug      string  `json:"slug"`
		Links     []struct {
			URL    string `json:"url"`
			Domain string `json:"domain"`
		} `json:"links"`
		Aliases []struct {
			ID              int64
			Title, Language string
		} `json:"aliases"`
		Descriptions []struct {
			ID                            int64
			Description, Language, Source string
		} `json:"descriptions"`
		Relations []struct {
			ID         int64  `json:"id"`
			RelationID int64  `json:"relation_id"`
			Type       string `json:"type"`
			Name       string `json:"name"`
		} `json:"relations"`
	}
	get := func(t *testing.T) detail {
		t.Helper()
		status, body := s.Do(t, "GET", "/admin-contributors/id/1", nil, s.Editor)
		if status != 200 {
			t.Fatalf("detail: %d %s", status, body)
		}
		return testenv.Decode[detail](t, body)
	}
	accepted := []struct {
		name  string
		body  func(d detail) string
		check func(t *testing.T, d detail)
	}{
		{"fields and links", func(detail) string {
			return `{"first_name":"Eiichiro","last_name":"Oda","gender":"male","type":"mangaka","public":true,` +
				`"links":["https://www.onepiece.example/oda","HTTP://twitter.com/oda"]}`
		}, func(t *testing.T, d detail) {
			if d.Gender != "male" || d.Type != "mangaka" || !d.Public || d.Slug != "eiichiro-oda" || len(d.Links) != 2 ||
				d.Links[0].Domain != "onepiece.example" || d.Links[1].Domain != "twitter.com" {
				t.Errorf("detail %+v", d)
			}
		}},
		{"defaults clear: no links, null fields, not public", func(detail) string {
			return `{"first_name":"Eiichiro"}`
		}, func(t *testing.T, d detail) {
			if d.LastName != nil || d.Gender != "" || d.Type != "" || d.Public || len(d.Links) != 0 {
				t.Errorf("detail %+v", d)
			}
		}},
		{"added aliases, descriptions, relations", func(detail) string {
			return `{"first_name":"Eiichiro","last_name":"Oda",` +
				`"added_aliases":[{"title":"Oda-sensei","language":"English"}],` +
				`"added_descriptions":[{"description":"Creator of One Piece.","language":"German","source":"Wiki"},{"description":"Zweite.","language":"German"}],` +
				`"added_relations":[{"relation_id":2,"type":"assistant"},{"relation_id":3,"type":"friend"}]}`
		}, func(t *testing.T, d detail) {
			if len(d.Aliases) != 2 || d.Aliases[1].Title != "Oda-sensei" || len(d.Descriptions) != 3 ||
				d.Descriptions[1].Source != "Wiki" || d.Descriptions[2].Source != "" || len(d.Relations) != 2 ||
				d.Relations[0].Name != "Masashi Kishimoto" || d.Relations[1].RelationID != 3 {
				t.Errorf("detail %+v", d)
			}
		}},
		{"modified descriptions and relations", func(d detail) string {
			return fmt.Sprintf(`{"first_name":"Eiichiro","last_name":"Oda",`+
				`"modified_descriptions":[{"id":%d,"description":"Changed.","language":"French","source":"S"}],`+
				`"modified_relations":[{"id":%d,"relation_id":4,"type":"admirer"}]}`, d.Descriptions[1].ID, d.Relations[0].ID)
		}, func(t *testing.T, d detail) {
			if d.Descriptions[1].Description != "Changed." || d.Descriptions[1].Language != "French" ||
				d.Relations[0].RelationID != 4 || d.Relations[0].Type != "admirer" || d.Relations[0].Name != "Akira Toriyama" {
				t.Errorf("detail %+v", d)
			}
		}},
		{"removed aliases, descriptions, relations", func(d detail) string {
			return fmt.Sprintf(`{"first_name":"Eiichiro","last_name":"Oda","removed_aliases":[%d],"removed_descriptions":[%d,%d],"removed_relations":[%d,%d]}`,
				d.Aliases[0].ID, d.Descriptions[0].ID, d.Descriptions[2].ID, d.Relations[0].ID, d.Relations[1].ID)
		}, func(t *testing.T, d detail) {
			if len(d.Aliases) != 1 || d.Aliases[0].Title != "Oda-sensei" || len(d.Descriptions) != 1 ||
				d.Descriptions[0].Description != "Changed." || len(d.Relations) != 0 {
				t.Errorf("detail %+v", d)
			}
		}},
		{"text at its bounds; prose with line breaks, a joined emoji and a mark of direction", func(detail) string {
			return `{"first_name":"` + strings.Repeat("é", 100) + `","last_name":"Oda",` +
				`"added_descriptions":[{"description":"Line one.\nLine two 👩\u200d💻 \u200f.","language":"` + long(32) + `",` +
				`"source":"https://en.wikipedia.org/wiki/Eiichiro_Oda"}]}`
		}, func(t *testing.T, d detail) {
			last := d.Descriptions[len(d.Descriptions)-1]
			if d.FirstName != strings.Repeat("é", 100) || last.Description != "Line one.\nLine two 👩\u200d💻 \u200f." ||
				last.Source != "https://en.wikipedia.org/wiki/Eiichiro_Oda" {
				t.Errorf("detail %+v", d)
			}
		}},
	}
	for _, tt := range accepted {
		t.Run(tt.name, func(t *testing.T) {
			others := s.state(t, kubo) + s.state(t, 2) + s.state(t, 3)
			status, body := s.Do(t, "POST", "/admin-contributors/edit/1", tt.body(get(t)), s.Editor)
			wantMessage(t, status, body, 200, "Contributor updated successfully")
			tt.check(t, get(t))
			if after := s.state(t, kubo) + s.state(t, 2) + s.state(t, 3); after != others {
				t.Errorf("an edit of 1 changed other contributors")
			}
		})
	}
}

func TestDelete(t *testing.T) {
	s := newServer(t)
	s.DB.Exec(t, `UPDATE contributors SET image = 'contributors/18/v3' WHERE id = $1`, one)
	s.DB.Exec(t, `INSERT INTO contributor_locks (contributor_id, locked_by, expires_at) VALUES ($1, 2, now() + interval '1 hour')`, one)
	s.DB.Exec(t, `INSERT INTO series_contributors (series_id, contributor_id, role) SELECT min(id), $1, 'artist' FROM series`, one)
	about := func(id int64) string {
		return fmt.Sprintf(`SELECT
			(SELECT count(*) FROM contributors WHERE id = %[1]d) +
			(SELECT count(*) FROM contributor_links WHERE contributor_id = %[1]d) +
			(SELECT count(*) FROM contributor_aliases WHERE contributor_id = %[1]d) +
			(SELECT count(*) FROM contributor_descriptions WHERE contributor_id = %[1]d) +
			(SELECT count(*) FROM contributor_relations WHERE contributor_id = %[1]d OR related_id = %[1]d) +
			(SELECT count(*) FROM series_contributors WHERE contributor_id = %[1]d) +
			(SELECT count(*) FROM contributor_locks WHERE contributor_id = %[1]d)`, id)
	}
	if n := s.DB.Int(t, about(one)); n < 1+1+1+1+2+1+1 {
		t.Fatalf("fixture: only %d rows about ONE", n)
	}
	muratasOwn := s.DB.Int(t, `SELECT count(*) FROM contributor_aliases WHERE contributor_id = $1`, murata)

	tests := []struct {
		name        string
		id          string
		wantStatus  int
		wantMsg     string
		wantRemoved string // avatar key removed after the commit
	}{
		{"with an avatar and everything", "18", 200, "Contributor deleted successfully", "contributors/18/v3"},
		{"again", "18", 404, "Contributor not found", ""},
		{"without an avatar", "20", 200, "Contributor deleted successfully", ""},
		{"unknown", "9999", 404, "Contributor not found", ""},
		{"non-numeric id", "x", 400, "Required parameters missing", ""},
		{"negative id", "-1", 400, "Required parameters missing", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := s.Do(t, "DELETE", "/admin-contributors/delete/"+tt.id, nil, s.Admin)
			wantMessage(t, status, body, tt.wantStatus, tt.wantMsg)
			removed := strings.Join(s.avatars.taken(), ",")
			if removed != tt.wantRemoved {
				t.Errorf("avatars removed %q, want %q", removed, tt.wantRemoved)
			}
		})
	}
	if n := s.DB.Int(t, about(one)); n != 0 {
		t.Errorf("%d rows about ONE survive its delete", n)
	}
	if n := s.DB.Int(t, about(asano)); n != 0 {
		t.Errorf("%d rows about Asano survive his delete", n)
	}
	if n := s.DB.Int(t, `SELECT count(*) FROM contributor_aliases WHERE contributor_id = $1`, murata); n != muratasOwn {
		t.Errorf("Murata's aliases went with ONE")
	}
	if n := s.DB.Int(t, `SELECT count(*) FROM contributors`); n != 18 {
		t.Errorf("%d contributors left, want 18", n)
	}
}

// TestEvents runs each route's event from events/admin-contributors through the Lambda
// entry, as the admin, against the demo data.
func TestEvents(t *testing.T) {
	tests := []struct {
		event      string
		wantStatus int
		check      func(t *testing.T, s *server, body []byte)
	}{
		{"list-contributors.json", 200, func(t *testing.T, s *server, body []byte) {
			got := testenv.Decode[listBody](t, body)
			if got.Max == 0 || got.From != 0 || got.To != int64(len(got.Contributors)) || len(got.Contributors) > 10 {
				t.Errorf("envelope %+v", got)
			}
		}},
		{"get-contributor.json", 200, func(t *testing.T, s *server, body []byte) {
			if got := testenv.Decode[listItem](t, body); got.ID != kubo || got.FirstName != "Tite" {
				t.Errorf("detail %s", body)
			}
			if n := s.DB.Int(t, `SELECT count(*) FROM contributor_locks WHERE contributor_id = $1 AND locked_by = $2`, kubo, demo.AdminUserID); n != 1 {
				t.Errorf("the admin's detail read took no lock")
			}
		}},
		{"add-contributor.json", 200, func(t *testing.T, s *server, body []byte) {
			wantMessage(t, 200, body, 200, "Contributor added successfully")
			if n := s.DB.Int(t, `SELECT count(*) FROM contributors WHERE first_name = 'Junji' AND last_name = 'Ito' AND client_id = 1`); n != 1 {
				t.Errorf("no Junji Ito")
			}
		}},
		{"edit-contributor.json", 200, func(t *testing.T, s *server, body []byte) {
			wantMessage(t, 200, body, 200, "Contributor updated successfully")
			if n := s.DB.Int(t, `SELECT count(*) FROM contributors WHERE id = $1 AND first_name = 'Tite' AND gender = 'male' AND public`, kubo); n != 1 {
				t.Errorf("the edit did not land")
			}
			if n := s.DB.Int(t, `SELECT count(*) FROM contributor_relations WHERE contributor_id = $1 AND related_id = 4`, kubo); n != 1 {
				t.Errorf("the relation did not land")
			}
		}},
		{"delete-contributor.json", 200, func(t *testing.T, s *server, body []byte) {
			wantMessage(t, 200, body, 200, "Contributor deleted successfully")
			if n := s.DB.Int(t, `SELECT count(*) FROM contributors WHERE id = $1`, asano); n != 0 {
				t.Errorf("contributor 20 is still there")
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.event, func(t *testing.T) {
			s := newServer(t)
			s.Counter.Reset()
			resp := testenv.Invoke(t, s.Handler, testenv.AuthEvent(t, "admin-contributors/"+tt.event, s.Admin))
			body := testenv.ResponseBody(t, resp)
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.wantStatus, body)
			}
			if strings.HasPrefix(tt.event, "list-") || strings.HasPrefix(tt.event, "get-") {
				if n := s.Counter.Count(); n > 2 {
					t.Errorf("%d round trips, want at most 2", n)
				}
			}
			tt.check(t, s, body)
			// Without a session the same event is refused.
			resp = testenv.Invoke(t, s.Handler, testenv.Event(t, "admin-contributors/"+tt.event))
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("placeholder cookie: status %d, want 401", resp.StatusCode)
			}
		})
	}
}
