package adminroles_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/adminroles"
	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/auth"
	"github.com/mediacatalog/service/shared/httpapi"
	"github.com/mediacatalog/service/shared/postgres"
)

func TestMain(m *testing.M) { testenv.Main(m) }

var (
	_ adminroles.Store = (*postgres.DB)(nil)
	_ auth.Guard       = (*auth.Sessions)(nil)
)

// server is the group's handler over a database with the demo data (roles admin 1,
// editor 2, member 3 (default); permissions 1 to 15), and the demo admin's cookie.
type server struct{ *testenv.Group }

func newServer(t *testing.T) *server {
	t.Helper()
	g := testenv.NewGroup(t, func(db *testenv.DB, sessions *auth.Sessions) []httpapi.Route {
		return adminroles.Routes(adminroles.Deps{Store: db.DB, Auth: sessions})
	})
	return &server{g}
}

func (s *server) do(t *testing.T, method, target string, body any) (int, []byte) {
	t.Helper()
	return s.Do(t, method, target, body, s.Admin)
}

// roles is every role with its permissions and holders, as JSON.
func (s *server) roles(t *testing.T) string {
	t.Helper()
	return s.DB.Text(t, `SELECT jsonb_agg(jsonb_build_object('r', to_jsonb(r),
		'p', (SELECT jsonb_agg(permission_id ORDER BY permission_id) FROM role_permissions WHERE role_id = r.id),
		'u', (SELECT jsonb_agg(user_id ORDER BY user_id) FROM user_roles WHERE role_id = r.id)) ORDER BY r.id)::text
		FROM roles r`)
}

func TestReadRoles(t *testing.T) {
	s := newServer(t)
	s.DB.Exec(t, `UPDATE roles SET description = NULL WHERE id = 2`)
	tests := []struct {
		target string
		status int
		want   string // a substring of the body
	}{
		{"/admin-roles", 200, `{"id":2,"name":"editor","description":null,"permission_count":7,"user_count":1}`},
		{"/admin-roles", 200, `{"id":1,"name":"admin","description":"Full access to the administration","permission_count":15,"user_count":1}`},
		{"/admin-roles/id/3", 200, `"is_default":1,"permissions":[]`},
		{"/admin-roles/id/2", 200, `"description":null,"is_default":0,"permissions":[{"id":14,"name":"add-contributors","description":"Add contributors"}`},
		{"/admin-roles/id/999", 404, `{"data":"Role not found","code":404}`},
		{"/admin-roles/id/abc", 400, `{"data":"Required parameters missing","code":400}`},
		{"/admin-roles/id/0", 400, `{"data":"Required parameters missing","code":400}`},
		{"/admin-roles/id/-2", 400, `{"data":"Required parameters missing","code":400}`},
	}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			s.Counter.Reset()
			status, body := s.do(t, http.MethodGet, tt.target, nil)
			if status != tt.status || !strings.Contains(string(body), tt.want) {
				t.Fatalf("%d %s, want %d with %s", status, body, tt.status, tt.want)
			}
			if n := s.Counter.Count(); n > 2 {
				t.Errorf("%d database round trips, want at most 2", n)
			}
		})
	}
}

func TestEditRole(t *testing.T) {
	s := newServer(t)
	tests := []struct {
		name   string
		target string
		body   any
		status int
		msg    string
		after  string // role 2 as "name|description|permission ids" after the request
	}{
		{"rename, description absent keeps it", "/admin-roles/edit/2", `{"name":"editors"}`, 200, adminroles.MsgRoleUpdated,
			"editors|Edits users and contributors|1,2,4,8,12,13,14"},
		{"description and permissions", "/admin-roles/edit/2",
			`{"name":"editor","description":"Edits","added_permissions":[15,3],"removed_permissions":[13,14]}`, 200, adminroles.MsgRoleUpdated,
			"editor|Edits|1,2,3,4,8,12,15"},
		{"description null clears it", "/admin-roles/edit/2", `{"name":"editor","description":null,"added_permissions":null}`, 200, adminroles.MsgRoleUpdated,
			"editor|-|1,2,3,4,8,12,15"},
		{"name of another role", "/admin-roles/edit/2", `{"name":"admin"}`, 409, "Role with the same name already exists",
			"editor|-|1,2,3,4,8,12,15"},
		{"unknown permission changes nothing", "/admin-roles/edit/2", `{"name":"renamed","added_permissions":[1,404]}`, 400, apperr.MsgMissingParams,
			"editor|-|1,2,3,4,8,12,15"},
		{"unknown role", "/admin-roles/edit/999", `{"name":"ghost"}`, 404, "Role not found", "editor|-|1,2,3,4,8,12,15"},
		{"id not a number", "/admin-roles/edit/two", `{"name":"x"}`, 400, apperr.MsgMissingParams, "editor|-|1,2,3,4,8,12,15"},
		{"no body", "/admin-roles/edit/2", nil, 400, apperr.MsgMissingParams, "editor|-|1,2,3,4,8,12,15"},
		{"malformed JSON", "/admin-roles/edit/2", `{"name":"x",}`, 400, apperr.MsgMissingParams, "editor|-|1,2,3,4,8,12,15"},
		{"no name", "/admin-roles/edit/2", `{"description":"x"}`, 400, apperr.MsgMissingParams, "editor|-|1,2,3,4,8,12,15"},
		{"blank name", "/admin-roles/edit/2", `{"name":""}`, 400, apperr.MsgMissingParams, "editor|-|1,2,3,4,8,12,15"},
		{"name a number", "/admin-roles/edit/2", `{"name":2}`, 400, apperr.MsgMissingParams, "editor|-|1,2,3,4,8,12,15"},
		{"description a number", "/admin-roles/edit/2", `{"name":"x","description":7}`, 400, apperr.MsgMissingParams, "editor|-|1,2,3,4,8,12,15"},
		{"description an object", "/admin-roles/edit/2", `{"name":"x","description":{}}`, 400, apperr.MsgMissingParams, "editor|-|1,2,3,4,8,12,15"},
		{"permissions not an array", "/admin-roles/edit/2", `{"name":"x","added_permissions":{"id":1}}`, 400, apperr.MsgMissingParams, "editor|-|1,2,3,4,8,12,15"},
		{"permissions of strings", "/admin-roles/edit/2", `{"name":"x","removed_permissions":["1"]}`, 400, apperr.MsgMissingParams, "editor|-|1,2,3,4,8,12,15"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := s.do(t, http.MethodPost, tt.target, tt.body)
			if status != tt.status || testenv.Message(t, body).Data != tt.msg {
				t.Fatalf("%d %s, want %d %q", status, body, tt.status, tt.msg)
			}
			got := s.DB.Text(t, `SELECT name || '|' || coalesce(description, '-') || '|' ||
				(SELECT string_agg(permission_id::text, ',' ORDER BY permission_id) FROM role_permissions WHERE role_id = 2)
				FROM roles WHERE id = 2`)
			if got != tt.after {
				t.Errorf("role 2 is %q, want %q", got, tt.after)
			}
		})
	}
}

func TestAddRole(t *testing.T) {
	s := newServer(t)
	tests := []struct {
		name   string
		body   any
		status int
		msg    string
	}{
		{"add", `{"name":" moderator ","description":"Moderates contributors"}`, 200, adminroles.MsgRoleAdded},
		{"same name", `{"name":"moderator","description":"again"}`, 409, "Role with the same name already exists"},
		{"no description", `{"name":"auditor"}`, 400, apperr.MsgMissingParams},
		{"blank description", `{"name":"auditor","description":" "}`, 400, apperr.MsgMissingParams},
		{"no name", `{"description":"x"}`, 400, apperr.MsgMissingParams},
		{"name null", `{"name":null,"description":"x"}`, 400, apperr.MsgMissingParams},
		{"name an array", `{"name":["a"],"description":"x"}`, 400, apperr.MsgMissingParams},
		{"string body", `"moderator"`, 400, apperr.MsgMissingParams},
		{"empty body", ``, 400, apperr.MsgMissingParams},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := s.roles(t)
			status, body := s.do(t, http.MethodPost, "/admin-roles/add", tt.body)
			if status != tt.status || testenv.Message(t, body).Data != tt.msg {
				t.Fatalf("%d %s, want %d %q", status, body, tt.status, tt.msg)
			}
			if status != 200 && s.roles(t) != before {
				t.Error("a refused add changed the roles")
			}
		})
	}
	if got := s.DB.Text(t, `SELECT name || '|' || description || '|' || is_default FROM roles WHERE id > 3`); got != "moderator|Moderates contributors|false" {
		t.Errorf("new role %q", got)
	}
}

// TestParallelRoleAdds: two admins add a role of the same name at once, twenty times:
// one gets 200, the other 409, never a 500.
func TestParallelRoleAdds(t *testing.T) {
	s := newServer(t)
	for round := range 20 {
		var wg sync.WaitGroup
		statuses := make([]int, 2)
		for i := range statuses {
			wg.Go(func() {
				statuses[i], _ = s.do(t, http.MethodPost, "/admin-roles/add",
					map[string]string{"name": fmt.Sprintf("role-%d", round), "description": "raced"})
			})
		}
		wg.Wait()
		if !(statuses[0] == 200 && statuses[1] == 409 || statuses[0] == 409 && statuses[1] == 200) {
			t.Fatalf("round %d: statuses %v, want one 200 and one 409", round, statuses)
		}
	}
}

func TestDeleteRole(t *testing.T) {
	s := newServer(t)
	// User 10 holds only editor, user 11 editor and admin.
	s.DB.Exec(t, `INSERT INTO users (id, slug, username) VALUES (10, 'u10', 'u10'), (11, 'u11', 'u11')`)
	s.DB.Exec(t, `INSERT INTO user_roles VALUES (10, 2), (11, 2), (11, 1)`)
	tests := []struct {
		name   string
		target string
		setup  string
		status int
		msg    string
	}{
		{"default role", "/admin-roles/delete/3", "", 405, "Cannot delete default role"},
		{"unknown role", "/admin-roles/delete/999", "", 404, "Role not found"},
		{"id not a number", "/admin-roles/delete/x", "", 400, apperr.MsgMissingParams},
		{"no default role to fall back on", "/admin-roles/delete/2", `UPDATE roles SET is_default = false`, 500, apperr.MsgInternal},
		{"delete", "/admin-roles/delete/2", `UPDATE roles SET is_default = true WHERE id = 3`, 200, adminroles.MsgRoleDeleted},
		{"again", "/admin-roles/delete/2", "", 404, "Role not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.setup != "" {
				s.DB.Exec(t, tt.setup)
			}
			before := s.roles(t)
			status, body := s.do(t, http.MethodDelete, tt.target, nil)
			if status != tt.status || testenv.Message(t, body).Data != tt.msg {
				t.Fatalf("%d %s, want %d %q", status, body, tt.status, tt.msg)
			}
			if status != 200 && s.roles(t) != before {
				t.Error("a refused deletion changed the roles")
			}
		})
	}
	got := s.DB.Text(t, `SELECT string_agg(user_id || ':' || role_id, ' ' ORDER BY user_id, role_id) FROM user_roles`)
	if want := "1:1 2:3 3:3 10:3 11:1"; got != want {
		t.Errorf("user roles %q, want %q (holders of only the deleted role have the default)", got, want)
	}
	orphans := s.DB.Text(t, `SELECT ((SELECT count(*) FROM role_permissions WHERE role_id = 2) +
		(SELECT count(*) FROM user_roles WHERE role_id = 2))::text`)
	if orphans != "0" {
		t.Errorf("%s rows still refer to the deleted role", orphans)
	}
}

func TestPermissionMatrix(t *testing.T) {
	s := newServer(t)
	s.DB.Exec(t, `INSERT INTO roles (id, name) VALUES (20, 'doomed')`)
	rows := testenv.AuthMatrix{
		Handler: s.Handler,
		DB:      s.DB,
		Config:  s.Config,
		Routes: []testenv.AuthRoute{
			{Method: http.MethodGet, Path: "/admin-roles", Permission: auth.PermViewRoles},
			{Method: http.MethodGet, Path: "/admin-roles/id/2", Permission: auth.PermViewRoles},
			{Method: http.MethodPost, Path: "/admin-roles/edit/2", Body: map[string]any{"name": "editor"}, Permission: auth.PermEditRoles, Message: adminroles.MsgRoleUpdated},
			{Method: http.MethodPost, Path: "/admin-roles/add", Body: map[string]any{"name": "matrix", "description": "added"}, Permission: auth.PermAddRoles, Message: adminroles.MsgRoleAdded},
			{Method: http.MethodDelete, Path: "/admin-roles/delete/20", Permission: auth.PermDeleteRoles, Message: adminroles.MsgRoleDeleted},
		},
	}.Run(t)
	t.Logf("permission matrix: %d rows (5 routes x 8 cases)", rows)
	if rows != 40 {
		t.Errorf("%d rows, want 40", rows)
	}
}

func TestLambdaEvents(t *testing.T) {
	s := newServer(t)
	tests := []struct {
		event string
		want  string // a substring of the body
	}{
		{"list-roles.json", `"name":"editor"`},
		{"get-role.json", `"name":"editor"`},
		{"edit-role.json", adminroles.MsgRoleUpdated},
		{"add-role.json", adminroles.MsgRoleAdded},
		{"delete-role.json", adminroles.MsgRoleDeleted},
	}
	for _, tt := range tests {
		t.Run(tt.event, func(t *testing.T) {
			resp := testenv.Invoke(t, s.Handler, testenv.AuthEvent(t, "admin-roles/"+tt.event, s.Admin))
			body := testenv.ResponseBody(t, resp)
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), tt.want) {
				t.Fatalf("%d %s, want 200 with %s", resp.StatusCode, body, tt.want)
			}
		})
	}
}
