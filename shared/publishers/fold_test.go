package publishers_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/mediacatalog/service/infra/tests/testenv"
)

// TestPublicationSearchIgnoresAccents: GET /publisher/publications/{id}?search= ignores
// case and accents in the series' names and alias titles.
func TestPublicationSearchIgnoresAccents(t *testing.T) {
	h, db, _ := setup(t)
	db.Exec(t, `INSERT INTO series (id, client_id, name, slug, type) VALUES
		(2001, 2, 'Pokémon Adventures', 'pokemon-adventures', 'Manga'),
		(2002, 2, 'POKÉMON Zero', 'pokemon-zero', 'Manga'),
		(2003, 2, 'Plain Title', 'plain-title', 'Manga')`)
	db.Exec(t, `INSERT INTO series_aliases (series_id, title, language) VALUES (2003, 'Ｐｏｋéｍｏｎ Ｗｉｄｅ', 'Japanese')`)
	db.Exec(t, `INSERT INTO series_publishers (series_id, publisher_id) VALUES (2001, 1001), (2002, 1001), (2003, 1001)`)
	tests := []struct{ search, want string }{
		{"pokemon", "POKÉMON Zero,Plain Title,Pokémon Adventures"},
		{"pokémon", "POKÉMON Zero,Plain Title,Pokémon Adventures"},
		{"POKÉMON", "POKÉMON Zero,Plain Title,Pokémon Adventures"},
		{"pokemon wide", "Plain Title"},
		{"zéro", "POKÉMON Zero"},
		{"％", ""},
	}
	for _, tt := range tests {
		t.Run(tt.search, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/publisher/publications/1001?client=2&search="+url.QueryEscape(tt.search), nil)
			rec := testenv.Do(t, h, req)
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			var got page
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, p := range got.Publications {
				names = append(names, p.Name)
			}
			if strings.Join(names, ",") != tt.want || got.Max != int64(len(names)) {
				t.Errorf("%q max %d, want %q", strings.Join(names, ","), got.Max, tt.want)
			}
		})
	}
}

// TestPublishersSearchIgnoresAccents: GET /publishers?search= ignores case and accents
// in the publishers' names, as in every other search: publishers.search, kept by a
// trigger, holds the folded name and the term is folded the same way.
func TestPublishersSearchIgnoresAccents(t *testing.T) {
	h, db, _ := setup(t)
	db.Exec(t, `INSERT INTO publishers (id, client_id, name, slug) VALUES
		(3001, 1, 'Pokémon Éditions', 'pokemon-editions'),
		(3002, 1, 'POKÉMON ' || U&'Pre\0301ss', 'pokemon-press'),
		(3003, 1, 'Ｐｏｋéｍｏｎ Ｗｉｄｅ', 'pokemon-wide'),
		(3004, 1, 'Straße Verlag', 'strasse-verlag'),
		(3005, 1, 'Ψηφιακές Εκδόσεις', 'greek'),
		(3006, 2, 'Pokemon Elsewhere', 'pokemon-elsewhere')`)
	db.Exec(t, `UPDATE publishers SET name = 'Øresund Ēdition' WHERE id = 3005`)
	tests := []struct{ search, want string }{
		{"pokemon", "pokemon-editions,pokemon-press,pokemon-wide"},
		{"pokémon", "pokemon-editions,pokemon-press,pokemon-wide"},
		{"POKÉMON", "pokemon-editions,pokemon-press,pokemon-wide"},
		{"PoKeMoN", "pokemon-editions,pokemon-press,pokemon-wide"},
		{"pokemon wide", "pokemon-wide"},
		{"pres", "yen-press,pokemon-press"},
		{"pré", "yen-press,pokemon-press"},
		{"pre\u0301ss", "yen-press,pokemon-press"},
		{"editions", "pokemon-editions"},
		{"ÉDITIONS", "pokemon-editions"},
		{"strasse", "strasse-verlag"},
		{"straße", "strasse-verlag"},
		{"oresund edition", "greek"},
		{"ψηφιακες", ""},
		{"％", ""},
		{"zzqx", ""},
	}
	for _, tt := range tests {
		t.Run(tt.search, func(t *testing.T) {
			var slugs []string
			for _, p := range mustList(t, h, "/publishers?client=1&order=added-asc&search="+url.QueryEscape(tt.search)) {
				slugs = append(slugs, p.Slug)
			}
			if got := strings.Join(slugs, ","); got != tt.want {
				t.Errorf("search %q found %q, want %q", tt.search, got, tt.want)
			}
		})
	}
}
