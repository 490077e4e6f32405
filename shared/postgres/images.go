package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/auth"
)

// querier is a pool or a transaction.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// The image references of users (profile_image) and contributors (image): the key of
// a stored image set in the bucket (see imageset.ImageSet), NULL for none. Each write is
// one statement, so it is its own transaction, and it returns the reference it
// replaced: the caller removes those objects once the change stands.

// imageColumn names a table's image reference column and its not-found message.
type imageColumn struct {
	table    string
	column   string
	notFound string
}

var (
	userImages        = imageColumn{table: "users", column: "profile_image", notFound: apperr.MsgUserNotFound}
	contributorImages = imageColumn{table: "contributors", column: "image", notFound: MsgContributorNotFound}
)

// UserImage returns the reference of user id's profile image, "" when they have none.
// Unknown user: apperr.NotFound "User not found".
func (db *DB) UserImage(ctx context.Context, id int64) (string, error) {
	var ref string
	err := db.Pool.QueryRow(ctx, `SELECT coalesce(profile_image, '') FROM users WHERE id = $1`, id).Scan(&ref)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return "", apperr.New(apperr.NotFound, apperr.MsgUserNotFound)
	case err != nil:
		return "", fmt.Errorf("load profile image of user %d: %w", id, err)
	}
	return ref, nil
}

// MayChangeUserImage reports, before an upload, what userImage would refuse: an
// unknown user (apperr.NotFound), or, when ctx carries an admin's principal, a full
// admin's image changed by someone who is not one (apperr.Forbidden). The write checks
// again under the access lock, so a change of authority in between is still caught.
func (db *DB) MayChangeUserImage(ctx context.Context, id int64) error {
	if _, err := db.UserImage(ctx, id); err != nil {
		return err
	}
	p, ok := auth.FromContext(ctx)
	if !ok {
		return nil
	}
	return db.inTx(ctx, func(tx pgx.Tx) error {
		_, _, err := mayActOn(ctx, tx, id, p.UserID)
		return err
	})
}

// SetUserImage points user id's profile image at ref and returns the reference it
// replaced ("" for none). Unknown user: apperr.NotFound; the image of a full admin
// changed by someone who is not one: apperr.Forbidden (see userImage).
func (db *DB) SetUserImage(ctx context.Context, id int64, ref string) (string, error) {
	return db.userImage(ctx, id, &ref)
}

// ClearUserImage removes user id's profile image reference and returns it ("" when
// they had none; nothing changes then). Unknown user: apperr.NotFound; a full admin's
// by someone who is not one: apperr.Forbidden.
func (db *DB) ClearUserImage(ctx context.Context, id int64) (string, error) {
	return db.userImage(ctx, id, nil)
}

// userImage sets user id's image reference under the access rules (access.go): when
// ctx carries the principal of an admin request, the change runs in a transaction
// that takes the access lock and refuses an actor who is not a full admin acting on
// one. The actor comes from the context because the image service between the route
// and this store (package avatars) is shared with contributors, which have no such
// rule; a write without a principal (none in the service today) is not an admin's.
func (db *DB) userImage(ctx context.Context, id int64, ref *string) (string, error) {
	p, ok := auth.FromContext(ctx)
	if !ok {
		return db.setImage(ctx, db.Pool, userImages, id, ref)
	}
	var old string
	err := db.inTx(ctx, func(tx pgx.Tx) error {
		if _, _, err := mayActOn(ctx, tx, id, p.UserID); err != nil {
			return err
		}
		var err error
		old, err = db.setImage(ctx, tx, userImages, id, ref)
		return err
	})
	return old, err
}

// SetContributorImage points contributor id's avatar at ref and returns the reference
// it replaced ("" for none). Unknown contributor: apperr.NotFound.
func (db *DB) SetContributorImage(ctx context.Context, id int64, ref string) (string, error) {
	return db.setImage(ctx, db.Pool, contributorImages, id, &ref)
}

// ClearContributorImage removes contributor id's avatar reference and returns it (""
// when it had none; nothing changes then). Unknown contributor: apperr.NotFound.
func (db *DB) ClearContributorImage(ctx context.Context, id int64) (string, error) {
	return db.setImage(ctx, db.Pool, contributorImages, id, nil)
}

// setImage sets the image reference of row id to ref (NULL when nil) and returns the
// previous one. The row is locked before it is read, so of two concurrent writers the
// second sees the first's reference as the one it replaces, and each replaced
// reference is returned to exactly one caller.
func (db *DB) setImage(ctx context.Context, q querier, c imageColumn, id int64, ref *string) (string, error) {
	sql := fmt.Sprintf(`
		UPDATE %[1]s t SET %[2]s = $2
		FROM (SELECT id, %[2]s AS ref FROM %[1]s WHERE id = $1 FOR UPDATE) old
		WHERE t.id = old.id
		RETURNING coalesce(old.ref, '')`, c.table, c.column)
	var old string
	err := q.QueryRow(ctx, sql, id, ref).Scan(&old)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return "", apperr.New(apperr.NotFound, c.notFound)
	case err != nil:
		return "", fmt.Errorf("set %s.%s of %d: %w", c.table, c.column, id, err)
	}
	return old, nil
}
