// Package postgres is the PostgreSQL adapter: the connection pool, the embedded
// migrations, and the stores of the service's data. Stores speak in domain types and
// apperr codes; nothing above this package sees pgx errors.
//
// Reading rows: `rows, _ := q.Query(...)` and then pgx.CollectRows, CollectOneRow or
// ForEachRow, the idiom pgx documents: Query's own error is returned again by the
// collecting call (and by Rows.Err), so it is checked once, there.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/deadlines"
)

// DB is the process's connection pool. Open it once in main, outside the handler.
type DB struct {
	Pool *pgxpool.Pool
	// MaxExact is T, the matches a list's search or filter counts exactly (see
	// DefaultMaxExact, the value when 0). Tests set a small one on a copy of the DB.
	MaxExact int64
}

// Option adjusts the pool configuration before the pool is created.
type Option func(*pgxpool.Config)

// WithTracer installs a pgx query tracer (the tests count round trips with one).
func WithTracer(t pgx.QueryTracer) Option {
	return func(c *pgxpool.Config) { c.ConnConfig.Tracer = t }
}

// WithMaxConns bounds the pool. A Lambda container serves one request at a time, so
// the functions keep it small to spare the database's connection slots.
func WithMaxConns(n int32) Option {
	return func(c *pgxpool.Config) { c.MaxConns = n }
}

// DefaultConnectTimeout bounds establishing a connection (TCP, TLS, startup) unless
// DATABASE_URL sets connect_timeout. The request's deadline bounds it as well: a
// connection attempt never outlives the request that made it.
const DefaultConnectTimeout = 5 * time.Second

// Open creates the pool. It does not connect: the first query does, so a cold start
// that never touches the database never waits for it.
func Open(ctx context.Context, url string, opts ...Option) (*DB, error) {
	if url == "" {
		return nil, errors.New("postgres: DATABASE_URL is not set")
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres: parse DATABASE_URL: %w", redact(err))
	}
	setDefaultParams(cfg.ConnConfig.RuntimeParams)
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = DefaultConnectTimeout
	}
	for _, o := range opts {
		o(cfg)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: create pool: %w", redact(err))
	}
	return &DB{Pool: pool}, nil
}

// Session defaults of every connection, sent in the startup message (no round trip).
// A value in DATABASE_URL (options or the parameter itself) wins.
//
//   - statement_timeout bounds every statement, beside the request's deadline: no
//     request can keep PostgreSQL busy past it, even when the client is gone. A bulk job
//     that needs longer sets its own (SET LOCAL statement_timeout = 0, as the benchmark
//     generator does).
//   - plan_cache_mode=force_custom_plan: pgx prepares and caches every statement, and
//     after five executions PostgreSQL may switch a prepared statement to a generic plan,
//     built without the parameters' values. For the lists that plan is the wrong one for
//     most calls (a search that matches everything and one that matches nothing, a large
//     publisher and a small one, client 2's plan reused for client 1), and it flips from
//     one request to the next. Planning with the values costs well under a millisecond
//     for these queries and is stable; the statement's parse and description stay cached.
var defaultParams = map[string]string{
	"statement_timeout": strconv.FormatInt(deadlines.StatementTimeout.Milliseconds(), 10),
	"plan_cache_mode":   "force_custom_plan",
}

// SessionDefaultNames lists the session defaults' names, sorted.
func SessionDefaultNames() []string { return slices.Sorted(maps.Keys(defaultParams)) }

// SessionDefault is the value of one session default (statement_timeout in
// milliseconds).
func SessionDefault(name string) string { return defaultParams[name] }

func setDefaultParams(params map[string]string) {
	options := params["options"]
	for k, v := range defaultParams {
		if _, ok := params[k]; ok || strings.Contains(options, k) {
			continue
		}
		params[k] = v
	}
}

// Close closes the pool.
func (db *DB) Close() { db.Pool.Close() }

// Ready runs one query through the pool (a connection made if none is idle: the proxy
// reached, the login accepted), for the function's readiness probe.
func (db *DB) Ready(ctx context.Context) error {
	var one int
	if err := db.Pool.QueryRow(ctx, `SELECT 1`).Scan(&one); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	return nil
}

// inTx runs fn in one transaction: committed when fn returns nil, rolled back otherwise.
func (db *DB) inTx(ctx context.Context, fn func(pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, db.Pool, fn)
}

// Unique-violation handling: constraint name -> the client-facing conflict.
const sqlUniqueViolation = "23505"

// conflict turns a unique violation into an apperr.Conflict with msg; other errors pass.
func conflict(err error, msg string) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == sqlUniqueViolation {
		return apperr.Wrap(apperr.Conflict, msg, err)
	}
	return err
}

// isUniqueViolation reports whether err is a unique violation of the named constraint
// (any unique constraint when name is empty).
func isUniqueViolation(err error, name string) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == sqlUniqueViolation &&
		(name == "" || pgErr.ConstraintName == name)
}

// redact drops the connection string (and its password) from pgx parse errors.
func redact(err error) error {
	var pe *pgconn.ParseConfigError
	if errors.As(err, &pe) {
		return errors.New("invalid connection string")
	}
	return err
}
