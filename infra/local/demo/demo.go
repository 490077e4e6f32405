// Package demo holds the demo data of the local stack and the tests (a realistic
// catalog in client 1, and the demo accounts) and a generator of large synthetic catalogs for benchmarks.
// Loading is idempotent: every row has a fixed id and existing rows are kept, so a
// second load changes nothing.
package demo

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/mediacatalog/service/shared/namekey"
	"github.com/mediacatalog/service/shared/postgres"
)

// loadLock is the advisory lock key that serializes concurrent loads.
const loadLock = 0x64656d6f // "demo"

// Load inserts the demo catalog and the demo accounts in one transaction. The database must be migrated.
func Load(ctx context.Context, db *postgres.DB) error {
	err := pgx.BeginFunc(ctx, db.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(loadLock)); err != nil {
			return fmt.Errorf("lock: %w", err)
		}
		if err := loadCatalog(ctx, tx); err != nil {
			return err
		}
		return loadAccounts(ctx, tx)
	})
	if err != nil {
		return fmt.Errorf("demo: load: %w", err)
	}
	if err := fillNameKeys(ctx, db); err != nil {
		return fmt.Errorf("demo: load: %w", err)
	}
	return nil
}

// fillNameKeys writes the name key of the users loaded without one (users.name_key,
// computed in Go: shared/namekey), as the service writes it with every username. A
// database migrated only to a version before the column (the rehearsal's) has none to
// write; make migrate fills them later.
func fillNameKeys(ctx context.Context, db *postgres.DB) error {
	var has bool
	if err := db.Pool.QueryRow(ctx, `
		SELECT EXISTS (SELECT 1 FROM information_schema.columns
		               WHERE table_schema = current_schema() AND table_name = 'users' AND column_name = 'name_key')`).
		Scan(&has); err != nil {
		return fmt.Errorf("name keys: %w", err)
	}
	if !has {
		return nil
	}
	_, err := namekey.Fill(ctx, db.Pool)
	return err
}
