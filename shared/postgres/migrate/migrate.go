// Package migrate applies the service's embedded migrations (goose). It is apart
// from package postgres so that no function links the migration machinery: migrating
// is an explicit step (make migrate, the local stack, the tests).
//
// How a migration is written here (docs/migrations.md has the rules with examples):
// DDL in short transactions that start with SET LOCAL lock_timeout, which this runner
// retries with backoff when the lock is not granted in time; backfills in batches
// outside DDL transactions; CREATE INDEX CONCURRENTLY in a NO TRANSACTION migration
// that ends by asserting the index valid. squawk (make lint) holds every file to it.
package migrate

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/mediacatalog/service/shared/namekey"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Files are the service's migrations, as goose reads them.
func Files() fs.FS {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		panic(err) // the embedded folder exists at build time
	}
	return sub
}

// Options tune a run. The zero value is what make migrate uses.
type Options struct {
	// Log receives one line per applied migration and per retry; nil logs nothing.
	Log *slog.Logger
	// LockRetries is how many times a migration that did not get its lock in time
	// (lock_timeout, SQLSTATE 55P03) is tried again; 0 means DefaultLockRetries.
	LockRetries int
	// Backoff is the first wait before a retry, doubled each time up to MaxBackoff;
	// 0 means DefaultBackoff.
	Backoff time.Duration
	// To stops after this version; 0 applies every pending migration.
	To int64
}

// Defaults of Options.
const (
	DefaultLockRetries = 8
	DefaultBackoff     = 500 * time.Millisecond
	MaxBackoff         = 15 * time.Second
)

// Up applies every pending migration of the service to the database at url, then the
// Go step of the migrations: the users' name keys (namekey.Fill, migration 00025),
// which SQL cannot compute. It is an explicit step (make migrate, the local stack, the
// tests), never part of a Lambda cold start. A PostgreSQL advisory lock makes
// concurrent runs of the SQL migrations safe; the fill is batched and idempotent, so a
// second run does only what is left.
func Up(ctx context.Context, url string, log *slog.Logger) error {
	if _, err := Apply(ctx, url, Files(), Options{Log: log}); err != nil {
		return err
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return fmt.Errorf("migrate: name keys: %w", err)
	}
	defer conn.Close(ctx)
	n, err := namekey.Fill(ctx, conn)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if log != nil && n > 0 {
		log.Info("name keys filled", "users", n)
	}
	return nil
}

// Result is one applied migration.
type Result struct {
	Version  int64
	File     string
	Duration time.Duration
	Retries  int // lock timeouts before it got its locks
}

// Apply applies the pending migrations of files one at a time. A migration whose
// transaction was rolled back for a lock timeout is not recorded by goose, so it is
// run again after a backoff while other sessions finish with the table; any other
// error stops the run with the migration unrecorded.
func Apply(ctx context.Context, url string, files fs.FS, opts Options) ([]Result, error) {
	if opts.LockRetries == 0 {
		opts.LockRetries = DefaultLockRetries
	}
	if opts.Backoff == 0 {
		opts.Backoff = DefaultBackoff
	}
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", errors.New("invalid connection string"))
	}
	db := stdlib.OpenDB(*cfg)
	defer db.Close()

	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	gopts := []goose.ProviderOption{goose.WithSessionLocker(locker)}
	if opts.Log != nil {
		gopts = append(gopts, goose.WithSlog(opts.Log))
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, files, gopts...)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	var done []Result
	retries, wait := 0, opts.Backoff
	for {
		if opts.To > 0 {
			v, err := p.GetDBVersion(ctx)
			if err != nil {
				return done, fmt.Errorf("migrate: %w", err)
			}
			if v >= opts.To {
				return done, nil
			}
		}
		r, err := p.UpByOne(ctx)
		switch {
		case errors.Is(err, goose.ErrNoNextVersion):
			return done, nil
		case lockTimeout(err) && retries < opts.LockRetries:
			retries++
			if opts.Log != nil {
				opts.Log.Warn("migration waited too long for a lock; retrying", "attempt", retries, "wait", wait, "error", err)
			}
			select {
			case <-ctx.Done():
				return done, fmt.Errorf("migrate: %w", ctx.Err())
			case <-time.After(wait):
			}
			wait = min(2*wait, MaxBackoff)
			continue
		case err != nil:
			return done, fmt.Errorf("migrate: %w", err)
		}
		res := Result{Version: r.Source.Version, File: r.Source.Path, Duration: r.Duration, Retries: retries}
		done = append(done, res)
		if opts.Log != nil {
			opts.Log.Info("migration applied", "version", res.Version, "file", res.File, "duration", res.Duration, "lock_retries", retries)
		}
		retries, wait = 0, opts.Backoff
	}
}

// lockTimeout reports whether err is PostgreSQL's lock_not_available (55P03), which
// lock_timeout raises.
func lockTimeout(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "55P03"
}
