package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/mediacatalog/service/shared/postgres"
)

// TestUserKeyedTables: every column of the migrated schema that names a user either
// belongs to a foreign key to users that cascades (the deletion removes its rows) or is
// the user_id of a table of postgres.UserTablesWithoutForeignKey (FinishUserPurge
// removes its rows). A new table keyed by a user fails here until it is one or the
// other. Then a user with a row in every such table is deleted and purged: no row of
// any of them names them.
func TestUserKeyedTables(t *testing.T) {
	ctx := context.Background()
	db := acctDB(t, nil)
	cols := db.UserColumns(t)
	if len(cols) < 6 {
		t.Fatalf("%d columns name a user, want at least the six of the accounts: %v", len(cols), cols)
	}
	listed := map[string]bool{}
	for _, c := range cols {
		switch {
		case c.OnDelete == "c":
		case c.OnDelete != "":
			t.Errorf("%s.%s: a foreign key to users with ON DELETE %q: the deletion must take the row (CASCADE)", c.Table, c.Column, c.OnDelete)
		case c.Column == "user_id" && slices.Contains(postgres.UserTablesWithoutForeignKey, c.Table):
			listed[c.Table] = true
		default:
			t.Errorf("%s.%s names a user without a cascading foreign key and is not in postgres.UserTablesWithoutForeignKey: "+
				"a deleted user's rows would stay", c.Table, c.Column)
		}
	}
	for _, table := range postgres.UserTablesWithoutForeignKey {
		if !listed[table] {
			t.Errorf("UserTablesWithoutForeignKey lists %s, which has no user_id column", table)
		}
	}

	const id = 2 // the editor, with a row in every table that names a user
	acctExec(t, db, `UPDATE users SET profile_image = 'users/2/aaaaaaaaaaaaaaaa-00000000.jpg' WHERE id = $1`, id)
	acctExec(t, db, `INSERT INTO avatar_invalidations (user_id, ref) VALUES ($1, 'users/2/aaaaaaaaaaaaaaaa-00000000.jpg')`, id)
	acctExec(t, db, `INSERT INTO sessions (user_id, expires_at) VALUES ($1, now() + interval '1 day')`, id)
	acctExec(t, db, `INSERT INTO oauth_connections (user_id, provider, provider_user_id, provider_username) VALUES ($1, 'github', '42', 'e')`, id)
	acctExec(t, db, `INSERT INTO oauth_unlinks (user_id, provider, provider_user_id, provider_username, linked_at, unlinked_session)
		VALUES ($1, 'google', 'g-2', 'e', now() - interval '1 day', gen_random_uuid())`, id)
	acctExec(t, db, `INSERT INTO user_locks (user_id, locked_by, expires_at) VALUES (3, $1, now() + interval '1 hour'), ($1, 1, now() + interval '1 hour')`, id)
	acctExec(t, db, `INSERT INTO contributor_locks (contributor_id, locked_by, expires_at)
		SELECT id, $1, now() + interval '1 hour' FROM contributors ORDER BY id LIMIT 1`, id)
	count := func() map[string]int64 { return db.RowsNamingUser(t, id) }
	before := count()
	for _, c := range cols {
		if before[c.Table+"."+c.Column] == 0 && c.Table != "user_purges" {
			t.Errorf("the test puts no row in %s.%s: add one", c.Table, c.Column)
		}
	}

	if err := db.DeleteUser(ctx, id, 1); err != nil {
		t.Fatal(err)
	}
	// Until the purge is done: its record, and the ledger told to invalidate once.
	if got, want := fmt.Sprint(count()), "map[avatar_invalidations.user_id:1 user_purges.user_id:1]"; got != want {
		t.Errorf("after the deletion, rows %s, want %s", got, want)
	}
	if ref := db.Text(t, `SELECT coalesce(ref, 'NULL') FROM avatar_invalidations WHERE user_id = $1`, id); ref != "NULL" {
		t.Errorf("ledger ref %q after the deletion, want NULL (the next claim invalidates)", ref)
	}
	if claimed, err := db.ClaimAvatarInvalidation(ctx, id); err != nil || !claimed {
		t.Errorf("claim after the deletion: %v, %v; want the deleted user's picture invalidated", claimed, err)
	}
	if err := db.FinishUserPurge(ctx, id); err != nil {
		t.Fatal(err)
	}
	if got := count(); len(got) != 0 {
		t.Errorf("after the purge, rows still name the deleted user: %v", got)
	}
	if claimed, err := db.ClaimAvatarInvalidation(ctx, id); err != nil || claimed {
		t.Errorf("claim after the purge: %v, %v; want nothing more to invalidate", claimed, err)
	}
	if n := acctInt(t, db, `SELECT count(*) FROM avatar_invalidations WHERE user_id = $1`, id); n != 0 {
		t.Errorf("the claim after the purge left %d ledger rows", n)
	}
}

// TestPendingUserPurges: a deletion's own purge first, whatever its age; then those
// older than a minute, oldest id first, at most as many as asked; a live user's
// FinishUserPurge removes nothing.
func TestPendingUserPurges(t *testing.T) {
	ctx := context.Background()
	db := acctDB(t, nil)
	acctExec(t, db, `INSERT INTO user_purges (user_id, deleted_at) VALUES
		(500, now()), (501, now() - interval '2 minutes'), (502, now() - interval '1 hour'),
		(503, now() - interval '1 day'), (504, now() - interval '30 seconds')`)
	for _, tc := range []struct {
		id     int64
		others int
		want   string
	}{
		{500, 2, "[500 501 502]"},
		{504, 5, "[504 501 502 503]"},
		{502, 5, "[502 501 503]"},
		{999, 1, "[501]"},
		{500, 0, "[500]"},
	} {
		got, err := db.PendingUserPurges(ctx, tc.id, tc.others)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != tc.want {
			t.Errorf("PendingUserPurges(%d, %d) = %v, want %s", tc.id, tc.others, got, tc.want)
		}
	}
	acctExec(t, db, `INSERT INTO user_purges (user_id) VALUES (3)`)
	acctExec(t, db, `INSERT INTO avatar_invalidations (user_id, ref) VALUES (3, '')`)
	if err := db.FinishUserPurge(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if n := acctInt(t, db, `SELECT (SELECT count(*) FROM user_purges WHERE user_id = 3) + (SELECT count(*) FROM avatar_invalidations WHERE user_id = 3)`); n != 2 {
		t.Errorf("FinishUserPurge of a live user removed rows: %d of 2 left", n)
	}
}
