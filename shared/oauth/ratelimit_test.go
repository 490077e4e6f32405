package oauth_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/config"
	"github.com/mediacatalog/service/shared/dynamo"
	"github.com/mediacatalog/service/shared/oauth"
)

// from serves a GET from the given source address.
func from(t *testing.T, e *env, ip, target string, cookies ...*http.Cookie) *httptest.ResponseRecorder {
	t.Helper()
	req := testenv.Request(http.MethodGet, target, nil, cookies...)
	req.RemoteAddr = net.JoinHostPort(ip, "50000")
	req.Header.Set("X-Forwarded-For", "192.0.2.99") // never consulted
	return testenv.Do(t, e.h, req)
}

func wantRateHeaders(t *testing.T, h http.Header, remaining int) {
	t.Helper()
	if h.Get("RateLimit-Limit") != "20" || h.Get("RateLimit-Remaining") != strconv.Itoa(remaining) {
		t.Errorf("RateLimit-Limit %q, RateLimit-Remaining %q; want 20, %d", h.Get("RateLimit-Limit"), h.Get("RateLimit-Remaining"), remaining)
	}
	if reset, err := strconv.Atoi(h.Get("RateLimit-Reset")); err != nil || reset < 0 || reset > 15*60 {
		t.Errorf("RateLimit-Reset %q, want seconds within the 15-minute window", h.Get("RateLimit-Reset"))
	}
}

func TestRateLimitConcurrent(t *testing.T) {
	e := newEnv(t, envOptions{limit: 20})
	member := e.tokenOf(t, e.demoUser(t, "member"))
	// Every route shares the limiter: the requests go to all six.
	targets := []struct {
		method, target string
	}{
		{http.MethodGet, "/auth/oauth/google"},
		{http.MethodGet, "/auth/oauth/google/callback?state=x&code=y"},
		{http.MethodGet, "/auth/oauth/link/github"},
		{http.MethodGet, "/auth/oauth/link/github/callback?state=x&code=y"},
		{http.MethodGet, "/auth/oauth/connections"},
		{http.MethodDelete, "/auth/oauth/unlink/discord"},
	}
	const n = 100
	recs := make([]*httptest.ResponseRecorder, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			tg := targets[i%len(targets)]
			req := testenv.Request(tg.method, tg.target, nil, member)
			req.RemoteAddr = "198.51.100.7:" + strconv.Itoa(40000+i)
			req.Header.Set("X-Forwarded-For", "192.0.2."+strconv.Itoa(i%250)) // never consulted
			recs[i] = testenv.Do(t, e.h, req)
		})
	}
	wg.Wait()
	admitted, limited := 0, 0
	remaining := map[string]bool{}
	for _, rec := range recs {
		if rec.Code == http.StatusTooManyRequests {
			limited++
			wantMessage(t, rec, http.StatusTooManyRequests, "Too many requests, please try again later.")
			wantRateHeaders(t, rec.Header(), 0)
			if ra, err := strconv.Atoi(rec.Header().Get("Retry-After")); err != nil || ra < 1 || ra > 15*60 {
				t.Errorf("Retry-After %q, want seconds until the window ends", rec.Header().Get("Retry-After"))
			}
			continue
		}
		admitted++
		remaining[rec.Header().Get("RateLimit-Remaining")] = true
		if rec.Header().Get("Retry-After") != "" {
			t.Error("an admitted request has Retry-After")
		}
	}
	if admitted != 20 || limited != 80 {
		t.Fatalf("%d admitted, %d limited; want 20 and 80", admitted, limited)
	}
	if len(remaining) != 20 {
		t.Errorf("admitted requests saw %d distinct RateLimit-Remaining values, want 20 (0..19)", len(remaining))
	}
	// Another address is unaffected.
	rec := from(t, e, "203.0.113.50", "/auth/oauth/google")
	if rec.Code != http.StatusFound {
		t.Fatalf("another address got %d, want 302", rec.Code)
	}
	wantRateHeaders(t, rec.Header(), 19)
}

func TestRateLimitSequential(t *testing.T) {
	e := newEnv(t, envOptions{limit: 20})
	for i := 1; i <= 21; i++ {
		rec := from(t, e, "2001:db8::7", "/auth/oauth/facebook")
		if i <= 20 {
			wantMessage(t, rec, http.StatusBadRequest, "Unsupported provider")
			wantRateHeaders(t, rec.Header(), 20-i)
			continue
		}
		wantMessage(t, rec, http.StatusTooManyRequests, "Too many requests, please try again later.")
		wantRateHeaders(t, rec.Header(), 0)
		if rec.Header().Get("Retry-After") == "" {
			t.Error("no Retry-After")
		}
	}
	// IPv6 callers count by their /64: another address of it is limited too.
	if rec := from(t, e, "2001:db8::8", "/auth/oauth/facebook"); rec.Code != http.StatusTooManyRequests {
		t.Errorf("another address of the /64 got %d, want 429", rec.Code)
	}
	// The limit is per source /64, whatever X-Forwarded-For says.
	if rec := from(t, e, "2001:db8:0:1::8", "/auth/oauth/facebook"); rec.Code != http.StatusBadRequest {
		t.Errorf("an address of another /64 got %d, want 400", rec.Code)
	}
}

func TestRateLimitEvents(t *testing.T) {
	e := newEnv(t, envOptions{limit: 20})
	ev := testenv.Event(t, "oauth/login.json")
	for i := 1; i <= 21; i++ {
		ev.Headers["x-forwarded-for"] = "192.0.2." + strconv.Itoa(i) // spoofed each time: ignored
		resp := testenv.Invoke(t, e.h, ev)
		want := http.StatusFound
		if i == 21 {
			want = http.StatusTooManyRequests
		}
		if resp.StatusCode != want {
			t.Fatalf("event %d: status %d %s, want %d", i, resp.StatusCode, resp.Body, want)
		}
		if got := headerOf(resp).Get("RateLimit-Remaining"); got != strconv.Itoa(max(20-i, 0)) {
			t.Errorf("event %d: RateLimit-Remaining %q", i, got)
		}
	}
	// Another sourceIp in the request context has its own count.
	ev.RequestContext.HTTP.SourceIP = "198.51.100.200"
	if resp := testenv.Invoke(t, e.h, ev); resp.StatusCode != http.StatusFound || headerOf(resp).Get("RateLimit-Remaining") != "19" {
		t.Errorf("another source address: %d, remaining %q", resp.StatusCode, headerOf(resp).Get("RateLimit-Remaining"))
	}
}

func TestRateLimiterUnavailable(t *testing.T) {
	// A DynamoDB endpoint where nothing listens.
	ln := httptest.NewServer(http.NotFoundHandler())
	dead := ln.URL
	ln.Close()
	client := testenv.DynamoClient(t, config.Config{AWSRegion: "us-east-1", DynamoEndpoint: dead})
	limiter, err := dynamo.NewRateLimiter(client, "unreachable", 20, 15*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, envOptions{limiter: limiter})
	member := e.tokenOf(t, e.demoUser(t, "member"))
	for _, tg := range []struct{ method, target string }{
		{http.MethodGet, "/auth/oauth/google"},
		{http.MethodGet, "/auth/oauth/google/callback?state=x&code=y"},
		{http.MethodGet, "/auth/oauth/link/github"},
		{http.MethodGet, "/auth/oauth/link/github/callback?state=x&code=y"},
		{http.MethodGet, "/auth/oauth/connections"},
		{http.MethodDelete, "/auth/oauth/unlink/discord"},
	} {
		t.Run(tg.method+" "+tg.target, func(t *testing.T) {
			t.Parallel() // each waits out the limiter's timeout
			rec := e.do(t, tg.method, tg.target, member)
			wantMessage(t, rec, http.StatusServiceUnavailable, oauth.MsgUnavailable)
			if rec.Header().Get("Location") != "" {
				t.Error("a request that failed closed was redirected")
			}
		})
	}
}

// TestRateLimitViewerAddress, as an attacker: the limiter counts by the viewer's
// address CloudFront gives (CloudFront-Viewer-Address) only on a request that carries
// the origin secret. A forged viewer address without it spends the attacker's own
// limit (no secret configured) or is refused before the limiter (secret configured);
// either way the victim keeps the whole of theirs. Through the distribution, viewers
// behind one edge address each have their own limit.
func TestRateLimitViewerAddress(t *testing.T) {
	const (
		secret   = "origin-secret-for-the-test-0123456789"
		attacker = "203.0.113.66"
		victim   = "198.51.100.7"
		edge     = "192.0.2.200" // a CloudFront edge's address, as the origin sees it
	)
	send := func(e *env, conn, viewer, originSecret string) *httptest.ResponseRecorder {
		req := testenv.Request(http.MethodGet, "/auth/oauth/google", nil)
		req.RemoteAddr = net.JoinHostPort(conn, "50000")
		if viewer != "" {
			req.Header.Set("CloudFront-Viewer-Address", net.JoinHostPort(viewer, "443"))
		}
		if originSecret != "" {
			req.Header.Set("X-Origin-Verify", originSecret)
		}
		rec := httptest.NewRecorder()
		e.h.ServeHTTP(rec, req)
		return rec
	}
	t.Run("no secret configured", func(t *testing.T) {
		e := newEnv(t, envOptions{limit: 20})
		for i := 1; i <= 21; i++ {
			rec := send(e, attacker, victim, "")
			if want := map[bool]int{true: http.StatusFound, false: http.StatusTooManyRequests}[i <= 20]; rec.Code != want {
				t.Fatalf("attacker's request %d: %d, want %d", i, rec.Code, want)
			}
		}
		rec := send(e, victim, "", "")
		if rec.Code != http.StatusFound {
			t.Fatalf("the victim got %d, want 302", rec.Code)
		}
		wantRateHeaders(t, rec.Header(), 19)
	})
	t.Run("secret configured", func(t *testing.T) {
		e := newEnv(t, envOptions{limit: 20, originSecrets: []string{secret}})
		for range 30 {
			if rec := send(e, attacker, victim, ""); rec.Code != http.StatusForbidden {
				t.Fatalf("without the secret: %d, want 403", rec.Code)
			}
			if rec := send(e, attacker, victim, "wrong-"+secret); rec.Code != http.StatusForbidden {
				t.Fatalf("with a wrong secret: %d, want 403", rec.Code)
			}
		}
		// Through the distribution: the attacker spends their own limit...
		for i := 1; i <= 21; i++ {
			rec := send(e, edge, attacker, secret)
			if want := map[bool]int{true: http.StatusFound, false: http.StatusTooManyRequests}[i <= 20]; rec.Code != want {
				t.Fatalf("attacker's request %d through the edge: %d, want %d", i, rec.Code, want)
			}
		}
		// ...and the victim behind the same edge address has the whole of theirs.
		rec := send(e, edge, victim, secret)
		if rec.Code != http.StatusFound {
			t.Fatalf("the victim through the edge got %d, want 302", rec.Code)
		}
		wantRateHeaders(t, rec.Header(), 19)
	})
}
