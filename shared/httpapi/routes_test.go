package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mediacatalog/service/shared/httpapi"
)

// named answers 200 with its name, to see which route served a request.
func named(name string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(name)) })
}

func TestRegister(t *testing.T) {
	tests := []struct {
		name      string
		routes    []httpapi.Route
		wantPanic bool
		// target -> the route that serves it, when registered
		serves map[string]string
	}{
		{
			name: "distinct patterns",
			routes: []httpapi.Route{
				{Pattern: "GET /tags", Handler: named("list")},
				{Pattern: "GET /tags/id/{id}", Handler: named("one")},
			},
			serves: map[string]string{"/tags": "list", "/tags/id/3": "one"},
		},
		{
			name: "a duplicate pattern",
			routes: []httpapi.Route{
				{Pattern: "GET /tags", Handler: named("list")},
				{Pattern: "GET /tags", Handler: named("again")},
			},
			wantPanic: true,
		},
		{
			name: "overlapping patterns, neither more specific",
			routes: []httpapi.Route{
				{Pattern: "GET /auth/oauth/{provider}/callback", Handler: named("login callback")},
				{Pattern: "GET /auth/oauth/link/{provider}", Handler: named("link start")},
			},
			wantPanic: true,
		},
		{
			name: "the same, one registered under a wider mux pattern on purpose",
			routes: []httpapi.Route{
				{Pattern: "GET /auth/oauth/{provider}/callback", Mux: "GET /auth/oauth/{provider}/{action}", Handler: named("login callback")},
				{Pattern: "GET /auth/oauth/link/{provider}", Handler: named("link start")},
			},
			serves: map[string]string{
				"/auth/oauth/google/callback": "login callback",
				"/auth/oauth/link/callback":   "link start",
				"/auth/oauth/link/google":     "link start",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mux *http.ServeMux
			panicked := func() (p bool) {
				defer func() { p = recover() != nil }()
				mux = httpapi.NewMux(tt.routes)
				return false
			}()
			if panicked != tt.wantPanic {
				t.Fatalf("panicked %v, want %v", panicked, tt.wantPanic)
			}
			for target, want := range tt.serves {
				rec := httptest.NewRecorder()
				mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
				if got := rec.Body.String(); got != want {
					t.Errorf("%s served by %q, want %q", target, got, want)
				}
			}
		})
	}
}
