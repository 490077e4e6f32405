package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/mediacatalog/service/infra/tests/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func TestRun(t *testing.T) {
	ctx := context.Background()
	db := testenv.NewDB(t)
	suffix := fmt.Sprintf("_cmd_%d", os.Getpid())
	names := []string{"w" + suffix, "r" + suffix, "c" + suffix}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), db.URL)
		if err != nil {
			return
		}
		defer c.Close(context.Background())
		for _, n := range names {
			_, _ = c.Exec(context.Background(), "DROP OWNED BY "+n)
			_, _ = c.Exec(context.Background(), "DROP ROLE IF EXISTS "+n)
		}
	})
	args := []string{"-writer", names[0], "-reader", names[1], "-cdn", names[2]}
	if err := run(ctx, args, func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), "DATABASE_URL") {
		t.Errorf("without DATABASE_URL: %v", err)
	}
	if err := run(ctx, args, func(k string) string { return map[string]string{"DATABASE_URL": db.URL}[k] }); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.Pool.QueryRow(ctx, "SELECT count(*) FROM pg_roles WHERE rolname = ANY($1) AND rolcanlogin", names).Scan(&n); err != nil || n != 3 {
		t.Errorf("%d login roles (%v), want 3", n, err)
	}
}
