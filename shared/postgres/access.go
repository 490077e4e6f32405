package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/mediacatalog/service/shared/apperr"
)

// No escalation (the rule Kubernetes RBAC enforces). The stores that change who holds
// which permission check, inside their transaction and after taking accessLockKey:
//
//   - an actor grants or takes away a role only if it holds every permission of that
//     role, and adds a permission to a role or removes one from it only if it holds
//     that permission;
//   - nobody changes their own roles, and nobody adds permissions to a role they hold;
//   - only a full admin changes anything of a full admin's account (username,
//     age_verified, profile image, roles), logs a full admin out or deletes one;
//   - only a full admin removes a permission from a full-admin role or a role that a
//     full admin holds, deletes such a role or renames it: otherwise a delegated admin
//     could first make a full admin an ordinary user and then act on them, or swap the
//     role's name with another's so that a full admin grants it by the wrong label;
//   - a write that would leave no full admin where there was one is refused.
//
// docs/access-rules.md states the rules as one table (who may do what to whom), and
// TestAccessRuleTable (shared/adminusers) holds the code to it cell by cell.
//
// A full admin is a user who holds a full-admin role: a role that alone grants every
// built-in permission (every permission with a key; the day-0 `admin` role is one).
// Whether a role is one is kept on its row (roles.full_admin, migration 00024, by
// triggers on role_permissions and permissions), so every check below is an indexed
// EXISTS whose cost grows with the roles and the full admins, never with the users.
// Full authority is thus a property of a role, visible and auditable: a user whose
// roles only together grant every built-in permission is a delegated admin.
// A full admin holds every permission for these checks, those added through the API
// too, so that new permissions can be handed out at all. Full authority is handed out
// by a full admin only:
//
//   - only a full admin grants a full-admin role, or changes a role's permissions so
//     that it becomes one (without this, the user whose roles together grant
//     everything could make an accomplice a full admin by rule 1 alone).
//
// Refusals are apperr.Forbidden.

// accessLockKey is the transaction-scoped advisory lock that every write of roles,
// grants and role assignments takes first: two racing requests are serialised, and
// each one's checks see what the other committed (READ COMMITTED reads a new snapshot
// per statement).
const accessLockKey int64 = 0x6d63_6163_6365_7373 // "mcaccess"

// isFullAdminSQL is true when user $1 holds a full-admin role (user_roles' primary
// key, then the role's row).
const isFullAdminSQL = `EXISTS (SELECT 1 FROM user_roles ur JOIN roles r ON r.id = ur.role_id
	        WHERE ur.user_id = $1 AND r.full_admin)`

// anyFullAdminSQL is true when some user holds a full-admin role: a read of the roles
// alone, by their kept number of holders (roles.user_count, which the triggers on
// user_roles have brought up to date by the end of each statement of this
// transaction). An EXISTS over user_roles here was planned as a hash join over every
// grant: the planner cannot know that the full-admin roles have few holders.
const anyFullAdminSQL = `EXISTS (SELECT 1 FROM roles WHERE full_admin AND user_count > 0)`

// actor is what the checks know of the user who acts, read inside the transaction.
type actor struct {
	id        int64
	fullAdmin bool
	held      map[int64]bool // ids of the permissions the actor's roles grant
	roles     map[int64]bool // ids of the actor's roles
}

// holds reports whether the actor holds every permission of ids.
func (a actor) holds(ids []int64) bool {
	if a.fullAdmin {
		return true
	}
	for _, id := range ids {
		if !a.held[id] {
			return false
		}
	}
	return true
}

// lockAccess takes the access lock and loads the actor, in one round trip after the
// lock. It also reports whether there was a full admin before the write.
func lockAccess(ctx context.Context, tx pgx.Tx, actorID int64) (actor, bool, error) {
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, accessLockKey); err != nil {
		return actor{}, false, fmt.Errorf("take the access lock: %w", err)
	}
	a := actor{id: actorID}
	var held, roles []int64
	var admins bool
	err := tx.QueryRow(ctx, `
		SELECT coalesce((SELECT array_agg(DISTINCT rp.permission_id) FROM user_roles ur
		                 JOIN role_permissions rp ON rp.role_id = ur.role_id WHERE ur.user_id = $1), '{}'),
		       coalesce((SELECT array_agg(role_id) FROM user_roles WHERE user_id = $1), '{}'),
		       `+isFullAdminSQL+`,
		       `+anyFullAdminSQL, actorID).Scan(&held, &roles, &a.fullAdmin, &admins)
	if err != nil {
		return actor{}, false, fmt.Errorf("load the access of user %d: %w", actorID, err)
	}
	a.held = set(held)
	a.roles = set(roles)
	return a, admins, nil
}

// isFullAdmin reports whether user id is a full admin now.
func isFullAdmin(ctx context.Context, tx pgx.Tx, id int64) (bool, error) {
	var ok bool
	if err := tx.QueryRow(ctx, `SELECT `+isFullAdminSQL, id).Scan(&ok); err != nil {
		return false, fmt.Errorf("is user %d a full admin: %w", id, err)
	}
	return ok, nil
}

// keepAFullAdmin refuses the write when it left no full admin where there was one
// before (a database without any, such as a new deployment's, is not held to it).
func keepAFullAdmin(ctx context.Context, tx pgx.Tx, before bool) error {
	if !before {
		return nil
	}
	var after bool
	if err := tx.QueryRow(ctx, `SELECT `+anyFullAdminSQL).Scan(&after); err != nil {
		return fmt.Errorf("look for a full admin: %w", err)
	}
	if !after {
		return forbidden("the write would leave no full admin")
	}
	return nil
}

// protectedRole reports whether only a full admin may take a permission from role id,
// rename it or delete it: a full-admin role, or a role a full admin holds. The holders
// are found from the full admins' side: the full-admin roles first, then their
// holders by user_roles_role with those ids as constants (the planner sees from its
// statistics that they have few holders), then user_roles' primary key for each. So
// the cost grows with the full admins, not with the holders of role id (every user
// holds the default role); one join from roles was planned as a hash of every grant.
func protectedRole(ctx context.Context, tx pgx.Tx, id int64) (bool, error) {
	var full bool
	var held []int64
	if err := tx.QueryRow(ctx, `
		SELECT coalesce(bool_or(id = $1), false), coalesce(array_agg(id) FILTER (WHERE user_count > 0), '{}')
		FROM roles WHERE full_admin`, id).Scan(&full, &held); err != nil {
		return false, fmt.Errorf("is role %d a full admin's: %w", id, err)
	}
	if full || len(held) == 0 {
		return full, nil
	}
	var ok bool
	if err := tx.QueryRow(ctx, `
		SELECT EXISTS (SELECT 1 FROM user_roles fa
		               JOIN user_roles ur ON ur.user_id = fa.user_id AND ur.role_id = $1
		               WHERE fa.role_id = ANY ($2))`, id, held).Scan(&ok); err != nil {
		return false, fmt.Errorf("is role %d a full admin's: %w", id, err)
	}
	return ok, nil
}

// fullAdminRoles returns those of roles that are full-admin roles now.
func fullAdminRoles(ctx context.Context, tx pgx.Tx, roles []int64) ([]int64, error) {
	var ids []int64
	if err := tx.QueryRow(ctx, `
		SELECT coalesce(array_agg(id ORDER BY id), '{}') FROM roles WHERE id = ANY($1) AND full_admin`,
		roles).Scan(&ids); err != nil {
		return nil, fmt.Errorf("full-admin roles of %v: %w", roles, err)
	}
	return ids, nil
}

// rolePermissions returns the ids of the permissions each of roles grants.
func rolePermissions(ctx context.Context, tx pgx.Tx, roles []int64) ([]int64, error) {
	if len(roles) == 0 {
		return nil, nil
	}
	var ids []int64
	err := tx.QueryRow(ctx, `
		SELECT coalesce(array_agg(DISTINCT permission_id), '{}') FROM role_permissions WHERE role_id = ANY($1)`,
		roles).Scan(&ids)
	if err != nil {
		return nil, fmt.Errorf("permissions of roles %v: %w", roles, err)
	}
	return ids, nil
}

// forbidden is the 403 of a refused write; why (ids only) is the reason of the
// refusal's audit record (httpapi), never shown to the client.
func forbidden(why string, args ...any) error {
	return apperr.Wrap(apperr.Forbidden, apperr.MsgForbidden, fmt.Errorf(why, args...))
}

func set(ids []int64) map[int64]bool {
	m := make(map[int64]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return m
}

// changes splits a request's added and removed ids against what is there now: the
// ones it really removes (there now) and really adds (not there once the removals are
// done: removals go first).
func changes(current map[int64]bool, added, removed []int64) (adds, removes []int64) {
	gone := map[int64]bool{}
	for _, id := range removed {
		if current[id] && !gone[id] {
			gone[id] = true
			removes = append(removes, id)
		}
	}
	seen := map[int64]bool{}
	for _, id := range added {
		if (!current[id] || gone[id]) && !seen[id] {
			seen[id] = true
			adds = append(adds, id)
		}
	}
	return adds, removes
}
