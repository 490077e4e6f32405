package admincontributors_test

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
)

// TestSearchIgnoresAccents: GET /admin-contributors?search= ignores case and accents,
// as users of a media catalog expect: "pokemon" finds "Pokémon" and "POKÉMON", and one
// letter, counted from the kept substring counts, finds its accented forms ("e" finds
// "é").
func TestSearchIgnoresAccents(t *testing.T) {
	s := newServer(t)
	s.DB.Exec(t, `INSERT INTO clients (id, name) VALUES (3, 'Accents')`)
	s.DB.Exec(t, `INSERT INTO contributors (client_id, first_name, last_name, slug) VALUES
		(3, 'Pokémon', 'Trainer', 'pokemon-trainer'), (3, 'POKÉMON', 'Master', 'pokemon-master'),
		(3, 'Émile', 'Zola', 'emile-zola'), (3, 'Akira', 'Toriyama', 'akira-toriyama-3')`)
	tests := []struct {
		search string
		want   string // first names in the list's order
	}{
		{"pokemon", "POKÉMON Pokémon"},
		{"pokémon", "POKÉMON Pokémon"},
		{"POKÉMON", "POKÉMON Pokémon"},
		{"emile zola", "Émile"},
		{"e", "POKÉMON Pokémon Émile"},
		{"é", "POKÉMON Pokémon Émile"},
		{"É", "POKÉMON Pokémon Émile"},
		{"ｅ", "POKÉMON Pokémon Émile"},
		{"zz", ""},
	}
	for _, tt := range tests {
		t.Run(tt.search, func(t *testing.T) {
			status, body := s.Do(t, "GET", "/admin-contributors?client=3&search="+url.QueryEscape(tt.search), nil, s.Editor)
			if status != 200 {
				t.Fatalf("status %d: %s", status, body)
			}
			var got struct {
				Contributors []struct {
					FirstName string `json:"first_name"`
				} `json:"contributors"`
				Max int64 `json:"max"`
			}
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, c := range got.Contributors {
				names = append(names, c.FirstName)
			}
			if strings.Join(names, " ") != tt.want || got.Max != int64(len(names)) {
				t.Errorf("%q max %d, want %q", strings.Join(names, " "), got.Max, tt.want)
			}
		})
	}
}
