package migrate_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mediacatalog/service/infra/tests/testenv"
)

// quadraticGrams is search_grams as the baseline defined it, for comparison.
const quadraticGrams = `CREATE FUNCTION pg_temp.grams_before(t text) RETURNS SETOF text
    LANGUAGE sql IMMUTABLE AS $$
    SELECT DISTINCT substr(t, i, k)
    FROM generate_series(1, length(t)) i, generate_series(1, 2) k
    WHERE i + k - 1 <= length(t)
$$`

// TestSearchGramsLinear: migration 00021's search_grams returns exactly the set the
// baseline's did, for texts of every kind (empty, NULL, one letter, multibyte,
// repeated letters, the U+001F separator of the search texts, long random ones).
func TestSearchGramsLinear(t *testing.T) {
	db := testenv.NewDB(t)
	conn, err := db.Pool.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(t.Context(), quadraticGrams); err != nil {
		t.Fatal(err)
	}
	texts := []*string{nil}
	for _, s := range []string{"", "a", "ab", "aaaa", "pokémon", "進撃の巨人", "a\x1fb", "oda eiichiro", "ß\u0301x"} {
		texts = append(texts, &s)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	letters := []rune("abcdeéèœ進撃 \x1f")
	for _, n := range []int{50, 500, 3000} {
		var b strings.Builder
		for range n {
			b.WriteRune(letters[rng.IntN(len(letters))])
		}
		s := b.String()
		texts = append(texts, &s)
	}
	for _, text := range texts {
		var diff int
		err := conn.QueryRow(t.Context(), `SELECT count(*) FROM (
			(SELECT * FROM search_grams($1) EXCEPT ALL SELECT * FROM pg_temp.grams_before($1))
			UNION ALL
			(SELECT * FROM pg_temp.grams_before($1) EXCEPT ALL SELECT * FROM search_grams($1))) d`, text).Scan(&diff)
		if err != nil {
			t.Fatal(err)
		}
		if diff != 0 {
			shown := "NULL"
			if text != nil {
				shown = *text
			}
			t.Errorf("search_grams(%.40q) differs from the baseline's in %d substrings", shown, diff)
		}
	}
}
