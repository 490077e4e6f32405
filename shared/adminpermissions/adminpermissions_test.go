package adminpermissions_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/adminpermissions"
	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/auth"
	"github.com/mediacatalog/service/shared/httpapi"
	"github.com/mediacatalog/service/shared/postgres"
)

func TestMain(m *testing.M) { testenv.Main(m) }

var (
	_ adminpermissions.Store = (*postgres.DB)(nil)
	_ auth.Guard             = (*auth.Sessions)(nil)
)

// server is the group's handler over a database with the demo data (permissions 1 to
// 15: view-users 1 ... delete-contributors 15), and the demo admin's cookie.
type server struct{ *testenv.Group }

func newServer(t *testing.T) *server {
	t.Helper()
	g := testenv.NewGroup(t, func(db *testenv.DB, sessions *auth.Sessions) []httpapi.Route {
		return adminpermissions.Routes(adminpermissions.Deps{Store: db.DB, Auth: sessions})
	})
	return &server{g}
}

func (s *server) do(t *testing.T, method, target string, body any) (int, []byte) {
	t.Helper()
	return s.Do(t, method, target, body, s.Admin)
}

// permissions is every permission and grant, as JSON.
func (s *server) permissions(t *testing.T) string {
	t.Helper()
	return s.DB.Text(t, `SELECT jsonb_build_object(
		'p', (SELECT jsonb_agg(to_jsonb(p) ORDER BY p.id) FROM permissions p),
		'g', (SELECT jsonb_agg(to_jsonb(g) ORDER BY g.role_id, g.permission_id) FROM role_permissions g))::text`)
}

func TestReadPermissions(t *testing.T) {
	s := newServer(t)
	tests := []struct {
		target string
		status int
		want   string // a substring of the body
	}{
		{"/admin-permissions", 200, `{"id":14,"name":"add-contributors","description":"Add contributors"}`},
		{"/admin-permissions/id/1", 200, `{"id":1,"name":"view-users","description":"View the list and details of user accounts"}`},
		{"/admin-permissions/id/999", 404, `{"data":"Permission not found","code":404}`},
		{"/admin-permissions/id/one", 400, `{"data":"Required parameters missing","code":400}`},
		{"/admin-permissions/id/0", 400, `{"data":"Required parameters missing","code":400}`},
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

func TestWritePermissions(t *testing.T) {
	s := newServer(t)
	tests := []struct {
		name   string
		method string
		target string
		body   any
		status int
		msg    string
	}{
		{"edit", "POST", "/admin-permissions/edit/15", `{"name":" delete-contributors ","description":"Delete them"}`, 200, adminpermissions.MsgPermissionUpdated},
		{"rename a built-in permission", "POST", "/admin-permissions/edit/15", `{"name":"remove-contributors","description":"x"}`, 400, postgres.MsgBuiltInName},
		{"rename a built-in permission to a taken name", "POST", "/admin-permissions/edit/15", `{"name":"view-users","description":"x"}`, 400, postgres.MsgBuiltInName},
		{"edit unknown", "POST", "/admin-permissions/edit/999", `{"name":"x","description":"x"}`, 404, "Permission not found"},
		{"edit without description", "POST", "/admin-permissions/edit/15", `{"name":"x"}`, 400, apperr.MsgMissingParams},
		{"edit with a blank name", "POST", "/admin-permissions/edit/15", `{"name":"","description":"x"}`, 400, apperr.MsgMissingParams},
		{"edit with a numeric description", "POST", "/admin-permissions/edit/15", `{"name":"x","description":1}`, 400, apperr.MsgMissingParams},
		{"edit malformed JSON", "POST", "/admin-permissions/edit/15", `{`, 400, apperr.MsgMissingParams},
		{"edit id not a number", "POST", "/admin-permissions/edit/1.0", `{"name":"x","description":"x"}`, 400, apperr.MsgMissingParams},
		{"add", "POST", "/admin-permissions/add", `{"name":"view-series","description":"View series"}`, 200, adminpermissions.MsgPermissionAdded},
		{"add a taken name", "POST", "/admin-permissions/add", `{"name":"view-series","description":"again"}`, 409, "Permission with the same name already exists"},
		{"rename an added permission to a taken name", "POST", "/admin-permissions/edit/16", `{"name":"view-users","description":"x"}`, 409, "Permission with the same name already exists"},
		{"rename an added permission", "POST", "/admin-permissions/edit/16", `{"name":"see-series","description":"See series"}`, 200, adminpermissions.MsgPermissionUpdated},
		{"add without name", "POST", "/admin-permissions/add", `{"description":"x"}`, 400, apperr.MsgMissingParams},
		{"add with a boolean name", "POST", "/admin-permissions/add", `{"name":true,"description":"x"}`, 400, apperr.MsgMissingParams},
		{"add an array", "POST", "/admin-permissions/add", `[{"name":"x","description":"x"}]`, 400, apperr.MsgMissingParams},
		{"add no body", "POST", "/admin-permissions/add", nil, 400, apperr.MsgMissingParams},
		{"delete unknown", "DELETE", "/admin-permissions/delete/999", nil, 404, "Permission not found"},
		{"delete id not a number", "DELETE", "/admin-permissions/delete/abc", nil, 400, apperr.MsgMissingParams},
		{"delete a built-in permission", "DELETE", "/admin-permissions/delete/1", nil, 403, apperr.MsgForbidden},
		{"delete a renamed built-in permission", "DELETE", "/admin-permissions/delete/15", nil, 403, apperr.MsgForbidden},
		{"delete an added permission (granted by two roles)", "DELETE", "/admin-permissions/delete/16", nil, 200, adminpermissions.MsgPermissionDeleted},
		{"delete again", "DELETE", "/admin-permissions/delete/16", nil, 404, "Permission not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.target == "/admin-permissions/delete/16" && tt.status == 200 {
				s.DB.Exec(t, `INSERT INTO role_permissions (role_id, permission_id) VALUES (1, 16), (2, 16)`)
			}
			before := s.permissions(t)
			status, body := s.do(t, tt.method, tt.target, tt.body)
			if status != tt.status || testenv.Message(t, body).Data != tt.msg {
				t.Fatalf("%d %s, want %d %q", status, body, tt.status, tt.msg)
			}
			if status != 200 && s.permissions(t) != before {
				t.Error("a refused write changed the permissions")
			}
		})
	}
	if got := s.DB.Text(t, `SELECT name || '|' || description FROM permissions WHERE id = 15`); got != "delete-contributors|Delete them" {
		t.Errorf("edited permission %q", got)
	}
	if got := s.DB.Text(t, `SELECT count(*)::text FROM role_permissions WHERE permission_id = 16`); got != "0" {
		t.Errorf("%s roles still grant the deleted permission", got)
	}
}

// TestParallelPermissionEdits: two admins rename two added permissions to the same
// name at once, twenty times: one gets 200, the other 409, never a 500.
func TestParallelPermissionEdits(t *testing.T) {
	s := newServer(t)
	a := s.DB.Int(t, `INSERT INTO permissions (name) VALUES ('added-a') RETURNING id`)
	b := s.DB.Int(t, `INSERT INTO permissions (name) VALUES ('added-b') RETURNING id`)
	for round := range 20 {
		name := fmt.Sprintf("perm-%d", round)
		var wg sync.WaitGroup
		statuses := make([]int, 2)
		for i, id := range []int64{a, b} {
			wg.Go(func() {
				statuses[i], _ = s.do(t, http.MethodPost, fmt.Sprintf("/admin-permissions/edit/%d", id),
					map[string]string{"name": name, "description": "raced"})
			})
		}
		wg.Wait()
		if !(statuses[0] == 200 && statuses[1] == 409 || statuses[0] == 409 && statuses[1] == 200) {
			t.Fatalf("round %d: statuses %v, want one 200 and one 409", round, statuses)
		}
	}
}

func TestPermissionMatrix(t *testing.T) {
	s := newServer(t)
	// Built-in permissions cannot be deleted: the deleting route deletes an added one.
	doomed := s.DB.Int(t, `INSERT INTO permissions (name, description) VALUES ('doomed', 'to go') RETURNING id`)
	rows := testenv.AuthMatrix{
		Handler: s.Handler,
		DB:      s.DB,
		Config:  s.Config,
		Routes: []testenv.AuthRoute{
			{Method: http.MethodGet, Path: "/admin-permissions", Permission: auth.PermViewPermissions},
			{Method: http.MethodGet, Path: "/admin-permissions/id/2", Permission: auth.PermViewPermissions},
			{Method: http.MethodPost, Path: "/admin-permissions/edit/12", Body: map[string]any{"name": "view-contributors", "description": "View"}, Permission: auth.PermEditPermissions, Message: adminpermissions.MsgPermissionUpdated},
			{Method: http.MethodPost, Path: "/admin-permissions/add", Body: map[string]any{"name": "matrix", "description": "added"}, Permission: auth.PermAddPermissions, Message: adminpermissions.MsgPermissionAdded},
			{Method: http.MethodDelete, Path: fmt.Sprintf("/admin-permissions/delete/%d", doomed), Permission: auth.PermDeletePermissions, Message: adminpermissions.MsgPermissionDeleted},
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
		{"list-permissions.json", `"name":"view-users"`},
		{"get-permission.json", `"name":"view-users"`},
		{"edit-permission.json", adminpermissions.MsgPermissionUpdated},
		{"add-permission.json", adminpermissions.MsgPermissionAdded},
		{"delete-permission.json", adminpermissions.MsgPermissionDeleted},
	}
	for _, tt := range tests {
		t.Run(tt.event, func(t *testing.T) {
			resp := testenv.Invoke(t, s.Handler, testenv.AuthEvent(t, "admin-permissions/"+tt.event, s.Admin))
			body := testenv.ResponseBody(t, resp)
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), tt.want) {
				t.Fatalf("%d %s, want 200 with %s", resp.StatusCode, body, tt.want)
			}
		})
	}
}
