package demo_test

import (
	"context"
	"testing"

	"github.com/mediacatalog/service/infra/local/demo"
	"github.com/mediacatalog/service/infra/tests/testenv"
)

func TestLoadAccounts(t *testing.T) {
	ctx := context.Background()
	db := testenv.NewDB(t)
	if err := demo.Load(ctx, db.DB); err != nil {
		t.Fatal(err)
	}
	text := func(sql string, args ...any) string {
		t.Helper()
		var s string
		if err := db.Pool.QueryRow(ctx, sql, args...).Scan(&s); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return s
	}
	checks := []struct{ name, sql, want string }{
		{"permissions", `SELECT string_agg(id || ':' || name, ' ' ORDER BY id) FROM permissions`,
			"1:view-users 2:edit-users 3:delete-users 4:view-roles 5:edit-roles 6:add-roles 7:delete-roles " +
				"8:view-permissions 9:edit-permissions 10:add-permissions 11:delete-permissions " +
				"12:view-contributors 13:edit-contributors 14:add-contributors 15:delete-contributors"},
		{"permissions have descriptions", `SELECT count(*)::text FROM permissions WHERE description = ''`, "0"},
		{"roles", `SELECT string_agg(id || ':' || name || ':' || is_default, ' ' ORDER BY id) FROM roles`,
			"1:admin:false 2:editor:false 3:member:true"},
		{"admin grants everything", `SELECT count(*)::text FROM role_permissions WHERE role_id = 1`, "15"},
		{"editor grants", `SELECT string_agg(p.name, ' ' ORDER BY p.id) FROM role_permissions rp JOIN permissions p ON p.id = rp.permission_id WHERE rp.role_id = 2`,
			"view-users edit-users view-roles view-permissions view-contributors edit-contributors add-contributors"},
		{"member grants nothing", `SELECT count(*)::text FROM role_permissions WHERE role_id = 3`, "0"},
		{"users", `SELECT string_agg(u.id || ':' || u.username || ':' || u.slug || ':' || (u.password_hash IS NULL) || ':' || r.name, ' ' ORDER BY u.id)
			FROM users u JOIN user_roles ur ON ur.user_id = u.id JOIN roles r ON r.id = ur.role_id`,
			"1:admin:admin:true:admin 2:editor:editor:true:editor 3:member:member:true:member"},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			if got := text(c.sql); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}

	// New rows take ids past the fixed ones; an operator's changes survive a reload,
	// and so does another default role (the demo's member role is default only when
	// there is none).
	for _, sql := range []string{
		`INSERT INTO permissions (name) VALUES ('view-series')`,
		`INSERT INTO users (slug, username) VALUES ('alice', 'alice')`,
		`UPDATE roles SET is_default = false WHERE id = 3`,
		`INSERT INTO roles (name, is_default) VALUES ('reader', true)`,
		`UPDATE roles SET description = 'Changed' WHERE id = 2`,
		`DELETE FROM role_permissions WHERE role_id = 2 AND permission_id = 14`,
	} {
		if _, err := db.Pool.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	if err := demo.Load(ctx, db.DB); err != nil {
		t.Fatalf("reload: %v", err)
	}
	after := []struct{ sql, want string }{
		{`SELECT min(id)::text FROM permissions WHERE name = 'view-series'`, "16"},
		{`SELECT min(id)::text FROM users WHERE username = 'alice'`, "4"},
		{`SELECT min(id)::text FROM roles WHERE name = 'reader'`, "4"},
		{`SELECT string_agg(name, ' ') FROM roles WHERE is_default`, "reader"},
		{`SELECT description FROM roles WHERE id = 2`, "Changed"},
		{`SELECT count(*)::text FROM role_permissions WHERE role_id = 2`, "7"},
	}
	for _, a := range after {
		if got := text(a.sql); got != a.want {
			t.Errorf("after a reload, %s = %q, want %q", a.sql, got, a.want)
		}
	}
}
