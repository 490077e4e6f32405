package migrate_test

import (
	"context"
	"testing"

	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/postgres/migrate"
)

// TestSearchFold: migration 00022's search_fold ignores case and accents in every
// script, whatever form the text comes in (composed or decomposed accents, fullwidth
// or halfwidth forms), leaves text without case or accents (Japanese) as it is, and is
// idempotent over every character of the BMP (00023's backfill relies on it);
// search_pattern escapes LIKE's wildcards after folding, as folding makes wildcards of
// fullwidth characters.
func TestSearchFold(t *testing.T) {
	db := testenv.NewDB(t)
	folds := []struct{ in, want string }{
		{"Pokémon", "pokemon"},
		{"POKÉMON", "pokemon"},
		{"pokémon", "pokemon"},
		{"Poke\u0301mon", "pokemon"}, // decomposed é
		{"POKE\u0301MON", "pokemon"},
		{"Straße", "strasse"},
		{"STRASSE", "strasse"},
		{"ẞ", "ss"},
		{"Œuvre", "oeuvre"},
		{"œuvre", "oeuvre"},
		{"Łódź", "lodz"},
		{"ŁÓDŹ", "lodz"},
		{"Ｐｏｋéｍｏｎ", "pokemon"}, // fullwidth
		{"ﬁne", "fine"},
		{"İstanbul", "istanbul"},
		{"ΆΛΦΑ", "αλφα"},
		{"Ёлка", "елка"},
		{"ジェネレーテッド・シリーズ", "ジェネレーテッド・シリーズ"},
		{"ポケモン", "ポケモン"},
		{"ﾎﾟｹﾓﾝ", "ポケモン"},     // halfwidth kana
		{"\u30db\u309a", "ポ"}, // decomposed kana: composed, not stripped
		{"進撃の巨人", "進撃の巨人"},
		{"a\x1fB", "a\x1fb"}, // the separator of the series' texts stays
		{"", ""},
	}
	for _, f := range folds {
		if got := db.Text(t, `SELECT search_fold($1)`, f.in); got != f.want {
			t.Errorf("search_fold(%q) = %q, want %q", f.in, got, f.want)
		}
	}
	if n := db.Int(t, `SELECT count(*) FROM (SELECT search_fold(NULL)) f(x) WHERE x IS NOT NULL`); n != 0 {
		t.Error("search_fold(NULL) is not NULL")
	}
	if n := db.Int(t, `SELECT count(*) FROM generate_series(1, 65533) i
		WHERE i NOT BETWEEN 55296 AND 57343 AND search_fold(search_fold(chr(i))) <> search_fold(chr(i))`); n != 0 {
		t.Errorf("search_fold is not idempotent on %d characters", n)
	}
	patterns := []struct{ in, want string }{
		{"Pokémon", `%pokemon%`},
		{"50%", `%50\%%`},
		{"50％", `%50\%%`},
		{"a_b", `%a\_b%`},
		{"a＿b", `%a\_b%`},
		{`a\b`, `%a\\b%`},
		{"a＼b", `%a\\b%`},
		{"\u0301", `%%`},
	}
	for _, p := range patterns {
		if got := db.Text(t, `SELECT search_pattern($1)`, p.in); got != p.want {
			t.Errorf("search_pattern(%q) = %q, want %q", p.in, got, p.want)
		}
	}
}

// TestSearchFoldBackfill: on a catalog written before 00022 (lowercased texts), 00022
// and 00023 leave every kept search text folded, as the triggers would write it now
// (series_publishers from the series' name and aliases, contributors from the names,
// users from the username), and contributor_search_grams equal to the counts of the
// folded texts; a second run of the backfill rewrites no row.
func TestSearchFoldBackfill(t *testing.T) {
	ctx := context.Background()
	db := catalogAt(t, 21)
	url := db.URL
	db.Exec(t, `INSERT INTO series (id, client_id, name, slug, type, origin) VALUES
		(9001, 1, 'Pokémon Adventures', 'pokemon-adventures', 'Manga', 'Japan'),
		(9002, 1, 'POKÉMON ' || U&'ZE\0301RO', 'pokemon-zero', 'Manga', 'Japan'),
		(9003, 1, 'Plain Title', 'plain-title', 'Manga', 'Japan')`)
	db.Exec(t, `INSERT INTO series_aliases (series_id, title, language) VALUES
		(9001, 'Die Straße', 'German'), (9003, 'Ｐｏｋéｍｏｎ Ｗｉｄｅ', 'Japanese')`)
	db.Exec(t, `INSERT INTO series_publishers (series_id, publisher_id)
		SELECT s, p FROM unnest(ARRAY[9001, 9002, 9003]) s, (SELECT min(id) AS p FROM publishers WHERE client_id = 1) p`)
	db.Exec(t, `INSERT INTO contributors (client_id, first_name, last_name, slug) VALUES
		(1, 'Émile', 'ZOLA', 'emile-zola'), (1, 'Łukasz', 'Œuvre', 'lukasz'), (2, 'É', NULL, 'e-2'),
		(1, 'Poke' || U&'\0301' || 'mon', 'Straße', 'pokemon')`)
	db.Exec(t, `INSERT INTO users (slug, username) VALUES ('pokemon-fan', 'Pokémon_Fan'), ('sofia', 'ΣΟΦΙΑ')`)
	if got := db.Text(t, `SELECT search FROM series_publishers WHERE series_id = 9001`); got != "pokémon adventures\x1fdie straße" {
		t.Fatalf("before 00022 the text is %q, want the lowercased one", got)
	}

	results, err := migrate.Apply(ctx, url, migrate.Files(), migrate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(results) < 2 || results[0].Version != 22 || results[1].Version != 23 {
		t.Fatalf("applied %+v, want 22 and 23 first", results)
	}

	wants := []struct{ name, sql, want string }{
		{"series 9001", `SELECT search FROM series_publishers WHERE series_id = 9001`, "pokemon adventures\x1fdie strasse"},
		{"series 9002", `SELECT search FROM series_publishers WHERE series_id = 9002`, "pokemon zero"},
		{"series 9003", `SELECT search FROM series_publishers WHERE series_id = 9003`, "plain title\x1fpokemon wide"},
		{"contributor", `SELECT search FROM contributors WHERE slug = 'emile-zola'`, "emile zola"},
		{"decomposed contributor", `SELECT search FROM contributors WHERE slug = 'pokemon'`, "pokemon strasse"},
		{"user", `SELECT search FROM users WHERE slug = 'pokemon-fan'`, "pokemon_fan"},
		{"greek user", `SELECT search FROM users WHERE slug = 'sofia'`, "σοφια"},
	}
	for _, w := range wants {
		if got := db.Text(t, w.sql); got != w.want {
			t.Errorf("%s: search %q, want %q", w.name, got, w.want)
		}
	}
	stale := []struct{ name, sql string }{
		{"series_publishers", `SELECT count(*) FROM series_publishers WHERE search IS DISTINCT FROM series_search_text(series_id)`},
		{"contributors", `SELECT count(*) FROM contributors
			WHERE search IS DISTINCT FROM search_fold(first_name || ' ' || coalesce(last_name, ''))`},
		{"users", `SELECT count(*) FROM users WHERE search IS DISTINCT FROM search_fold(username)`},
		{"contributor_search_grams", staleGrams},
	}
	for _, s := range stale {
		if got := db.Text(t, `SELECT (`+s.sql+`)::text`); got != "0" {
			t.Errorf("%s rows left unfolded or miscounted: %s", s.name, got)
		}
	}
	if got := db.Text(t, `SELECT coalesce((SELECT n FROM contributor_search_grams WHERE client_id = 2 AND gram = 'é'), 0)::text`); got != "0" {
		t.Errorf("the gram é still counts %s contributors", got)
	}
	if got := db.Text(t, `SELECT (SELECT n FROM contributor_search_grams WHERE client_id = 2 AND gram = 'e')::text`); got == "" || got == "0" {
		t.Errorf("the gram e counts %q contributors of client 2", got)
	}

	// Resumable and idempotent: a second run finds nothing to write.
	versions := `SELECT (SELECT string_agg(xmin::text, ',' ORDER BY series_id, publisher_id) FROM series_publishers) ||
		(SELECT string_agg(xmin::text, ',' ORDER BY id) FROM contributors) ||
		(SELECT string_agg(xmin::text, ',' ORDER BY id) FROM users)`
	before := db.Text(t, versions)
	runMigration(t, url, "migrations/00023_search_fold_backfill.sql")
	if db.Text(t, versions) != before {
		t.Error("a second run of the backfill rewrote rows")
	}
}

// staleGrams counts the (client, substring) pairs whose kept count in
// contributor_search_grams differs from a count over the contributors' texts.
const staleGrams = `WITH kept AS (SELECT client_id, gram, n FROM contributor_search_grams WHERE n <> 0),
	counted AS (SELECT c.client_id, g.gram, count(*) AS n
	            FROM contributors c, search_grams(c.search) g(gram) GROUP BY 1, 2)
	SELECT count(*) FROM ((TABLE kept EXCEPT TABLE counted) UNION ALL (TABLE counted EXCEPT TABLE kept)) d`
