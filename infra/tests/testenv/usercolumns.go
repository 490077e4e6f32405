package testenv

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
)

// UserColumn is a column of the schema that names a user: one of a foreign key to
// users, or an integer column called user_id, *_user_id or *_by.
type UserColumn struct {
	Table, Column string
	OnDelete      string // the foreign key's confdeltype ("c" cascades), "" without one
}

// UserColumns are the columns of the database's schema that name a user (users.id
// itself aside), read from the catalog, so that a table added by a migration is among
// them.
func (db *DB) UserColumns(t testing.TB) []UserColumn {
	t.Helper()
	rows, _ := db.Pool.Query(context.Background(), `
		SELECT c.relname AS table, a.attname AS column,
		       coalesce((SELECT con.confdeltype::text FROM pg_constraint con
		                 WHERE con.contype = 'f' AND con.conrelid = c.oid AND con.confrelid = 'users'::regclass
		                   AND a.attnum = ANY (con.conkey) LIMIT 1), '') AS on_delete
		FROM pg_attribute a
		JOIN pg_class c ON c.oid = a.attrelid
		JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped
		  AND c.relname <> 'users'
		  AND (EXISTS (SELECT 1 FROM pg_constraint con WHERE con.contype = 'f' AND con.conrelid = c.oid
		               AND con.confrelid = 'users'::regclass AND a.attnum = ANY (con.conkey))
		       OR a.atttypid IN ('bigint'::regtype, 'integer'::regtype)
		          AND (a.attname = 'user_id' OR a.attname LIKE '%\_user\_id' OR a.attname LIKE '%\_by'))
		ORDER BY 1, 2`)
	cols, err := pgx.CollectRows(rows, pgx.RowToStructByPos[UserColumn])
	if err != nil {
		t.Fatalf("testenv: the columns that name a user: %v", err)
	}
	return cols
}

// RowsNamingUser counts, by "table.column", the rows of UserColumns that name user id
// (columns without one are left out).
func (db *DB) RowsNamingUser(t testing.TB, id int64) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, c := range db.UserColumns(t) {
		if n := db.Int(t, fmt.Sprintf(`SELECT count(*) FROM %s WHERE %s = $1`,
			pgx.Identifier{c.Table}.Sanitize(), pgx.Identifier{c.Column}.Sanitize()), id); n > 0 {
			out[c.Table+"."+c.Column] = n
		}
	}
	return out
}
