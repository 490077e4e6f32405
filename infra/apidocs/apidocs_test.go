package apidocs_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/mediacatalog/service/infra/apidocs"
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
