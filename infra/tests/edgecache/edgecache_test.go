package edgecache_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mediacatalog/service/infra/tests/edgecache"
)

// TestRenderAddsNoLifetime: the configuration caches, revalidates with the ETag,
// refreshes in the background and collapses misses, serves stale over errors only
// while inactive=1d keeps a copy (the origin's stale-if-error), and holds nothing
// that gives the cache a lifetime the origin did not say (proxy_cache_valid,
// proxy_ignore_headers, updating without the header, expires).
func TestRenderAddsNoLifetime(t *testing.T) {
	conf := edgecache.Config{Dir: "/tmp/x", Listen: "127.0.0.1:1", Upstream: "127.0.0.1:2"}.Render()
	for _, want := range []string{"proxy_cache edge;", "proxy_cache_revalidate on;", "proxy_cache_background_update on;",
		"proxy_cache_lock on;", "proxy_cache_use_stale error timeout http_500 http_502 http_503 http_504;", "inactive=1d", "server 127.0.0.1:2;", "listen 127.0.0.1:1;", "log_subrequest on;"} {
		if !strings.Contains(conf, want) {
			t.Errorf("no %q in\n%s", want, conf)
		}
	}
	for _, never := range []string{"proxy_cache_valid", "proxy_ignore_headers", "proxy_hide_header", "expires ", "proxy_cache_min_uses", "user root", "updating"} {
		if strings.Contains(conf, never) {
			t.Errorf("%q in\n%s", never, conf)
		}
	}
}

// TestObeysTheOrigin runs nginx (skipped without it, outside CI) in front of an origin
// and checks that it keeps what the origin allows for as long as it says, and nothing
// else: a public answer is a hit, a stale one is refreshed in the background with a
// 304, an answer with max-age=0, private, or Set-Cookie is never kept.
func TestObeysTheOrigin(t *testing.T) {
	if _, err := exec.LookPath("nginx"); err != nil {
		if _, serr := os.Stat("/usr/sbin/nginx"); serr != nil {
			if os.Getenv("CI") == "true" {
				t.Fatal(edgecache.ErrNoNginx)
			}
			t.Skip(edgecache.ErrNoNginx)
		}
	}
	var calls atomic.Int64
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		h := w.Header()
		h.Set("ETag", `W/"v1"`)
		switch r.URL.Path {
		case "/public":
			h.Set("Cache-Control", "public, max-age=1, s-maxage=1, stale-while-revalidate=30, stale-if-error=60")
		case "/zero":
			h.Set("Cache-Control", "public, max-age=0, s-maxage=0, stale-if-error=60")
		case "/private":
			h.Set("Cache-Control", "private, no-store")
		case "/cookie":
			h.Set("Cache-Control", "public, max-age=60")
			h.Set("Set-Cookie", "a=b")
		}
		if r.Header.Get("If-None-Match") == `W/"v1"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		_, _ = io.WriteString(w, "body")
	}))
	defer origin.Close()
	addr, err := edgecache.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	p, err := edgecache.Start(context.Background(), edgecache.Config{Dir: t.TempDir(), Listen: addr, Upstream: strings.TrimPrefix(origin.URL, "http://")})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	get := func(path string) string {
		resp, err := edgecache.Client().Get(p.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.Header.Get(edgecache.StatusHeader)
	}
	for _, path := range []string{"/zero", "/private", "/cookie"} {
		get(path)
		if s := get(path); s == "HIT" {
			t.Errorf("%s kept: %s", path, s)
		}
	}
	if a, b := get("/public"), get("/public"); a != "MISS" || b != "HIT" {
		t.Errorf("/public: %s then %s, want MISS then HIT", a, b)
	}
	time.Sleep(2200 * time.Millisecond) // nginx counts whole seconds
	if s := get("/public"); s != "STALE" {
		t.Errorf("/public past its max-age: %s, want STALE (served while refreshed)", s)
	}
	time.Sleep(200 * time.Millisecond)
	log, err := p.Log()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(log), "/public\t-\t200\tREVALIDATED\t304") {
		t.Errorf("no background revalidation answered 304 in the log:\n%s", log)
	}
}
