package postgres_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/catalog"
	"github.com/mediacatalog/service/shared/postgres"
)

// TestUsernamesUniqueWithoutCase: under the C locale, lower() left non-ASCII letters as
// they were, so "Émile" and "émile" (or a Greek capital alpha posing as A) were two
// users. Migration 00018 makes the Unicode lowercase unique.
func TestUsernamesUniqueWithoutCase(t *testing.T) {
	ctx := context.Background()
	db := acctDB(t, nil)
	acctExec(t, db, `INSERT INTO users (id, slug, username) VALUES (10, 'emile', 'Émile'), (11, 'alpha', 'ΑLPHA')`)
	for _, name := range []string{"émile", "éMILE", "αlpha", "αLPHA"} {
		_, err := db.Pool.Exec(ctx, `INSERT INTO users (slug, username) VALUES ($1, $1)`, name)
		if err == nil || !strings.Contains(err.Error(), "users_username_fold_key") {
			t.Errorf("insert %q: %v, want a violation of users_username_fold_key", name, err)
		}
	}
	// An admin's rename to another user's name in another case is the OpenAPI document's 409.
	_, err := db.EditUser(ctx, 3, 1, catalog.UserEdit{Username: "émile"})
	acctWant(t, err, apperr.Conflict, postgres.MsgUsernameTaken)
}

// TestUsernameFoldMigration: names that differ only by case when the migration runs
// are kept by the oldest account; the later ones get "-<id>", and the index is built.
func TestUsernameFoldMigration(t *testing.T) {
	ctx := context.Background()
	db := acctDB(t, nil)
	acctExec(t, db, `DROP INDEX users_username_fold_key`)
	acctExec(t, db, `INSERT INTO users (id, slug, username) VALUES
		(12, 'e1', 'émile'), (10, 'e2', 'Émile'), (13, 'o', 'other'), (11, 'a1', 'ΑLPHA'), (14, 'a2', 'αlpha')`)
	sql, err := os.ReadFile("migrate/migrations/00018_username_fold.sql")
	if err != nil {
		t.Fatal(err)
	}
	// The migration's statements, each on its own as goose runs them (NO TRANSACTION:
	// CREATE INDEX CONCURRENTLY cannot run in a transaction block).
	body := string(sql)[strings.Index(string(sql), "-- +goose Up"):]
	var stmts []string
	for _, part := range strings.Split(body, "-- +goose StatementEnd") {
		before, block, ok := strings.Cut(part, "-- +goose StatementBegin")
		for _, s := range strings.Split(stripComments(before), ";") {
			if s := strings.TrimSpace(s); s != "" {
				stmts = append(stmts, s)
			}
		}
		if ok {
			stmts = append(stmts, block)
		}
	}
	for range 2 { // a rerun changes nothing
		for _, stmt := range stmts {
			if _, err := db.Pool.Exec(ctx, stmt); err != nil {
				t.Fatalf("%s: %v", stmt, err)
			}
		}
	}
	got := db.Text(t, `SELECT string_agg(id || ':' || username, ' ' ORDER BY id) FROM users WHERE id >= 10`)
	if want := "10:Émile 11:ΑLPHA 12:émile-12 13:other 14:αlpha-14"; got != want {
		t.Errorf("users %q, want %q", got, want)
	}
	if n := acctInt(t, db, `SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
		WHERE c.relname = 'users_username_fold_key' AND i.indisvalid AND i.indisunique`); n != 1 {
		t.Error("no valid unique users_username_fold_key after the migration")
	}
}

// stripComments removes the -- comments of sql's lines.
func stripComments(sql string) string {
	var out []string
	for _, line := range strings.Split(sql, "\n") {
		if i := strings.Index(line, "--"); i >= 0 {
			line = line[:i]
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}
