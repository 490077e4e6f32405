// Package bulk runs an operator's large writes (purging a client, changing many rows)
// in batches: each batch is a transaction of its own, locks a bounded number of rows
// in key order, and runs under the writers' statement timeout and a short lock
// timeout, so the service's own writes never wait long behind it and a stopped job is
// resumed by running it again. infra/ops/cmd/bulk is its command (make purge-client).
package bulk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Options bound each batch.
type Options struct {
	// BatchSize is the number of rows one batch locks; 0 means DefaultBatchSize.
	BatchSize int
	// StatementTimeout bounds a batch's statement; 0 means DefaultStatementTimeout.
	StatementTimeout time.Duration
	// Progress receives one line per table; nil prints nothing.
	Progress io.Writer
}

// Defaults of Options: a batch of a thousand rows with its cascades and triggers stays
// well within the writers' five-second timeout on the 1M catalog (make
// migrate-rehearsal's catalog), and a second is the longest a writer may wait for it.
const (
	DefaultBatchSize        = 1000
	DefaultStatementTimeout = 5 * time.Second
	lockTimeout             = time.Second
	lockRetries             = 20
)

// ErrNoClient: no client has the id.
var ErrNoClient = errors.New("no such client")

// Client is what an operator checks before purging a client: its name and the kept
// counts of its catalog.
type Client struct {
	ID           int64
	Name         string
	Publishers   int64
	Contributors int64
}

// DescribeClient reads a client's row.
func DescribeClient(ctx context.Context, pool *pgxpool.Pool, id int64) (Client, error) {
	c := Client{ID: id}
	err := pool.QueryRow(ctx, `SELECT name, publisher_count, contributor_count FROM clients WHERE id = $1`, id).
		Scan(&c.Name, &c.Publishers, &c.Contributors)
	if errors.Is(err, pgx.ErrNoRows) {
		return Client{}, fmt.Errorf("bulk: client %d: %w", id, ErrNoClient)
	}
	if err != nil {
		return Client{}, fmt.Errorf("bulk: client %d: %w", id, err)
	}
	return c, nil
}

// PurgeClient deletes a client's catalog: its series (with their aliases,
// descriptions, links, volumes and tags), publishers, contributors and tags, in
// batches, then the client row. It returns the rows deleted per table.
func PurgeClient(ctx context.Context, pool *pgxpool.Pool, client int64, opts Options) (map[string]int64, error) {
	opts = withDefaults(opts)
	deleted := map[string]int64{}
	// Children before parents, as the service's writes take their locks: the links
	// and other rows go with their series by cascade, in the same batch.
	for _, table := range []string{"series", "publishers", "contributors", "tags"} {
		sql := fmt.Sprintf(`DELETE FROM %[1]s WHERE id IN (
			SELECT id FROM %[1]s WHERE client_id = $1 ORDER BY id LIMIT $2 FOR UPDATE)`, table)
		n, err := batches(ctx, pool, opts, sql, client, opts.BatchSize)
		deleted[table] = n
		if opts.Progress != nil {
			fmt.Fprintf(opts.Progress, "%-12s %d rows deleted\n", table, n)
		}
		if err != nil {
			return deleted, fmt.Errorf("bulk: purge client %d: %s: %w", client, table, err)
		}
	}
	n, err := batches(ctx, pool, opts, `DELETE FROM clients WHERE id = $1 AND $2 > 0`, client, opts.BatchSize)
	deleted["clients"] = n
	if err != nil {
		return deleted, fmt.Errorf("bulk: purge client %d: %w", client, err)
	}
	return deleted, nil
}

// Update runs `UPDATE table SET set WHERE where` in batches of rows taken in key
// order, each once: a batch updates the next rows by id after the last one done, so
// an update that keeps matching its WHERE (a rename) still ends. set and where are
// the operator's SQL.
func Update(ctx context.Context, pool *pgxpool.Pool, table, set, where string, opts Options) (int64, error) {
	opts = withDefaults(opts)
	ident := pgx.Identifier{table}.Sanitize()
	var after, total int64
	for {
		var n, last int64
		err := retryLocks(ctx, func() error {
			return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
				if err := limits(ctx, tx, opts); err != nil {
					return err
				}
				return tx.QueryRow(ctx, fmt.Sprintf(`WITH batch AS (
						SELECT id FROM %[1]s WHERE id > $1 AND (%[3]s) ORDER BY id LIMIT $2 FOR UPDATE),
					done AS (UPDATE %[1]s t SET %[2]s FROM batch WHERE t.id = batch.id RETURNING t.id)
					SELECT count(*), coalesce(max(id), 0) FROM done`, ident, set, where),
					after, opts.BatchSize).Scan(&n, &last)
			})
		})
		if err != nil {
			return total, fmt.Errorf("bulk: update %s: %w", table, err)
		}
		total += n
		if n == 0 {
			if opts.Progress != nil {
				fmt.Fprintf(opts.Progress, "%s: %d rows updated\n", table, total)
			}
			return total, nil
		}
		after = last
	}
}

func withDefaults(o Options) Options {
	if o.BatchSize <= 0 {
		o.BatchSize = DefaultBatchSize
	}
	if o.StatementTimeout <= 0 {
		o.StatementTimeout = DefaultStatementTimeout
	}
	return o
}

// batches runs sql (a DELETE of at most $2 rows) until it deletes nothing.
func batches(ctx context.Context, pool *pgxpool.Pool, opts Options, sql string, args ...any) (int64, error) {
	var total int64
	for {
		var n int64
		err := retryLocks(ctx, func() error {
			return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
				if err := limits(ctx, tx, opts); err != nil {
					return err
				}
				tag, err := tx.Exec(ctx, sql, args...)
				n = tag.RowsAffected()
				return err
			})
		})
		total += n
		if err != nil || n == 0 {
			return total, err
		}
	}
}

// limits sets the batch's timeouts for its transaction only.
func limits(ctx context.Context, tx pgx.Tx, opts Options) error {
	for _, set := range []string{
		fmt.Sprintf("SET LOCAL statement_timeout = %d", opts.StatementTimeout.Milliseconds()),
		fmt.Sprintf("SET LOCAL lock_timeout = %d", lockTimeout.Milliseconds()),
	} {
		if _, err := tx.Exec(ctx, set); err != nil {
			return err
		}
	}
	return nil
}

// retryLocks runs f again when it ended on a lock timeout or a deadlock (the batch was
// rolled back whole), after a short pause while the other writer finishes.
func retryLocks(ctx context.Context, f func() error) error {
	for attempt := 0; ; attempt++ {
		err := f()
		var pgErr *pgconn.PgError
		if err == nil || attempt == lockRetries || !errors.As(err, &pgErr) || (pgErr.Code != "55P03" && pgErr.Code != "40P01") {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(attempt+1) * 100 * time.Millisecond):
		}
	}
}
