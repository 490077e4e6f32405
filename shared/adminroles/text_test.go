package adminroles_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/adminroles"
)

// TestRoleText holds a role's name and description to their bounds, so that no role
// can be named too long to show or disguised by U+202E and its kin: a name of at most
// 64 characters without control or invisible formatting characters, a description of at
// most 500 that may hold line breaks but no bidirectional overrides. A refusal names
// the field and changes nothing, on add and on edit.
func TestRoleText(t *testing.T) {
	s := newServer(t)
	if status, body := s.do(t, http.MethodPost, "/admin-roles/add", `{"name":"moderator","description":"Moderates"}`); status != http.StatusOK {
		t.Fatalf("add: %d %s", status, body)
	}
	id := s.DB.Int(t, `SELECT id FROM roles WHERE name = 'moderator'`)
	invisible := func(field string, r rune) string {
		return fmt.Sprintf("Invalid %s: control characters and invisible formatting characters (such as U+%04X) are not allowed", field, r)
	}
	tests := []struct {
		name            string
		roleName, desc  string
		status          int
		addMsg, editMsg string
	}{
		{"a name of 9,000 characters", strings.Repeat("r", 9000), "d", 400, "Invalid name: at most 64 characters", ""},
		{"a name of 65 characters", strings.Repeat("r", 65), "d", 400, "Invalid name: at most 64 characters", ""},
		{"a right-to-left override in the name", "adm\u202eni", "d", 400, invisible("name", 0x202E), ""},
		{"a zero-width space in the name", "ad\u200bmin", "d", 400, invisible("name", 0x200B), ""},
		{"a tab in the name", "ad\tmin", "d", 400, invisible("name", 0x09), ""},
		{"a description of 501 characters", "r1", strings.Repeat("d", 501), 400, "Invalid description: at most 500 characters", ""},
		{"a right-to-left override in the description", "r2", "a\u202eb", 400, invisible("description", 0x202E), ""},
		{"a right-to-left embedding in the description", "r3", "a\u202bb", 400, invisible("description", 0x202B), ""},
		{"an escape in the description", "r4", "a\x1b[31mb", 400, invisible("description", 0x1B), ""},
		{"names and descriptions at their bounds", strings.Repeat("é", 64), strings.Repeat("d", 498) + "\n\t", 200,
			adminroles.MsgRoleAdded, adminroles.MsgRoleUpdated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, _ := json.Marshal(map[string]string{"name": tt.roleName, "description": tt.desc})
			if tt.editMsg == "" {
				tt.editMsg = tt.addMsg
			}
			before := s.roles(t)
			status, resp := s.do(t, http.MethodPost, "/admin-roles/add", string(body))
			if status != tt.status || testenv.Message(t, resp).Data != tt.addMsg {
				t.Errorf("add: %d %.300s, want %d %q", status, resp, tt.status, tt.addMsg)
			}
			if tt.status != http.StatusOK && s.roles(t) != before {
				t.Errorf("a refused add changed the roles")
			}
			if tt.status == http.StatusOK {
				// The add took the name: the edit gives the other row another one as long.
				body, _ = json.Marshal(map[string]string{"name": strings.Repeat("è", 64), "description": tt.desc})
			}
			status, resp = s.do(t, http.MethodPost, fmt.Sprintf("/admin-roles/edit/%d", id), string(body))
			if status != tt.status || testenv.Message(t, resp).Data != tt.editMsg {
				t.Errorf("edit: %d %.300s, want %d %q", status, resp, tt.status, tt.editMsg)
			}
			if tt.status != http.StatusOK && s.roles(t) != before {
				t.Errorf("a refused edit changed the roles")
			}
		})
	}
}
