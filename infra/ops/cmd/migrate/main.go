// Command migrate applies the service's migrations to DATABASE_URL. Operators run it
// (make migrate) before deploying; the functions never migrate on a cold start.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/jackc/pgx/v5"

	"github.com/mediacatalog/service/infra/cmdrun"
	"github.com/mediacatalog/service/infra/ops/dbroles"
	"github.com/mediacatalog/service/shared/postgres/migrate"
)

func main() {
	cmdrun.Main("migrate", func(ctx context.Context) error { return run(ctx, os.Getenv) })
}

func run(ctx context.Context, getenv func(string) string) error {
	url := getenv("DATABASE_URL")
	if url == "" {
		return fmt.Errorf("DATABASE_URL is not set")
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := migrate.Up(ctx, url, log); err != nil {
		return err
	}
	// The functions' roles (make db-roles) get their privileges on what the migrations
	// made, whoever ran them; a database without those roles (local) is left as it is.
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	granted, err := dbroles.Regrant(ctx, conn, dbroles.Defaults)
	if err != nil {
		return err
	}
	log.Info("database is up to date", "roles_granted", granted)
	return nil
}
