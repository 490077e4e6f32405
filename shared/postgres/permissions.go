package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/catalog"
)

// The permission routes' messages, word for word as the OpenAPI document gives them.
const (
	MsgPermissionNotFound = "Permission not found"
	MsgPermissionExists   = "Permission with the same name already exists"
	// MsgBuiltInName answers the rename of a built-in permission (renames could swap
	// labels, so that the one reading view-users granted delete-users).
	MsgBuiltInName = "A built-in permission cannot be renamed; only its description can be changed"
)

// Permissions returns every permission, by name.
func (db *DB) Permissions(ctx context.Context) ([]catalog.Permission, error) {
	rows, _ := db.Pool.Query(ctx, `SELECT id, name, description FROM permissions ORDER BY name, id`)
	perms, err := pgx.CollectRows(rows, pgx.RowToStructByName[catalog.Permission])
	if err != nil {
		return nil, fmt.Errorf("list permissions: %w", err)
	}
	return perms, nil
}

// Permission returns permission id.
func (db *DB) Permission(ctx context.Context, id int64) (catalog.Permission, error) {
	rows, _ := db.Pool.Query(ctx, `SELECT id, name, description FROM permissions WHERE id = $1`, id)
	p, err := pgx.CollectOneRow(rows, pgx.RowToStructByName[catalog.Permission])
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return catalog.Permission{}, apperr.New(apperr.NotFound, MsgPermissionNotFound)
	case err != nil:
		return catalog.Permission{}, fmt.Errorf("load permission %d: %w", id, err)
	}
	return p, nil
}

// EditPermission renames permission id and replaces its description, and returns the
// permission as it was. A built-in permission (one with a key, which the code checks)
// keeps its name, so that its label always says what it grants: a rename of one is
// apperr.Invalid MsgBuiltInName (its description stays editable; the same name is no
// rename). Unknown permission: apperr.NotFound; a name another permission has:
// apperr.Conflict.
func (db *DB) EditPermission(ctx context.Context, id int64, in catalog.PermissionInput) (catalog.Permission, error) {
	var before catalog.Permission
	var renamedBuiltIn bool
	// One statement: the row is locked and read, and updated only when the rename is
	// allowed; renamed_built_in tells a refusal from a change.
	err := db.Pool.QueryRow(ctx, `
		WITH old AS (SELECT id, name, description, key IS NOT NULL AND name <> $2 AS renamed_built_in
		             FROM permissions WHERE id = $1 FOR UPDATE),
		updated AS (
			UPDATE permissions p SET name = $2, description = $3
			FROM old WHERE p.id = old.id AND NOT old.renamed_built_in
			RETURNING p.id
		)
		SELECT old.name, old.description, old.renamed_built_in, EXISTS (SELECT 1 FROM updated) FROM old`,
		id, in.Name, in.Description).Scan(&before.Name, &before.Description, &renamedBuiltIn, new(bool))
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return catalog.Permission{}, apperr.New(apperr.NotFound, MsgPermissionNotFound)
	case err != nil:
		return catalog.Permission{}, fmt.Errorf("update permission %d: %w", id, conflict(err, MsgPermissionExists))
	case renamedBuiltIn:
		return catalog.Permission{}, apperr.New(apperr.Invalid, MsgBuiltInName)
	}
	before.ID = id
	return before, nil
}

// AddPermission adds a permission and returns its id. A name another permission has:
// apperr.Conflict.
func (db *DB) AddPermission(ctx context.Context, in catalog.PermissionInput) (int64, error) {
	var id int64
	err := db.Pool.QueryRow(ctx, `INSERT INTO permissions (name, description) VALUES ($1, $2) RETURNING id`,
		in.Name, in.Description).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("add permission %q: %w", in.Name, conflict(err, MsgPermissionExists))
	}
	return id, nil
}

// DeletePermission deletes permission id; the same statement removes it from every
// role (role_permissions cascades). Unknown permission: apperr.NotFound; a built-in
// permission (one with a key, which the code checks) cannot be deleted:
// apperr.Forbidden. The row is locked before it is read: of two deletes of one
// permission, the second waits for the first and then finds nothing (404); read from
// the statement's snapshot, it would be found and both would answer 200.
func (db *DB) DeletePermission(ctx context.Context, id int64) error {
	var builtIn bool
	err := db.Pool.QueryRow(ctx, `
		WITH target AS (SELECT id, key IS NOT NULL AS built_in FROM permissions WHERE id = $1 FOR UPDATE),
		deleted AS (DELETE FROM permissions WHERE id IN (SELECT id FROM target WHERE NOT built_in))
		SELECT built_in FROM target`, id).Scan(&builtIn)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return apperr.New(apperr.NotFound, MsgPermissionNotFound)
	case err != nil:
		return fmt.Errorf("delete permission %d: %w", id, err)
	case builtIn:
		return forbidden("permission %d is built in", id)
	}
	return nil
}
