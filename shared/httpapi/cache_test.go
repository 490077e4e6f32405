package httpapi_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/httpapi"
)

// TestPublicCaching: a public route's answer is cacheable by its status, as the
// middleware writes it: 200 the route's policy with an ETag, and 304 to an
// If-None-Match naming it (weakly too, "*" too), HEAD without a body; a 4xx the short
// CacheMissing with an ETag; a 5xx and any answer with Set-Cookie private, no-store;
// an answer of a route not declared public private, no-store.
func TestPublicCaching(t *testing.T) {
	body := strings.Repeat(`{"name":"kodansha"}`, 100) // long enough to be gzipped
	tests := []struct {
		name     string
		public   bool
		handler  http.HandlerFunc
		method   string
		header   map[string]string
		status   int
		cache    string
		etag     bool
		bodySize int // -1: any
	}{
		{"200", true, jsonAnswer(body, 200, false), "GET", nil, 200, httpapi.CacheCatalog, true, len(body) + 1},
		{"200 gzipped", true, jsonAnswer(body, 200, false), "GET", map[string]string{"Accept-Encoding": "gzip"}, 200, httpapi.CacheCatalog, true, -1},
		{"HEAD", true, jsonAnswer(body, 200, false), "HEAD", nil, 200, httpapi.CacheCatalog, true, 0},
		{"Range ignored", true, jsonAnswer(body, 200, false), "GET", map[string]string{"Range": "bytes=0-9"}, 200, httpapi.CacheCatalog, true, len(body) + 1},
		{"If-None-Match *", true, jsonAnswer(body, 200, false), "GET", map[string]string{"If-None-Match": "*"}, 304, httpapi.CacheCatalog, true, 0},
		{"If-None-Match other", true, jsonAnswer(body, 200, false), "GET", map[string]string{"If-None-Match": `"nope"`}, 200, httpapi.CacheCatalog, true, len(body) + 1},
		{"404", true, errorAnswer(apperr.New(apperr.NotFound, "Tag not found")), "GET", nil, 404, httpapi.CacheMissing, true, -1},
		{"400", true, errorAnswer(apperr.MissingParams()), "GET", nil, 400, httpapi.CacheMissing, true, -1},
		{"500", true, errorAnswer(errBoom), "GET", nil, 500, httpapi.CachePrivate, false, -1},
		{"503", true, errorAnswer(apperr.New(apperr.Unavailable, "Service temporarily unavailable")), "GET", nil, 503, httpapi.CachePrivate, false, -1},
		{"Set-Cookie before the answer", true, jsonAnswer(body, 200, true), "GET", nil, 200, httpapi.CachePrivate, false, len(body) + 1},
		{"Set-Cookie after the first byte", true, lateCookie(body), "GET", nil, 200, httpapi.CachePrivate, false, -1},
		{"a route not declared public", false, jsonAnswer(body, 200, false), "GET", nil, 200, httpapi.CachePrivate, false, len(body) + 1},
		{"a redirect", true, func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/x", http.StatusFound) }, "GET", nil, 302, httpapi.CachePrivate, false, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var h http.Handler = tc.handler
			if tc.public {
				h = httpapi.Public(httpapi.CacheCatalog, h)
			}
			h = httpapi.Wrap(h, httpapi.Options{Log: slog.New(slog.DiscardHandler)})
			req := httptest.NewRequest(tc.method, "/tags?client=1", nil)
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d", rec.Code, tc.status)
			}
			if got := rec.Header()["Cache-Control"]; len(got) != 1 || got[0] != tc.cache {
				t.Errorf("Cache-Control %q, want %q", got, tc.cache)
			}
			etag := rec.Header().Get("ETag")
			if (etag != "") != tc.etag {
				t.Errorf("ETag %q, want one: %v", etag, tc.etag)
			}
			if tc.bodySize >= 0 && rec.Body.Len() != tc.bodySize {
				t.Errorf("body of %d bytes, want %d", rec.Body.Len(), tc.bodySize)
			}
			if strings.HasPrefix(tc.cache, "public") && rec.Header()["Set-Cookie"] != nil {
				t.Errorf("a cacheable answer with Set-Cookie %q", rec.Header()["Set-Cookie"])
			}
			if etag == "" || tc.status != 200 {
				return
			}
			// The same answer asked again with its ETag, as a cache revalidates.
			for _, inm := range []string{etag, strings.TrimPrefix(etag, "W/"), `"other", ` + etag} {
				req := httptest.NewRequest(http.MethodGet, "/tags?client=1", nil)
				req.Header.Set("If-None-Match", inm)
				req.Header.Set("Accept-Encoding", "gzip")
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusNotModified || rec.Body.Len() != 0 || rec.Header().Get("ETag") != etag ||
					rec.Header().Get("Cache-Control") != tc.cache {
					t.Errorf("If-None-Match %s: %d, %d bytes, ETag %q, Cache-Control %q; want 304 keeping ETag and Cache-Control",
						inm, rec.Code, rec.Body.Len(), rec.Header().Get("ETag"), rec.Header().Get("Cache-Control"))
				}
			}
		})
	}
}

// TestPublicETagFollowsTheBody: two different answers have different ETags, equal
// answers equal ones (a cache's 304 means "what you hold is what I would send").
func TestPublicETagFollowsTheBody(t *testing.T) {
	answer := "a"
	h := httpapi.Wrap(httpapi.Public(httpapi.CacheCatalog, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		httpapi.JSON(w, r, http.StatusOK, answer)
	})), httpapi.Options{Log: slog.New(slog.DiscardHandler)})
	etag := func() string {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/publisher/random?client=1", nil))
		return rec.Header().Get("ETag")
	}
	a1, a2 := etag(), etag()
	answer = "b"
	b := etag()
	if a1 == "" || a1 != a2 || a1 == b {
		t.Errorf("ETags %q, %q of one answer and %q of another", a1, a2, b)
	}
}

var errBoom = boomError{}

type boomError struct{}

func (boomError) Error() string { return "boom" }

func jsonAnswer(body string, status int, cookie bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if cookie {
			http.SetCookie(w, &http.Cookie{Name: "refreshToken", Value: "x"})
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body + "\n"))
	}
}

func errorAnswer(err error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { httpapi.Error(w, r, err) }
}

// lateCookie sets a cookie after the first write of a body, which a held answer still
// sends.
func lateCookie(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
		http.SetCookie(w, &http.Cookie{Name: "refreshToken", Value: "x"})
	}
}
