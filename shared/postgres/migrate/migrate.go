// Package migrate applies the service's embedded migrations (goose). It is apart
// from package postgres so that no function links the migration machinery: migrating
// is an explicit step (make migrate, the local stack, the tests).
package migrate

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Up applies every pending migration. It is an explicit step (make migrate, the
// local stack, the tests), never part of a Lambda cold start. A PostgreSQL advisory
// lock makes concurrent runs safe.
func Up(ctx context.Context, url string, log *slog.Logger) error {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return fmt.Errorf("migrate: %w", errors.New("invalid connection string"))
	}
	db := stdlib.OpenDB(*cfg)
	defer db.Close()

	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	opts := []goose.ProviderOption{goose.WithSessionLocker(locker)}
	if log != nil {
		opts = append(opts, goose.WithSlog(log))
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, sub, opts...)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	results, err := p.Up(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if log != nil {
		for _, r := range results {
			log.Info("migration applied", "version", r.Source.Version, "file", r.Source.Path, "duration", r.Duration)
		}
	}
	return nil
}
