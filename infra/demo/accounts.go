package demo

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/mediacatalog/service/shared/auth"
)

// Demo accounts, with fixed ids: the events in events/ and the operators' docs name
// them. None has a password; `make token USER=<username>` logs them in locally.
const (
	AdminUserID  int64 = 1
	EditorUserID int64 = 2
	MemberUserID int64 = 3

	AdminRoleID  int64 = 1
	EditorRoleID int64 = 2
	MemberRoleID int64 = 3 // the default role
)

// demoPermissions are the spec's fifteen permissions; a permission's id is its index
// plus one.
var demoPermissions = []struct{ name, description string }{
	{auth.PermViewUsers, "View the list and details of user accounts"},
	{auth.PermEditUsers, "Edit user accounts, their roles and profile images, and log users out"},
	{auth.PermDeleteUsers, "Delete user accounts"},
	{auth.PermViewRoles, "View roles and their permissions"},
	{auth.PermEditRoles, "Edit roles and the permissions they grant"},
	{auth.PermAddRoles, "Add roles"},
	{auth.PermDeleteRoles, "Delete roles"},
	{auth.PermViewPermissions, "View permissions"},
	{auth.PermEditPermissions, "Edit permissions"},
	{auth.PermAddPermissions, "Add permissions"},
	{auth.PermDeletePermissions, "Delete permissions"},
	{auth.PermViewContributors, "View contributors"},
	{auth.PermEditContributors, "Edit contributors and their avatars"},
	{auth.PermAddContributors, "Add contributors"},
	{auth.PermDeleteContributors, "Delete contributors"},
}

var demoRoles = []struct {
	id          int64
	name        string
	description string
	isDefault   bool
	permissions []string // nil: none; see admin below
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

// loadAccounts inserts the demo permissions, roles and users in tx. Like the rest of
// the demo data it keeps existing rows (an operator's changes stay) and only adds what
// is missing, so a second load changes nothing; the identity sequences move past the
// fixed ids so that later inserts do not collide with them.
func loadAccounts(ctx context.Context, tx pgx.Tx) error {
	for i, p := range demoPermissions {
		if _, err := tx.Exec(ctx, `
			INSERT INTO permissions (id, name, description) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
			i+1, p.name, p.description); err != nil {
			return fmt.Errorf("demo permission %s: %w", p.name, err)
		}
	}
	for _, r := range demoRoles {
		// Exactly one default role: the demo's becomes it only when there is none yet.
		if _, err := tx.Exec(ctx, `
			INSERT INTO roles (id, name, description, is_default)
			VALUES ($1, $2, $3, $4 AND NOT EXISTS (SELECT 1 FROM roles WHERE is_default))
			ON CONFLICT DO NOTHING`,
			r.id, r.name, r.description, r.isDefault); err != nil {
			return fmt.Errorf("demo role %s: %w", r.name, err)
		}
		perms := r.permissions
		if r.id == AdminRoleID {
			perms = make([]string, len(demoPermissions))
			for i, p := range demoPermissions {
				perms[i] = p.name
			}
		}
		if _, err := tx.Exec(ctx, `
			INSERT INTO role_permissions (role_id, permission_id)
			SELECT r.id, p.id FROM roles r, permissions p WHERE r.id = $1 AND p.name = ANY($2)
			ON CONFLICT DO NOTHING`, r.id, perms); err != nil {
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
