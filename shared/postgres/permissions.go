package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/catalog"
)

// The spec's messages of the permission routes.
const (
	MsgPermissionNotFound = "Permission not found"
	MsgPermissionExists   = "Permission with the same name already exists"
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

// EditPermission renames permission id and replaces its description: its label only,
// since the code checks a permission's key, which no route changes. Unknown
// permission: apperr.NotFound; a name another permission has: apperr.Conflict.
func (db *DB) EditPermission(ctx context.Context, id int64, in catalog.PermissionInput) error {
	tag, err := db.Pool.Exec(ctx, `UPDATE permissions SET name = $2, description = $3 WHERE id = $1`,
		id, in.Name, in.Description)
	if err != nil {
		return fmt.Errorf("update permission %d: %w", id, conflict(err, MsgPermissionExists))
	}
	if tag.RowsAffected() == 0 {
		return apperr.New(apperr.NotFound, MsgPermissionNotFound)
	}
	return nil
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
// apperr.Forbidden.
func (db *DB) DeletePermission(ctx context.Context, id int64) error {
	var builtIn bool
	err := db.Pool.QueryRow(ctx, `
		WITH target AS (SELECT id, key IS NOT NULL AS built_in FROM permissions WHERE id = $1),
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
