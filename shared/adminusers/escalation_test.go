package adminusers_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mediacatalog/service/infra/local/demo"
	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/adminpermissions"
	"github.com/mediacatalog/service/shared/adminroles"
	"github.com/mediacatalog/service/shared/adminusers"
	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/audit"
	"github.com/mediacatalog/service/shared/auth"
	"github.com/mediacatalog/service/shared/httpapi"
	"github.com/mediacatalog/service/shared/postgres"
)

// The access rules of the admin API (postgres/access.go), through the handlers of the
// three groups that hand out power: users, roles and permissions.

// syncBuffer is a log sink that concurrent requests may write to.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// access is the user, role and permission groups on one handler over the demo data
// (admin 1 holds the admin role 1, every permission; editor 2 the editor role 2:
// view-users, edit-users, view-roles, view-permissions, view-contributors,
// edit-contributors, add-contributors; member 3 the default role 3, nothing), with
// JSON logs kept in logs.
type access struct {
	h        http.Handler
	db       *testenv.DB
	sessions *auth.Sessions
	logs     *syncBuffer
	puts     *atomic.Int64 // objects put in the bucket; nil without the image routes
}

func newAccess(t *testing.T) *access {
	t.Helper()
	db := testenv.NewDemoDB(t)
	cfg := testenv.AuthConfig(t)
	sessions := testenv.NewSessions(t, db, cfg)
	logs := &syncBuffer{}
	mux := httpapi.NewMux(
		adminusers.Routes(adminusers.Deps{Store: db.DB, Auth: sessions, LockTTL: cfg.LockTTL}),
		adminroles.Routes(adminroles.Deps{Store: db.DB, Auth: sessions}),
		adminpermissions.Routes(adminpermissions.Deps{Store: db.DB, Auth: sessions}),
	)
	h := httpapi.Wrap(mux, httpapi.Options{Log: slog.New(slog.NewJSONHandler(logs, nil)), CORSOrigins: cfg.CORSOrigins})
	return &access{h: h, db: db, sessions: sessions, logs: logs}
}

func (a *access) cookie(t *testing.T, userID int64) *http.Cookie {
	t.Helper()
	return testenv.SessionCookie(t, a.sessions, userID)
}

// do sends a request as the frontend would (its Origin, same-site) and returns the
// status and the Response Model's data (or the raw body of a read).
func (a *access) do(t *testing.T, c *http.Cookie, method, target string, body any) (int, string) {
	t.Helper()
	req := testenv.Request(method, target, body, c)
	req.Header.Set("Origin", "https://mediacatalog.app")
	req.Header.Set("Sec-Fetch-Site", "same-site")
	rec := testenv.Do(t, a.h, req)
	var m httpapi.Response
	if json.Unmarshal(rec.Body.Bytes(), &m) == nil && m.Code != 0 {
		return rec.Code, m.Data
	}
	return rec.Code, rec.Body.String()
}

// roles is user id's role ids, "1 3".
func (a *access) roles(t *testing.T, id int64) string {
	return a.db.Text(t, `SELECT coalesce(string_agg(role_id::text, ' ' ORDER BY role_id), '') FROM user_roles WHERE user_id = $1`, id)
}

// grants is role id's permission ids, "1 2 4".
func (a *access) grants(t *testing.T, id int64) string {
	return a.db.Text(t, `SELECT coalesce(string_agg(permission_id::text, ' ' ORDER BY permission_id), '') FROM role_permissions WHERE role_id = $1`, id)
}

// TestEscalationsOfTheReview replays three escalations a holder of a few admin
// permissions could try: each is 403 and changes nothing.
func TestEscalationsOfTheReview(t *testing.T) {
	t.Run("editor adds the admin role to itself through user edit", func(t *testing.T) {
		a := newAccess(t)
		editor := a.cookie(t, demo.EditorUserID)
		status, msg := a.do(t, editor, "POST", "/admin-users/edit/2", map[string]any{"username": "editor", "added_roles": []int{1}})
		if status != 403 || msg != apperr.MsgForbidden {
			t.Fatalf("user edit: %d %q, want 403 Forbidden", status, msg)
		}
		if got := a.roles(t, 2); got != "2" {
			t.Errorf("editor's roles %q, want 2", got)
		}
		if status, _ := a.do(t, editor, "POST", "/admin-permissions/add", map[string]any{"name": "p", "description": "d"}); status != 403 {
			t.Errorf("add permission afterwards: %d, want 403", status)
		}
		// ... nor takes the admin's role away, nor forces the admin out.
		if status, _ := a.do(t, editor, "POST", "/admin-users/edit/1", map[string]any{"username": "admin", "removed_roles": []int{1}}); status != 403 {
			t.Errorf("remove the admin's role: %d, want 403", status)
		}
		if status, _ := a.do(t, editor, "POST", "/admin-users/logout/1", nil); status != 403 {
			t.Errorf("log the admin out: %d, want 403", status)
		}
		if got := a.roles(t, 1); got != "1" {
			t.Errorf("admin's roles %q, want 1", got)
		}
		if n := a.db.Int(t, `SELECT count(*) FROM sessions WHERE user_id = 1 AND revoked_at IS NOT NULL`); n != 0 {
			t.Errorf("%d of the admin's sessions revoked", n)
		}
	})

	t.Run("view-roles and edit-roles add every permission to their own role", func(t *testing.T) {
		a := newAccess(t)
		id := testenv.NewUser(t, a.db, "roler", auth.PermViewRoles, auth.PermEditRoles)
		role := a.db.Int(t, `SELECT role_id FROM user_roles WHERE user_id = $1`, id)
		before := a.grants(t, role)
		all := make([]int, 15)
		for i := range all {
			all[i] = i + 1
		}
		status, msg := a.do(t, a.cookie(t, id), "POST", fmt.Sprintf("/admin-roles/edit/%d", role),
			map[string]any{"name": "roler-role", "added_permissions": all})
		if status != 403 || msg != apperr.MsgForbidden {
			t.Fatalf("role edit: %d %q, want 403 Forbidden", status, msg)
		}
		if got := a.grants(t, role); got != before {
			t.Errorf("own role grants %q, want %q", got, before)
		}
	})

	t.Run("built-in permissions keep their names, so labels cannot be swapped", func(t *testing.T) {
		// Three renames could make the permission labelled view-users be
		// delete-users, so an admin granting by label would grant something else. A
		// built-in permission's name is refused as a change (400); its description
		// stays editable.
		a := newAccess(t)
		id := testenv.NewUser(t, a.db, "renamer", auth.PermViewPermissions, auth.PermEditPermissions)
		c := a.cookie(t, id)
		names := a.db.Text(t, `SELECT string_agg(name, ' ' ORDER BY id) FROM permissions`)
		for _, rename := range []struct {
			id   int
			name string
		}{{3, "delete-users-old"}, {1, auth.PermDeleteUsers}, {3, auth.PermViewUsers}} {
			status, msg := a.do(t, c, "POST", fmt.Sprintf("/admin-permissions/edit/%d", rename.id),
				map[string]any{"name": rename.name, "description": "renamed"})
			if status != 400 || msg != postgres.MsgBuiltInName {
				t.Fatalf("rename %d to %s: %d %q, want 400 %q", rename.id, rename.name, status, msg, postgres.MsgBuiltInName)
			}
		}
		if got := a.db.Text(t, `SELECT string_agg(name, ' ' ORDER BY id) FROM permissions`); got != names {
			t.Errorf("names after the refused renames:\n%s\nwant\n%s", got, names)
		}
		if status, msg := a.do(t, c, "POST", "/admin-permissions/edit/1",
			map[string]any{"name": auth.PermViewUsers, "description": "Read the user list"}); status != 200 {
			t.Fatalf("edit the description of view-users: %d %q, want 200", status, msg)
		}
		if got := a.db.Text(t, `SELECT name || '|' || description FROM permissions WHERE id = 1`); got != "view-users|Read the user list" {
			t.Errorf("view-users after a description edit: %q", got)
		}
	})
}

// TestGrantMatrix is who may grant, take away and change what. Each case runs on
// fresh demo data plus:
//
//	user 10 "contrib":  role 10 {view-users, edit-users, view-contributors}
//	user 11 "admin2":   the admin role (a second full admin)
//	user 12 "roler":    role 12 {view-roles, edit-roles, view-contributors}
//	user 13 "deleter":  role 13 {delete-users, delete-roles, view-roles}
//	role 20 "readers":  {view-contributors}
//	role 21 "empty":    no permission
func TestGrantMatrix(t *testing.T) {
	setup := []string{
		`INSERT INTO users (id, slug, username) VALUES (10, 'contrib', 'contrib'), (11, 'admin2', 'admin2'),
			(12, 'roler', 'roler'), (13, 'deleter', 'deleter')`,
		`INSERT INTO roles (id, name) VALUES (10, 'contrib-role'), (12, 'roler-role'), (13, 'deleter-role'),
			(20, 'readers'), (21, 'empty')`,
		`INSERT INTO role_permissions (role_id, permission_id) VALUES (10, 1), (10, 2), (10, 12),
			(12, 4), (12, 5), (12, 12), (13, 3), (13, 7), (13, 4), (20, 12)`,
		`INSERT INTO user_roles (user_id, role_id) VALUES (10, 10), (11, 1), (12, 12), (13, 13)`,
	}
	const admin, editor, member, contrib, admin2, roler, deleter = 1, 2, 3, 10, 11, 12, 13
	type check struct{ sql, want string }
	tests := []struct {
		name   string
		actor  int64
		prep   string // SQL run after the setup
		method string
		target string
		body   any
		status int
		after  check // a query and its result after the request
	}{
		// Granting and taking away roles (user edit).
		{"admin grants the admin role", admin, "", "POST", "/admin-users/edit/3", map[string]any{"username": "member", "added_roles": []int{1}}, 200,
			check{`SELECT string_agg(role_id::text, ' ' ORDER BY role_id) FROM user_roles WHERE user_id = 3`, "1 3"}},
		{"editor grants its own role's set (editor)", editor, "", "POST", "/admin-users/edit/3", map[string]any{"username": "member", "added_roles": []int{2}}, 200,
			check{`SELECT string_agg(role_id::text, ' ' ORDER BY role_id) FROM user_roles WHERE user_id = 3`, "2 3"}},
		{"editor grants a role it covers (readers)", editor, "", "POST", "/admin-users/edit/3", map[string]any{"username": "member", "added_roles": []int{20}}, 200,
			check{`SELECT string_agg(role_id::text, ' ' ORDER BY role_id) FROM user_roles WHERE user_id = 3`, "3 20"}},
		{"editor grants the admin role", editor, "", "POST", "/admin-users/edit/3", map[string]any{"username": "member", "added_roles": []int{1}}, 403,
			check{`SELECT string_agg(role_id::text, ' ' ORDER BY role_id) FROM user_roles WHERE user_id = 3`, "3"}},
		{"contrib grants the editor role (lacks some of it)", contrib, "", "POST", "/admin-users/edit/3", map[string]any{"username": "member", "added_roles": []int{2}}, 403,
			check{`SELECT string_agg(role_id::text, ' ' ORDER BY role_id) FROM user_roles WHERE user_id = 3`, "3"}},
		{"contrib takes away the editor role (lacks some of it)", contrib, "", "POST", "/admin-users/edit/2", map[string]any{"username": "editor", "removed_roles": []int{2}}, 403,
			check{`SELECT string_agg(role_id::text, ' ' ORDER BY role_id) FROM user_roles WHERE user_id = 2`, "2"}},
		{"editor takes away a role it covers", editor, "", "POST", "/admin-users/edit/10", map[string]any{"username": "contrib", "removed_roles": []int{10}}, 200,
			check{`SELECT string_agg(role_id::text, ' ' ORDER BY role_id) FROM user_roles WHERE user_id = 10`, "3"}},
		{"editor adds a covered role to itself", editor, "", "POST", "/admin-users/edit/2", map[string]any{"username": "editor", "added_roles": []int{20}}, 403,
			check{`SELECT string_agg(role_id::text, ' ' ORDER BY role_id) FROM user_roles WHERE user_id = 2`, "2"}},
		{"admin changes its own roles", admin, "", "POST", "/admin-users/edit/1", map[string]any{"username": "admin", "added_roles": []int{2}}, 403,
			check{`SELECT string_agg(role_id::text, ' ' ORDER BY role_id) FROM user_roles WHERE user_id = 1`, "1"}},
		{"own roles listed unchanged: only the name changes", editor, "", "POST", "/admin-users/edit/2", map[string]any{"username": "editor-2", "added_roles": []int{2}}, 200,
			check{`SELECT username FROM users WHERE id = 2`, "editor-2"}},
		{"a full admin's covered role taken away by a non-admin", editor, `INSERT INTO user_roles VALUES (11, 20)`, "POST", "/admin-users/edit/11", map[string]any{"username": "admin2", "removed_roles": []int{20}}, 403,
			check{`SELECT string_agg(role_id::text, ' ' ORDER BY role_id) FROM user_roles WHERE user_id = 11`, "1 20"}},
		{"admin takes the admin role from the other admin", admin, "", "POST", "/admin-users/edit/11", map[string]any{"username": "admin2", "removed_roles": []int{1}}, 200,
			check{`SELECT string_agg(role_id::text, ' ' ORDER BY role_id) FROM user_roles WHERE user_id = 11`, "3"}},

		// Changing roles (role edit and delete).
		{"roler adds a permission it holds to another role", roler, "", "POST", "/admin-roles/edit/21", map[string]any{"name": "empty", "added_permissions": []int{4, 12}}, 200,
			check{`SELECT string_agg(permission_id::text, ' ' ORDER BY permission_id) FROM role_permissions WHERE role_id = 21`, "4 12"}},
		{"roler adds a permission it lacks", roler, "", "POST", "/admin-roles/edit/21", map[string]any{"name": "empty", "added_permissions": []int{3}}, 403,
			check{`SELECT count(*)::text FROM role_permissions WHERE role_id = 21`, "0"}},
		{"roler adds a held permission to its own role", roler, `INSERT INTO user_roles VALUES (12, 21)`, "POST", "/admin-roles/edit/21", map[string]any{"name": "empty", "added_permissions": []int{4}}, 403,
			check{`SELECT count(*)::text FROM role_permissions WHERE role_id = 21`, "0"}},
		{"roler removes a permission it lacks", roler, "", "POST", "/admin-roles/edit/2", map[string]any{"name": "editor", "removed_permissions": []int{2}}, 403,
			check{`SELECT count(*)::text FROM role_permissions WHERE role_id = 2`, "7"}},
		{"roler renames a role (no grant changes)", roler, "", "POST", "/admin-roles/edit/2", map[string]any{"name": "editors"}, 200,
			check{`SELECT name FROM roles WHERE id = 2`, "editors"}},
		{"admin adds to a role it does not hold", admin, "", "POST", "/admin-roles/edit/20", map[string]any{"name": "readers", "added_permissions": []int{3}}, 200,
			check{`SELECT string_agg(permission_id::text, ' ' ORDER BY permission_id) FROM role_permissions WHERE role_id = 20`, "3 12"}},
		{"admin adds an added permission to a role: a full admin holds every permission", admin, `INSERT INTO permissions (id, name) VALUES (90, 'view-series')`, "POST", "/admin-roles/edit/20", map[string]any{"name": "readers", "added_permissions": []int{90}}, 200,
			check{`SELECT string_agg(permission_id::text, ' ' ORDER BY permission_id) FROM role_permissions WHERE role_id = 20`, "12 90"}},
		{"admin adds to its own role", admin, `INSERT INTO permissions (id, name) VALUES (90, 'view-series')`, "POST", "/admin-roles/edit/1", map[string]any{"name": "admin", "added_permissions": []int{90}}, 403,
			check{`SELECT count(*)::text FROM role_permissions WHERE role_id = 1`, "15"}},
		{"last full admins lose a permission", admin, "", "POST", "/admin-roles/edit/1", map[string]any{"name": "admin", "removed_permissions": []int{3}}, 403,
			check{`SELECT count(*)::text FROM role_permissions WHERE role_id = 1`, "15"}},
		{"deleter deletes a role it does not cover", deleter, "", "DELETE", "/admin-roles/delete/20", nil, 403,
			check{`SELECT count(*)::text FROM roles WHERE id = 20`, "1"}},
		{"deleter deletes a role without permissions", deleter, "", "DELETE", "/admin-roles/delete/21", nil, 200,
			check{`SELECT count(*)::text FROM roles WHERE id = 21`, "0"}},
		{"admin deletes the role of every full admin", admin, "", "DELETE", "/admin-roles/delete/1", nil, 403,
			check{`SELECT count(*)::text FROM user_roles WHERE role_id = 1`, "2"}},

		// Logging out and deleting full admins.
		{"editor logs out a member", editor, "", "POST", "/admin-users/logout/3", nil, 200, check{`SELECT '-'`, "-"}},
		{"editor logs out a full admin", editor, `INSERT INTO sessions (user_id, expires_at) VALUES (11, now() + interval '1 day')`, "POST", "/admin-users/logout/11", nil, 403,
			check{`SELECT count(*)::text FROM sessions WHERE user_id = 11 AND revoked_at IS NOT NULL`, "0"}},
		{"admin logs out the other admin", admin, `INSERT INTO sessions (user_id, expires_at) VALUES (11, now() + interval '1 day')`, "POST", "/admin-users/logout/11", nil, 200,
			check{`SELECT count(*)::text FROM sessions WHERE user_id = 11 AND revoked_at IS NULL`, "0"}},
		{"deleter deletes a full admin", deleter, "", "DELETE", "/admin-users/delete/11", nil, 403,
			check{`SELECT count(*)::text FROM users WHERE id = 11`, "1"}},
		{"deleter deletes a member", deleter, "", "DELETE", "/admin-users/delete/3", nil, 200,
			check{`SELECT count(*)::text FROM users WHERE id = 3`, "0"}},
		{"admin deletes the other admin", admin, "", "DELETE", "/admin-users/delete/11", nil, 200,
			check{`SELECT count(*)::text FROM users WHERE id = 11`, "0"}},
		{"the last full admin deletes itself", admin, `DELETE FROM users WHERE id = 11`, "DELETE", "/admin-users/delete/1", nil, 403,
			check{`SELECT count(*)::text FROM users WHERE id = 1`, "1"}},
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
			c := a.cookie(t, tt.actor)
			status, msg := a.do(t, c, tt.method, tt.target, tt.body)
			if status != tt.status {
				t.Fatalf("%d %q, want %d", status, msg, tt.status)
			}
			if status == 403 && msg != apperr.MsgForbidden {
				t.Errorf("message %q, want Forbidden", msg)
			}
			if got := a.db.Text(t, tt.after.sql); got != tt.after.want {
				t.Errorf("after: %s = %q, want %q", tt.after.sql, got, tt.after.want)
			}
		})
	}
}

// TestRacingAdmins: two full admins take the admin role from each other at the same
// time, ten times. Checked one after the other, both would pass and leave no admin;
// under the access lock the second sees that its actor is no full admin any more.
func TestRacingAdmins(t *testing.T) {
	a := newAccess(t)
	a.db.Exec(t, `INSERT INTO users (id, slug, username) VALUES (11, 'admin2', 'admin2')`)
	c1, c2 := a.cookie(t, 1), a.cookie(t, 11)
	for round := range 10 {
		a.db.Exec(t, `INSERT INTO user_roles VALUES (1, 1), (11, 1) ON CONFLICT DO NOTHING`)
		var wg sync.WaitGroup
		statuses := make([]int, 2)
		for i, req := range []struct {
			c      *http.Cookie
			target string
			name   string
		}{{c1, "/admin-users/edit/11", "admin2"}, {c2, "/admin-users/edit/1", "admin"}} {
			wg.Go(func() {
				statuses[i], _ = a.do(t, req.c, "POST", req.target, map[string]any{"username": req.name, "removed_roles": []int{1}})
			})
		}
		wg.Wait()
		if !(statuses[0] == 200 && statuses[1] == 403 || statuses[0] == 403 && statuses[1] == 200) {
			t.Fatalf("round %d: statuses %v, want one 200 and one 403", round, statuses)
		}
		if n := a.db.Int(t, `SELECT count(*) FROM user_roles WHERE role_id = 1`); n != 1 {
			t.Fatalf("round %d: %d holders of the admin role, want 1", round, n)
		}
	}
}

// TestCrossSiteWrites: a page of another host of the same site (staging) posting a
// text/plain form (a simple request, sent without a preflight), and other writes
// from outside the frontend.
func TestCrossSiteWrites(t *testing.T) {
	a := newAccess(t)
	admin := a.cookie(t, demo.AdminUserID)
	tests := []struct {
		name, origin, site, contentType string
		status                          int
		msg                             string
	}{
		{"text/plain form from staging", "https://staging.mediacatalog.app", "same-site", "text/plain", 403, apperr.MsgForbidden},
		{"JSON from staging", "https://staging.mediacatalog.app", "same-site", "application/json", 403, apperr.MsgForbidden},
		{"cross-site", "https://evil.example", "cross-site", "application/json", 403, apperr.MsgForbidden},
		{"foreign origin, no fetch metadata", "https://evil.example", "", "application/json", 403, apperr.MsgForbidden},
		{"text/plain from the frontend", "https://mediacatalog.app", "same-site", "text/plain", 400, httpapi.MsgJSONOnly},
		{"JSON from the frontend", "https://mediacatalog.app", "same-site", "application/json;charset=UTF-8", 200, adminroles.MsgRoleAdded},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := fmt.Sprintf("csrf-%d", i)
			req := testenv.Request("POST", "/admin-roles/add", fmt.Sprintf(`{"name":%q,"description":"x"}`, name), admin)
			req.Header.Set("Content-Type", tt.contentType)
			req.Header.Set("Origin", tt.origin)
			if tt.site != "" {
				req.Header.Set("Sec-Fetch-Site", tt.site)
			}
			rec := testenv.Do(t, a.h, req)
			if m := testenv.Message(t, rec.Body.Bytes()); rec.Code != tt.status || m.Data != tt.msg {
				t.Fatalf("%d %+v, want %d %q", rec.Code, m, tt.status, tt.msg)
			}
			want := int64(0)
			if tt.status == 200 {
				want = 1
			}
			if n := a.db.Int(t, `SELECT count(*) FROM roles WHERE name = $1`, name); n != want {
				t.Errorf("%d roles %s, want %d", n, name, want)
			}
		})
	}
}

// TestAuditRecords: every admin write of the three groups leaves one JSON record
// naming the actor, the action, the target and what changed, and no record carries
// the session's token.
func TestAuditRecords(t *testing.T) {
	a := newAccess(t)
	admin := a.cookie(t, demo.AdminUserID)
	writes := []struct {
		method, target string
		body           any
		action         string
		id             int64  // of the target; 0: the new row's (checked > 0)
		changes        string // a substring of the record's changes as JSON
	}{
		{"POST", "/admin-users/edit/3", map[string]any{"username": "member-2", "added_roles": []int{2, 3}, "removed_roles": []int{2}}, "user.edit", 3,
			`{"username":{"before":"member","after":"member-2"},"added_roles":[2],"removed_roles":[]}`},
		{"POST", "/admin-users/logout/3", nil, "user.logout", 3, ``},
		{"POST", "/admin-roles/add", map[string]any{"name": "auditors", "description": "Audit"}, "role.add", 0, `"name":"auditors"`},
		{"POST", "/admin-roles/edit/2", map[string]any{"name": "editor", "added_permissions": []int{3}, "removed_permissions": []int{14}}, "role.edit", 2, `"added_permissions":[3],"removed_permissions":[14]`},
		{"POST", "/admin-permissions/add", map[string]any{"name": "view-series", "description": "View series"}, "permission.add", 0, `"name":"view-series"`},
		{"POST", "/admin-permissions/edit/12", map[string]any{"name": "view-contributors", "description": "See"}, "permission.edit", 12, `"description":{"before":`},
		{"DELETE", "/admin-permissions/delete/16", nil, "permission.delete", 16, ``},
		{"DELETE", "/admin-roles/delete/2", nil, "role.delete", 2, `{"moved_to_default_role":[2]}`},
		{"DELETE", "/admin-users/delete/3", nil, "user.delete", 3, ``},
	}
	for _, w := range writes {
		if status, msg := a.do(t, admin, w.method, w.target, w.body); status != 200 {
			t.Fatalf("%s %s: %d %q", w.method, w.target, status, msg)
		}
	}
	logs := a.logs.String()
	if strings.Contains(logs, admin.Value) || strings.Contains(strings.ToLower(logs), "refreshtoken") {
		t.Error("the logs carry the session cookie")
	}
	type record struct {
		Msg     string `json:"msg"`
		Actor   int64  `json:"actor_id"`
		Action  string `json:"action"`
		Request string `json:"request_id"`
		Target  struct {
			Kind string
			ID   int64
		} `json:"target"`
		Changes json.RawMessage `json:"changes"`
	}
	var records []record
	sc := bufio.NewScanner(strings.NewReader(logs))
	for sc.Scan() {
		var r record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("log line %q is not JSON: %v", sc.Text(), err)
		}
		if r.Msg == audit.Message {
			records = append(records, r)
		}
	}
	if len(records) != len(writes) {
		t.Fatalf("%d audit records, want %d:\n%s", len(records), len(writes), logs)
	}
	for i, w := range writes {
		r := records[i]
		kind, _, _ := strings.Cut(w.action, ".")
		if r.Actor != demo.AdminUserID || r.Action != w.action || r.Target.Kind != kind || r.Request == "" ||
			(w.id != 0 && r.Target.ID != w.id) || (w.id == 0 && r.Target.ID <= 0) || !strings.Contains(string(r.Changes), w.changes) {
			t.Errorf("record %d %+v (changes %s), want %s of %s %d with %s", i, r, r.Changes, w.action, kind, w.id, w.changes)
		}
	}
	// A refused write is not recorded as done; its refusal is recorded, with the actor,
	// the route and the target.
	if status, _ := a.do(t, a.cookie(t, demo.EditorUserID), "POST", "/admin-users/edit/2", map[string]any{"username": "editor", "added_roles": []int{1}}); status != 403 {
		t.Fatalf("escalation: %d, want 403", status)
	}
	if n := strings.Count(a.logs.String(), `"msg":"audit"`); n != len(writes)+1 {
		t.Errorf("%d audit records after a refused write, want %d", n, len(writes)+1)
	}
	if !strings.Contains(a.logs.String(), `"actor_id":2,"action":"refused","route":"POST /admin-users/edit/{id}","target":{"id":2}`) {
		t.Errorf("no refusal record of the escalation:\n%s", a.logs.String())
	}
}

// TestRacingGrantsAndDeletes: a role's grants are changed while the role is deleted,
// and a user's roles while the user is deleted, ten times each. Every access-changing
// write takes the access lock before any row lock, so they never deadlock (which
// would be a 500): one order or the other, 200 and 200 or 404.
func TestRacingGrantsAndDeletes(t *testing.T) {
	a := newAccess(t)
	admin := a.cookie(t, demo.AdminUserID)
	for round := range 10 {
		role := a.db.Int(t, `INSERT INTO roles (name) VALUES ($1) RETURNING id`, fmt.Sprintf("raced-%d", round))
		user := a.db.Int(t, `INSERT INTO users (slug, username) VALUES ($1, $1) RETURNING id`, fmt.Sprintf("raced-%d", round))
		a.db.Exec(t, `INSERT INTO user_roles VALUES ($1, $2)`, user, role)
		requests := []struct {
			method, target string
			body           any
		}{
			{"POST", fmt.Sprintf("/admin-roles/edit/%d", role), map[string]any{"name": fmt.Sprintf("raced-%d", round), "added_permissions": []int{1, 2}}},
			{"DELETE", fmt.Sprintf("/admin-roles/delete/%d", role), nil},
			{"POST", fmt.Sprintf("/admin-users/edit/%d", user), map[string]any{"username": fmt.Sprintf("raced-%d", round), "added_roles": []int{2}}},
			{"DELETE", fmt.Sprintf("/admin-users/delete/%d", user), nil},
		}
		var wg sync.WaitGroup
		statuses := make([]int, len(requests))
		for i, r := range requests {
			wg.Go(func() { statuses[i], _ = a.do(t, admin, r.method, r.target, r.body) })
		}
		wg.Wait()
		for i, s := range statuses {
			if s != 200 && s != 404 {
				t.Fatalf("round %d: %s %s answered %d", round, requests[i].method, requests[i].target, s)
			}
		}
	}
}
