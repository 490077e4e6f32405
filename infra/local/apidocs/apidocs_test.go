package apidocs_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/mediacatalog/service/infra/local/apidocs"
	"github.com/mediacatalog/service/infra/local/localservices"
	"github.com/mediacatalog/service/shared/openapi"
)

func handler(t *testing.T) http.Handler {
	t.Helper()
	dist, err := apidocs.Install(context.Background(), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	h, err := apidocs.Handler(dist)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestHandler(t *testing.T) {
	h := handler(t)
	tests := []struct {
		method, target string
		status         int
		ctype          string // prefix of Content-Type
		contains       string // in the body (or the Location header of a redirect)
	}{
		{"GET", "/docs", 200, "text/html", `SwaggerUIBundle({`},
		{"HEAD", "/docs", 200, "text/html", ""},
		{"GET", "/docs/", 301, "", "/docs"},
		{"GET", "/docs/openapi.yaml", 200, "application/yaml", "url: http://example.test:3700\n"},
		{"GET", "/docs/swagger-ui-bundle.js", 200, "text/javascript", "SwaggerUIBundle"},
		{"GET", "/docs/swagger-ui.css", 200, "text/css", ".swagger-ui"},
		{"GET", "/docs/favicon-32x32.png", 200, "image/png", "PNG"},
		// The package's other files are not served: its own index.html and
		// initializer show the petstore.
		{"GET", "/docs/index.html", 404, "", ""},
		{"GET", "/docs/swagger-initializer.js", 404, "", ""},
		{"GET", "/docs/..%2Fpackage.json", 404, "", ""},
		{"POST", "/docs", 405, "", ""},
		{"DELETE", "/docs/openapi.yaml", 405, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.method+" "+tc.target, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, "http://example.test:3700"+tc.target, nil)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d", rec.Code, tc.status)
			}
			if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, tc.ctype) {
				t.Errorf("Content-Type %q, want %s", ct, tc.ctype)
			}
			got := rec.Body.String()
			if rec.Code == 301 {
				got = rec.Header().Get("Location")
			}
			if !strings.Contains(got, tc.contains) {
				t.Errorf("answer does not contain %q", tc.contains)
			}
		})
	}
}

// TestDocument: the document served is shared/openapi's, with the servers list naming
// the origin the request reached, and nothing else changed.
func TestDocument(t *testing.T) {
	h := handler(t)
	var want map[string]any
	if err := yaml.Unmarshal(openapi.Document, &want); err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{"localhost:3000", "127.0.0.1:41234"} {
		t.Run(host, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", "http://"+host+"/docs/openapi.yaml", nil))
			var got map[string]any
			if err := yaml.Unmarshal(rec.Body.Bytes(), &got); err != nil {
				t.Fatalf("served document: %v", err)
			}
			servers, _ := got["servers"].([]any)
			if len(servers) != 1 || servers[0].(map[string]any)["url"] != "http://"+host {
				t.Errorf("servers %v, want the one origin http://%s", got["servers"], host)
			}
			delete(got, "servers")
			rest := map[string]any{}
			for k, v := range want {
				if k != "servers" {
					rest[k] = v
				}
			}
			if !reflect.DeepEqual(got, rest) {
				t.Error("the served document differs from shared/openapi/openapi.yaml beyond servers")
			}
		})
	}
}

// From a fresh clone (no node_modules), Install runs npm ci from the lockfile and
// returns the folder with Swagger UI's files.
func TestInstallFromLockfile(t *testing.T) {
	root, err := localservices.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	clone := t.TempDir()
	pkg := filepath.Join(clone, "infra", "local", "apidocs")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"package.json", "package-lock.json", ".npmrc"} {
		b, err := os.ReadFile(filepath.Join(root, "infra", "local", "apidocs", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(pkg, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(clone, "go.mod"), gomod, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(clone)

	var log strings.Builder
	dist, err := apidocs.Install(context.Background(), &log)
	if err != nil {
		t.Fatalf("Install: %v", err)
	}
	if !strings.Contains(log.String(), "npm ci") {
		t.Errorf("log = %q, want it to say npm ci ran", log.String())
	}
	if want := filepath.Join(pkg, "node_modules", "swagger-ui-dist"); dist != want {
		t.Errorf("Install returned %s, want %s", dist, want)
	}
	for _, name := range []string{"swagger-ui-bundle.js", "swagger-ui.css"} {
		if _, err := os.Stat(filepath.Join(dist, name)); err != nil {
			t.Error(err)
		}
	}
	log.Reset()
	if _, err := apidocs.Install(context.Background(), &log); err != nil || log.Len() != 0 {
		t.Errorf("second Install: %v, log %q; want nothing to do", err, log.String())
	}
}
