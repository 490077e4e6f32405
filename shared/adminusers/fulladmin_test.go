package adminusers_test

import (
	"testing"

	"github.com/mediacatalog/service/shared/apperr"
)

// TestFullAdminIsARole: a full admin is a user who holds a full-admin role, one that
// alone grants every built-in permission (docs/access-rules.md). A user whose
// roles only together grant them all is a delegated admin: the rules protecting full
// admins do not protect them, and they cannot hand out full authority. Each case is
// what a delegated admin would try to reach full authority or erode a full admin.
//
//	user 20 "union":    roles 40 (the odd built-in permissions) and 41 (the even ones)
//	user 21 "roler":    role 12 {view-roles, edit-roles, view-contributors}
//	role 42 "spare":    every built-in permission, held by nobody (a full-admin role)
//	role 43 "almost":   every built-in permission but delete-roles (7)
func TestFullAdminIsARole(t *testing.T) {
	setup := []string{
		`INSERT INTO users (id, slug, username) VALUES (20, 'union', 'union'), (21, 'roler', 'roler')`,
		`INSERT INTO roles (id, name) VALUES (40, 'odd'), (41, 'even'), (12, 'roler-role'), (42, 'spare'), (43, 'almost')`,
		`INSERT INTO role_permissions SELECT CASE WHEN id % 2 = 1 THEN 40 ELSE 41 END, id FROM permissions WHERE key IS NOT NULL`,
		`INSERT INTO role_permissions SELECT 42, id FROM permissions WHERE key IS NOT NULL`,
		`INSERT INTO role_permissions SELECT 43, id FROM permissions WHERE key IS NOT NULL AND id <> 7`,
		`INSERT INTO role_permissions VALUES (12, 4), (12, 5), (12, 12)`,
		`INSERT INTO user_roles VALUES (20, 40), (20, 41), (21, 12)`,
		`INSERT INTO sessions (user_id, expires_at) SELECT id, now() + interval '1 day' FROM users`,
	}
	const admin, editor, union, roler = 1, 2, 20, 21
	tests := []struct {
		name         string
		actor        int64
		prep         string
		method, path string
		body         any
		status       int
		check, want  string // a query and its result after the request
	}{
		// The union user is not a full admin...
		{"union renames the full admin", union, "", "POST", "/admin-users/edit/1", map[string]any{"username": "owned"}, 403,
			`SELECT username FROM users WHERE id = 1`, "admin"},
		{"union grants the admin role", union, "", "POST", "/admin-users/edit/3", map[string]any{"username": "member", "added_roles": []int{1}}, 403,
			`SELECT string_agg(role_id::text, ' ' ORDER BY role_id) FROM user_roles WHERE user_id = 3`, "3"},
		{"union grants an unheld full-admin role", union, "", "POST", "/admin-users/edit/3", map[string]any{"username": "member", "added_roles": []int{42}}, 403,
			`SELECT string_agg(role_id::text, ' ' ORDER BY role_id) FROM user_roles WHERE user_id = 3`, "3"},
		{"union adds the last built-in permission a role lacked", union, "", "POST", "/admin-roles/edit/43", map[string]any{"name": "almost", "added_permissions": []int{7}}, 403,
			`SELECT count(*)::text FROM roles WHERE full_admin AND id = 43`, "0"},
		{"union adds permissions that leave the role short of full", union, "", "POST", "/admin-roles/edit/12", map[string]any{"name": "roler-role", "added_permissions": []int{1, 2}}, 200,
			`SELECT string_agg(permission_id::text, ' ' ORDER BY permission_id) FROM role_permissions WHERE role_id = 12`, "1 2 4 5 12"},
		{"union grants a role it covers that is not full", union, "", "POST", "/admin-users/edit/3", map[string]any{"username": "member", "added_roles": []int{43}}, 200,
			`SELECT string_agg(role_id::text, ' ' ORDER BY role_id) FROM user_roles WHERE user_id = 3`, "3 43"},
		// ... nor protected as one.
		{"the editor logs the union user out", editor, "", "POST", "/admin-users/logout/20", nil, 200,
			`SELECT count(*)::text FROM sessions WHERE user_id = 20 AND revoked_at IS NULL`, "0"},
		{"the editor renames the union user", editor, "", "POST", "/admin-users/edit/20", map[string]any{"username": "union-2"}, 200,
			`SELECT username FROM users WHERE id = 20`, "union-2"},
		// A full-admin role is a full admin's to change, even held by nobody.
		{"roler removes a permission from an unheld full-admin role", roler, "", "POST", "/admin-roles/edit/42", map[string]any{"name": "spare", "removed_permissions": []int{4}}, 403,
			`SELECT count(*)::text FROM roles WHERE full_admin AND id = 42`, "1"},
		{"union adds a permission it holds to an unheld full-admin role", union, `INSERT INTO permissions (id, name) VALUES (90, 'extra'); INSERT INTO role_permissions VALUES (40, 90)`,
			"POST", "/admin-roles/edit/42", map[string]any{"name": "spare", "added_permissions": []int{90}}, 403,
			`SELECT count(*)::text FROM role_permissions WHERE role_id = 42 AND permission_id = 90`, "0"},
		{"union deletes the only role of a user while the default role is a full-admin one", union,
			`INSERT INTO role_permissions SELECT 3, id FROM permissions WHERE key IS NOT NULL ON CONFLICT DO NOTHING`,
			"DELETE", "/admin-roles/delete/12", nil, 403,
			`SELECT string_agg(role_id::text, ' ' ORDER BY role_id) FROM user_roles WHERE user_id = 21`, "12"},
		{"union leaves a user without a role while the default role is a full-admin one", union,
			`INSERT INTO role_permissions SELECT 3, id FROM permissions WHERE key IS NOT NULL ON CONFLICT DO NOTHING`,
			"POST", "/admin-users/edit/21", map[string]any{"username": "roler", "removed_roles": []int{12}}, 403,
			`SELECT string_agg(role_id::text, ' ' ORDER BY role_id) FROM user_roles WHERE user_id = 21`, "12"},
		{"union leaves a user without a role: the default role, whatever union holds", union,
			`INSERT INTO permissions (id, name) VALUES (91, 'sign-up'); INSERT INTO role_permissions VALUES (3, 91)`,
			"POST", "/admin-users/edit/21", map[string]any{"username": "roler", "removed_roles": []int{12}}, 200,
			`SELECT string_agg(role_id::text, ' ' ORDER BY role_id) FROM user_roles WHERE user_id = 21`, "3"},
		{"roler renames an unheld full-admin role", roler, "", "POST", "/admin-roles/edit/42", map[string]any{"name": "harmless"}, 403,
			`SELECT name FROM roles WHERE id = 42`, "spare"},
		{"union deletes an unheld full-admin role (it holds every permission of it)", union, "",
			"DELETE", "/admin-roles/delete/42", nil, 403, `SELECT count(*)::text FROM roles WHERE id = 42`, "1"},
		// A full admin hands full authority out, and its holder is then protected.
		{"the admin grants an unheld full-admin role", admin, "", "POST", "/admin-users/edit/3", map[string]any{"username": "member", "added_roles": []int{42}}, 200,
			`SELECT string_agg(role_id::text, ' ' ORDER BY role_id) FROM user_roles WHERE user_id = 3`, "3 42"},
		{"the editor logs out a new full admin", editor, `INSERT INTO user_roles VALUES (3, 42)`, "POST", "/admin-users/logout/3", nil, 403,
			`SELECT count(*)::text FROM sessions WHERE user_id = 3 AND revoked_at IS NULL`, "1"},
		{"the admin completes a role, which becomes a full-admin role", admin, "", "POST", "/admin-roles/edit/43", map[string]any{"name": "almost", "added_permissions": []int{7}}, 200,
			`SELECT count(*)::text FROM roles WHERE full_admin AND id = 43`, "1"},
		// The last full admin is the last holder of a full-admin role.
		{"the admin takes away the last full admin's power from its role", admin, `DELETE FROM role_permissions WHERE role_id = 42`,
			"POST", "/admin-roles/edit/1", map[string]any{"name": "admin", "removed_permissions": []int{3}}, 403,
			`SELECT count(*)::text FROM role_permissions WHERE role_id = 1`, "15"},
		{"the admin takes it away while an unheld full-admin role exists", admin, "",
			"POST", "/admin-roles/edit/1", map[string]any{"name": "admin", "removed_permissions": []int{3}}, 403,
			`SELECT count(*)::text FROM role_permissions WHERE role_id = 1`, "15"},
		{"the admin takes it away while another holds a full-admin role", admin, `INSERT INTO user_roles VALUES (3, 42)`,
			"POST", "/admin-roles/edit/1", map[string]any{"name": "admin", "removed_permissions": []int{3}}, 200,
			`SELECT count(*)::text FROM role_permissions WHERE role_id = 1`, "14"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newAccess(t)
			for _, sql := range setup {
				a.db.Exec(t, sql)
			}
			if tt.prep != "" {
				a.db.Exec(t, tt.prep)
			}
			status, msg := a.do(t, a.cookie(t, tt.actor), tt.method, tt.path, tt.body)
			if status != tt.status {
				t.Fatalf("%s %s: %d %q, want %d", tt.method, tt.path, status, msg, tt.status)
			}
			if status == 403 && msg != apperr.MsgForbidden {
				t.Errorf("message %q, want Forbidden", msg)
			}
			if got := a.db.Text(t, tt.check); got != tt.want {
				t.Errorf("after: %s = %q, want %q", tt.check, got, tt.want)
			}
		})
	}
}
