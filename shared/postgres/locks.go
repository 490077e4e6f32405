package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Edit locks are advisory: they show who is editing a user or a contributor. Opening
// the detail with the group's edit permission takes the lock, or refreshes it when the
// reader already holds it, unless another user holds a live one; a successful edit by
// the holder releases it. A lock whose expires_at has passed counts as absent
// everywhere, so nothing needs to sweep expired rows. Locks never block an edit.

// lockTable names a lock table, its entity column and the entity's own table.
type lockTable struct {
	name   string // the lock table
	column string // its column naming the locked entity
	entity string // the entity's table, whose id column the column references
}

var (
	userLocks        = lockTable{name: "user_locks", column: "user_id", entity: "users"}
	contributorLocks = lockTable{name: "contributor_locks", column: "contributor_id", entity: "contributors"}
)

// lockCTE returns a data-modifying common table expression named take_lock, to put
// after WITH in front of a detail read so that taking the lock costs no extra round
// trip. The arguments are the statement's named arguments ("@id"): entity is the
// locked entity's id, by the reader's user id and ttl the lock's lifetime (an interval;
// pgx encodes a time.Duration as one). When by is 0 nothing is taken. The insert does
// nothing for an entity that does not exist, and does not overwrite another user's live
// lock.
//
//	WITH take_lock AS (...) SELECT ... FROM users WHERE id = @id
//
// The main query does not see the lock it takes (one snapshot); the lists and reads
// that show a lock run later.
func lockCTE(t lockTable, entity, by, ttl string) string {
	return fmt.Sprintf(`take_lock AS (
	INSERT INTO %[1]s AS l (%[2]s, locked_by, acquired_at, expires_at)
	SELECT e.id, %[5]s, now(), now() + %[6]s::interval
	FROM %[3]s e
	WHERE e.id = %[4]s AND %[5]s::bigint > 0
	ON CONFLICT (%[2]s) DO UPDATE
	SET locked_by = excluded.locked_by,
	    acquired_at = CASE WHEN l.locked_by = excluded.locked_by AND l.expires_at > now()
	                       THEN l.acquired_at ELSE excluded.acquired_at END,
	    expires_at = excluded.expires_at
	WHERE l.locked_by = excluded.locked_by OR l.expires_at <= now()
	RETURNING 1
)`, t.name, t.column, t.entity, entity, by, ttl)
}

// lockHolder returns a scalar SQL expression: the live lock's holder of the entity
// whose id is the expression entity, as a JSON object {id, username}, or NULL. Scan it
// into a *catalog.LockHolder.
func lockHolder(t lockTable, entity string) string {
	return fmt.Sprintf(`(SELECT jsonb_build_object('id', lu.id, 'username', lu.username)
	FROM %[1]s lk JOIN users lu ON lu.id = lk.locked_by
	WHERE lk.%[2]s = %[3]s AND lk.expires_at > now())`, t.name, t.column, entity)
}

// releaseLock drops the lock of entityID if userID holds it: an edit by the holder ends
// their editing. Another user's lock stays.
func releaseLock(ctx context.Context, tx pgx.Tx, t lockTable, entityID, userID int64) error {
	sql := fmt.Sprintf(`DELETE FROM %s WHERE %s = $1 AND locked_by = $2`, t.name, t.column)
	if _, err := tx.Exec(ctx, sql, entityID, userID); err != nil {
		return fmt.Errorf("release %s lock of %d: %w", t.name, entityID, err)
	}
	return nil
}
