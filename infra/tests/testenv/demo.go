package testenv

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/mediacatalog/service/infra/local/demo"
	"github.com/mediacatalog/service/shared/httpapi"
	"github.com/mediacatalog/service/shared/postgres"
)

// NewDemoDB is NewDB with the demo data loaded (client 1's catalog; users admin,
// editor, member; the OpenAPI document's permissions and roles).
func NewDemoDB(t testing.TB, opts ...postgres.Option) *DB {
	t.Helper()
	db := NewDB(t, opts...)
	if err := demo.Load(context.Background(), db.DB); err != nil {
		t.Fatalf("testenv: demo data: %v", err)
	}
	return db
}

// Text runs a query whose one row and column is read as text (use ::text or
// jsonb in the SQL), failing the test on error.
func (db *DB) Text(t testing.TB, sql string, args ...any) string {
	t.Helper()
	var out string
	if err := db.Pool.QueryRow(context.Background(), sql, args...).Scan(&out); err != nil {
		t.Fatalf("query %.80q: %v", sql, err)
	}
	return out
}

// Int runs a query whose one row and column is an integer, failing the test on error.
func (db *DB) Int(t testing.TB, sql string, args ...any) int64 {
	t.Helper()
	var out int64
	if err := db.Pool.QueryRow(context.Background(), sql, args...).Scan(&out); err != nil {
		t.Fatalf("query %.80q: %v", sql, err)
	}
	return out
}

// Exec runs a statement, failing the test on error.
func (db *DB) Exec(t testing.TB, sql string, args ...any) {
	t.Helper()
	if _, err := db.Pool.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("exec %.80q: %v", sql, err)
	}
}

// Fixture runs a test's setup statements (a bulk load of generated rows) in one
// transaction without the connections' statement_timeout: that guard bounds a request's
// queries, and a fixture that a loaded machine slows past it would fail the test for
// the machine's sake, not the code's.
func (db *DB) Fixture(t testing.TB, sql string) {
	t.Helper()
	if err := pgx.BeginFunc(context.Background(), db.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(context.Background(), "SET LOCAL statement_timeout = 0"); err != nil {
			return err
		}
		_, err := tx.Exec(context.Background(), sql)
		return err
	}); err != nil {
		t.Fatalf("fixture %.80q: %v", sql, err)
	}
}

// Message decodes a Response Model body, failing the test when it is not one.
func Message(t testing.TB, body []byte) httpapi.Response {
	t.Helper()
	var r httpapi.Response
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("not a Response Model: %v: %.200s", err, body)
	}
	return r
}
