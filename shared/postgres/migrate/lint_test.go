package migrate_test

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mediacatalog/service/infra/local/localservices"
	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/postgres/migrate"
)

// squawk runs the npm-pinned squawk (infra/tests/squawk) with the repository's .squawk.toml
// on files (paths relative to the repository) and returns its gcc-style report.
func squawk(t *testing.T, inTransaction bool, files ...string) (string, error) {
	t.Helper()
	root := testenv.RepoRoot()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	pkg := filepath.Join(root, "infra", "tests", "squawk")
	if err := localservices.NPMInstall(ctx, os.Stderr, pkg, filepath.Join("squawk-cli", "js", "bin", "squawk")); err != nil {
		t.Fatalf("install squawk: %v", err)
	}
	args := []string{"--config", filepath.Join(root, ".squawk.toml"), "--reporter", "gcc"}
	if inTransaction {
		args = append(args, "--assume-in-transaction")
	}
	cmd := exec.CommandContext(ctx, filepath.Join(pkg, "node_modules", ".bin", "squawk"), append(args, files...)...)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// migrationFiles splits the migrations into those goose runs in a transaction and
// the NO TRANSACTION ones, as paths relative to the repository.
func migrationFiles(t *testing.T) (inTx, noTx []string) {
	t.Helper()
	entries, err := fs.ReadDir(migrate.Files(), ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := fs.ReadFile(migrate.Files(), e.Name())
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("shared", "postgres", "migrate", "migrations", e.Name())
		if strings.Contains(string(b), "-- +goose NO TRANSACTION") {
			noTx = append(noTx, path)
		} else {
			inTx = append(inTx, path)
		}
	}
	return inTx, noTx
}

// TestSquawk holds every migration to squawk, the PostgreSQL migration linter (make
// lint runs this test too): a lock timeout before any lock, indexes built
// CONCURRENTLY on existing tables, constraints added NOT VALID then validated, and
// the rest of its rules (.squawk.toml says which are off and why).
func TestSquawk(t *testing.T) {
	inTx, noTx := migrationFiles(t)
	for _, set := range []struct {
		files []string
		inTx  bool
	}{{inTx, true}, {noTx, false}} {
		if len(set.files) == 0 {
			continue
		}
		if out, err := squawk(t, set.inTx, set.files...); err != nil {
			t.Errorf("squawk (in a transaction: %v): %v\n%s", set.inTx, err, out)
		}
	}
}

// TestSquawkRefusesAMissingLockTimeout: the gate works, a migration that takes ACCESS
// EXCLUSIVE on a live table without a lock timeout is refused.
func TestSquawkRefusesAMissingLockTimeout(t *testing.T) {
	out, err := squawk(t, true, filepath.Join("shared", "postgres", "migrate", "testdata", "no_lock_timeout.sql"))
	if err == nil || !strings.Contains(out, "require-lock-timeout") {
		t.Fatalf("squawk passed a migration without a lock timeout (%v):\n%s", err, out)
	}
}

// TestConcurrentBuildsChecked: every migration that builds an index CONCURRENTLY ends
// with the check that fails it while an index is INVALID (see
// TestInterruptedConcurrentBuild), so an interrupted build is never recorded as done.
func TestConcurrentBuildsChecked(t *testing.T) {
	_, noTx := migrationFiles(t)
	for _, path := range noTx {
		b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), path))
		if err != nil {
			t.Fatal(err)
		}
		sql := string(b)
		build := strings.LastIndex(sql, "CONCURRENTLY")
		if build < 0 {
			continue
		}
		if check := strings.LastIndex(sql, "NOT i.indisvalid"); check < build {
			t.Errorf("%s: no INVALID-index check after its last CONCURRENTLY build (docs/migrations.md)", path)
		}
	}
}
