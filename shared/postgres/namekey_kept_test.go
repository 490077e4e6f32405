package postgres_test

import (
	"context"
	"testing"

	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/catalog"
	"github.com/mediacatalog/service/shared/namekey"
)

// TestNameKeyKept: users.name_key (migration 00025) is the key of the username whenever
// it is written, and NULL (never stale) when a writer that does not know it changes the
// name; the fill writes the missing ones, once; and the sign-up's check sees every name
// either way.
func TestNameKeyKept(t *testing.T) {
	ctx := context.Background()
	// keys lists "id:username:key" of the users from id 10 ("-" for NULL).
	const keys = `SELECT string_agg(id || ':' || username || ':' || coalesce(name_key, '-'), ' ' ORDER BY id) FROM users WHERE id >= 10`
	tests := []struct {
		name string
		do   func(t *testing.T, db *testenv.DB)
		want string
	}{
		{"inserted by SQL: no key", func(t *testing.T, db *testenv.DB) {}, "10:Bob:-"},
		{"filled", func(t *testing.T, db *testenv.DB) {
			if n, err := namekey.Fill(ctx, db.Pool); err != nil || n != 1 { // Bob: the demo load keyed its users
				t.Fatalf("fill: %d, %v; want 1", n, err)
			}
			if n, err := namekey.Fill(ctx, db.Pool); err != nil || n != 0 {
				t.Fatalf("second fill: %d, %v; want nothing to do", n, err)
			}
		}, "10:Bob:bob"},
		{"renamed by an admin: the new key", func(t *testing.T, db *testenv.DB) {
			if _, err := db.EditUser(ctx, 10, 1, catalog.UserEdit{Username: "ＡＤＭＩＮ-x"}); err != nil {
				t.Fatal(err)
			}
		}, "10:ＡＤＭＩＮ-x:adrnin-x"},
		{"renamed by SQL after the fill: the key cleared", func(t *testing.T, db *testenv.DB) {
			if _, err := namekey.Fill(ctx, db.Pool); err != nil {
				t.Fatal(err)
			}
			db.Exec(t, `UPDATE users SET username = 'Carol' WHERE id = 10`)
		}, "10:Carol:-"},
		{"other columns changed by SQL: the key kept", func(t *testing.T, db *testenv.DB) {
			if _, err := namekey.Fill(ctx, db.Pool); err != nil {
				t.Fatal(err)
			}
			db.Exec(t, `UPDATE users SET age_verified = true, username = username WHERE id = 10`)
		}, "10:Bob:bob"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := testenv.NewDemoDB(t)
			db.Exec(t, `INSERT INTO users (id, slug, username) VALUES (10, 'bob', 'Bob')`)
			tt.do(t, db)
			if got := db.Text(t, keys); got != tt.want {
				t.Errorf("users %q, want %q", got, tt.want)
			}
		})
	}

	// A name an admin gave in another script, with its key written, then one renamed by
	// SQL (its key NULL): the sign-up sees both.
	t.Run("the sign-up sees kept and missing keys", func(t *testing.T) {
		f := newConnFixture(t)
		if _, err := f.db.EditUser(ctx, 2, 1, catalog.UserEdit{Username: "аdmin"}); err != nil { // Cyrillic а
			t.Fatal(err)
		}
		connExec(t, f.db, `INSERT INTO users (slug, username) VALUES ('x', 'x')`)
		if _, err := namekey.Fill(ctx, f.db.Pool); err != nil {
			t.Fatal(err)
		}
		connExec(t, f.db, `UPDATE users SET username = 'ADMIN-2' WHERE slug = 'x'`)
		signUp(t, f, catalog.ProviderAccount{Provider: "github", ProviderUserID: "gh-k", Username: "admin", UsernameBase: "admin"}, "admin-3")
	})
}
