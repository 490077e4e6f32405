package migrate_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/postgres/migrate"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// withBaseline is the service's migrations plus extra files (name: content).
func withBaseline(t *testing.T, extra map[string]string) fs.FS {
	t.Helper()
	files := fstest.MapFS{}
	err := fs.WalkDir(migrate.Files(), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(migrate.Files(), path)
		files[path] = &fstest.MapFile{Data: b}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, sql := range extra {
		files[name] = &fstest.MapFile{Data: []byte(sql)}
	}
	return files
}

func connect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func version(t *testing.T, conn *pgx.Conn) int64 {
	t.Helper()
	var v int64
	if err := conn.QueryRow(context.Background(), `SELECT max(version_id) FROM goose_db_version WHERE is_applied`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// latest is the version of the service's last migration.
func latest(t *testing.T) int64 {
	t.Helper()
	entries, err := fs.ReadDir(migrate.Files(), ".")
	if err != nil || len(entries) == 0 {
		t.Fatalf("migrations: %v", err)
	}
	var v int64
	if _, err := fmt.Sscanf(entries[len(entries)-1].Name(), "%d_", &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestLockTimeoutRetried: a migration whose ALTER cannot get its lock within its
// lock_timeout (a long transaction reads the table) fails fast instead of queueing
// every reader behind it, and the runner tries it again until the reader is gone.
func TestLockTimeoutRetried(t *testing.T) {
	url := testenv.NewEmptyDB(t)
	if _, err := migrate.Apply(t.Context(), url, migrate.Files(), migrate.Options{}); err != nil {
		t.Fatal(err)
	}
	files := withBaseline(t, map[string]string{"00100_nickname.sql": `-- +goose Up
SET LOCAL lock_timeout = '200ms';
SET LOCAL statement_timeout = '5s';
ALTER TABLE users ADD COLUMN nickname text;
`})
	reader := connect(t, url)
	tx, err := reader.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(t.Context(), `SELECT count(*) FROM users`); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the reader ends after a few of the migration's attempts
		defer wg.Done()
		time.Sleep(time.Second)
		_ = tx.Commit(context.Background())
	}()
	results, err := migrate.Apply(t.Context(), url, files, migrate.Options{Backoff: 100 * time.Millisecond})
	wg.Wait()
	if err != nil {
		t.Fatalf("migrate: %v", err)
	}
	if len(results) != 1 || results[0].Version != 100 || results[0].Retries == 0 {
		t.Fatalf("results %+v, want version 100 applied after at least one lock timeout", results)
	}
}

// TestLockTimeoutGivesUp: with the reader never leaving, the run ends with the lock
// timeout's error after its retries, and the version is not recorded.
func TestLockTimeoutGivesUp(t *testing.T) {
	url := testenv.NewEmptyDB(t)
	files := withBaseline(t, map[string]string{"00100_nickname.sql": `-- +goose Up
SET LOCAL lock_timeout = '100ms';
SET LOCAL statement_timeout = '5s';
ALTER TABLE users ADD COLUMN nickname text;
`})
	if _, err := migrate.Apply(t.Context(), url, migrate.Files(), migrate.Options{}); err != nil {
		t.Fatal(err)
	}
	reader := connect(t, url)
	tx, err := reader.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(t.Context(), `SELECT count(*) FROM users`); err != nil {
		t.Fatal(err)
	}
	_, err = migrate.Apply(t.Context(), url, files, migrate.Options{LockRetries: 2, Backoff: 50 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "55P03") {
		t.Fatalf("error %v, want the lock timeout (55P03)", err)
	}
	if v, want := version(t, connect(t, url)), latest(t); v != want {
		t.Errorf("version %d recorded, want %d", v, want)
	}
}

// concurrentBuild is a migration in the form docs/migrations.md gives: the build, then
// the check that fails the migration while the index is INVALID.
const concurrentBuild = `-- +goose NO TRANSACTION
-- +goose Up
SET lock_timeout = 0;
SET statement_timeout = 0;
CREATE INDEX CONCURRENTLY IF NOT EXISTS users_registered_test ON users (registered);
-- +goose StatementBegin
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
               JOIN pg_namespace n ON n.oid = c.relnamespace
               WHERE n.nspname = current_schema() AND NOT i.indisvalid) THEN
        RAISE EXCEPTION 'an INVALID index is left by an interrupted CONCURRENTLY build: DROP INDEX CONCURRENTLY it, then migrate again';
    END IF;
END $$;
-- +goose StatementEnd
`

// TestInterruptedConcurrentBuild interrupts a CREATE INDEX CONCURRENTLY (cancelled
// while it waits for a writer's transaction), which leaves an INVALID index. The rerun
// skips the build (IF NOT EXISTS) and must not record the version: the check fails it.
// Once the operator drops the index, the rerun builds it valid.
func TestInterruptedConcurrentBuild(t *testing.T) {
	ctx := t.Context()
	url := testenv.NewEmptyDB(t)
	if _, err := migrate.Apply(ctx, url, migrate.Files(), migrate.Options{}); err != nil {
		t.Fatal(err)
	}
	admin := connect(t, url)
	if _, err := admin.Exec(ctx, `INSERT INTO users (slug, username) VALUES ('a', 'a'), ('b', 'b')`); err != nil {
		t.Fatal(err)
	}
	files := withBaseline(t, map[string]string{"00100_users_registered.sql": concurrentBuild})

	// A writer's open transaction makes the build wait after it created the index.
	writer := connect(t, url)
	tx, err := writer.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `UPDATE users SET username = username WHERE username = 'a'`); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := migrate.Apply(ctx, url, files, migrate.Options{})
		done <- err
	}()
	cancelled := false
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline) && !cancelled; time.Sleep(50 * time.Millisecond) {
		err := admin.QueryRow(ctx, `SELECT pg_cancel_backend(pid) FROM pg_stat_activity
			WHERE query LIKE 'CREATE INDEX CONCURRENTLY%' AND wait_event_type = 'Lock'`).Scan(&cancelled)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			t.Fatal(err)
		}
	}
	if !cancelled {
		t.Fatal("the build never waited for the writer")
	}
	if err := <-done; err == nil {
		t.Fatal("the interrupted build reported success")
	}
	_ = tx.Rollback(ctx)
	var valid bool
	if err := admin.QueryRow(ctx, `SELECT indisvalid FROM pg_index WHERE indexrelid = 'users_registered_test'::regclass`).Scan(&valid); err != nil || valid {
		t.Fatalf("index after the interruption: valid %v (%v), want INVALID", valid, err)
	}

	_, err = migrate.Apply(ctx, url, files, migrate.Options{})
	if err == nil || !strings.Contains(err.Error(), "INVALID") {
		t.Fatalf("rerun with the INVALID index: %v, want the check's error", err)
	}
	if v, want := version(t, admin), latest(t); v != want {
		t.Fatalf("version %d recorded with an INVALID index, want %d", v, want)
	}

	if _, err := admin.Exec(ctx, `DROP INDEX CONCURRENTLY users_registered_test`); err != nil {
		t.Fatal(err)
	}
	if _, err := migrate.Apply(ctx, url, files, migrate.Options{}); err != nil {
		t.Fatalf("rerun after the drop: %v", err)
	}
	if err := admin.QueryRow(ctx, `SELECT indisvalid FROM pg_index WHERE indexrelid = 'users_registered_test'::regclass`).Scan(&valid); err != nil || !valid {
		t.Fatalf("index after the rerun: valid %v (%v)", valid, err)
	}
	if v := version(t, admin); v != 100 {
		t.Fatalf("version %d, want 100", v)
	}
}

// TestGuideExamples applies the migrations docs/migrations.md gives as examples (its
// sql blocks that are goose files: expand, batched backfill, validation, concurrent
// index), in
// order, to a database with users, as a deploy would: the guide's patterns work as
// written, and pass squawk.
func TestGuideExamples(t *testing.T) {
	guide, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "docs", "migrations.md"))
	if err != nil {
		t.Fatal(err)
	}
	extra := map[string]string{}
	var names []string
	for i, block := range strings.Split(string(guide), "```sql\n")[1:] {
		sql, _, _ := strings.Cut(block, "```")
		if !strings.Contains(sql, "-- +goose Up") {
			continue
		}
		name := fmt.Sprintf("%05d_guide_example.sql", 100+i)
		extra[name] = sql
		names = append(names, name)
	}
	if len(names) != 4 {
		t.Fatalf("%d goose examples in docs/migrations.md, want 4 (expand, backfill, validate, index)", len(names))
	}
	url := testenv.NewEmptyDB(t)
	if _, err := migrate.Apply(t.Context(), url, migrate.Files(), migrate.Options{}); err != nil {
		t.Fatal(err)
	}
	admin := connect(t, url)
	if _, err := admin.Exec(t.Context(), `INSERT INTO users (slug, username)
		SELECT 'u' || i, 'user ' || i FROM generate_series(1, 2500) i`); err != nil {
		t.Fatal(err)
	}
	results, err := migrate.Apply(t.Context(), url, withBaseline(t, extra), migrate.Options{})
	if err != nil {
		t.Fatalf("the guide's examples: %v", err)
	}
	if len(results) != len(names) {
		t.Fatalf("applied %+v", results)
	}
	var left int
	var valid bool
	if err := admin.QueryRow(t.Context(), `SELECT (SELECT count(*) FROM users WHERE display_name IS DISTINCT FROM username),
		(SELECT indisvalid FROM pg_index WHERE indexrelid = 'users_display_name'::regclass)`).Scan(&left, &valid); err != nil {
		t.Fatal(err)
	}
	if left != 0 || !valid {
		t.Errorf("after the examples: %d users not backfilled, index valid %v", left, valid)
	}
	dir := t.TempDir()
	var paths []string
	for _, name := range names {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(extra[name]), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	for i, p := range paths {
		if out, err := squawk(t, !strings.Contains(extra[names[i]], "NO TRANSACTION"), p); err != nil {
			t.Errorf("squawk on the guide's example %d: %v\n%s", i+1, err, out)
		}
	}
}
