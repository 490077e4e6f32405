// Package namekey is the key two usernames share when they differ only by case,
// compatibility forms or confusable characters, and the batched job that writes it to
// the users' rows (users.name_key, migration 00025), where an OAuth sign-up looks it up
// by index instead of keying every username.
package namekey

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/mtibben/confusables"
	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// Key is what two usernames share when they differ only by case or by confusable
// characters: the Unicode TR39 skeleton (github.com/mtibben/confusables, the Unicode
// confusables table) of the name case-folded (golang.org/x/text/cases) and in NFKC
// (fullwidth and other compatibility forms as their plain letters and digits), folded
// again since a skeleton may map to capitals. "Admin", "ADMIN", "аdmin" (Cyrillic а),
// "ａdmin" (fullwidth) and "adrnin" all have the key of "admin".
//
// A name of ASCII characters only (most are, and every generated one) is keyed a
// character at a time from asciiKeys: for ASCII, folding, NFKC and the decompositions
// of the skeleton act on each character alone, and the table lookups keep the
// backfill of every user's key short.
func Key(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return UnicodeKey(s)
		}
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); i++ {
		b.WriteString(asciiKeys[s[i]])
	}
	return b.String()
}

// UnicodeKey is Key by the general path, for any name.
func UnicodeKey(s string) string {
	fold := cases.Fold()
	return fold.String(confusables.Skeleton(norm.NFKC.String(fold.String(s))))
}

// asciiKeys is the key of each ASCII character alone.
var asciiKeys = func() (keys [utf8.RuneSelf]string) {
	for c := range keys {
		keys[c] = UnicodeKey(string(rune(c)))
	}
	return keys
}()

// Querier runs a query: a pgx.Tx, a *pgx.Conn or a *pgxpool.Pool.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// SignUpLock is the transaction-scoped advisory lock that the writers of new
// usernames (a sign-up, an admin's rename) take before they look for a name keyed like
// theirs, so that each sees the names the others wrote.
const SignUpLock = `SELECT pg_advisory_xact_lock(hashtextextended('users.signup', 0))`

// TakenByOther reports whether a user other than user except has a username keyed
// like name: the rule a sign-up's name follows, which an admin's rename follows too.
// It reads by index the rows whose key is name's, and keys itself the rows whose key
// is not written yet (none once Fill has run). Call it under SignUpLock.
func TakenByOther(ctx context.Context, q Querier, name string, except int64) (bool, error) {
	key := Key(name)
	rows, _ := q.Query(ctx, `
		SELECT username, name_key IS NOT NULL FROM users
		WHERE (name_key = $1 OR name_key IS NULL) AND id <> $2`, key, except)
	defer rows.Close()
	for rows.Next() {
		var username string
		var keyed bool
		if err := rows.Scan(&username, &keyed); err != nil {
			return false, fmt.Errorf("names keyed like %q: %w", name, err)
		}
		if keyed || Key(username) == key {
			return true, nil
		}
	}
	if err := rows.Err(); err != nil {
		return false, fmt.Errorf("names keyed like %q: %w", name, err)
	}
	return false, nil
}

// Beginner starts transactions: a *pgx.Conn or a *pgxpool.Pool.
type Beginner interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}

// Batch is how many users one transaction of Fill keys.
const Batch = 500

// Fill writes the key of every user whose name_key is NULL: the rows from before
// migration 00025, those written since by code that does not write the key (the
// previous release during a deploy, a plain SQL insert), and those whose username an
// UPDATE changed without the key (a trigger clears it). The key is computed here, in
// Go, since the confusables table is Go's; so `make migrate` runs Fill after the SQL
// migrations (migrate.Up), and the generator after loading users.
//
// It works in batches of Batch rows in id order, each its own short transaction under
// the writers' timeouts, walking the partial index of the rows without a key, so a
// rerun after an interruption does only what is left, and a run with nothing left
// reads nothing. A row renamed between the read and the write keeps NULL (the write
// is conditional on the name read) and is picked up by the next run. It returns the
// number of rows keyed.
func Fill(ctx context.Context, db Beginner) (int64, error) {
	var done int64
	var after int64
	for {
		start := time.Now()
		n, last, err := fillBatch(ctx, db, after)
		done += n
		if err != nil {
			return done, err
		}
		if last == 0 {
			return done, nil
		}
		after = last
		// Twice as long a pause as the batch took: a batch rewrites its rows with every
		// index entry of theirs (the trigram indexes of the username among them, whose
		// pending lists it fills) and their WAL, and the service's own statements get the
		// disk and the processors two thirds of the time meanwhile.
		select {
		case <-ctx.Done():
			return done, ctx.Err()
		case <-time.After(min(2*time.Since(start), 2*time.Second)):
		}
	}
}

// fillBatch keys the next Batch rows without a key after id after and returns how
// many it keyed and the last id it read (0 when none was left).
func fillBatch(ctx context.Context, db Beginner, after int64) (int64, int64, error) {
	tx, err := db.Begin(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("name keys: %w", err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // after Commit, a no-op
	// A small pending list for the trigram indexes: their entries are merged into the
	// index when the list outgrows it, in the statement that outgrew it, and a short
	// list makes many short merges of one long one that the service's reads wait out.
	if _, err := tx.Exec(ctx, `SET LOCAL lock_timeout = '1s'; SET LOCAL statement_timeout = '5s';
		SET LOCAL gin_pending_list_limit = '128kB'`); err != nil {
		return 0, 0, fmt.Errorf("name keys: %w", err)
	}
	rows, _ := tx.Query(ctx, `
		SELECT id, username FROM users WHERE name_key IS NULL AND id > $1
		ORDER BY id LIMIT $2`, after, Batch)
	var ids []int64
	var names, keys []string
	for rows.Next() {
		var id int64
		var name string
		if err := rows.Scan(&id, &name); err != nil {
			return 0, 0, fmt.Errorf("name keys: %w", err)
		}
		ids, names, keys = append(ids, id), append(names, name), append(keys, Key(name))
	}
	if err := rows.Err(); err != nil {
		return 0, 0, fmt.Errorf("name keys: read users after %d: %w", after, err)
	}
	if len(ids) == 0 {
		return 0, 0, nil
	}
	tag, err := tx.Exec(ctx, `
		UPDATE users u SET name_key = v.key
		FROM unnest($1::bigint[], $2::text[], $3::text[]) AS v(id, username, key)
		WHERE u.id = v.id AND u.username = v.username AND u.name_key IS NULL`, ids, names, keys)
	if err != nil {
		return 0, 0, fmt.Errorf("name keys: write users %d..%d: %w", ids[0], ids[len(ids)-1], err)
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, 0, fmt.Errorf("name keys: %w", err)
	}
	return tag.RowsAffected(), ids[len(ids)-1], nil
}
