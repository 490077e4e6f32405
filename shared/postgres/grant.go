package postgres

import (
	"context"
	"fmt"

	"github.com/mediacatalog/service/shared/apperr"
)

// GrantTo names the user who receives a role by what nobody can change through the
// API: the user id, or a linked provider identity (provider and the provider's own
// user id). A username can be renamed by any user editor and taken by any sign-up, so
// the first admin of a deployment is never chosen by one.
type GrantTo struct {
	UserID         int64
	Provider       string
	ProviderUserID string
}

// GrantRole gives the user the role named role. It reports whether the user did not
// hold it yet, and the user's id and username (for the operator to confirm).
func (db *DB) GrantRole(ctx context.Context, to GrantTo, role string) (granted bool, userID int64, username string, err error) {
	var userFound, roleFound bool
	err = db.Pool.QueryRow(ctx, `
		WITH u AS (
				SELECT id, username FROM users WHERE id = $1
				UNION ALL
				SELECT u.id, u.username FROM oauth_connections c JOIN users u ON u.id = c.user_id
				WHERE $1 = 0 AND c.provider = $2 AND c.provider_user_id = $3
			 ),
		     r AS (SELECT id FROM roles WHERE name = $4),
		     granted AS (
				INSERT INTO user_roles (user_id, role_id) SELECT u.id, r.id FROM u, r
				ON CONFLICT DO NOTHING RETURNING 1
			 )
		SELECT EXISTS (SELECT 1 FROM u), EXISTS (SELECT 1 FROM r), EXISTS (SELECT 1 FROM granted),
		       coalesce((SELECT id FROM u), 0), coalesce((SELECT username FROM u), '')`,
		to.UserID, to.Provider, to.ProviderUserID, role).Scan(&userFound, &roleFound, &granted, &userID, &username)
	switch {
	case err != nil:
		return false, 0, "", fmt.Errorf("grant role %q: %w", role, err)
	case !userFound:
		return false, 0, "", apperr.New(apperr.NotFound, apperr.MsgUserNotFound)
	case !roleFound:
		return false, 0, "", apperr.New(apperr.NotFound, MsgRoleNotFound)
	}
	return granted, userID, username, nil
}
