package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/catalog"
	"github.com/mediacatalog/service/shared/namekey"
)

// MsgUsernameTaken is the spec's 409 of a user edit with a used username.
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
	limit, offset := fmt.Sprintf("$%d", len(args)+1), fmt.Sprintf("$%d", len(args)+2)
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
						` + pageQuery("u.id", from, where, order, pageTotal("list_total"), limit, offset, q.Offset == 0) + `
					) k
					JOIN users u ON u.id = k.id
				) p
			), '[]') AS users`
	rows, _ := db.Pool.Query(ctx, sql, append(args, q.Limit, q.Offset)...)
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
// arguments, numbered from $1.
func userFilter(q catalog.UserQuery) (string, []any) {
	var conds []string
	var args []any
	if q.Search != "" {
		args = append(args, q.Search)
		conds = append(conds, fmt.Sprintf("u.search LIKE search_pattern($%d)", len(args)))
	}
	if q.Role != 0 {
		args = append(args, q.Role)
		conds = append(conds, fmt.Sprintf(
			"EXISTS (SELECT 1 FROM user_roles f WHERE f.user_id = u.id AND f.role_id = $%d)", len(args)))
	}
	if len(conds) == 0 {
		return "TRUE", nil
	}
	return strings.Join(conds, " AND "), args
}

// User returns the detail of user id: their roles and whether they have a live
// session, in one query. The same statement takes or refreshes the user's edit lock as
// lock asks (see lockCTE); the zero LockRequest only reads.
func (db *DB) User(ctx context.Context, id int64, lock catalog.LockRequest) (catalog.User, error) {
	sql := `
		WITH ` + lockCTE(userLocks, "$1", "$2", "$3") + `
		SELECT u.id, u.slug, u.username, u.age_verified, u.profile_image, u.registered,
		       coalesce(jsonb_agg(jsonb_build_object('id', r.id, 'name', r.name, 'description', r.description)
		                          ORDER BY r.name, r.id) FILTER (WHERE r.id IS NOT NULL), '[]') AS roles,
		       EXISTS (SELECT 1 FROM sessions s
		               WHERE s.user_id = u.id AND s.revoked_at IS NULL AND s.expires_at > now()) AS logged_in
		FROM users u
		LEFT JOIN user_roles ur ON ur.user_id = u.id
		LEFT JOIN roles r ON r.id = ur.role_id
		WHERE u.id = $1
		GROUP BY u.id`
	rows, _ := db.Pool.Query(ctx, sql, id, lock.By, lock.TTL)
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

// requireIDs reports apperr.Invalid unless every id names a row of table (a constant).
func requireIDs(ctx context.Context, tx pgx.Tx, table string, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	var missing bool
	err := tx.QueryRow(ctx, `
		SELECT EXISTS (SELECT 1 FROM unnest($1::bigint[]) AS want(id)
		               WHERE NOT EXISTS (SELECT 1 FROM `+table+` t WHERE t.id = want.id))`, ids).Scan(&missing)
	if err != nil {
		return fmt.Errorf("check %s ids: %w", table, err)
	}
	if missing {
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

// LogoutUser revokes every live session of user id, as actorID asks, so their refresh
// tokens stop working at once, and removes the provider links those sessions made
// (LinkProvider), so that whoever held one cannot log in again through a provider it
// linked; it returns the links removed and the one kept. The account's last way to log
// in stays: when the user has no password and those links are all they have, the
// earliest of them is kept. Unlinks of the user wait for it (the user's row is
// locked, as UnlinkProvider locks it). Unknown user: apperr.NotFound; a full admin
// logged out by someone who is not one: apperr.Forbidden.
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
		rows, _ := tx.Query(ctx, `
			WITH revoked AS (
				UPDATE sessions SET revoked_at = now()
				WHERE user_id = $1 AND revoked_at IS NULL
				RETURNING id
			)
			SELECT c.id, c.provider, c.provider_username,
			       c.linked_session IN (SELECT id FROM revoked) AS by_revoked
			FROM oauth_connections c WHERE c.user_id = $1
			ORDER BY c.linked_at, c.id`, id)
		conns, err := pgx.CollectRows(rows, pgx.RowToStructByName[struct {
			catalog.LinkRemoved
			ID        int64
			ByRevoked *bool // NULL: linked at sign-up
		}])
		if err != nil {
			return fmt.Errorf("log out user %d: %w", id, err)
		}
		// The links the revoked sessions made go; the earliest of them stays when
		// nothing else would let the user log in (conns are in link order).
		var made []int64
		others := 0
		for _, c := range conns {
			if c.ByRevoked != nil && *c.ByRevoked {
				made = append(made, c.ID)
				out.Removed = append(out.Removed, c.LinkRemoved)
			} else {
				others++
			}
		}
		if !hasPassword && others == 0 && len(made) > 0 {
			kept := out.Removed[0]
			out.Kept = &kept
			made, out.Removed = made[1:], out.Removed[1:]
		}
		if len(made) == 0 {
			return nil
		}
		if _, err := tx.Exec(ctx, `DELETE FROM oauth_connections WHERE id = ANY($1)`, made); err != nil {
			return fmt.Errorf("remove the links of user %d's revoked sessions: %w", id, err)
		}
		return nil
	})
	if err != nil {
		return catalog.Logout{}, err
	}
	return out, nil
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
