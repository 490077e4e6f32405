package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// A user's deletion is irreversible: their row goes with every row that is theirs, and
// then every version of their stored pictures goes from the versioned bucket, and
// CloudFront's copies of their avatar URLs. The order is the one every image write
// keeps: the row stops pointing at the pictures (DeleteUser's transaction) before any
// object is removed (avatars.Service.PurgeUsers), so a crash never leaves a row
// pointing at nothing. A crash after the commit leaves objects that no row names: the
// transaction recorded the purge (user_purges), and the record stays until the purge is
// done, so the next deletion, or a retried one, finishes it (PendingUserPurges).
//
// The rows keyed by a user are those of a table with a foreign key to users that
// cascades (sessions, oauth_connections, user_roles, user_locks, contributor_locks),
// which the deletion removes, and those of UserTablesWithoutForeignKey, which outlive
// the user's row until the purge is done.

// UserTablesWithoutForeignKey are the tables keyed by a user id (column user_id)
// without a foreign key to users: avatar_invalidations, the cdn's ledger of what
// CloudFront was last told of each user's picture, which tells the cdn to invalidate the
// deleted user's URLs; and user_purges, the purges to do. FinishUserPurge removes the
// deleted user's rows of each. TestUserKeyedTables (userpurges_test.go) holds every
// column of the schema that names a user either to a cascading foreign key or to this
// list.
var UserTablesWithoutForeignKey = []string{"avatar_invalidations", "user_purges"}

// deleteUserSQL deletes the user and, in the same statement, records the purge and, when
// they had a picture, leaves their ledger row with no reference (NULL: "not known to be
// invalidated"), so that the cdn's next claim (ClaimAvatarInvalidation) for the user
// invalidates CloudFront's copies once. It returns the user's id, no row for an
// unknown user.
const deleteUserSQL = `
	WITH gone AS (
		DELETE FROM users WHERE id = $1 RETURNING id, profile_image
	), purge AS (
		INSERT INTO user_purges (user_id) SELECT id FROM gone ON CONFLICT (user_id) DO NOTHING
	), ledger AS (
		INSERT INTO avatar_invalidations (user_id, ref)
		SELECT id, NULL FROM gone WHERE profile_image IS NOT NULL
		ON CONFLICT (user_id) DO UPDATE SET ref = NULL
	)
	SELECT id FROM gone`

// finishUserPurgeSQL removes a deleted user's rows of UserTablesWithoutForeignKey in
// one statement (built from the list, so that a table added to it is removed too),
// unless the user exists (an id is never given twice, but then nothing is purged).
var finishUserPurgeSQL = func() string {
	var b strings.Builder
	b.WriteString("WITH gone AS (SELECT $1::bigint AS id WHERE NOT EXISTS (SELECT 1 FROM users WHERE id = $1))")
	for i, table := range UserTablesWithoutForeignKey {
		fmt.Fprintf(&b, ", d%d AS (DELETE FROM %s WHERE user_id = (SELECT id FROM gone))", i, pgx.Identifier{table}.Sanitize())
	}
	b.WriteString(" SELECT count(*) FROM gone")
	return b.String()
}()

// PendingUserPurges returns the purges still to do: user id's first when it has one
// (its own deletion just committed, or a retried one), then at most others of those
// recorded more than a minute ago (a crash or a failure left them; a younger one is
// most likely still being done by its own request), oldest id first.
func (db *DB) PendingUserPurges(ctx context.Context, id int64, others int) ([]int64, error) {
	rows, _ := db.Pool.Query(ctx, `
		(SELECT user_id FROM user_purges WHERE user_id = $1)
		UNION ALL
		(SELECT user_id FROM user_purges
		 WHERE user_id <> $1 AND deleted_at < now() - interval '1 minute'
		 ORDER BY user_id LIMIT $2)`, id, others)
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("pending purges of deleted users: %w", err)
	}
	return ids, nil
}

// FinishUserPurge removes what stayed of deleted user id until their pictures were
// purged: their rows of UserTablesWithoutForeignKey.
func (db *DB) FinishUserPurge(ctx context.Context, id int64) error {
	var n int
	if err := db.Pool.QueryRow(ctx, finishUserPurgeSQL, id).Scan(&n); err != nil {
		return fmt.Errorf("finish the purge of deleted user %d: %w", id, err)
	}
	return nil
}
