package openapi_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/mediacatalog/service/infra/local/localservices"
)

// clientDir is the TypeScript client's npm package, next to the document.
const clientDir = "client"

// installClient installs the client's npm-pinned tools (npm ci, once per lockfile).
func installClient(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(clientDir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := localservices.NPMInstall(ctx, os.Stderr, dir, filepath.Join("openapi-typescript", "bin", "cli.js")); err != nil {
		t.Fatalf("install the client's tools: %v", err)
	}
	return dir
}

// TestClientTypesCurrent fails when the committed types of the TypeScript client are
// not what openapi-typescript generates from the document today: a change of the
// document needs `make client` and the regenerated file in the same commit.
func TestClientTypesCurrent(t *testing.T) {
	dir := installClient(t)
	out := filepath.Join(t.TempDir(), "api.d.ts")
	// The package's own generate script, with its options, as make client runs it.
	cmd := exec.Command("npm", "run", "--silent", "generate", "--", "--output", out)
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("openapi-typescript: %v\n%s", err, b)
	}
	want, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "src", "api.d.ts"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("shared/openapi/client/src/api.d.ts is not generated from the current openapi.yaml: run make client")
	}
}
