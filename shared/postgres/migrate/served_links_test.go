package migrate_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/catalog"
)

// TestServedLinksMigration runs 00019's cleaning again over values that an import or
// SQL stored past the request checks (the migration is idempotent; the test database
// is migrated already), and holds what it leaves to the Go rule the API serves by:
// every link left is a catalog.WebLink, every source a catalog.SourceText, and what
// can be read as a link is kept.
func TestServedLinksMigration(t *testing.T) {
	db := testenv.NewDemoDB(t)
	links := []struct{ stored, want string }{
		{"https://en.wikipedia.org/wiki/Eiichiro_Oda", "https://en.wikipedia.org/wiki/Eiichiro_Oda"},
		{"HTTP://twitter.com/oda", "HTTP://twitter.com/oda"},
		{"twitter.com/oda", "https://twitter.com/oda"},
		{"//www.example.com/x?y#z", "https://www.example.com/x?y#z"},
		{"//example.com:8080/x", "https://example.com:8080/x"},
		{"example.com:8080", ""}, // a browser reads the scheme "example.com"
		{"javascript:alert(document.cookie)", ""},
		{" JavaScript:alert(1)", ""},
		{"java\tscript:alert(1)", ""},
		{"data:text/html,<script>alert(1)</script>", ""},
		{"ftp://x.example/file", ""},
		{"https:///path", ""},
		{"https:evil.example", ""},
		{"localhost:8080/x", ""},
		{"not a link", ""},
	}
	sources := []struct{ stored, want string }{
		{"Wikipedia", "Wikipedia"},
		{"", ""},
		{"https://en.wikipedia.org/wiki/Kodansha", "https://en.wikipedia.org/wiki/Kodansha"},
		{"javascript:alert(1)", ""},
		{"  javascript:alert(1)", ""},
		{"java\tscript:alert(1)", ""},
		{"java\nscript:alert(1)", ""},
		{"data:text/html,x", ""},
		{"vbscript:msgbox", ""},
		{"Source: Wikipedia", ""},
		{"Wikipedia (2024), page 3", "Wikipedia (2024), page 3"},
	}
	const contributor, publisher = 1, 1
	db.Exec(t, `DELETE FROM contributor_links`)
	for _, l := range links {
		db.Exec(t, `INSERT INTO contributor_links (contributor_id, url) VALUES ($1, $2)`, contributor, l.stored)
	}
	db.Exec(t, `DELETE FROM contributor_descriptions`)
	db.Exec(t, `DELETE FROM publisher_descriptions`)
	for _, s := range sources {
		db.Exec(t, `INSERT INTO contributor_descriptions (contributor_id, description, language, source) VALUES ($1, 'd', 'English', $2)`, contributor, s.stored)
		db.Exec(t, `INSERT INTO publisher_descriptions (publisher_id, description, language, source) VALUES ($1, 'd', 'English', $2)`, publisher, s.stored)
	}
	db.Exec(t, `INSERT INTO publishers (client_id, name, slug) SELECT 1, 'P ' || n, 'p-' || n FROM generate_series(1, 20) n`)
	pubs := db.Int(t, `SELECT count(*) FROM publishers`)
	if pubs < int64(len(links)) || pubs < int64(len(sources)) {
		t.Fatalf("%d publishers, too few for the cases", pubs)
	}
	for i, l := range links {
		db.Exec(t, `UPDATE publishers SET website = $2 WHERE id = (SELECT id FROM publishers ORDER BY id OFFSET $1 LIMIT 1)`, i, l.stored)
	}
	for i, s := range sources {
		db.Exec(t, `UPDATE publishers SET image_source = $2 WHERE id = (SELECT id FROM publishers ORDER BY id OFFSET $1 LIMIT 1)`, i, s.stored)
	}

	runMigration(t, db.Pool.Config().ConnConfig.ConnString(), "migrations/00019_served_links.sql")

	gotLinks := strings.Split(db.Text(t, `SELECT coalesce(string_agg(url, E'\x1f' ORDER BY id), '') FROM contributor_links`), "\x1f")
	var wantLinks, wantWebsites []string
	for _, l := range links {
		if l.want != "" {
			wantLinks = append(wantLinks, l.want)
		}
		wantWebsites = append(wantWebsites, l.want)
	}
	if strings.Join(gotLinks, "\n") != strings.Join(wantLinks, "\n") {
		t.Errorf("contributor links after the migration:\n%q\nwant\n%q", gotLinks, wantLinks)
	}
	gotWebsites := strings.Split(db.Text(t, `SELECT string_agg(website, E'\x1f' ORDER BY id) FROM (SELECT id, website FROM publishers ORDER BY id LIMIT $1) p`, len(links)), "\x1f")
	if strings.Join(gotWebsites, "\n") != strings.Join(wantWebsites, "\n") {
		t.Errorf("websites after the migration:\n%q\nwant\n%q", gotWebsites, wantWebsites)
	}
	var wantSources []string
	for _, s := range sources {
		wantSources = append(wantSources, s.want)
	}
	for _, q := range []string{
		`SELECT string_agg(source, E'\x1f' ORDER BY id) FROM contributor_descriptions WHERE $1::int > 0`,
		`SELECT string_agg(source, E'\x1f' ORDER BY id) FROM publisher_descriptions WHERE $1::int > 0`,
		`SELECT string_agg(image_source, E'\x1f' ORDER BY id) FROM (SELECT id, image_source FROM publishers ORDER BY id LIMIT $1) p`,
	} {
		got := strings.Split(db.Text(t, q, len(sources)), "\x1f")
		if strings.Join(got, "\n") != strings.Join(wantSources, "\n") {
			t.Errorf("%s after the migration:\n%q\nwant\n%q", q, got, wantSources)
		}
	}

	// What the migration leaves is what the API serves.
	for _, u := range gotLinks {
		if !catalog.WebLink(u) {
			t.Errorf("the migration kept the link %q, which is not served", u)
		}
	}
	for _, w := range gotWebsites {
		if w != "" && !catalog.WebLink(w) {
			t.Errorf("the migration kept the website %q, which is not served", w)
		}
	}
	for _, s := range sources {
		if catalog.SourceText(s.stored) != (s.want == s.stored) {
			t.Errorf("SourceText(%q) = %v, but the migration keeps it: %v", s.stored, catalog.SourceText(s.stored), s.want == s.stored)
		}
	}
}

// runMigration runs the statement between a migration file's StatementBegin and
// StatementEnd as goose does (outside a transaction: it commits batch by batch).
func runMigration(t *testing.T, url, file string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	sql := string(b)
	begin := strings.Index(sql, "-- +goose StatementBegin")
	end := strings.Index(sql, "-- +goose StatementEnd")
	if begin < 0 || end < begin {
		t.Fatalf("%s: no statement block", file)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql[begin:end], pgx.QueryExecModeSimpleProtocol); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}
