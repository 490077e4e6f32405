package demo_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/gosimple/slug"
	"github.com/jackc/pgx/v5"

	"github.com/mediacatalog/service/infra/local/demo"
	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/namekey"
	"github.com/mediacatalog/service/shared/postgres"
)

// demoTables are every table the demo data writes, with the column that orders them.
var demoTables = []string{
	"clients", "tags", "publishers", "publisher_descriptions", "publisher_aliases", "publisher_relations",
	"series", "series_aliases", "series_descriptions", "volumes", "series_tags", "series_publishers",
	"contributors", "contributor_links", "contributor_aliases", "contributor_descriptions",
	"contributor_relations", "series_contributors", "permissions", "roles", "role_permissions",
	"users", "user_roles",
}

// identityTables are the tables whose id sequences the loaders move.
var identityTables = []string{
	"tags", "publishers", "publisher_descriptions", "publisher_aliases", "publisher_relations",
	"series", "series_aliases", "series_descriptions", "volumes", "contributors",
	"contributor_links", "contributor_aliases", "contributor_descriptions", "contributor_relations",
}

// snapshot is a digest of every demo table's rows and of the id sequences.
func snapshot(t *testing.T, db *postgres.DB) map[string]string {
	t.Helper()
	ctx := context.Background()
	snap := map[string]string{}
	for _, table := range demoTables {
		var n int64
		var digest string
		err := db.Pool.QueryRow(ctx, fmt.Sprintf(
			`SELECT count(*), md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) FROM %s t`, table),
		).Scan(&n, &digest)
		if err != nil {
			t.Fatalf("snapshot %s: %v", table, err)
		}
		snap[table] = fmt.Sprintf("%d rows, %s", n, digest)
	}
	for _, table := range identityTables {
		var last *int64
		err := db.Pool.QueryRow(ctx, fmt.Sprintf(
			`SELECT pg_sequence_last_value(pg_get_serial_sequence('%s', 'id')::regclass)`, table)).Scan(&last)
		if err != nil {
			t.Fatalf("sequence of %s: %v", table, err)
		}
		if last != nil {
			snap[table+" sequence"] = fmt.Sprint(*last)
		}
	}
	return snap
}

func sameSnapshot(t *testing.T, want, got map[string]string) {
	t.Helper()
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: was %s, now %s", k, w, got[k])
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: new after reload: %s", k, g)
		}
	}
}

func count(t *testing.T, db *postgres.DB, sql string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := db.Pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

func TestLoadIsIdempotent(t *testing.T) {
	ctx := context.Background()
	db := testenv.NewDB(t)
	if err := demo.Load(ctx, db.DB); err != nil {
		t.Fatalf("first load: %v", err)
	}
	first := snapshot(t, db.DB)
	if err := demo.Load(ctx, db.DB); err != nil {
		t.Fatalf("second load: %v", err)
	}
	sameSnapshot(t, first, snapshot(t, db.DB))

	// Rows added after the load take ids past the demo's, and survive a reload.
	var tagID int64
	if err := db.Pool.QueryRow(ctx, `INSERT INTO tags (client_id, name, type) VALUES (1, 'Added later', 'genre') RETURNING id`).Scan(&tagID); err != nil {
		t.Fatalf("insert a tag: %v", err)
	}
	if max := count(t, db.DB, `SELECT max(id) FROM tags WHERE name <> 'Added later'`); tagID <= max {
		t.Errorf("new tag id %d collides with the demo ids up to %d", tagID, max)
	}
	if err := demo.Load(ctx, db.DB); err != nil {
		t.Fatalf("third load: %v", err)
	}
	if n := count(t, db.DB, `SELECT count(*) FROM tags WHERE id = $1`, tagID); n != 1 {
		t.Errorf("the added tag is gone after a reload")
	}
}

func TestLoadContent(t *testing.T) {
	ctx := context.Background()
	db := testenv.NewDB(t)
	if err := demo.Load(ctx, db.DB); err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name string
		sql  string
		min  int64
		max  int64
	}{
		{"demo client", `SELECT count(*) FROM clients WHERE id = 1 AND name = 'Demo catalog'`, 1, 1},
		{"tags", `SELECT count(*) FROM tags WHERE client_id = 1`, 20, 1000},
		{"tag types", `SELECT count(DISTINCT type) FROM tags WHERE client_id = 1`, 3, 3},
		{"publishers", `SELECT count(*) FROM publishers WHERE client_id = 1`, 10, 10},
		{"publishers with an English and another description",
			`SELECT count(*) FROM publishers p
			 WHERE EXISTS (SELECT 1 FROM publisher_descriptions d WHERE d.publisher_id = p.id AND d.language = 'English')
			   AND EXISTS (SELECT 1 FROM publisher_descriptions d WHERE d.publisher_id = p.id AND d.language <> 'English')`, 10, 10},
		{"publishers with aliases", `SELECT count(DISTINCT publisher_id) FROM publisher_aliases`, 10, 10},
		{"publisher relations", `SELECT count(*) FROM publisher_relations`, 4, 100},
		{"series", `SELECT count(*) FROM series WHERE client_id = 1`, 60, 60},
		{"series without 1 to 5 volumes",
			`SELECT count(*) FROM series s WHERE (SELECT count(*) FROM volumes v WHERE v.series_id = s.id) NOT BETWEEN 1 AND 5`, 0, 0},
		{"series without a publisher",
			`SELECT count(*) FROM series s WHERE NOT EXISTS (SELECT 1 FROM series_publishers sp WHERE sp.series_id = s.id)`, 0, 0},
		{"series without an English description",
			`SELECT count(*) FROM series s WHERE NOT EXISTS (SELECT 1 FROM series_descriptions d WHERE d.series_id = s.id AND d.language = 'English')`, 0, 0},
		{"Japanese series descriptions", `SELECT count(*) FROM series_descriptions WHERE language = 'Japanese'`, 5, 60},
		{"series without tags",
			`SELECT count(*) FROM series s WHERE NOT EXISTS (SELECT 1 FROM series_tags st WHERE st.series_id = s.id)`, 0, 0},
		{"series without aliases",
			`SELECT count(*) FROM series s WHERE NOT EXISTS (SELECT 1 FROM series_aliases a WHERE a.series_id = s.id)`, 0, 0},
		{"tags in use", `SELECT count(DISTINCT tag_id) FROM series_tags`, 20, 1000},
		{"contributors", `SELECT count(*) FROM contributors WHERE client_id = 1`, 20, 20},
		{"contributor links", `SELECT count(*) FROM contributor_links`, 5, 100},
		{"contributor aliases", `SELECT count(*) FROM contributor_aliases`, 5, 100},
		{"contributor descriptions", `SELECT count(*) FROM contributor_descriptions`, 5, 100},
		{"contributor relations", `SELECT count(*) FROM contributor_relations`, 2, 100},
		{"contributors credited on series", `SELECT count(DISTINCT contributor_id) FROM series_contributors`, 20, 20},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			if n := count(t, db.DB, c.sql); n < c.min || n > c.max {
				t.Errorf("%d, want %d to %d", n, c.min, c.max)
			}
		})
	}

	// The ids the events and tests name.
	fixed := []struct{ sql, want string }{
		{`SELECT slug FROM publishers WHERE id = 1`, "kodansha"},
		{`SELECT slug FROM publishers WHERE id = 2`, "shueisha"},
		{`SELECT slug FROM series WHERE id = 1`, "one-piece"},
		{`SELECT name FROM tags WHERE id = 1`, "Action"},
		{`SELECT slug FROM contributors WHERE id = 1`, slug.Make("Eiichiro Oda")},
	}
	for _, f := range fixed {
		var got string
		if err := db.Pool.QueryRow(ctx, f.sql).Scan(&got); err != nil || got != f.want {
			t.Errorf("%s = %q (%v), want %q", f.sql, got, err, f.want)
		}
	}
}

func TestGenerate(t *testing.T) {
	ctx := context.Background()
	const client, scale = 2, 300
	want := demo.CountsFor(scale)

	tests := []struct {
		name        string
		loadFirst   bool
		loadAfter   bool
		generations int
	}{
		{"alone, twice", false, false, 2},
		{"after the demo data", true, false, 1},
		{"before the demo data", false, true, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db := testenv.NewDB(t)
			if tc.loadFirst {
				if err := demo.Load(ctx, db.DB); err != nil {
					t.Fatal(err)
				}
			}
			var before map[string]string
			for i := range tc.generations {
				if err := demo.Generate(ctx, db.DB, client, scale); err != nil {
					t.Fatalf("generate #%d: %v", i+1, err)
				}
				if i == 0 {
					before = snapshot(t, db.DB)
				}
			}
			if tc.generations > 1 {
				sameSnapshot(t, before, snapshot(t, db.DB))
			}
			if tc.loadAfter {
				if err := demo.Load(ctx, db.DB); err != nil {
					t.Fatal(err)
				}
			}

			counts := []struct {
				name string
				sql  string
				want int64
			}{
				{"series", `SELECT count(*) FROM series WHERE client_id = $1`, int64(want.Series)},
				{"publishers", `SELECT count(*) FROM publishers WHERE client_id = $1`, int64(want.Publishers)},
				{"tags", `SELECT count(*) FROM tags WHERE client_id = $1`, int64(want.Tags)},
				{"series without volumes", `SELECT count(*) FROM series s WHERE s.client_id = $1
					AND NOT EXISTS (SELECT 1 FROM volumes v WHERE v.series_id = s.id)`, 0},
				{"series without 2 tags", `SELECT count(*) FROM series s WHERE s.client_id = $1
					AND (SELECT count(*) FROM series_tags st WHERE st.series_id = s.id) <> 2`, 0},
				{"contributors", `SELECT count(*) FROM contributors WHERE client_id = $1`, int64(want.Contributors)},
				{"users", `SELECT count(*) FROM users WHERE slug LIKE 'g' || $1::bigint || '-user-%'`, int64(want.Users)},
				{"links whose columns differ from their series'", `SELECT count(*) FROM series_publishers sp
					JOIN series s ON s.id = sp.series_id WHERE s.client_id = $1
					AND (sp.client_id, sp.name, sp.created_at, sp.search) IS DISTINCT FROM
					    (s.client_id, s.name, s.created_at, series_search_text(s.id))`, 0},
				{"publishers whose series_count is off", `SELECT count(*) FROM publishers p WHERE p.client_id = $1
					AND p.series_count <> (SELECT count(*) FROM series_publishers sp
					                       JOIN series s ON s.id = sp.series_id AND s.client_id = p.client_id
					                       WHERE sp.publisher_id = p.id)`, 0},
				{"user_count off", `SELECT count(*) FROM user_count WHERE n <> (SELECT count(*) FROM users) AND $1::bigint IS NOT NULL`, 0},
				{"client whose contributor_count is off", `SELECT count(*) FROM clients cl WHERE cl.id = $1
					AND cl.contributor_count <> (SELECT count(*) FROM contributors c WHERE c.client_id = cl.id)`, 0},
				{"client whose publisher_count is off", `SELECT count(*) FROM clients cl WHERE cl.id = $1
					AND cl.publisher_count <> (SELECT count(*) FROM publishers p WHERE p.client_id = cl.id)`, 0},
				{"contributors whose search text is off", `SELECT count(*) FROM contributors c WHERE c.client_id = $1
					AND c.search IS DISTINCT FROM contributor_search_text(c.first_name, c.last_name)`, 0},
				{"contributor search substring counts that are off", `WITH kept AS (
					SELECT gram, n FROM contributor_search_grams WHERE client_id = $1 AND n <> 0),
					counted AS (SELECT g.gram, count(*) AS n FROM contributors c, search_grams(c.search) g(gram)
					            WHERE c.client_id = $1 GROUP BY 1)
					SELECT count(*) FROM ((TABLE kept EXCEPT TABLE counted) UNION ALL (TABLE counted EXCEPT TABLE kept)) d`, 0},
				{"publishers whose search text is off", `SELECT count(*) FROM publishers p WHERE p.client_id = $1
					AND p.search IS DISTINCT FROM search_fold(p.name)`, 0},
				{"users whose search text is off", `SELECT count(*) FROM users
					WHERE slug LIKE 'g' || $1::bigint || '-user-%' AND search IS DISTINCT FROM search_fold(username)`, 0},
				{"series without a publisher", `SELECT count(*) FROM series s WHERE s.client_id = $1
					AND NOT EXISTS (SELECT 1 FROM series_publishers sp WHERE sp.series_id = s.id)`, 0},
				{"links across clients", `SELECT count(*) FROM series_publishers sp
					JOIN series s ON s.id = sp.series_id JOIN publishers p ON p.id = sp.publisher_id
					WHERE s.client_id <> p.client_id`, 0},
				{"publisher 1's series", `SELECT count(*) FROM series_publishers sp
					JOIN publishers p ON p.id = sp.publisher_id WHERE p.slug = 'g2-publisher-1' AND p.client_id = $1`,
					int64(scale / 10)},
			}
			for _, c := range counts {
				args := []any{}
				if c.name != "links across clients" {
					args = append(args, int64(client))
				}
				if n := count(t, db.DB, c.sql, args...); n != c.want {
					t.Errorf("%s: %d, want %d", c.name, n, c.want)
				}
			}
			if tc.loadFirst || tc.loadAfter {
				// The demo catalog keeps its fixed ids whatever the order.
				if n := count(t, db.DB, `SELECT count(*) FROM series WHERE client_id = 1 AND id <= 60`); n != 60 {
					t.Errorf("demo series with ids 1 to 60: %d", n)
				}
				var s string
				if err := db.Pool.QueryRow(ctx, `SELECT slug FROM series WHERE id = 1`).Scan(&s); err != nil || s != "one-piece" {
					t.Errorf("series 1 = %q (%v), want one-piece", s, err)
				}
			}
		})
	}
}

func TestGenerateRejectsBadArguments(t *testing.T) {
	db := testenv.NewDB(t)
	for _, tc := range []struct {
		client int64
		scale  int
	}{{0, 10}, {2, 0}, {-1, 10}, {2, -5}} {
		if err := demo.Generate(context.Background(), db.DB, tc.client, tc.scale); err == nil {
			t.Errorf("Generate(client %d, scale %d) succeeded", tc.client, tc.scale)
		}
	}
}

// The bulk load turns foreign key checks off; CheckReferences must find a reference
// that points nowhere.
func TestCheckReferences(t *testing.T) {
	ctx := context.Background()
	db := testenv.NewDB(t)
	if err := demo.Generate(ctx, db.DB, 2, 30); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		insert string
		ok     bool
	}{
		{"consistent", ``, true},
		{"a tag that does not exist", `INSERT INTO series_tags (series_id, tag_id)
			SELECT min(id), 999999999 FROM series`, false},
		{"a series that does not exist", `INSERT INTO volumes (series_id, number, title)
			VALUES (999999999, 1, 'Orphan')`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tx, err := db.Pool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = tx.Rollback(ctx) }()
			if _, err := tx.Exec(ctx, `SET LOCAL session_replication_role = replica`); err != nil {
				t.Fatal(err)
			}
			if tc.insert != "" {
				if _, err := tx.Exec(ctx, tc.insert); err != nil {
					t.Fatal(err)
				}
			}
			if err := demo.CheckReferences(ctx, tx); (err == nil) != tc.ok {
				t.Errorf("CheckReferences: %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

// ordinaryRole opens db as a new role that is not a superuser and owns no table: it
// cannot turn the triggers off nor drop the indexes, so Generate runs row by row.
func ordinaryRole(t *testing.T, db *testenv.DB) *postgres.DB {
	t.Helper()
	ctx := context.Background()
	role := "gen_" + db.Name
	for _, sql := range []string{
		`CREATE ROLE ` + role + ` LOGIN PASSWORD 'generator'`,
		`GRANT ALL ON ALL TABLES IN SCHEMA public TO ` + role,
		`GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO ` + role,
	} {
		if _, err := db.Pool.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		_, _ = db.Pool.Exec(context.Background(), `DROP OWNED BY `+role)
		_, _ = db.Pool.Exec(context.Background(), `DROP ROLE `+role)
	})
	u, err := url.Parse(db.URL)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(role, "generator")
	ordinary, err := postgres.Open(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ordinary.Close)
	var super string
	if err := ordinary.Pool.QueryRow(ctx, `SELECT current_setting('is_superuser')`).Scan(&super); err != nil || super != "off" {
		t.Fatalf("is_superuser = %q (%v)", super, err)
	}
	return ordinary
}

// A role that is not a superuser cannot turn the triggers off: the generation runs
// with them and comes out the same.
func TestGenerateAsOrdinaryRole(t *testing.T) {
	ctx := context.Background()
	db := testenv.NewDB(t)
	ordinary := ordinaryRole(t, db)
	const scale = 300
	if err := demo.Generate(ctx, ordinary, 2, scale); err != nil {
		t.Fatal(err)
	}
	if n := count(t, db.DB, `SELECT count(*) FROM publishers p WHERE p.client_id = 2
		AND p.series_count <> (SELECT count(*) FROM series_publishers sp WHERE sp.publisher_id = p.id)`); n != 0 {
		t.Errorf("%d publishers with a series_count off", n)
	}
	if n := count(t, db.DB, `SELECT sum(series_count) FROM publishers WHERE client_id = 2`); n != scale+scale/10 {
		t.Errorf("links counted: %d, want %d", n, scale+scale/10)
	}
}

// columnDigests is a digest of each column of every demo table, the rows in the order
// of their other columns, leaving out the columns whose default is the time of the
// write (now()).
func columnDigests(t *testing.T, db *postgres.DB) map[string]string {
	t.Helper()
	ctx := context.Background()
	digests := map[string]string{}
	for _, table := range demoTables {
		rows, err := db.Pool.Query(ctx, `SELECT column_name FROM information_schema.columns
			WHERE table_schema = current_schema() AND table_name = $1
			  AND coalesce(column_default, '') NOT LIKE '%now()%' AND coalesce(column_default, '') NOT ILIKE '%current_timestamp%'
			ORDER BY ordinal_position`, table)
		if err != nil {
			t.Fatal(err)
		}
		columns, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		var idents []string
		for _, c := range columns {
			idents = append(idents, pgx.Identifier{c}.Sanitize())
		}
		order := "ROW(" + strings.Join(idents, ", ") + ")::text"
		for i, c := range columns {
			var digest string
			if err := db.Pool.QueryRow(ctx, fmt.Sprintf(`SELECT count(*) || ' rows, ' || md5(coalesce(string_agg(%s::text, '|' ORDER BY %s), '')) FROM %s`,
				idents[i], order, pgx.Identifier{table}.Sanitize())).Scan(&digest); err != nil {
				t.Fatalf("%s.%s: %v", table, c, err)
			}
			digests[table+"."+c] = digest
		}
	}
	return digests
}

// The bulk load (triggers off, secondary indexes dropped and built after, the users'
// name keys computed in Go) leaves the same database as the row-by-row load, whose
// triggers keep the links' columns and the kept counts and whose name keys come from
// namekey.Fill as the migration's backfill writes them: every row of every table, the
// kept counts, and the indexes' definitions.
func TestGenerateBulkSameAsRowByRow(t *testing.T) {
	ctx := context.Background()
	const client, scale = 2, 300
	bulk, rowByRow := testenv.NewDB(t), testenv.NewDB(t)
	ordinary := ordinaryRole(t, rowByRow)
	for _, db := range []*testenv.DB{bulk, rowByRow} {
		if err := demo.Load(ctx, db.DB); err != nil {
			t.Fatal(err)
		}
	}
	if err := demo.Generate(ctx, bulk.DB, client, scale); err != nil {
		t.Fatal(err)
	}
	if err := demo.Generate(ctx, ordinary, client, scale); err != nil {
		t.Fatal(err)
	}
	if _, err := rowByRow.Pool.Exec(ctx, `UPDATE users SET name_key = NULL`); err != nil {
		t.Fatal(err)
	}
	if _, err := namekey.Fill(ctx, rowByRow.Pool); err != nil {
		t.Fatal(err)
	}

	state := func(db *testenv.DB) map[string]string {
		snap := columnDigests(t, db.DB)
		for name, sql := range map[string]string{
			"user_count":               `SELECT n::text FROM user_count`,
			"contributor_search_grams": `SELECT string_agg(g::text, '|' ORDER BY g::text) FROM contributor_search_grams g`,
			"indexes": `SELECT string_agg(indexdef, '|' ORDER BY indexname) FROM pg_indexes
				WHERE schemaname = current_schema()`,
			"tags whose series_count is off": `SELECT count(*)::text FROM tags
				WHERE series_count IS DISTINCT FROM tag_series_count(id, client_id)`,
			"generated users without a name key": `SELECT count(*)::text FROM users
				WHERE slug LIKE 'g2-user-%' AND name_key IS NULL`,
		} {
			var v *string
			if err := db.Pool.QueryRow(ctx, sql).Scan(&v); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if v == nil {
				t.Fatalf("%s: none", name)
			}
			snap[name] = *v
		}
		return snap
	}
	want, got := state(rowByRow), state(bulk)
	for _, zero := range []string{"tags whose series_count is off", "generated users without a name key"} {
		if want[zero] != "0" || got[zero] != "0" {
			t.Errorf("%s: %s row by row, %s in bulk", zero, want[zero], got[zero])
		}
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %s row by row, %s in bulk", k, w, got[k])
		}
	}
}
