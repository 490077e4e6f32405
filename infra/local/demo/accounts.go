package demo

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/mediacatalog/service/shared/auth"
)

// Demo accounts, with fixed ids: the events in events/ and the operators' docs name
// them. None has a password; `make token USER_ID=<id>` logs them in locally.
const (
	AdminUserID  int64 = 1
	EditorUserID int64 = 2
	MemberUserID int64 = 3

	AdminRoleID  int64 = 1
	EditorRoleID int64 = 2
	MemberRoleID int64 = 3 // the default role
)

var demoRoles = []struct {
	id          int64
	name        string
	description string
	isDefault   bool
	permissions []string // keys; nil: none; see admin below
}{
	{AdminRoleID, "admin", "Full access to the administration", false, nil},
	{EditorRoleID, "editor", "Edits users and contributors", false, []string{
		auth.PermViewUsers, auth.PermEditUsers, auth.PermViewRoles, auth.PermViewPermissions,
		auth.PermViewContributors, auth.PermEditContributors, auth.PermAddContributors,
	}},
	{MemberRoleID, "member", "Every user's role; grants no administration", true, nil},
}

var demoUsers = []struct {
	id       int64
	username string
	role     int64
}{
	{AdminUserID, "admin", AdminRoleID},
	{EditorUserID, "editor", EditorRoleID},
	{MemberUserID, "member", MemberRoleID},
}

// loadAccounts inserts the demo roles and users in tx (the built-in permissions come
// with the schema's migrations). Like the rest of
// the demo data it keeps existing rows (an operator's changes stay) and only adds what
// is missing, so a second load changes nothing; the identity sequences move past the
// fixed ids so that later inserts do not collide with them.
func loadAccounts(ctx context.Context, tx pgx.Tx) error {
	for _, r := range demoRoles {
		// Exactly one default role: the demo's becomes it only when there is none yet.
		if _, err := tx.Exec(ctx, `
			INSERT INTO roles (id, name, description, is_default)
			VALUES ($1, $2, $3, $4 AND NOT EXISTS (SELECT 1 FROM roles WHERE is_default))
			ON CONFLICT DO NOTHING`,
			r.id, r.name, r.description, r.isDefault); err != nil {
			return fmt.Errorf("demo role %s: %w", r.name, err)
		}
		// The admin role grants every built-in permission.
		if _, err := tx.Exec(ctx, `
			INSERT INTO role_permissions (role_id, permission_id)
			SELECT r.id, p.id FROM roles r, permissions p
			WHERE r.id = $1 AND (p.key = ANY($2) OR $1 = $3 AND p.key IS NOT NULL)
			ON CONFLICT DO NOTHING`, r.id, r.permissions, AdminRoleID); err != nil {
			return fmt.Errorf("demo permissions of role %s: %w", r.name, err)
		}
	}
	for _, u := range demoUsers {
		if _, err := tx.Exec(ctx, `
			INSERT INTO users (id, slug, username) VALUES ($1, $2, $2) ON CONFLICT DO NOTHING`,
			u.id, u.username); err != nil {
			return fmt.Errorf("demo user %s: %w", u.username, err)
		}
		if _, err := tx.Exec(ctx, `
			INSERT INTO user_roles (user_id, role_id)
			SELECT u.id, r.id FROM users u, roles r WHERE u.id = $1 AND r.id = $2
			ON CONFLICT DO NOTHING`,
			u.id, u.role); err != nil {
			return fmt.Errorf("demo role of user %s: %w", u.username, err)
		}
	}
	for _, table := range []string{"permissions", "roles", "users"} {
		if _, err := tx.Exec(ctx, fmt.Sprintf(
			`SELECT setval(pg_get_serial_sequence('%[1]s', 'id'), (SELECT max(id) FROM %[1]s))`, table)); err != nil {
			return fmt.Errorf("demo %s id sequence: %w", table, err)
		}
	}
	return nil
}
