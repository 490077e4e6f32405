package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// ClaimAvatarInvalidation records user id's current picture as invalidated and reports
// whether it differs from the one last recorded: true means CloudFront must be told
// (the caller then invalidates, or calls RetryAvatarInvalidation when that fails).
// A user without a record counts as having had no picture, so unknown ids and users
// who never had one claim nothing; concurrent calls for one change claim it once.
func (db *DB) ClaimAvatarInvalidation(ctx context.Context, id int64) (bool, error) {
	var claimed bool
	err := db.Pool.QueryRow(ctx, `
		INSERT INTO avatar_invalidations AS a (user_id, ref)
		SELECT $1, cur.ref
		FROM (SELECT coalesce((SELECT profile_image FROM users WHERE id = $1), '') AS ref) cur
		WHERE cur.ref <> '' OR EXISTS (SELECT 1 FROM avatar_invalidations WHERE user_id = $1)
		ON CONFLICT (user_id) DO UPDATE SET ref = EXCLUDED.ref, invalidated_at = now()
		WHERE a.ref IS DISTINCT FROM EXCLUDED.ref
		RETURNING true`, id).Scan(&claimed)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("claim the avatar invalidation of user %d: %w", id, err)
	}
	return claimed, nil
}

// RetryAvatarInvalidation forgets what was last invalidated for user id, so the next
// change call invalidates again (after a failed invalidation).
func (db *DB) RetryAvatarInvalidation(ctx context.Context, id int64) error {
	if _, err := db.Pool.Exec(ctx, `UPDATE avatar_invalidations SET ref = NULL WHERE user_id = $1`, id); err != nil {
		return fmt.Errorf("reset the avatar invalidation of user %d: %w", id, err)
	}
	return nil
}
