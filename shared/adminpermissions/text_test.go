package adminpermissions_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/adminpermissions"
)

// TestPermissionText holds a permission's name and description to their bounds, so
// that no label can be made too long to show or disguised by invisible characters: a
// name of at most 64 characters without control or invisible formatting characters, a
// description of at most 500 that may hold line breaks but no bidirectional overrides.
// A refusal names the field and changes nothing, on add and on edit.
func TestPermissionText(t *testing.T) {
	s := newServer(t)
	if status, body := s.do(t, http.MethodPost, "/admin-permissions/add", `{"name":"export-series","description":"Exports"}`); status != http.StatusOK {
		t.Fatalf("add: %d %s", status, body)
	}
	id := s.DB.Int(t, `SELECT id FROM permissions WHERE name = 'export-series'`)
	invisible := func(field string, r rune) string {
		return fmt.Sprintf("Invalid %s: control characters and invisible formatting characters (such as U+%04X) are not allowed", field, r)
	}
	tests := []struct {
		name            string
		permName, desc  string
		status          int
		addMsg, editMsg string
	}{
		{"a name of 9,000 characters", strings.Repeat("p", 9000), "d", 400, "Invalid name: at most 64 characters", ""},
		{"a name of 65 characters", strings.Repeat("p", 65), "d", 400, "Invalid name: at most 64 characters", ""},
		{"a right-to-left override in the name", "view-\u202esresu", "d", 400, invisible("name", 0x202E), ""},
		{"a word joiner in the name", "view\u2060-users", "d", 400, invisible("name", 0x2060), ""},
		{"a description of 501 characters", "p1", strings.Repeat("d", 501), 400, "Invalid description: at most 500 characters", ""},
		{"a right-to-left isolate in the description", "p2", "a\u2067b", 400, invisible("description", 0x2067), ""},
		{"a NUL-free control character in the description", "p3", "a\x07b", 400, invisible("description", 0x07), ""},
		{"names and descriptions at their bounds", strings.Repeat("é", 64), strings.Repeat("d", 499) + "\n", 200,
			adminpermissions.MsgPermissionAdded, adminpermissions.MsgPermissionUpdated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, _ := json.Marshal(map[string]string{"name": tt.permName, "description": tt.desc})
			if tt.editMsg == "" {
				tt.editMsg = tt.addMsg
			}
			before := s.permissions(t)
			status, resp := s.do(t, http.MethodPost, "/admin-permissions/add", string(body))
			if status != tt.status || testenv.Message(t, resp).Data != tt.addMsg {
				t.Errorf("add: %d %.300s, want %d %q", status, resp, tt.status, tt.addMsg)
			}
			if tt.status != http.StatusOK && s.permissions(t) != before {
				t.Errorf("a refused add changed the permissions")
			}
			if tt.status == http.StatusOK {
				// The add took the name: the edit gives the other row another one as long.
				body, _ = json.Marshal(map[string]string{"name": strings.Repeat("è", 64), "description": tt.desc})
			}
			status, resp = s.do(t, http.MethodPost, fmt.Sprintf("/admin-permissions/edit/%d", id), string(body))
			if status != tt.status || testenv.Message(t, resp).Data != tt.editMsg {
				t.Errorf("edit: %d %.300s, want %d %q", status, resp, tt.status, tt.editMsg)
			}
			if tt.status != http.StatusOK && s.permissions(t) != before {
				t.Errorf("a refused edit changed the permissions")
			}
		})
	}
}
