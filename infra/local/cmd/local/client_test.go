package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/mediacatalog/service/infra/local/demo"
	"github.com/mediacatalog/service/infra/local/localservices"
	"github.com/mediacatalog/service/infra/tests/testenv"
)

// TestTypeScriptClient compiles the generated TypeScript client and its test with tsc
// (strict, as tsconfig.json sets it) and runs that test with Node's test runner against
// the local server, as a frontend developer uses it on make run: a public list, a
// search, details, an admin read and write with a session, an avatar, and the errors.
func TestTypeScriptClient(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir := filepath.Join(testenv.RepoRoot(), "shared", "openapi", "client")
	if err := localservices.NPMInstall(ctx, os.Stderr, dir, filepath.Join("typescript", "bin", "tsc")); err != nil {
		t.Fatalf("install the client's tools: %v", err)
	}
	// Compile into a folder of the test's own, which resolves the client's
	// dependencies from its node_modules and runs as ES modules like the package.
	out := t.TempDir()
	if err := os.Symlink(filepath.Join(dir, "node_modules"), filepath.Join(out, "node_modules")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "package.json"), []byte(`{"type": "module"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tsc := exec.CommandContext(ctx, "node", filepath.Join("node_modules", "typescript", "bin", "tsc"),
		"-p", "tsconfig.json", "--outDir", filepath.Join(out, "dist"))
	tsc.Dir = dir
	if b, err := tsc.CombinedOutput(); err != nil {
		t.Fatalf("tsc: %v\n%s", err, b)
	}

	l := startLocal(t, nil)
	run := exec.CommandContext(ctx, "node", "--test", "--test-reporter=spec", filepath.Join(out, "dist", "test", "client.test.js"))
	run.Env = append(os.Environ(),
		"API_URL="+l.url,
		"ADMIN_TOKEN="+makeToken(t, l, demo.AdminUserID),
		"MEMBER_TOKEN="+makeToken(t, l, demo.MemberUserID),
	)
	b, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test: %v\n%s", err, b)
	}
	t.Logf("%s", b)
}
