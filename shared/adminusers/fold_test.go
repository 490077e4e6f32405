package adminusers_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestSearchIgnoresAccents: GET /admin-users?search= ignores case and accents, and
// lists the matches in the order of their folded names.
func TestSearchIgnoresAccents(t *testing.T) {
	s := newServer(t)
	s.DB.Exec(t, `INSERT INTO users (id, slug, username) VALUES
		(20, 'pokemon-fan', 'Pokémon_Fan'), (21, 'pokemon-master', 'POKEMON_MASTER'), (22, 'emile', 'Émile')`)
	tests := []struct{ search, want string }{
		{"pokemon", "Pokémon_Fan POKEMON_MASTER"},
		{"pokémon", "Pokémon_Fan POKEMON_MASTER"},
		{"POKÉMON", "Pokémon_Fan POKEMON_MASTER"},
		{"emile", "Émile"},
		{"ÉMI", "Émile"},
	}
	for _, tt := range tests {
		t.Run(tt.search, func(t *testing.T) {
			status, body := s.Do(t, http.MethodGet, "/admin-users?search="+url.QueryEscape(tt.search), nil, s.Admin)
			if status != http.StatusOK {
				t.Fatalf("status %d: %s", status, body)
			}
			var got struct {
				Users []struct {
					Username string `json:"username"`
				} `json:"users"`
				Max int64 `json:"max"`
			}
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, u := range got.Users {
				names = append(names, u.Username)
			}
			if strings.Join(names, " ") != tt.want || got.Max != int64(len(names)) {
				t.Errorf("%q max %d, want %q", strings.Join(names, " "), got.Max, tt.want)
			}
		})
	}
}
