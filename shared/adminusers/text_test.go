package adminusers_test

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/adminusers"
)

// randomLetters is n letters from a fixed seed: text that compresses badly, as the
// 6,000 random letters whose index row exceeded PostgreSQL's btree maximum (500).
func randomLetters(n int) string {
	r := rand.New(rand.NewPCG(26, 4))
	b := make([]byte, n)
	for i := range b {
		b[i] = "abcdefghijklmnopqrstuvwxyz"[r.IntN(26)]
	}
	return string(b)
}

// TestUsernameText holds usernames and the list's search to their bounds: at most 64
// characters of a Name, no control or invisible formatting characters; a refusal names
// the field and changes nothing.
func TestUsernameText(t *testing.T) {
	s := newServer(t)
	tooLong := "Invalid username: at most 64 characters"
	invisible := func(r rune) string {
		return fmt.Sprintf("Invalid username: control characters and invisible formatting characters (such as U+%04X) are not allowed", r)
	}
	tests := []struct {
		name     string
		username string
		status   int
		msg      string
	}{
		{"6,000 characters", strings.Repeat("a", 6000), 400, tooLong},
		{"6,000 random letters", randomLetters(6000), 400, tooLong},
		{"65 characters", strings.Repeat("a", 65), 400, tooLong},
		{"65 characters of 4 bytes", strings.Repeat("😀", 65), 400, tooLong},
		{"a right-to-left override", "adm\u202eni", 400, invisible(0x202E)},
		{"a left-to-right isolate", "adm\u2066in", 400, invisible(0x2066)},
		{"a zero-width joiner", "ad\u200dmin", 400, invisible(0x200D)},
		{"a soft hyphen", "ad\u00admin", 400, invisible(0xAD)},
		{"a variation selector", "admin\ufe0f", 400, invisible(0xFE0F)},
		{"a Hangul filler", "admin\u3164", 400, invisible(0x3164)},
		{"a line break", "ad\nmin", 400, invisible(0x0A)},
		{"an escape", "ad\x1bmin", 400, invisible(0x1B)},
		{"a line separator", "ad\u2028min", 400, invisible(0x2028)},
		{"a private-use character", "ad\ue000min", 400, invisible(0xE000)},
		{"64 characters", strings.Repeat("m", 64), 200, adminusers.MsgUserEdited},
		{"64 characters of 4 bytes", strings.Repeat("😀", 64), 200, adminusers.MsgUserEdited},
		{"letters of other scripts", "Ελένη 李 Łukasz", 200, adminusers.MsgUserEdited},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := s.users(t)
			body := map[string]any{"username": tt.username}
			status, resp := s.Do(t, http.MethodPost, "/admin-users/edit/3", body, s.Admin)
			if status != tt.status {
				t.Fatalf("status %d, want %d: %.300s", status, tt.status, resp)
			}
			if m := testenv.Message(t, resp); m.Data != tt.msg {
				t.Errorf("message %q, want %q", m.Data, tt.msg)
			}
			if status != http.StatusOK && s.users(t) != before {
				t.Errorf("a refused edit changed the users")
			}
		})
	}

	searches := []struct {
		name, search string
		status       int
		msg          string
	}{
		{"6,000 random letters", randomLetters(6000), 400, "Invalid search: at most 100 characters"},
		{"101 characters", strings.Repeat("a", 101), 400, "Invalid search: at most 100 characters"},
		{"a right-to-left override", "a\u202eb", 400, "Invalid search: control characters and invisible formatting characters (such as U+202E) are not allowed"},
		{"100 characters", strings.Repeat("a", 100), 200, ""},
	}
	for _, tt := range searches {
		t.Run("search "+tt.name, func(t *testing.T) {
			status, resp := s.Do(t, http.MethodGet, "/admin-users?search="+url.QueryEscape(tt.search), nil, s.Admin)
			if status != tt.status {
				t.Fatalf("status %d, want %d: %.300s", status, tt.status, resp)
			}
			if tt.status != http.StatusOK {
				if m := testenv.Message(t, resp); m.Data != tt.msg {
					t.Errorf("message %q, want %q", m.Data, tt.msg)
				}
			}
		})
	}
}
