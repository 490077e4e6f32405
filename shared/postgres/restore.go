package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/imageset"
)

// The statements of the operator's restore commands (docs/operations.md, "Restore the
// database to a point in time"): after a point-in-time restore, the sessions-valid-after
// mark, the revocations that the audit records after the restore point name (made
// again on the restored rows), and the rows that name pictures, for the bucket's
// reconciliation. Like GrantRole they are the operator's: no access rule applies, and
// the role changes take the access lock as every change of who holds what does.

// SetSessionCutoff moves the sessions-valid-after mark to now, so that every session
// started until now is refused (SessionUser), and returns the mark. It never moves the
// mark back.
func (db *DB) SetSessionCutoff(ctx context.Context) (time.Time, error) {
	var at time.Time
	err := db.Pool.QueryRow(ctx,
		`UPDATE session_cutoff SET valid_after = greatest(valid_after, now()) RETURNING valid_after`).Scan(&at)
	if err != nil {
		return time.Time{}, fmt.Errorf("set the sessions-valid-after mark: %w", err)
	}
	return at, nil
}

// SessionCutoff returns the sessions-valid-after mark, the zero time when no restore
// set it (-infinity).
func (db *DB) SessionCutoff(ctx context.Context) (time.Time, error) {
	var at *time.Time
	if err := db.Pool.QueryRow(ctx,
		`SELECT nullif(valid_after, '-infinity') FROM session_cutoff`).Scan(&at); err != nil {
		return time.Time{}, fmt.Errorf("read the sessions-valid-after mark: %w", err)
	}
	if at == nil {
		return time.Time{}, nil
	}
	return *at, nil
}

// RevokeSessions revokes user userID's live sessions and returns how many.
func (db *DB) RevokeSessions(ctx context.Context, userID int64) (int64, error) {
	tag, err := db.Pool.Exec(ctx,
		`UPDATE sessions SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL`, userID)
	if err != nil {
		return 0, fmt.Errorf("revoke the sessions of user %d: %w", userID, err)
	}
	return tag.RowsAffected(), nil
}

// RemoveLink removes user userID's link to provider and reports whether there was one.
// Unlike UnlinkProvider it removes the user's last way to log in too: it makes again a
// removal that was allowed when it was made.
func (db *DB) RemoveLink(ctx context.Context, userID int64, provider string) (bool, error) {
	tag, err := db.Pool.Exec(ctx,
		`DELETE FROM oauth_connections WHERE user_id = $1 AND provider = $2`, userID, provider)
	if err != nil {
		return false, fmt.Errorf("remove the %s link of user %d: %w", provider, userID, err)
	}
	return tag.RowsAffected() > 0, nil
}

// RemoveUserRoles takes roles away from user userID, under the access lock, giving the
// default role to a user left without any, and returns the roles they held of those.
func (db *DB) RemoveUserRoles(ctx context.Context, userID int64, roles []int64) ([]int64, error) {
	var held []int64
	err := db.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, accessLockKey); err != nil {
			return fmt.Errorf("take the access lock: %w", err)
		}
		if err := tx.QueryRow(ctx, `
			SELECT coalesce(array_agg(role_id ORDER BY role_id), '{}') FROM user_roles
			WHERE user_id = $1 AND role_id = ANY($2)`, userID, roles).Scan(&held); err != nil {
			return fmt.Errorf("roles of user %d: %w", userID, err)
		}
		if len(held) == 0 {
			return nil
		}
		_, err := setUserRoles(ctx, tx, userID, nil, held)
		return err
	})
	return held, err
}

// RemoveRolePermissions takes permissions away from role roleID, under the access lock,
// and returns those it had.
func (db *DB) RemoveRolePermissions(ctx context.Context, roleID int64, permissions []int64) ([]int64, error) {
	var removed []int64
	err := db.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, accessLockKey); err != nil {
			return fmt.Errorf("take the access lock: %w", err)
		}
		rows, _ := tx.Query(ctx, `
			DELETE FROM role_permissions WHERE role_id = $1 AND permission_id = ANY($2)
			RETURNING permission_id`, roleID, permissions)
		var err error
		if removed, err = pgx.CollectRows(rows, pgx.RowTo[int64]); err != nil {
			return fmt.Errorf("remove permissions of role %d: %w", roleID, err)
		}
		return nil
	})
	return removed, err
}

// PurgeUser deletes user userID with everything that is theirs, under the access lock,
// and returns the reference of their picture ("" for none). Unknown user:
// apperr.NotFound.
func (db *DB) PurgeUser(ctx context.Context, userID int64) (string, error) {
	var image *string
	err := db.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, accessLockKey); err != nil {
			return fmt.Errorf("take the access lock: %w", err)
		}
		err := tx.QueryRow(ctx, `DELETE FROM users WHERE id = $1 RETURNING profile_image`, userID).Scan(&image)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return apperr.New(apperr.NotFound, apperr.MsgUserNotFound)
		case err != nil:
			return fmt.Errorf("delete user %d: %w", userID, err)
		}
		return nil
	})
	if err != nil || image == nil {
		return "", err
	}
	return *image, nil
}

// AnyFullAdmin reports whether a user holds a full-admin role.
func (db *DB) AnyFullAdmin(ctx context.Context) (bool, error) {
	var any bool
	if err := db.Pool.QueryRow(ctx, `SELECT `+anyFullAdminSQL).Scan(&any); err != nil {
		return false, fmt.Errorf("look for a full admin: %w", err)
	}
	return any, nil
}

// NamedImage is a row's picture: its owner's id and its reference.
type NamedImage struct {
	ID  int64
	Ref string
}

// imageColumnOf is the column that holds owner's references.
func imageColumnOf(owner imageset.Owner) (imageColumn, error) {
	switch owner {
	case imageset.Users:
		return userImages, nil
	case imageset.Contributors:
		return contributorImages, nil
	}
	return imageColumn{}, fmt.Errorf("no image column for %q", owner)
}

// NamedImages returns the references of the pictures of owner's rows ids (those that
// have one), by id.
func (db *DB) NamedImages(ctx context.Context, owner imageset.Owner, ids []int64) (map[int64]string, error) {
	c, err := imageColumnOf(owner)
	if err != nil {
		return nil, err
	}
	rows, _ := db.Pool.Query(ctx, fmt.Sprintf(
		`SELECT id, %[2]s FROM %[1]s WHERE id = ANY($1) AND %[2]s IS NOT NULL`, c.table, c.column), ids)
	found, err := pgx.CollectRows(rows, pgx.RowToStructByPos[NamedImage])
	if err != nil {
		return nil, fmt.Errorf("pictures of %s %v: %w", c.table, ids, err)
	}
	out := make(map[int64]string, len(found))
	for _, f := range found {
		out[f.ID] = f.Ref
	}
	return out, nil
}

// NamedImagesAfter returns up to limit of owner's rows with a picture whose id is above
// after, in id order (the partial indexes users_with_image and contributors_with_image).
func (db *DB) NamedImagesAfter(ctx context.Context, owner imageset.Owner, after int64, limit int) ([]NamedImage, error) {
	c, err := imageColumnOf(owner)
	if err != nil {
		return nil, err
	}
	rows, _ := db.Pool.Query(ctx, fmt.Sprintf(`
		SELECT id, %[2]s FROM %[1]s WHERE %[2]s IS NOT NULL AND id > $1
		ORDER BY id LIMIT $2`, c.table, c.column), after, limit)
	found, err := pgx.CollectRows(rows, pgx.RowToStructByPos[NamedImage])
	if err != nil {
		return nil, fmt.Errorf("pictures of %s after %d: %w", c.table, after, err)
	}
	return found, nil
}
