package migrate_test

import (
	"context"
	"slices"
	"testing"

	"github.com/mediacatalog/service/shared/postgres/migrate"
)

// TestPublishersSearchBackfill: 00027–00029 give every publisher written before them
// its folded search text (the demo, a generated catalog made at the previous version,
// accented and decomposed names), the trigger keeps it on later writes, the trigram
// index is valid, and a second run of the backfill writes nothing.
func TestPublishersSearchBackfill(t *testing.T) {
	ctx := context.Background()
	// The catalog as 00023 left it; everything after, 00027–00029 among them, is applied below.
	db := catalogAt(t, 23)
	url := db.URL
	db.Exec(t, `INSERT INTO publishers (client_id, name, slug) VALUES
		(1, 'Éditions Glénat', 'glenat'),
		(1, 'POKÉMON ' || U&'Pre\0301ss', 'pokemon-press'),
		(1, 'Ｓｈｕｅｉｓｈａ', 'shueisha-wide'),
		(1, 'Ψηφιακές Εκδόσεις', 'greek'),
		(1, 'Old Name', 'okura')`)

	results, err := migrate.Apply(ctx, url, migrate.Files(), migrate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// 27, 28 and 29 are applied, one after the other (later migrations may follow).
	var applied []int64
	for _, r := range results {
		applied = append(applied, r.Version)
	}
	if i := slices.Index(applied, 27); i < 0 || i+2 >= len(applied) || applied[i+1] != 28 || applied[i+2] != 29 {
		t.Fatalf("applied %v, want 27, 28 and 29 in a row", applied)
	}
	db.Exec(t, `INSERT INTO publishers (client_id, name, slug) VALUES (1, 'Straße Verlag', 'strasse')`)
	db.Exec(t, `UPDATE publishers SET name = 'Ōkura Shoten' WHERE slug = 'okura'`)
	db.Exec(t, `UPDATE publishers SET search = 'tampered' WHERE slug = 'glenat'`)

	tests := []struct{ slug, want string }{
		{"glenat", "editions glenat"},
		{"pokemon-press", "pokemon press"},
		{"shueisha-wide", "shueisha"},
		{"greek", "ψηφιακες εκδοσεις"},
		{"okura", "okura shoten"},
		{"strasse", "strasse verlag"},
	}
	for _, tc := range tests {
		t.Run(tc.slug, func(t *testing.T) {
			if got := db.Text(t, `SELECT search FROM publishers WHERE slug = $1`, tc.slug); got != tc.want {
				t.Errorf("search %q, want %q", got, tc.want)
			}
		})
	}
	if got := db.Text(t, `SELECT count(*)::text FROM publishers WHERE search IS DISTINCT FROM search_fold(name)`); got != "0" {
		t.Errorf("%s publishers without their folded search text", got)
	}
	if got := db.Text(t, `SELECT count(*)::text FROM publishers WHERE client_id = 2`); got == "0" {
		t.Error("the generated catalog has no publishers")
	}
	if got := db.Text(t, `SELECT coalesce((SELECT i.indisvalid::text FROM pg_index i
		WHERE i.indexrelid = to_regclass('publishers_client_search_trgm')), 'missing')`); got != "true" {
		t.Errorf("publishers_client_search_trgm: %s", got)
	}
	if got := db.Text(t, `SELECT (to_regclass('publishers_name_trgm') IS NOT NULL)::text`); got != "true" {
		t.Error("publishers_name_trgm, which the previous release searches, is gone")
	}

	// Resumable and idempotent: a second run finds nothing to write.
	versions := `SELECT string_agg(xmin::text, ',' ORDER BY id) FROM publishers`
	before := db.Text(t, versions)
	runMigration(t, url, "migrations/00028_publishers_search_backfill.sql")
	if db.Text(t, versions) != before {
		t.Error("a second run of the backfill rewrote rows")
	}
}
