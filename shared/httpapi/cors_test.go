package httpapi

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
)

// TestCORS: an allowed origin is echoed as sent, with credentials; any other origin,
// and a request without one, gets no CORS header; a preflight is answered here, its
// allowances only for an allowed origin. The header values made once per process stay
// as they were when a handler adds to a response's copy.
func TestCORS(t *testing.T) {
	const frontend = "https://app.example"
	tests := []struct {
		name, method, origin, preflight string
		wantOrigin                      string // "": no CORS header at all
		wantStatus                      int
	}{
		{"allowed origin", http.MethodGet, frontend, "", frontend, http.StatusOK},
		{"allowed origin with a trailing slash", http.MethodGet, frontend + "/", "", frontend + "/", http.StatusOK},
		{"another origin", http.MethodGet, "https://evil.example", "", "", http.StatusOK},
		{"an allowed origin's prefix", http.MethodGet, "https://app.example.evil", "", "", http.StatusOK},
		{"no origin", http.MethodGet, "", "", "", http.StatusOK},
		{"preflight of an allowed origin", http.MethodOptions, frontend, "POST", frontend, http.StatusNoContent},
		{"preflight of another origin", http.MethodOptions, "https://evil.example", "POST", "", http.StatusNoContent},
	}
	h := cors(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A handler adding to the fixed values: its response's copy grows, not theirs.
		for _, k := range []string{"Access-Control-Allow-Credentials", "Access-Control-Allow-Origin"} {
			if w.Header().Get(k) != "" {
				w.Header().Add(k, "also")
			}
		}
	}), &Options{CORSOrigins: []string{frontend, "https://admin.example"}})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(tt.method, "/tags", nil)
			if tt.origin != "" {
				req.Header.Set("Origin", tt.origin)
			}
			if tt.preflight != "" {
				req.Header.Set("Access-Control-Request-Method", tt.preflight)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			res := rec.Result()
			if res.StatusCode != tt.wantStatus {
				t.Errorf("status %d, want %d", res.StatusCode, tt.wantStatus)
			}
			if got := res.Header.Get("Vary"); got != "Origin" {
				t.Errorf("Vary %q, want Origin", got)
			}
			if got := res.Header.Get("Access-Control-Allow-Origin"); got != tt.wantOrigin {
				t.Errorf("Access-Control-Allow-Origin %q, want %q", got, tt.wantOrigin)
			}
			wantCredentials, wantMethods, wantAge := "", "", ""
			if tt.wantOrigin != "" {
				wantCredentials = "true"
				if tt.preflight != "" {
					wantMethods, wantAge = "GET, POST, DELETE, OPTIONS", "600"
				}
			}
			for k, want := range map[string]string{"Access-Control-Allow-Credentials": wantCredentials,
				"Access-Control-Allow-Methods": wantMethods, "Access-Control-Max-Age": wantAge} {
				if got := res.Header.Get(k); got != want {
					t.Errorf("%s %q, want %q", k, got, want)
				}
			}
			if tt.preflight != "" && tt.wantOrigin != "" {
				if got := res.Header.Get("Access-Control-Allow-Headers"); got != "Content-Type, Authorization, X-Requested-With" {
					t.Errorf("Access-Control-Allow-Headers %q", got)
				}
			}
			if tt.preflight == "" && tt.wantOrigin != "" {
				if got := res.Header.Values("Access-Control-Allow-Origin"); !slices.Equal(got, []string{tt.wantOrigin, "also"}) {
					t.Errorf("Access-Control-Allow-Origin lines %q", got)
				}
			}
		})
	}
	if !slices.Equal(corsCredentials, []string{"true"}) {
		t.Errorf("the fixed credentials value became %q", corsCredentials)
	}
}
