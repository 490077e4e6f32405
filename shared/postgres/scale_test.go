package postgres_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/postgres"
)

// TestSessionDefaults: every connection of the pool runs with the statement timeout and
// custom plans, unless DATABASE_URL sets them.
func TestSessionDefaults(t *testing.T) {
	db := testenv.NewDB(t)
	tests := []struct {
		name, query       string
		timeout, planMode string
	}{
		{"defaults", "", "5s", "force_custom_plan"},
		{"parameter in the URL", "statement_timeout=2000", "2s", "force_custom_plan"},
		{"options in the URL", "options=-c%20plan_cache_mode%3Dauto", "5s", "auto"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			url := db.URL
			if tc.query != "" {
				url += "&" + tc.query
			}
			pool, err := postgres.Open(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			defer pool.Close()
			var timeout, planMode string
			if err := pool.Pool.QueryRow(ctx, `SELECT current_setting('statement_timeout'), current_setting('plan_cache_mode')`).
				Scan(&timeout, &planMode); err != nil {
				t.Fatal(err)
			}
			if timeout != tc.timeout || planMode != tc.planMode {
				t.Errorf("statement_timeout %s, plan_cache_mode %s; want %s, %s", timeout, planMode, tc.timeout, tc.planMode)
			}
		})
	}
}

// TestCatalogColumnsFollowWrites: the columns that the lists read instead of counting or
// joining (publishers.series_count, the series' columns on series_publishers) stay equal
// to what they stand for after every kind of write (the triggers of the baseline schema, and
// of 00014 for clients.publisher_count).
func TestCatalogColumnsFollowWrites(t *testing.T) {
	ctx := context.Background()
	db := catalogDB(t, &postgres.QueryCounter{})
	catalogExec(t, db, publisherFixture)
	steps := []struct{ name, sql string }{
		{"fixture", ``},
		{"link added", `INSERT INTO series_publishers (series_id, publisher_id) VALUES (1001, 1002), (1002, 1002)`},
		{"link added with its columns supplied (a bulk loader)", `INSERT INTO series_publishers
			(series_id, publisher_id, client_id, name, created_at, search)
			VALUES (1004, 1002, 2, 'Gamma 100%', '2020-02-01Z', 'GAMMA 100%')`},
		{"link removed", `DELETE FROM series_publishers WHERE series_id = 1002 AND publisher_id = 1001`},
		{"link moved to another series", `UPDATE series_publishers SET series_id = 1005 WHERE series_id = 1001 AND publisher_id = 1002`},
		{"series renamed", `UPDATE series SET name = 'Alpha Renamed', created_at = '2021-01-01Z' WHERE id = 1001`},
		{"series moved to another client", `UPDATE series SET client_id = 3 WHERE id = 1004`},
		{"alias added", `INSERT INTO series_aliases (series_id, title, language) VALUES (1002, 'Beta Alias', 'English')`},
		{"alias renamed", `UPDATE series_aliases SET title = 'The Very First' WHERE id = 1001`},
		{"alias removed", `DELETE FROM series_aliases WHERE id = 1003`},
		{"publisher added", `INSERT INTO publishers (id, client_id, name, slug) VALUES (1005, 3, 'New Press', 'new-press')`},
		{"publisher moved to another client", `UPDATE publishers SET client_id = 3 WHERE id = 1003`},
		{"publishers swapped between clients", `UPDATE publishers SET client_id = CASE client_id WHEN 2 THEN 3 ELSE 2 END
			WHERE id IN (1001, 1005)`},
		{"series deleted", `DELETE FROM series WHERE id = 1003`},
		{"publisher deleted", `DELETE FROM publishers WHERE id = 1002`},
	}
	checks := []struct{ name, sql string }{
		{"series_count", `SELECT count(*) FROM publishers p WHERE p.series_count <> (
			SELECT count(*) FROM series_publishers sp JOIN series s ON s.id = sp.series_id
			WHERE sp.publisher_id = p.id AND s.client_id = p.client_id)`},
		{"publisher_count", `SELECT count(*) FROM clients c WHERE c.publisher_count <> (
			SELECT count(*) FROM publishers p WHERE p.client_id = c.id)`},
		{"link columns", `SELECT count(*) FROM series_publishers sp JOIN series s ON s.id = sp.series_id
			WHERE (sp.client_id, sp.name, sp.created_at, sp.search) IS DISTINCT FROM
			      (s.client_id, s.name, s.created_at, series_search_text(s.id))`},
	}
	for _, step := range steps {
		if step.sql != "" {
			catalogExec(t, db, step.sql)
		}
		for _, c := range checks {
			var off int64
			if err := db.Pool.QueryRow(ctx, c.sql).Scan(&off); err != nil {
				t.Fatalf("%s: %v", step.name, err)
			}
			if off != 0 {
				t.Errorf("after %s: %d rows with a stale %s", step.name, off, c.name)
			}
		}
	}
	// The search text is the name and every alias title, in alias id order, lowercased.
	var search string
	if err := db.Pool.QueryRow(ctx, `SELECT search FROM series_publishers WHERE series_id = 1001 AND publisher_id = 1001`).Scan(&search); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("alpha renamed%cthe very first%cアルファ", 0x1f, 0x1f); search != want {
		t.Errorf("search text %q, want %q", search, want)
	}
}
