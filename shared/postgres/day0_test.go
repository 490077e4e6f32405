package postgres_test

import (
	"context"
	"testing"

	"github.com/mediacatalog/service/infra/tests/testenv"
)

// TestDay0Roles: a newly migrated database, before any demo or operator data, has the
// default role sign-ups receive and an admin role holding every built-in permission,
// with the ids the demo data builds on.
func TestDay0Roles(t *testing.T) {
	ctx := context.Background()
	db := testenv.NewDB(t)
	for _, tc := range []struct{ name, sql, want string }{
		{"the default role", `SELECT string_agg(id || ' ' || name, ',') FROM roles WHERE is_default`, "3 member"},
		{"the admin role", `SELECT string_agg(id || ' ' || name, ',') FROM roles WHERE NOT is_default`, "1 admin"},
		{"admin holds every built-in permission", `
			SELECT (count(*) = (SELECT count(*) FROM permissions WHERE key IS NOT NULL))::text || ' ' || count(*)
			FROM role_permissions WHERE role_id = 1`, "true 15"},
		{"member holds none", `SELECT count(*)::text FROM role_permissions WHERE role_id = 3`, "0"},
		{"a new role takes the next id", `INSERT INTO roles (name) VALUES ('auditor') RETURNING id::text`, "4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got string
			if err := db.Pool.QueryRow(ctx, tc.sql).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
			}
		})
	}
}
