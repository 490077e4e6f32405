package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/mediacatalog/service/infra/tests/edgecache"
	"github.com/mediacatalog/service/infra/tests/testenv"
)

// TestBrowserCORSThroughCache: pages of three origins call a cached public route
// through a caching proxy that obeys the origin's headers (infra/tests/edgecache), as the
// frontend does, with credentials and without. The frontend and a CORS_ORIGINS origin
// are answered, each with its own Access-Control-Allow-Origin, whichever of them filled
// the cache first (Vary: Origin keeps one copy per origin); another origin is refused by
// the browser, with credentials or without, though the answer is in the cache. Without
// Vary: Origin the second allowed origin would be served the first one's header and
// refused.
func TestBrowserCORSThroughCache(t *testing.T) {
	page := func() *httptest.Server {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, `<!doctype html><title>a page</title><main id="page">a page</main>`)
		}))
		t.Cleanup(s.Close)
		return s
	}
	extra, other := page(), page()
	l := startLocal(t, map[string]string{"CORS_ORIGINS": extra.URL})
	addr, err := edgecache.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	proxy, err := edgecache.Start(ctx, edgecache.Config{Dir: t.TempDir(), Listen: addr,
		Upstream: strings.Replace(strings.TrimPrefix(l.url, "http://"), "localhost", "127.0.0.1", 1)})
	if err != nil {
		if err == edgecache.ErrNoNginx && os.Getenv("CI") != "true" {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	defer proxy.Stop()
	target := proxy.URL + "/tags?client=1"

	browser := testenv.Browser(t, browserTimeout)
	steps := []struct {
		origin      string
		credentials string // fetch's credentials mode
		ok          bool
	}{
		{l.frontend, "include", true}, // fills the cache for the frontend
		{l.frontend, "omit", true},
		{extra.URL, "include", true}, // another allowed origin: its own copy
		{extra.URL, "omit", true},
		{other.URL, "omit", false}, // not allowed: refused, with or without credentials
		{other.URL, "include", false},
		{l.frontend, "include", true}, // the frontend's copy is still its own
	}
	for i, st := range steps {
		if err := chromedp.Do(browser, chromedp.Navigate(st.origin)); err != nil {
			t.Fatalf("step %d: open %s: %v", i, st.origin, err)
		}
		got, err := chromedp.Run(browser, chromedp.Evaluate[string](
			`fetch(`+jsString(target)+`, {credentials: `+jsString(st.credentials)+`}).then(r => r.text().then(b => "ok " + r.status + " " + b)).catch(e => "refused " + e)`,
			chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if ok := strings.HasPrefix(got, "ok 200 ["); ok != st.ok {
			t.Errorf("step %d, a page of %s, credentials %s: %.120s; want answered: %v", i, st.origin, st.credentials, got, st.ok)
		}
	}

	// What the cache answers each origin, as a client that shows the headers sees it:
	// asked twice, the second answer from the cache, each origin's header its own.
	for _, o := range []struct{ origin, allow string }{{l.frontend, l.frontend}, {extra.URL, extra.URL}, {other.URL, ""}, {"", ""}} {
		for try := range 2 {
			req, _ := http.NewRequest(http.MethodGet, target, nil)
			if o.origin != "" {
				req.Header.Set("Origin", o.origin)
			}
			resp, err := edgecache.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if got := resp.Header.Get("Access-Control-Allow-Origin"); got != o.allow {
				t.Errorf("Origin %q, request %d: Access-Control-Allow-Origin %q, want %q", o.origin, try, got, o.allow)
			}
			if try == 1 && resp.Header.Get(edgecache.StatusHeader) != "HIT" {
				t.Errorf("Origin %q: the cache answered %q the second time, want HIT", o.origin, resp.Header.Get(edgecache.StatusHeader))
			}
		}
	}
}

// jsString is s as a JavaScript string literal.
func jsString(s string) string { return fmt.Sprintf("%q", s) }
