package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/catalog"
)

// The role routes' messages, word for word as the OpenAPI document gives them.
const (
	MsgRoleNotFound            = "Role not found"
	MsgRoleExists              = "Role with the same name already exists"
	MsgCannotDeleteDefaultRole = "Cannot delete default role"
)

// Roles returns every role with its numbers of permissions and users, by name. The
// number of users is kept on the role's row by triggers on user_roles (migration
// 00024): counting the grants of every role on each request grew with the users.
func (db *DB) Roles(ctx context.Context) ([]catalog.Role, error) {
	rows, _ := db.Pool.Query(ctx, `
		SELECT r.id, r.name, r.description,
		       (SELECT count(*) FROM role_permissions rp WHERE rp.role_id = r.id) AS permission_count,
		       r.user_count
		FROM roles r
		ORDER BY lower(r.name), r.id`)
	roles, err := pgx.CollectRows(rows, pgx.RowToStructByName[catalog.Role])
	if err != nil {
		return nil, fmt.Errorf("list roles: %w", err)
	}
	return roles, nil
}

// Role returns role id with its permissions, in one query.
func (db *DB) Role(ctx context.Context, id int64) (catalog.RoleDetail, error) {
	rows, _ := db.Pool.Query(ctx, `
		SELECT r.id, r.name, r.description, r.is_default::int AS is_default,
		       coalesce(jsonb_agg(jsonb_build_object('id', p.id, 'name', p.name, 'description', p.description)
		                          ORDER BY p.name, p.id) FILTER (WHERE p.id IS NOT NULL), '[]') AS permissions
		FROM roles r
		LEFT JOIN role_permissions rp ON rp.role_id = r.id
		LEFT JOIN permissions p ON p.id = rp.permission_id
		WHERE r.id = $1
		GROUP BY r.id`, id)
	role, err := pgx.CollectOneRow(rows, pgx.RowToStructByName[catalog.RoleDetail])
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return catalog.RoleDetail{}, apperr.New(apperr.NotFound, MsgRoleNotFound)
	case err != nil:
		return catalog.RoleDetail{}, fmt.Errorf("load role %d: %w", id, err)
	}
	return role, nil
}

// EditRole renames role id, sets its description when asked and changes its
// permissions as actorID asks, in one transaction: removed permissions go before added
// ones. Unknown role: apperr.NotFound; unknown permission ids: apperr.Invalid (nothing
// changes); a name another role has: apperr.Conflict. A change of permissions that the
// access rules refuse (see access.go: a permission the actor lacks, adding to a role
// the actor holds, removing one from a full admin's role or renaming that role by
// someone who is not one, the last full admin) is apperr.Forbidden. It returns what
// changed.
func (db *DB) EditRole(ctx context.Context, id, actorID int64, e catalog.RoleEdit) (catalog.RoleEditResult, error) {
	var res catalog.RoleEditResult
	err := db.inTx(ctx, func(tx pgx.Tx) error {
		res = catalog.RoleEditResult{}
		// Every edit takes the access lock before any row lock, as every
		// access-changing write does, so that two of them never wait for each other:
		// a rename of a full admin's role is one (below).
		a, admins, err := lockAccess(ctx, tx, actorID)
		if err != nil {
			return err
		}
		changesGrants := len(e.AddedPermissions) > 0 || len(e.RemovedPermissions) > 0
		err = tx.QueryRow(ctx, `
			UPDATE roles r SET name = $2, description = CASE WHEN $3 THEN $4 ELSE r.description END
			FROM (SELECT id, name, description FROM roles WHERE id = $1 FOR UPDATE) old
			WHERE r.id = old.id
			RETURNING old.name, old.description, r.name, r.description`, id, e.Name, e.SetDescription, e.Description).
			Scan(&res.Before.Name, &res.Before.Description, &res.After.Name, &res.After.Description)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return apperr.New(apperr.NotFound, MsgRoleNotFound)
		case err != nil:
			return fmt.Errorf("update role %d: %w", id, conflict(err, MsgRoleExists))
		}
		if res.Before.Name != res.After.Name && !a.fullAdmin {
			// A role's name is the label admins grant it by: renaming a full admin's
			// role (and giving its old name to another) would make a full admin grant
			// it unawares.
			held, err := protectedRole(ctx, tx, id)
			if err != nil {
				return err
			}
			if held {
				return forbidden("user %d is not a full admin and may not rename role %d of a full admin", actorID, id)
			}
		}
		if err := requireIDs(ctx, tx, "permissions", append(e.AddedPermissions, e.RemovedPermissions...)); err != nil {
			return err
		}
		if !changesGrants {
			return nil
		}
		current, err := rolePermissions(ctx, tx, []int64{id})
		if err != nil {
			return err
		}
		adds, removes := changes(set(current), e.AddedPermissions, e.RemovedPermissions)
		if len(adds) > 0 && a.roles[id] {
			return forbidden("user %d may not add permissions to their own role %d", actorID, id)
		}
		if !a.holds(append(adds, removes...)) {
			return forbidden("user %d lacks a permission of %v", actorID, append(adds, removes...))
		}
		if len(removes) > 0 && !a.fullAdmin {
			held, err := protectedRole(ctx, tx, id)
			if err != nil {
				return err
			}
			if held {
				return forbidden("user %d is not a full admin and may not remove permissions from role %d of a full admin", actorID, id)
			}
		}
		if len(removes) > 0 {
			if _, err := tx.Exec(ctx, `DELETE FROM role_permissions WHERE role_id = $1 AND permission_id = ANY($2)`,
				id, removes); err != nil {
				return fmt.Errorf("remove permissions of role %d: %w", id, err)
			}
		}
		if len(adds) > 0 {
			if _, err := tx.Exec(ctx, `
				INSERT INTO role_permissions (role_id, permission_id) SELECT $1, unnest($2::bigint[])
				ON CONFLICT DO NOTHING`, id, adds); err != nil {
				return fmt.Errorf("grant permissions to role %d: %w", id, err)
			}
		}
		if len(adds) > 0 && !a.fullAdmin {
			// Rule 7: a role that is a full-admin role after the additions, whether they
			// made it one or it was one, is a full admin's to add to (as rule 4 makes
			// it theirs to take from).
			full, err := fullAdminRoles(ctx, tx, []int64{id})
			if err != nil {
				return err
			}
			if len(full) > 0 {
				return forbidden("user %d is not a full admin and may not add permissions to role %d, a full-admin role with them", actorID, id)
			}
		}
		res.AddedPermissions, res.RemovedPermissions = adds, removes
		return keepAFullAdmin(ctx, tx, admins)
	})
	if err != nil {
		return catalog.RoleEditResult{}, err
	}
	return res, nil
}

// AddRole adds a role (never the default one) and returns its id. A name another role
// has: apperr.Conflict.
func (db *DB) AddRole(ctx context.Context, r catalog.NewRole) (int64, error) {
	var id int64
	err := db.Pool.QueryRow(ctx, `INSERT INTO roles (name, description) VALUES ($1, $2) RETURNING id`,
		r.Name, r.Description).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("add role %q: %w", r.Name, conflict(err, MsgRoleExists))
	}
	return id, nil
}

// DeleteRole deletes role id as actorID asks, in one transaction: its holders who hold
// no other role get the default role first. Unknown role: apperr.NotFound; the default
// role: apperr.NotAllowed; no default role to fall back on: an internal error; a role
// with a permission the actor lacks, or the deletion of the last full admin's power:
// apperr.Forbidden (so is a role a full admin holds, deleted by someone who is not
// one). It returns the ids of the users it gave the default role.
func (db *DB) DeleteRole(ctx context.Context, id, actorID int64) ([]int64, error) {
	var moved []int64
	err := db.inTx(ctx, func(tx pgx.Tx) error {
		moved = nil
		a, admins, err := lockAccess(ctx, tx, actorID)
		if err != nil {
			return err
		}
		// Lock both rows: a concurrent change of the default waits for this deletion.
		rows, _ := tx.Query(ctx, `
			SELECT id, is_default FROM roles WHERE id = $1 OR is_default ORDER BY id FOR UPDATE`, id)
		locked, err := pgx.CollectRows(rows, pgx.RowToStructByName[struct {
			ID        int64
			IsDefault bool
		}])
		if err != nil {
			return fmt.Errorf("load role %d and the default role: %w", id, err)
		}
		var found bool
		var fallback int64
		for _, r := range locked {
			if r.ID == id {
				found = true
				if r.IsDefault {
					return apperr.New(apperr.NotAllowed, MsgCannotDeleteDefaultRole)
				}
			}
			if r.IsDefault {
				fallback = r.ID
			}
		}
		if !found {
			return apperr.New(apperr.NotFound, MsgRoleNotFound)
		}
		if fallback == 0 {
			return fmt.Errorf("delete role %d: %w", id, errNoDefaultRole)
		}
		perms, err := rolePermissions(ctx, tx, []int64{id})
		if err != nil {
			return err
		}
		if !a.holds(perms) {
			return forbidden("user %d lacks a permission of role %d", actorID, id)
		}
		if !a.fullAdmin {
			held, err := protectedRole(ctx, tx, id)
			if err != nil {
				return err
			}
			if held {
				return forbidden("user %d is not a full admin and may not delete role %d of a full admin", actorID, id)
			}
		}
		err = tx.QueryRow(ctx, `
			WITH moved AS (
				INSERT INTO user_roles (user_id, role_id)
				SELECT ur.user_id, $2 FROM user_roles ur
				WHERE ur.role_id = $1
				  AND NOT EXISTS (SELECT 1 FROM user_roles o WHERE o.user_id = ur.user_id AND o.role_id <> $1)
				ON CONFLICT DO NOTHING
				RETURNING user_id
			)
			SELECT coalesce(array_agg(user_id ORDER BY user_id), '{}') FROM moved`, id, fallback).Scan(&moved)
		if err != nil {
			return fmt.Errorf("give the holders of role %d the default role: %w", id, err)
		}
		if len(moved) > 0 && !a.fullAdmin {
			// The default role a holder is moved to is granted as a user edit's is
			// (setUserRolesChecked): without rule 1, since every sign-up gets it, but
			// with rule 7.
			full, err := fullAdminRoles(ctx, tx, []int64{fallback})
			if err != nil {
				return err
			}
			if len(full) > 0 {
				return forbidden("user %d is not a full admin and may not move the holders of role %d to the default role %d, a full-admin role", actorID, id, fallback)
			}
		}
		if _, err := tx.Exec(ctx, `DELETE FROM roles WHERE id = $1`, id); err != nil {
			return fmt.Errorf("delete role %d: %w", id, err)
		}
		return keepAFullAdmin(ctx, tx, admins)
	})
	if err != nil {
		return nil, err
	}
	return moved, nil
}
