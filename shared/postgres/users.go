package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/catalog"
	"github.com/mediacatalog/service/shared/namekey"
)

// MsgUsernameTaken is the OpenAPI document's 409 of a user edit with a used username.
const MsgUsernameTaken = "Username already taken"

// userOrder returns the ORDER BY clause of one of the list's order values ("" is
// name-asc), with name the expression of the lowercased username; false for an unknown
// value. Each is the order of an index, so a page of the list is an index range:
// lower(username) is unique (users_username_key) and needs no tie-break; registration
// ties break on id (users_registered). A search's matches are sorted, not walked in an
// index: on the kept search text, the folded username (migration 00022), without
// lowering each match again (at 100k users, lowering the 12.5k matches of "otaku"
// for the sort cost more than the rest of the sort); two names can fold alike
// ("Émile", "emile"), so their ties break on id.
func userOrder(order, name string) (string, bool) {
	switch order {
	case "", catalog.UserOrderNameAsc:
		return name, true
	case catalog.UserOrderNameDesc:
		return reverseOrder(name), true
	case catalog.UserOrderRegisteredAsc:
		return "u.registered, u.id", true
	case catalog.UserOrderRegisteredDesc:
		return "u.registered DESC, u.id DESC", true
	default:
		return "", false
	}
}

// Users returns a page of users with their roles and the holder of each one's live edit
// lock, and the number of all that match, in one query: the total comes apart from the
// page, so that a page past the end still reports it. Without a filter it is the
// user_count kept by triggers (the baseline schema); a filter counts its matches up to
// a cap (countCap: T before T), and a total that stayed within it tells which end of
// the list the page is nearer, to walk from there (pageQuery).
//
// With a search, the matching users are read once (a bitmap of users_search_trgm and
// a recheck of each match on the kept folded username, in a materialized CTE) and
// both the total and the page come from that set: counting and paging each on their
// own read every match twice (at 100k users, a search matching 12.5k of them took 53
// ms at p95 that way). The page sorts every match whatever T: the name order's index
// holds no search text, and walking it to the matches of a common word tested 75k
// users for a first page of 20 at 100k.
func (db *DB) Users(ctx context.Context, q catalog.UserQuery) (catalog.UserPage, error) {
	name := "lower(u.username)"
	if q.Search != "" {
		name = "u.search, u.id"
	}
	order, ok := userOrder(q.Order, name)
	if !ok {
		return catalog.UserPage{}, apperr.MissingParams()
	}
	cond, args := userFilter(q)
	from, where, with := "users u", cond, ""
	if q.Search != "" {
		from, where, with = "matches u", "TRUE", `matches AS MATERIALIZED (
			SELECT u.id, u.search, u.registered FROM users u WHERE `+cond+`),`
	}
	// Without a filter, the count kept by triggers (the baseline schema), never capped.
	total, capped, limitCount := "(SELECT n FROM user_count)", "FALSE", db.countCap(q.Offset)
	if cond != "TRUE" {
		total, capped = boundedCount(from, where, limitCount), fmt.Sprintf("n > %d", limitCount)
	}
	args["limit"], args["offset"] = q.Limit, q.Offset
	ids := pageQuery{cols: "u.id", from: from, where: where, order: order, total: pageTotal("list_total"),
		limit: "@limit", offset: "@offset", forward: q.Offset == 0}
	sql := `WITH ` + with + ` ` + listTotal(total, capped) + `
		SELECT
			(SELECT n FROM list_total) AS total,
			(SELECT capped FROM list_total) AS capped,
			coalesce((
				SELECT jsonb_agg(jsonb_build_object(
					'id', p.id, 'slug', p.slug, 'username', p.username, 'age_verified', p.age_verified,
					'profile_image', coalesce(p.profile_image, ''), 'registered', p.registered,
					'roles', (SELECT coalesce(jsonb_agg(jsonb_build_object('id', r.id, 'name', r.name,
					                                     'description', coalesce(r.description, ''))
					                  ORDER BY r.name, r.id), '[]')
					          FROM user_roles ur JOIN roles r ON r.id = ur.role_id
					          WHERE ur.user_id = p.id),
					'lock', ` + lockHolder(userLocks, "p.id") + `
				) ORDER BY p.n)
				FROM (
					SELECT u.id, u.slug, u.username, u.age_verified, u.profile_image, u.registered,
					       row_number() OVER (ORDER BY ` + order + `) AS n
					FROM (
						-- The page's ids first (registration order: an index-only scan of
						-- users_registered), walked from the nearer end, then only the
						-- page's rows.
						` + ids.sql() + `
					) k
					JOIN users u ON u.id = k.id
				) p
			), '[]') AS users`
	rows, _ := db.Pool.Query(ctx, sql, args)
	row, err := pgx.CollectOneRow(rows, pgx.RowToStructByName[struct {
		Total  int64
		Capped bool
		Users  []catalog.UserListItem
	}])
	if err != nil {
		return catalog.UserPage{}, fmt.Errorf("list users: %w", err)
	}
	page := catalog.UserPage{Users: row.Users}
	page.Total, page.Exact = boundedTotal(row.Total, row.Capped, limitCount, q.Offset, q.Limit, len(row.Users))
	return page, nil
}

// userFilter returns the condition of a user query ("TRUE" for none) and its
// arguments, by name: exactly those the condition uses (pgx.StrictNamedArgs).
func userFilter(q catalog.UserQuery) (string, pgx.StrictNamedArgs) {
	var conds []string
	args := pgx.StrictNamedArgs{}
	if q.Search != "" {
		args["search"] = q.Search
		conds = append(conds, "u.search LIKE search_pattern(@search)")
	}
	if q.Role != 0 {
		args["role"] = q.Role
		conds = append(conds, "EXISTS (SELECT 1 FROM user_roles f WHERE f.user_id = u.id AND f.role_id = @role)")
	}
	if len(conds) == 0 {
		return "TRUE", args
	}
	return strings.Join(conds, " AND "), args
}

// User returns the detail of user id: their roles, whether they have a live session
// and their linked providers, in one query. The same statement takes or refreshes the user's edit lock as
// lock asks (see lockCTE); the zero LockRequest only reads.
func (db *DB) User(ctx context.Context, id int64, lock catalog.LockRequest) (catalog.User, error) {
	sql := `
		WITH ` + lockCTE(userLocks, "@id", "@lock_by", "@lock_ttl") + `
		SELECT u.id, u.slug, u.username, u.age_verified, u.profile_image, u.registered,
		       coalesce(jsonb_agg(jsonb_build_object('id', r.id, 'name', r.name, 'description', r.description)
		                          ORDER BY r.name, r.id) FILTER (WHERE r.id IS NOT NULL), '[]') AS roles,
		       EXISTS (SELECT 1 FROM sessions s WHERE s.user_id = u.id AND ` + liveSession + `) AS logged_in,
		       (SELECT coalesce(jsonb_agg(jsonb_build_object('provider', c.provider,
		                                                     'provider_username', c.provider_username,
		                                                     'linked_at', c.linked_at,
		                                                     'by_session', c.linked_session IS NOT NULL)
		                                  ORDER BY c.provider), '[]')
		        FROM oauth_connections c WHERE c.user_id = u.id) AS linked_providers
		FROM users u
		LEFT JOIN user_roles ur ON ur.user_id = u.id
		LEFT JOIN roles r ON r.id = ur.role_id
		WHERE u.id = @id
		GROUP BY u.id`
	rows, _ := db.Pool.Query(ctx, sql, pgx.StrictNamedArgs{"id": id, "lock_by": lock.By, "lock_ttl": lock.TTL})
	u, err := pgx.CollectOneRow(rows, pgx.RowToStructByName[catalog.User])
	switch {
	case errors.Is(err, pgx.ErrNoRows), isForeignKeyViolation(err):
		// A user deleted between the lock's insert and its check is gone as well.
		return catalog.User{}, apperr.New(apperr.NotFound, apperr.MsgUserNotFound)
	case err != nil:
		return catalog.User{}, fmt.Errorf("load user %d: %w", id, err)
	}
	return u, nil
}

// EditUser renames user id, sets their age verification and changes their roles, in
// one transaction: removed roles go before added ones are granted, and a user left
// without a role gets the default role. It releases editorID's edit lock of the user
// and returns what changed. Unknown user: apperr.NotFound; unknown role ids:
// apperr.Invalid (nothing changes); a new username that another user's equals up to
// case, compatibility forms or confusable characters (namekey, the sign-up's rule):
// apperr.Conflict. An edit that the access rules refuse (see access.go: any edit of a
// full admin by someone who is not one, the editor's own roles, a role with a
// permission the editor lacks, the last full admin) is apperr.Forbidden.
func (db *DB) EditUser(ctx context.Context, id, editorID int64, e catalog.UserEdit) (catalog.UserEditResult, error) {
	var res catalog.UserEditResult
	err := db.inTx(ctx, func(tx pgx.Tx) error {
		res = catalog.UserEditResult{}
		// Every edit takes the access lock before any row lock, as every
		// access-changing write does, so that two of them never wait for each other:
		// whether the user is a full admin, which decides who may edit them, is
		// itself changed by those writes.
		editor, admins, err := mayActOn(ctx, tx, id, editorID)
		if err != nil {
			return err
		}
		// A rename follows the sign-up's rule (namekey): it takes the sign-ups' lock
		// before any row lock, as they do, and checks once the row is written.
		if _, err := tx.Exec(ctx, namekey.SignUpLock); err != nil {
			return fmt.Errorf("edit user %d: %w", id, err)
		}
		err = tx.QueryRow(ctx, `
			UPDATE users u SET username = $2, age_verified = $3, name_key = $4
			FROM (SELECT id, username, age_verified FROM users WHERE id = $1 FOR UPDATE) old
			WHERE u.id = old.id
			RETURNING old.username, old.age_verified`, id, e.Username, e.AgeVerified, namekey.Key(e.Username)).
			Scan(&res.Before.Username, &res.Before.AgeVerified)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return apperr.New(apperr.NotFound, apperr.MsgUserNotFound)
		case err != nil:
			if isUniqueViolation(err, "") {
				return apperr.Wrap(apperr.Conflict, MsgUsernameTaken, err)
			}
			return fmt.Errorf("update user %d: %w", id, err)
		}
		if namekey.Key(res.Before.Username) != namekey.Key(e.Username) {
			taken, err := namekey.TakenByOther(ctx, tx, e.Username, id)
			if err != nil {
				return err
			}
			if taken {
				return apperr.Wrap(apperr.Conflict, MsgUsernameTaken,
					fmt.Errorf("user %d renamed like another user's name", id))
			}
		}
		res.After = catalog.UserFacts{Username: e.Username, AgeVerified: e.AgeVerified}
		if err := requireIDs(ctx, tx, "roles", append(e.AddedRoles, e.RemovedRoles...)); err != nil {
			return err
		}
		if len(e.AddedRoles) > 0 || len(e.RemovedRoles) > 0 {
			if res.AddedRoles, res.RemovedRoles, err = setUserRolesChecked(ctx, tx, id, editor, admins, e.AddedRoles, e.RemovedRoles); err != nil {
				return err
			}
		}
		return releaseLock(ctx, tx, userLocks, id, editorID)
	})
	if err != nil {
		return catalog.UserEditResult{}, err
	}
	return res, nil
}

// setUserRolesChecked changes the roles of userID as editor asks, under the access
// lock (taken by the caller, with admins whether there was a full admin then) and the
// access rules, and returns the roles it granted (with the default role when the user
// was left without one) and took away.
func setUserRolesChecked(ctx context.Context, tx pgx.Tx, userID int64, editor actor, admins bool, added, removed []int64) ([]int64, []int64, error) {
	editorID := editor.id
	var current []int64
	if err := tx.QueryRow(ctx, `SELECT coalesce(array_agg(role_id), '{}') FROM user_roles WHERE user_id = $1`,
		userID).Scan(&current); err != nil {
		return nil, nil, fmt.Errorf("roles of user %d: %w", userID, err)
	}
	adds, removes := changes(set(current), added, removed)
	if len(adds) == 0 && len(removes) == 0 {
		return nil, nil, nil
	}
	if userID == editorID {
		return nil, nil, forbidden("user %d may not change their own roles", editorID)
	}
	perms, err := rolePermissions(ctx, tx, append(adds, removes...))
	if err != nil {
		return nil, nil, err
	}
	if !editor.holds(perms) {
		return nil, nil, forbidden("user %d lacks a permission of roles %v", editorID, append(adds, removes...))
	}
	fallback, err := setUserRoles(ctx, tx, userID, adds, removes)
	if err != nil {
		return nil, nil, err
	}
	if fallback != 0 {
		// The default role is not the editor's grant under rule 1: every sign-up gets
		// it, so it gives nobody what anyone cannot have. Rule 7 holds for it below.
		adds = append(adds, fallback)
	}
	if !editor.fullAdmin && len(adds) > 0 {
		// Full authority is handed out by a full admin only (access.go).
		made, err := fullAdminRoles(ctx, tx, adds)
		if err != nil {
			return nil, nil, err
		}
		if len(made) > 0 {
			return nil, nil, forbidden("user %d is not a full admin and may not grant full-admin roles %v", editorID, made)
		}
	}
	return adds, removes, keepAFullAdmin(ctx, tx, admins)
}

// setUserRoles removes then grants roles of userID, and gives the default role to a
// user left without any (no default role then is an internal error); it returns the
// default role's id when it gave it, else 0.
func setUserRoles(ctx context.Context, tx pgx.Tx, userID int64, added, removed []int64) (int64, error) {
	if len(removed) > 0 {
		if _, err := tx.Exec(ctx, `DELETE FROM user_roles WHERE user_id = $1 AND role_id = ANY($2)`,
			userID, removed); err != nil {
			return 0, fmt.Errorf("remove roles of user %d: %w", userID, err)
		}
	}
	if len(added) > 0 {
		if _, err := tx.Exec(ctx, `
			INSERT INTO user_roles (user_id, role_id) SELECT $1, unnest($2::bigint[])
			ON CONFLICT DO NOTHING`, userID, added); err != nil {
			return 0, fmt.Errorf("grant roles to user %d: %w", userID, err)
		}
	}
	var keepsARole bool
	var fallback int64
	err := tx.QueryRow(ctx, `
		WITH fallback AS (
			INSERT INTO user_roles (user_id, role_id)
			SELECT $1, r.id FROM roles r
			WHERE r.is_default AND NOT EXISTS (SELECT 1 FROM user_roles WHERE user_id = $1)
			RETURNING role_id
		)
		SELECT EXISTS (SELECT 1 FROM fallback) OR EXISTS (SELECT 1 FROM user_roles WHERE user_id = $1),
		       coalesce((SELECT role_id FROM fallback), 0)`,
		userID).Scan(&keepsARole, &fallback)
	if err != nil {
		return 0, fmt.Errorf("give user %d the default role: %w", userID, err)
	}
	if !keepsARole {
		return 0, fmt.Errorf("user %d would be left without a role: %w", userID, errNoDefaultRole)
	}
	return fallback, nil
}

// errNoDefaultRole is the cause of the 500 when no role is marked default.
var errNoDefaultRole = errors.New("no default role")

// requireIDs reports apperr.Invalid unless every id names a row of table (a constant),
// and keeps those rows until the transaction ends: it locks them FOR KEY SHARE, the
// lock a foreign key check takes, so a concurrent delete of one waits for this
// transaction (and then removes what it wrote beside the row), or has committed before
// and the id is reported unknown. Without the lock, a delete between this check and
// the insert that refers to the row would fail the insert's foreign key: a 500. The rows
// are locked in id order, as every writer that locks several of them does, so two
// such writers never wait for each other in a cycle.
func requireIDs(ctx context.Context, tx pgx.Tx, table string, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	var found, want int
	err := tx.QueryRow(ctx, `
		WITH locked AS (SELECT id FROM `+table+` WHERE id = ANY($1) ORDER BY id FOR KEY SHARE)
		SELECT (SELECT count(*) FROM locked), (SELECT count(DISTINCT id) FROM unnest($1::bigint[]) AS want(id))`,
		ids).Scan(&found, &want)
	if err != nil {
		return fmt.Errorf("check %s ids: %w", table, err)
	}
	if found != want {
		return apperr.Wrap(apperr.Invalid, apperr.MsgMissingParams, fmt.Errorf("unknown %s id in %v", table, ids))
	}
	return nil
}

// DeleteUser deletes user id with everything that is theirs (sessions, OAuth
// connections, roles, the locks they hold and the lock on them: the schema cascades)
// as actorID asks, and records in the same transaction that their stored pictures are
// to be purged (user_purges; userpurges.go): the row stops pointing at the pictures
// before any is removed, and what the purge must do survives a crash after the commit.
// Only a full admin deletes a full admin, and never the last one: apperr.Forbidden.
func (db *DB) DeleteUser(ctx context.Context, id, actorID int64) error {
	return db.inTx(ctx, func(tx pgx.Tx) error {
		_, admins, err := mayActOn(ctx, tx, id, actorID)
		if err != nil {
			return err
		}
		var deleted int64
		err = tx.QueryRow(ctx, deleteUserSQL, id).Scan(&deleted)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return apperr.New(apperr.NotFound, apperr.MsgUserNotFound)
		case err != nil:
			return fmt.Errorf("delete user %d: %w", id, err)
		}
		return keepAFullAdmin(ctx, tx, admins)
	})
}

// mayActOn takes the access lock, loads the actor and refuses, as apperr.Forbidden,
// an actor who is not a full admin acting on one. It returns the actor and whether
// there was a full admin before.
func mayActOn(ctx context.Context, tx pgx.Tx, id, actorID int64) (actor, bool, error) {
	a, admins, err := lockAccess(ctx, tx, actorID)
	if err != nil || a.fullAdmin {
		return a, admins, err
	}
	target, err := isFullAdmin(ctx, tx, id)
	if err != nil {
		return actor{}, false, err
	}
	if target {
		return actor{}, false, forbidden("user %d is not a full admin and may not act on full admin %d", actorID, id)
	}
	return a, admins, nil
}

// LogoutUser revokes every session of user id, as actorID asks, so their refresh
// tokens stop working at once, and undoes what revoked sessions (this logout's and
// earlier ones') did to the account's provider links, so that whoever held one of
// them cannot log in again through a provider they linked, nor keep the owner out by
// an unlink:
//
//   - every link a revoked session made (LinkProvider) is removed, even when it is the
//     account's last way to log in: that is what a stolen cookie would leave behind;
//   - every link a revoked session unlinked (UnlinkProvider) is put back, unless a
//     revoked session had made it too. Where the provider account is meanwhile linked
//     to another user, it moves back only when it signed that user up after it was
//     linked here and that user holds nothing but the default role (the owner's own
//     stand-in account, made because their login stopped reaching this one; see
//     restoreLink); otherwise the other user keeps it and the link stays pending,
//     for a later logout once the account is free.
//
// It returns what it removed and put back and the ways to log in left. Unlinks and
// links of the user wait for it, and logins through a provider take turns with it
// (the user's row is locked: UnlinkProvider, LinkProvider, CreateLoginSession).
// Unknown user: apperr.NotFound; a full admin logged out by someone who is not one:
// apperr.Forbidden.
func (db *DB) LogoutUser(ctx context.Context, id, actorID int64) (catalog.Logout, error) {
	var out catalog.Logout
	err := db.inTx(ctx, func(tx pgx.Tx) error {
		out = catalog.Logout{}
		if _, _, err := mayActOn(ctx, tx, id, actorID); err != nil {
			return err
		}
		var hasPassword bool
		err := tx.QueryRow(ctx, `SELECT password_hash IS NOT NULL FROM users WHERE id = $1 FOR UPDATE`, id).Scan(&hasPassword)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return apperr.New(apperr.NotFound, apperr.MsgUserNotFound)
		case err != nil:
			return fmt.Errorf("log out user %d: %w", id, err)
		}
		// Every session, expired ones too: a session that made a change and expired
		// unrevoked is undone like the others.
		if _, err := tx.Exec(ctx, `UPDATE sessions SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL`, id); err != nil {
			return fmt.Errorf("revoke the sessions of user %d: %w", id, err)
		}
		rows, _ := tx.Query(ctx, `
			WITH removed AS (
				DELETE FROM oauth_connections c USING sessions s
				WHERE c.user_id = $1 AND s.id = c.linked_session AND s.user_id = $1 AND s.revoked_at IS NOT NULL
				RETURNING c.provider, c.provider_username
			)
			SELECT provider, provider_username FROM removed ORDER BY provider`, id)
		if out.Removed, err = pgx.CollectRows(rows, pgx.RowToStructByName[catalog.LinkRemoved]); err != nil {
			return fmt.Errorf("remove the links of user %d's revoked sessions: %w", id, err)
		}
		if out.Restored, err = restoreLinks(ctx, tx, id); err != nil {
			return err
		}
		if hasPassword {
			out.Left = append(out.Left, "password")
		}
		rows, _ = tx.Query(ctx, `SELECT provider FROM oauth_connections WHERE user_id = $1 ORDER BY provider`, id)
		left, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return fmt.Errorf("list the links left to user %d: %w", id, err)
		}
		out.Left = append(out.Left, left...)
		return nil
	})
	if err != nil {
		return catalog.Logout{}, err
	}
	return out, nil
}

// unlinked is a link that a revoked session unlinked, as oauth_unlinks keeps it.
type unlinked struct {
	Provider         string
	ProviderUserID   string
	ProviderUsername string
	ProviderEmail    *string
	ProviderAvatar   *string
	LinkedAt         time.Time
	LinkedSession    *string
}

// restoreLinks puts back, for the forced logout of user id (its row locked, every
// session revoked), the links that revoked sessions unlinked: per provider the latest
// such unlink whose link no revoked session made (those are forgotten: the logout
// would remove them again). A link put back is forgotten with the older unlinks of its
// provider; one left pending stays.
func restoreLinks(ctx context.Context, tx pgx.Tx, id int64) ([]catalog.LinkRestored, error) {
	if _, err := tx.Exec(ctx, `
		DELETE FROM oauth_unlinks u USING sessions s
		WHERE u.user_id = $1 AND s.id = u.linked_session AND s.user_id = $1 AND s.revoked_at IS NOT NULL`, id); err != nil {
		return nil, fmt.Errorf("forget the unlinks of links user %d's revoked sessions made: %w", id, err)
	}
	rows, _ := tx.Query(ctx, `
		SELECT DISTINCT ON (u.provider) u.provider, u.provider_user_id, u.provider_username, u.provider_email,
		       u.provider_avatar, u.linked_at, u.linked_session::text
		FROM oauth_unlinks u JOIN sessions s ON s.id = u.unlinked_session
		WHERE u.user_id = $1 AND s.user_id = $1 AND s.revoked_at IS NOT NULL
		ORDER BY u.provider, u.unlinked_at DESC, u.id DESC`, id)
	pending, err := pgx.CollectRows(rows, pgx.RowToStructByName[unlinked])
	if err != nil {
		return nil, fmt.Errorf("read the unlinks of user %d's revoked sessions: %w", id, err)
	}
	var out []catalog.LinkRestored
	var done []string
	for _, l := range pending {
		r, err := restoreLink(ctx, tx, id, l)
		if err != nil {
			return nil, err
		}
		if r.Outcome == catalog.RestoreRestored || r.Outcome == catalog.RestoreMoved || r.Outcome == "" {
			done = append(done, l.Provider)
		}
		if r.Outcome != "" {
			out = append(out, r)
		}
	}
	if len(done) > 0 {
		if _, err := tx.Exec(ctx, `DELETE FROM oauth_unlinks WHERE user_id = $1 AND provider = ANY($2)`, id, done); err != nil {
			return nil, fmt.Errorf("forget the unlinks put back to user %d: %w", id, err)
		}
	}
	return out, nil
}

// restoreAttempts bounds the retries of a link's restoration that lost a race: to a
// sign-up through the provider account, or to an unlink by the account's other user.
const restoreAttempts = 3

// restoreLink puts the unlinked link l back to user id, or says why not. The outcome
// is "" when the user has that very account linked already (nothing to do).
//
// Where the provider account is another user's (W), who controls it decides: a login
// is the provider's word that whoever signs in holds the account, and a stolen cookie
// gives the intruder the session, never the owner's provider account. So when a
// revoked session unlinked it, its holder is still this account's owner, and a user
// it signed up afterwards (the owner's next login, which no longer reached this
// account, made "jane-doe-2") is that same person's stand-in: the link moves back, W
// loses it (W keeps any other way to log in), and W is left for an admin to delete.
// That holds only for a W the provider account signed up (its link made at W's
// creation, by no session) after it was linked here, holding nothing but the default
// role (not a full-admin one): a W it was linked to from a session, or that an admin
// has given roles, is an account someone chose to use, which a logout of another user
// does not take apart (and a W with more than the default role could be a full admin,
// whose account only a full admin changes). Then W keeps the account, the link stays
// pending, and the admin decides: once W is deleted, or W's holder has unlinked it, a
// logout of this user puts it back.
//
// Lock order: this user's row (the caller's), then W's row, then the account's link,
// as W's own unlink locks W before its links; the account's owner is read again under
// W's lock.
func restoreLink(ctx context.Context, tx pgx.Tx, id int64, l unlinked) (catalog.LinkRestored, error) {
	r := catalog.LinkRestored{Provider: l.Provider, ProviderUsername: l.ProviderUsername}
	for attempt := 1; ; attempt++ {
		var owner int64
		var hasProvider bool
		err := tx.QueryRow(ctx, `
			SELECT coalesce((SELECT user_id FROM oauth_connections WHERE provider = $2 AND provider_user_id = $3), 0),
			       EXISTS (SELECT 1 FROM oauth_connections WHERE user_id = $1 AND provider = $2)`,
			id, l.Provider, l.ProviderUserID).Scan(&owner, &hasProvider)
		if err != nil {
			return r, fmt.Errorf("find the %s account to put back to user %d: %w", l.Provider, id, err)
		}
		switch {
		case owner == id:
			return catalog.LinkRestored{}, nil
		case hasProvider:
			r.Outcome = catalog.RestoreAlreadyLinked
			return r, nil
		case owner == 0:
			tag, err := tx.Exec(ctx, `
				INSERT INTO oauth_connections (user_id, provider, provider_user_id, provider_username,
				                               provider_email, provider_avatar, linked_at, linked_session)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8::uuid)
				ON CONFLICT DO NOTHING`,
				id, l.Provider, l.ProviderUserID, l.ProviderUsername, l.ProviderEmail, l.ProviderAvatar, l.LinkedAt, l.LinkedSession)
			if err != nil {
				return r, fmt.Errorf("put %s back to user %d: %w", l.Provider, id, err)
			}
			if tag.RowsAffected() == 1 {
				r.Outcome = catalog.RestoreRestored
				return r, nil
			}
			// A sign-up through the account committed meanwhile: look again.
		default:
			moved, again, err := moveLink(ctx, tx, id, owner, l)
			if err != nil {
				return r, err
			}
			if !again {
				r.OtherUser = owner
				r.Outcome = catalog.RestoreLinkedElsewhere
				if moved {
					r.Outcome = catalog.RestoreMoved
				}
				return r, nil
			}
		}
		if attempt == restoreAttempts {
			return r, fmt.Errorf("put %s back to user %d: the account's link kept changing", l.Provider, id)
		}
	}
}

// moveLink moves the provider account of l from user w to user id when w is id's
// owner's stand-in (see restoreLink). w's row is locked first, in a statement of its
// own, so that the check after it sees what a write of w that held it (w's own unlink
// of the account) committed. again: the account was no longer w's once w was locked.
func moveLink(ctx context.Context, tx pgx.Tx, id, w int64, l unlinked) (moved, again bool, err error) {
	var exists bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM users WHERE id = $1 FOR UPDATE)`, w).Scan(&exists); err != nil {
		return false, false, fmt.Errorf("lock user %d: %w", w, err)
	}
	if !exists {
		return false, true, nil // w is gone, and the account with it
	}
	var standIn bool
	err = tx.QueryRow(ctx, `
		SELECT c.linked_session IS NULL AND c.linked_at = u.registered AND u.registered > $4
		       AND NOT EXISTS (SELECT 1 FROM user_roles ur JOIN roles r ON r.id = ur.role_id
		                       WHERE ur.user_id = u.id AND (NOT r.is_default OR r.full_admin))
		FROM users u JOIN oauth_connections c ON c.user_id = u.id
		WHERE u.id = $1 AND c.provider = $2 AND c.provider_user_id = $3`, w, l.Provider, l.ProviderUserID, l.LinkedAt).Scan(&standIn)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return false, true, nil
	case err != nil:
		return false, false, fmt.Errorf("check user %d's %s link: %w", w, l.Provider, err)
	case !standIn:
		return false, false, nil
	}
	tag, err := tx.Exec(ctx, `DELETE FROM oauth_connections WHERE provider = $1 AND provider_user_id = $2 AND user_id = $3`,
		l.Provider, l.ProviderUserID, w)
	if err != nil {
		return false, false, fmt.Errorf("take %s from user %d: %w", l.Provider, w, err)
	}
	if tag.RowsAffected() != 1 {
		return false, true, nil
	}
	if _, err := tx.Exec(ctx, `
		INSERT INTO oauth_connections (user_id, provider, provider_user_id, provider_username,
		                               provider_email, provider_avatar, linked_at, linked_session)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8::uuid)`,
		id, l.Provider, l.ProviderUserID, l.ProviderUsername, l.ProviderEmail, l.ProviderAvatar, l.LinkedAt, l.LinkedSession); err != nil {
		return false, false, fmt.Errorf("move %s from user %d back to user %d: %w", l.Provider, w, id, err)
	}
	return true, false, nil
}

// UserName returns the username of user id. Unknown: apperr.NotFound.
func (db *DB) UserName(ctx context.Context, id int64) (string, error) {
	var name string
	err := db.Pool.QueryRow(ctx, `SELECT username FROM users WHERE id = $1`, id).Scan(&name)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return "", apperr.New(apperr.NotFound, apperr.MsgUserNotFound)
	case err != nil:
		return "", fmt.Errorf("find user %d: %w", id, err)
	}
	return name, nil
}

// Grant is what GrantRole did: the user's and the role's names (for the operator to
// check the ids were the intended ones) and whether the user lacked the role.
type Grant struct {
	Username string
	RoleName string
	Granted  bool
}

// GrantRole gives user userID the role roleID, by ids (names can be changed by
// admins, ids cannot), under the access lock like every change of role assignments.
// It is the operator's command (the first admin of a new deployment), so no access
// rule applies. Unknown user or role: apperr.NotFound.
func (db *DB) GrantRole(ctx context.Context, userID, roleID int64) (Grant, error) {
	var g Grant
	err := db.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, accessLockKey); err != nil {
			return fmt.Errorf("take the access lock: %w", err)
		}
		var user, role *string
		err := tx.QueryRow(ctx, `
			WITH u AS (SELECT id, username FROM users WHERE id = $1),
			     r AS (SELECT id, name FROM roles WHERE id = $2),
			     granted AS (
					INSERT INTO user_roles (user_id, role_id) SELECT u.id, r.id FROM u, r
					ON CONFLICT DO NOTHING RETURNING 1
				 )
			SELECT (SELECT username FROM u), (SELECT name FROM r), EXISTS (SELECT 1 FROM granted)`,
			userID, roleID).Scan(&user, &role, &g.Granted)
		switch {
		case err != nil:
			return fmt.Errorf("grant role %d to user %d: %w", roleID, userID, err)
		case user == nil:
			return apperr.New(apperr.NotFound, apperr.MsgUserNotFound)
		case role == nil:
			return apperr.New(apperr.NotFound, MsgRoleNotFound)
		}
		g.Username, g.RoleName = *user, *role
		return nil
	})
	if err != nil {
		return Grant{}, err
	}
	return g, nil
}
