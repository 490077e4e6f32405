package migrate_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/namekey"
	"github.com/mediacatalog/service/shared/postgres/migrate"
)

// TestNameKeyBackfill: the users of a database from before migration 00025 get their
// name keys from make migrate (migrate.Up: the SQL migrations, then the fill in Go, in
// batches), whatever their number against the batch; a second run has nothing to do.
func TestNameKeyBackfill(t *testing.T) {
	ctx := context.Background()
	for _, users := range []int{0, 1, namekey.Batch, 2*namekey.Batch + 7} {
		t.Run("", func(t *testing.T) {
			url := testenv.NewEmptyDB(t)
			if _, err := migrate.Apply(ctx, url, migrate.Files(), migrate.Options{To: 24}); err != nil {
				t.Fatal(err)
			}
			conn, err := pgx.Connect(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx)
			// Names in several scripts and cases, some confusable with others'.
			if _, err := conn.Exec(ctx, `
				INSERT INTO users (slug, username)
				SELECT 'u' || g, (ARRAY['Reader_', 'аdmin-', 'ＦＵＬＬ', 'émile.'])[1 + g % 4] || g
				FROM generate_series(1, $1::int) g`, users); err != nil {
				t.Fatal(err)
			}
			if err := migrate.Up(ctx, url, nil); err != nil {
				t.Fatal(err)
			}
			rows, _ := conn.Query(ctx, `SELECT username, coalesce(name_key, '') FROM users`)
			n := 0
			for rows.Next() {
				var name, key string
				if err := rows.Scan(&name, &key); err != nil {
					t.Fatal(err)
				}
				if key != namekey.Key(name) {
					t.Errorf("%q keyed %q, want %q", name, key, namekey.Key(name))
				}
				n++
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			if n != users {
				t.Errorf("%d users, want %d", n, users)
			}
			if filled, err := namekey.Fill(ctx, conn); err != nil || filled != 0 {
				t.Errorf("a second fill: %d, %v; want nothing to do", filled, err)
			}
		})
	}
}
