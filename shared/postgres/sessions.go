package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/catalog"
)

const sqlForeignKeyViolation = "23503"

// isForeignKeyViolation reports whether err is a foreign key violation (SQLSTATE 23503):
// a row refers to one that does not exist (any more).
func isForeignKeyViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == sqlForeignKeyViolation
}

// CreateSession starts a session of userID that lives until expiresAt and returns its
// id, the sid of the tokens issued for it. An unknown user is apperr.NotFound.
func (db *DB) CreateSession(ctx context.Context, userID int64, expiresAt time.Time) (string, error) {
	var id string
	err := db.Pool.QueryRow(ctx,
		`INSERT INTO sessions (user_id, expires_at) VALUES ($1, $2) RETURNING id::text`,
		userID, expiresAt).Scan(&id)
	if err != nil {
		if isForeignKeyViolation(err) {
			return "", apperr.Wrap(apperr.NotFound, apperr.MsgUserNotFound, err)
		}
		return "", fmt.Errorf("create session of user %d: %w", userID, err)
	}
	return id, nil
}

// CreateLoginSession is CreateSession for a login through the provider account acct,
// which OAuthLogin found linked to userID: the session starts only if the account is
// still linked to the user once the user's row is locked (shared, as LinkProvider
// locks it). A forced logout locks the row for update, so the two take turns: a
// login that locked first gets a session the logout then revokes; one that waited
// finds the link the logout removed gone, and is catalog.ErrLoginMoved (the caller
// looks the account up again). Without the lock, a login that found the link before a
// logout removed it would start its session after the logout, alive. An unknown user
// is apperr.NotFound.
func (db *DB) CreateLoginSession(ctx context.Context, userID int64, acct catalog.ProviderAccount, expiresAt time.Time) (string, error) {
	var id string
	err := db.inTx(ctx, func(tx pgx.Tx) error {
		var exists bool
		err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM users WHERE id = $1 FOR SHARE)`, userID).Scan(&exists)
		switch {
		case err != nil:
			return fmt.Errorf("lock user %d to log in: %w", userID, err)
		case !exists:
			return apperr.New(apperr.NotFound, apperr.MsgUserNotFound)
		}
		// A statement of its own, after the lock: its snapshot sees what a logout that
		// held the row has committed.
		err = tx.QueryRow(ctx, `
			INSERT INTO sessions (user_id, expires_at)
			SELECT $1, $2 WHERE EXISTS (SELECT 1 FROM oauth_connections
			                            WHERE provider = $3 AND provider_user_id = $4 AND user_id = $1)
			RETURNING id::text`, userID, expiresAt, acct.Provider, acct.ProviderUserID).Scan(&id)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("log user %d in through %s account %s: %w", userID, acct.Provider, acct.ProviderUserID, catalog.ErrLoginMoved)
		}
		if err != nil {
			return fmt.Errorf("create session of user %d: %w", userID, err)
		}
		return nil
	})
	return id, err
}

// liveSession is what makes the session row s live, the one definition every
// statement that asks uses: not revoked (a forced logout), not expired, and started
// after the sessions-valid-after mark (a restore of the database: SetSessionCutoff).
const liveSession = `s.revoked_at IS NULL AND s.expires_at > now()
	AND s.created_at > (SELECT valid_after FROM session_cutoff)`

// SessionUser loads, in one query, user userID with the keys of the built-in
// permissions of all their roles (the immutable identity the code checks, never the
// editable name), provided sessionID (a UUID) is a live session of theirs, and the
// session's start (its sign-in). A user that does not
// exist is apperr.NotFound "User not found"; a session that is unknown, someone
// else's, revoked, expired or started before the sessions-valid-after mark (set by a
// restore of the database: SetSessionCutoff) is apperr.Unauthorized.
func (db *DB) SessionUser(ctx context.Context, userID int64, sessionID string) (catalog.SessionUser, error) {
	rows, _ := db.Pool.Query(ctx, `
		SELECT u.id, u.username,
		       (SELECT s.created_at FROM sessions s
		        WHERE s.id = $2::uuid AND s.user_id = u.id
		          AND `+liveSession+`) AS signed_in_at,
		       coalesce(array_agg(DISTINCT p.key ORDER BY p.key) FILTER (WHERE p.key IS NOT NULL),
		                '{}') AS permissions
		FROM users u
		LEFT JOIN user_roles ur ON ur.user_id = u.id
		LEFT JOIN role_permissions rp ON rp.role_id = ur.role_id
		LEFT JOIN permissions p ON p.id = rp.permission_id
		WHERE u.id = $1
		GROUP BY u.id`, userID, sessionID)
	row, err := pgx.CollectOneRow(rows, pgx.RowToStructByName[struct {
		ID          int64
		Username    string
		Permissions []string
		SignedInAt  *time.Time // NULL: no live session
	}])
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return catalog.SessionUser{}, apperr.New(apperr.NotFound, apperr.MsgUserNotFound)
	case err != nil:
		return catalog.SessionUser{}, fmt.Errorf("load session %s of user %d: %w", sessionID, userID, err)
	case row.SignedInAt == nil:
		return catalog.SessionUser{}, apperr.Wrap(apperr.Unauthorized, apperr.MsgUnauthorized,
			fmt.Errorf("session %s of user %d is not live", sessionID, userID))
	}
	return catalog.SessionUser{ID: row.ID, Username: row.Username, Permissions: row.Permissions, SignedInAt: *row.SignedInAt}, nil
}
