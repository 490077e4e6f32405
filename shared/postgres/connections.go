package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/catalog"
	"github.com/mediacatalog/service/shared/namekey"
)

// Constraints of oauth_connections: one user per provider account, one account per
// provider and user.
const (
	connectionAccountKey      = "oauth_connections_account_key"
	connectionUserProviderKey = "oauth_connections_user_provider_key"
)

// createAttempts bounds the retries of an OAuth login that lost a race: to a
// concurrent first login of the same provider account, or to a username taken
// between the choice and the insert.
const createAttempts = 4

// freeUsername is base, or base-N with the smallest N >= 2, whose name key
// (namekey.Key) no user's username has and which no user has as slug. Only the names
// keyed like base or base-<anything> matter: their keys are read by index
// (users.name_key, migration 00025: equal to the key, or in the range of the keys that
// start with key + "-"), with the rows whose key is not written yet (the partial index
// of NULL keys, empty once make migrate has filled them), keyed here.
func freeUsername(ctx context.Context, tx pgx.Tx, base string) (string, error) {
	baseKey := namekey.Key(base)
	prefix := baseKey + namekey.Key("-")
	var baseTaken bool
	suffixes := map[string]bool{} // keys after prefix of the names keyed base-<anything>
	rows, _ := tx.Query(ctx, `
		SELECT coalesce(name_key, ''), CASE WHEN name_key IS NULL THEN username ELSE '' END FROM users
		WHERE name_key = $1 OR (name_key >= $2 AND name_key < $3) OR name_key IS NULL`,
		baseKey, prefix, prefixEnd(prefix))
	for rows.Next() {
		vals := rows.RawValues()
		k := string(vals[0])
		if len(vals[1]) > 0 {
			k = namekey.Key(string(vals[1]))
		}
		switch {
		case k == baseKey:
			baseTaken = true
		case strings.HasPrefix(k, prefix):
			suffixes[k[len(prefix):]] = true
		}
	}
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("read the usernames keyed like %q: %w", base, err)
	}
	rows, _ = tx.Query(ctx, `SELECT slug FROM users WHERE slug = $1 OR slug LIKE $2`, base, escapeLike(base)+"-%")
	slugs, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return "", fmt.Errorf("read the slugs like %q: %w", base, err)
	}
	for _, s := range slugs {
		if s == base {
			baseTaken = true
		}
	}
	if !baseTaken {
		return base, nil
	}
	for n := 2; ; n++ {
		name := fmt.Sprintf("%s-%d", base, n)
		if !suffixes[namekey.Key(strconv.Itoa(n))] && !slices.Contains(slugs, name) {
			return name, nil
		}
	}
}

// prefixEnd is the least string above every string that starts with prefix, in byte
// order (the "C" collation of users.name_key): prefix with its last byte below 0xff
// raised by one (prefix ends with the key of "-", an ASCII byte, so it stays UTF-8).
func prefixEnd(prefix string) string {
	b := []byte(prefix)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1])
		}
	}
	return prefix + "\U0010FFFF" // unreachable: prefix ends with an ASCII byte
}

// OAuthLogin returns the user that the provider account signs in. When the account is
// linked, that user, whose connection takes the profile's current username, email and
// avatar. Otherwise a new user, in one transaction: a username (and slug) made from
// acct.UsernameBase, unique case-insensitively ("jane-doe", else "jane-doe-2",
// "jane-doe-3"...; see createOAuthUser), no password, the default role, and the
// connection. Accounts are
// matched by provider and provider user id only, never by email. No default role is
// an internal error.
func (db *DB) OAuthLogin(ctx context.Context, acct catalog.ProviderAccount) (catalog.OAuthLogin, error) {
	base := strings.ToLower(strings.TrimSpace(acct.UsernameBase))
	if base == "" {
		base = acct.Provider + "-user"
	}
	acct = normalizeAccount(acct)
	for attempt := 1; ; attempt++ {
		login, found, err := db.refreshConnection(ctx, acct)
		if err != nil || found {
			return login, err
		}
		err = db.inTx(ctx, func(tx pgx.Tx) error {
			login, err = createOAuthUser(ctx, tx, acct, base)
			return err
		})
		if err == nil {
			return login, nil
		}
		// A concurrent login created the account's user, or someone took the chosen
		// username: look again.
		if attempt < createAttempts && isUniqueViolation(err, "") {
			continue
		}
		return catalog.OAuthLogin{}, fmt.Errorf("create user for %s account %s: %w", acct.Provider, acct.ProviderUserID, err)
	}
}

// refreshConnection updates the profile data of a linked account and reports its user.
func (db *DB) refreshConnection(ctx context.Context, acct catalog.ProviderAccount) (catalog.OAuthLogin, bool, error) {
	rows, _ := db.Pool.Query(ctx, `
		UPDATE oauth_connections c
		SET provider_username = $3, provider_email = $4, provider_avatar = $5
		FROM users u
		WHERE c.provider = $1 AND c.provider_user_id = $2 AND u.id = c.user_id
		RETURNING u.id AS user_id, u.username, false AS created`,
		acct.Provider, acct.ProviderUserID, acct.Username, acct.Email, acct.AvatarURL)
	login, err := pgx.CollectOneRow(rows, pgx.RowToStructByName[catalog.OAuthLogin])
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return catalog.OAuthLogin{}, false, nil
	case err != nil:
		return catalog.OAuthLogin{}, false, fmt.Errorf("find user of %s account %s: %w", acct.Provider, acct.ProviderUserID, err)
	}
	return login, true, nil
}

// createOAuthUser inserts a user named after base with the default role and the
// account's connection. The name is base when free, else base-N with the smallest
// free N >= 2, where free means that no user's name is the same up to case and
// confusable characters (nameKey) and no user has it as slug: a sign-up cannot take a
// name that displays as another's ("admin" when "Admin" or "аdmin" in Cyrillic
// exists). OAuth sign-ups take turns (a transaction-scoped advisory lock), so each
// sees the names the others chose.
//
// The names are compared by their keys, kept on the users' rows (users.name_key) and
// written here with the new user, so a sign-up reads only the names keyed like its own.
func createOAuthUser(ctx context.Context, tx pgx.Tx, acct catalog.ProviderAccount, base string) (catalog.OAuthLogin, error) {
	if _, err := tx.Exec(ctx, namekey.SignUpLock); err != nil {
		return catalog.OAuthLogin{}, err
	}
	name, err := freeUsername(ctx, tx, base)
	if err != nil {
		return catalog.OAuthLogin{}, err
	}
	rows, _ := tx.Query(ctx, `
		WITH new_user AS (
			INSERT INTO users (slug, username, name_key) VALUES ($1, $1, $7)
			RETURNING id, username
		), default_role AS (
			INSERT INTO user_roles (user_id, role_id)
			SELECT new_user.id, roles.id FROM new_user, roles WHERE roles.is_default
			RETURNING role_id
		), connection AS (
			INSERT INTO oauth_connections
				(user_id, provider, provider_user_id, provider_username, provider_email, provider_avatar)
			SELECT id, $2, $3, $4, $5, $6 FROM new_user
			RETURNING id
		)
		SELECT new_user.id AS user_id, new_user.username, true AS created,
		       EXISTS (SELECT 1 FROM default_role) AS has_role
		FROM new_user`,
		name, acct.Provider, acct.ProviderUserID, acct.Username, acct.Email, acct.AvatarURL, namekey.Key(name))
	row, err := pgx.CollectOneRow(rows, pgx.RowToStructByName[struct {
		catalog.OAuthLogin
		HasRole bool
	}])
	if err != nil {
		return catalog.OAuthLogin{}, err
	}
	if !row.HasRole {
		return catalog.OAuthLogin{}, errors.New("no default role to give the new user")
	}
	return row.OAuthLogin, nil
}

// LinkProvider links the provider account to user userID, as their session sessionID
// (a UUID) asks: the link records it, so that a forced logout that revokes the session
// removes the link (LogoutUser). The account may not be linked to another user
// (apperr.Conflict wrapping catalog.ErrProviderInUse), and the user may not have an
// account of that provider linked already (apperr.Conflict wrapping
// catalog.ErrAlreadyLinked); an unknown user is apperr.NotFound.
func (db *DB) LinkProvider(ctx context.Context, userID int64, sessionID string, acct catalog.ProviderAccount) error {
	acct = normalizeAccount(acct)
	return db.inTx(ctx, func(tx pgx.Tx) error {
		// The user's row first, shared: a forced logout (LogoutUser, which locks it for
		// update) either waits for this link and removes it, or has revoked the session
		// before the next statement looks.
		var live bool
		err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM users WHERE id = $1 FOR SHARE)`, userID).Scan(&live)
		if err == nil && live {
			err = tx.QueryRow(ctx, `
				SELECT EXISTS (SELECT 1 FROM sessions s WHERE s.id = $2::uuid AND s.user_id = $1
				               AND `+liveSession+`)`, userID, sessionID).Scan(&live)
			if err == nil && !live {
				return apperr.Wrap(apperr.Unauthorized, apperr.MsgUnauthorized,
					fmt.Errorf("link by session %s of user %d, which is not live", sessionID, userID))
			}
		}
		switch {
		case err != nil:
			return fmt.Errorf("lock user %d to link %s: %w", userID, acct.Provider, err)
		case !live:
			return apperr.New(apperr.NotFound, apperr.MsgUserNotFound)
		}
		rows, _ := tx.Query(ctx, `
			SELECT user_id FROM oauth_connections
			WHERE provider = $1 AND (provider_user_id = $2 OR user_id = $3)`,
			acct.Provider, acct.ProviderUserID, userID)
		owners, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return fmt.Errorf("check %s links of user %d: %w", acct.Provider, userID, err)
		}
		// The OpenAPI document's order: the account must not belong to another user; then the
		// user must not have the provider yet.
		for _, owner := range owners {
			if owner != userID {
				return providerInUse(nil)
			}
		}
		if len(owners) > 0 {
			return alreadyLinked(nil)
		}
		_, err = tx.Exec(ctx, `
			INSERT INTO oauth_connections
				(user_id, provider, provider_user_id, provider_username, provider_email, provider_avatar, linked_session)
			VALUES ($1, $2, $3, $4, $5, $6, $7::uuid)`,
			userID, acct.Provider, acct.ProviderUserID, acct.Username, acct.Email, acct.AvatarURL, sessionID)
		switch {
		case err == nil:
			return nil
		case isUniqueViolation(err, connectionAccountKey):
			return providerInUse(err)
		case isUniqueViolation(err, connectionUserProviderKey):
			return alreadyLinked(err)
		case isForeignKeyViolation(err):
			return apperr.Wrap(apperr.NotFound, apperr.MsgUserNotFound, err)
		}
		return fmt.Errorf("link %s account %s to user %d: %w", acct.Provider, acct.ProviderUserID, userID, err)
	})
}

func providerInUse(cause error) error {
	return apperr.Wrap(apperr.Conflict, catalog.MsgProviderInUse, errors.Join(catalog.ErrProviderInUse, cause))
}

func alreadyLinked(cause error) error {
	return apperr.Wrap(apperr.Conflict, catalog.MsgAlreadyLinked, errors.Join(catalog.ErrAlreadyLinked, cause))
}

// Connections lists the provider accounts linked to user userID, by provider name.
func (db *DB) Connections(ctx context.Context, userID int64) ([]catalog.Connection, error) {
	rows, _ := db.Pool.Query(ctx, `
		SELECT provider, provider_username, provider_email, linked_at
		FROM oauth_connections WHERE user_id = $1
		ORDER BY provider`, userID)
	conns, err := pgx.CollectRows(rows, pgx.RowToStructByName[catalog.Connection])
	if err != nil {
		return nil, fmt.Errorf("list connections of user %d: %w", userID, err)
	}
	return conns, nil
}

// UnlinkProvider removes user userID's connection to provider, as their session
// sessionID (a UUID) asks, and keeps the link as it was in oauth_unlinks with that
// session, so that a forced logout that revokes the session puts it back
// (LogoutUser). It is allowed while the user keeps a way to log in: a password or
// another linked provider; otherwise it is apperr.Invalid "Cannot unlink the only
// login method". A provider that is not linked is apperr.NotFound "Provider not
// linked"; an unknown user apperr.NotFound "User not found"; a session that is no
// longer live (revoked by a forced logout meanwhile) apperr.Unauthorized. Unlinks of
// one user take turns (the user's row is locked), so two concurrent unlinks cannot
// together remove the last login method, and a forced logout either waits for the
// unlink and puts the link back, or has revoked the session before it looks.
func (db *DB) UnlinkProvider(ctx context.Context, userID int64, sessionID, provider string) error {
	return db.inTx(ctx, func(tx pgx.Tx) error {
		// Lock the user first, in a statement of its own: under READ COMMITTED the next
		// statement's snapshot is taken after the lock is granted, so it sees the
		// connections a concurrent unlink of the same user has just removed, and the
		// session a concurrent logout has just revoked. (Counting in the locking
		// statement would count from before the wait, and two racing unlinks could
		// each leave the other as the last login method.)
		var hasPassword, live, linked bool
		var others int64
		err := tx.QueryRow(ctx, `SELECT password_hash IS NOT NULL FROM users WHERE id = $1 FOR UPDATE`,
			userID).Scan(&hasPassword)
		if err == nil {
			err = tx.QueryRow(ctx, `
				SELECT EXISTS (SELECT 1 FROM sessions s WHERE s.id = $3::uuid AND s.user_id = $1
				               AND `+liveSession+`),
				       EXISTS (SELECT 1 FROM oauth_connections WHERE user_id = $1 AND provider = $2),
				       (SELECT count(*) FROM oauth_connections WHERE user_id = $1 AND provider <> $2)`,
				userID, provider, sessionID).Scan(&live, &linked, &others)
		}
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return apperr.New(apperr.NotFound, apperr.MsgUserNotFound)
		case err != nil:
			return fmt.Errorf("load login methods of user %d: %w", userID, err)
		case !live:
			return apperr.Wrap(apperr.Unauthorized, apperr.MsgUnauthorized,
				fmt.Errorf("unlink by session %s of user %d, which is not live", sessionID, userID))
		case !linked:
			return apperr.New(apperr.NotFound, catalog.MsgProviderNotLinked)
		case !hasPassword && others == 0:
			return apperr.New(apperr.Invalid, catalog.MsgOnlyLoginMethod)
		}
		if _, err := tx.Exec(ctx, `
			WITH gone AS (
				DELETE FROM oauth_connections WHERE user_id = $1 AND provider = $2
				RETURNING user_id, provider, provider_user_id, provider_username, provider_email,
				          provider_avatar, linked_at, linked_session
			)
			INSERT INTO oauth_unlinks (user_id, provider, provider_user_id, provider_username, provider_email,
			                           provider_avatar, linked_at, linked_session, unlinked_session)
			SELECT user_id, provider, provider_user_id, provider_username, provider_email,
			       provider_avatar, linked_at, linked_session, $3::uuid
			FROM gone`, userID, provider, sessionID); err != nil {
			return fmt.Errorf("unlink %s from user %d: %w", provider, userID, err)
		}
		return nil
	})
}

// normalizeAccount trims the profile's text and fills a blank display name with the
// provider user id (provider_username is required).
func normalizeAccount(acct catalog.ProviderAccount) catalog.ProviderAccount {
	acct.Username = strings.TrimSpace(acct.Username)
	if acct.Username == "" {
		acct.Username = acct.ProviderUserID
	}
	blank := func(s *string) *string {
		if s == nil || strings.TrimSpace(*s) == "" {
			return nil
		}
		t := strings.TrimSpace(*s)
		return &t
	}
	acct.Email = blank(acct.Email)
	acct.AvatarURL = blank(acct.AvatarURL)
	return acct
}

// escapeLike escapes LIKE's wildcards and escape character in s.
func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}
