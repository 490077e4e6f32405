// Package demo holds the demo data of the local stack and the tests (a realistic
// catalog in client 1, and the demo accounts) and a generator of large synthetic catalogs for benchmarks.
// Loading is idempotent: every row has a fixed id and existing rows are kept, so a
// second load changes nothing.
package demo

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

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
	return nil
}
