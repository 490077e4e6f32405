package routegroups_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/httpapi"
)

// publicRead is the rule that decides which routes are public reads: every GET outside
// the administration and the OAuth routes (which read the session or set cookies).
// The test holds each route to its class, so a new route is either cacheable with
// every header a public answer needs, or private.
func publicRead(rt httpapi.Route) bool {
	p := rt.Path()
	return rt.Method() == http.MethodGet && !strings.HasPrefix(p, "/admin-") && !strings.HasPrefix(p, "/auth/")
}

// invalidated are the public reads whose edge copies POST /user/avatar/change/{id}
// invalidates: the edge may keep them longer than the five minutes of catalog data.
var invalidated = map[string]bool{"GET /user/avatar/{id}/{res}": true, "GET /user/avatar/{id}": true}

// TestCacheHeadersPerRoute walks the route table and holds every route's answers to
// their class:
//   - a public read's 200: Cache-Control public with a browser max-age, an edge
//     s-maxage of at most 300 s (a day for the avatars, which are invalidated on
//     change), stale-while-revalidate (unless the edge revalidates
//     every time, s-maxage=0) and stale-if-error of at least an hour; an ETag, and 304
//     to an If-None-Match naming it;
//   - a public read's 4xx: public and short-lived (at most a minute), never stale;
//   - every other route's answer, with a session and without: private, no-store;
//   - any answer with the database gone (5xx): no-store, not public, no ETag;
//   - no answer that is public carries Set-Cookie.
func TestCacheHeadersPerRoute(t *testing.T) {
	s := newServer(t, nil)
	evs := eventsByRoute(t)
	var seen []*httptest.ResponseRecorder
	do := func(t *testing.T, req *http.Request) *httptest.ResponseRecorder {
		t.Helper()
		rec := testenv.Do(t, s.h, req)
		seen = append(seen, rec)
		return rec
	}
	for _, rt := range s.routes {
		ev, ok := evs[rt.Pattern]
		if !ok {
			t.Errorf("%s: no event in events/ to call it with", rt.Pattern)
			continue
		}
		if strings.HasPrefix(rt.Pattern, "GET /user/avatar/") { // a user of the test's database
			ev.RawPath = strings.Replace(ev.RawPath, "/3", "/"+strconv.FormatInt(s.userID, 10), 1)
		}
		t.Run(rt.Pattern, func(t *testing.T) {
			if !publicRead(rt) {
				for _, cookie := range []*http.Cookie{s.cookie, nil} {
					rec := do(t, eventRequest(t, ev, cookie))
					if got := rec.Header()["Cache-Control"]; len(got) != 1 || got[0] != httpapi.CachePrivate {
						t.Errorf("with a session %v: %d with Cache-Control %q, want %q", cookie != nil, rec.Code, got, httpapi.CachePrivate)
					}
				}
				return
			}
			rec := do(t, eventRequest(t, ev, nil))
			if rec.Code != http.StatusOK {
				t.Fatalf("%d %s, want 200", rec.Code, rec.Body)
			}
			cc := directives(t, rec.Header())
			edge, most := cc.seconds(t, "s-maxage"), 300
			if invalidated[rt.Pattern] {
				most = 86400
			}
			if !cc.has("public") || cc.seconds(t, "max-age") < 0 || edge < 0 || edge > most ||
				cc.seconds(t, "stale-if-error") < 3600 || (edge > 0 && cc.seconds(t, "stale-while-revalidate") <= 0) {
				t.Errorf("200 with Cache-Control %q: want public, max-age, s-maxage ≤ 300, stale-while-revalidate and stale-if-error ≥ 3600",
					rec.Header().Get("Cache-Control"))
			}
			etag := rec.Header().Get("ETag")
			if etag == "" {
				t.Fatal("200 without an ETag")
			}
			cond := eventRequest(t, ev, nil)
			cond.Header.Set("If-None-Match", etag)
			again := do(t, cond)
			switch {
			case again.Code == http.StatusNotModified && again.Body.Len() == 0 && again.Header().Get("ETag") == etag:
			case edge == 0 && again.Code == http.StatusOK: // a new draw that came out differently
			default:
				t.Errorf("If-None-Match %s: %d, ETag %q, %d bytes; want 304 without a body", etag, again.Code, again.Header().Get("ETag"), again.Body.Len())
			}
			miss := do(t, testenv.Malformed(missingRequest(t, rt, ev)))
			if miss.Code < 400 || miss.Code >= 500 {
				t.Fatalf("%d %s, want a 4xx", miss.Code, miss.Body)
			}
			mc := directives(t, miss.Header())
			if !mc.has("public") || mc.seconds(t, "s-maxage") > 60 || mc.seconds(t, "max-age") > 60 || mc.has("stale-if-error") ||
				mc.has("stale-while-revalidate") || miss.Header().Get("ETag") == "" {
				t.Errorf("%d with Cache-Control %q, ETag %q: want public, at most a minute, never stale, with an ETag",
					miss.Code, miss.Header().Get("Cache-Control"), miss.Header().Get("ETag"))
			}
		})
	}
	// The database gone: every route fails, and no failure is cached.
	s.db.DB.Close()
	for _, rt := range s.routes {
		ev, ok := evs[rt.Pattern]
		if !ok {
			continue
		}
		t.Run("database gone/"+rt.Pattern, func(t *testing.T) {
			rec := httptest.NewRecorder()
			s.h.ServeHTTP(rec, eventRequest(t, ev, s.cookie))
			seen = append(seen, rec)
			cc := directives(t, rec.Header())
			if rec.Code >= 500 && (!cc.has("no-store") || cc.has("public") || rec.Header().Get("ETag") != "") {
				t.Errorf("%d with Cache-Control %q, ETag %q: want no-store, never public", rec.Code, rec.Header().Get("Cache-Control"), rec.Header().Get("ETag"))
			}
			if publicRead(rt) && rec.Code < 500 {
				t.Errorf("%d without a database, want a 5xx", rec.Code)
			}
		})
	}
	for _, rec := range seen {
		if strings.Contains(rec.Header().Get("Cache-Control"), "public") && rec.Header()["Set-Cookie"] != nil {
			t.Errorf("a cacheable answer (%d, %q) carries Set-Cookie %q", rec.Code, rec.Header().Get("Cache-Control"), rec.Header()["Set-Cookie"])
		}
	}
}

// cacheControl is an answer's Cache-Control directives.
type cacheControl map[string]string

func directives(t *testing.T, h http.Header) cacheControl {
	t.Helper()
	cc := cacheControl{}
	for _, line := range h["Cache-Control"] {
		for _, d := range strings.Split(line, ",") {
			k, v, _ := strings.Cut(strings.TrimSpace(d), "=")
			cc[strings.ToLower(k)] = v
		}
	}
	return cc
}

func (cc cacheControl) has(name string) bool { _, ok := cc[name]; return ok }

// seconds is a directive's number of seconds, -1 when it is absent.
func (cc cacheControl) seconds(t *testing.T, name string) int {
	v, ok := cc[name]
	if !ok {
		return -1
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Errorf("Cache-Control %s=%q is not a number of seconds", name, v)
		return -1
	}
	return n
}

// eventsByRoute reads every event of events/ by its route key.
func eventsByRoute(t *testing.T) map[string]events.APIGatewayV2HTTPRequest {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "events", "*", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("events: %v (%d files)", err, len(files))
	}
	out := map[string]events.APIGatewayV2HTTPRequest{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var ev events.APIGatewayV2HTTPRequest
		if err := json.Unmarshal(b, &ev); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[ev.RouteKey] = ev
	}
	return out
}

// eventRequest is the request an event describes, with cookie as the session (none
// when nil) and the event's other cookies.
func eventRequest(t *testing.T, ev events.APIGatewayV2HTTPRequest, cookie *http.Cookie) *http.Request {
	t.Helper()
	target := ev.RawPath
	if ev.RawQueryString != "" {
		target += "?" + ev.RawQueryString
	}
	body := []byte(ev.Body)
	if ev.IsBase64Encoded {
		var err error
		if body, err = base64.StdEncoding.DecodeString(ev.Body); err != nil {
			t.Fatal(err)
		}
	}
	req := httptest.NewRequest(ev.RequestContext.HTTP.Method, target, bytes.NewReader(body))
	for k, v := range ev.Headers {
		if !strings.EqualFold(k, "cookie") && !strings.EqualFold(k, "accept-encoding") {
			req.Header.Set(k, v)
		}
	}
	for _, c := range ev.Cookies {
		if !strings.HasPrefix(c, "refreshToken=") {
			req.Header.Add("Cookie", c)
		}
	}
	if cookie != nil {
		req.AddCookie(cookie)
	}
	return req
}

// missingRequest is the event's request made to name nothing: its path values an id
// or slug no row has, or its client malformed when the route has no path value (a
// list of an unknown client is an empty list, not a 4xx).
func missingRequest(t *testing.T, rt httpapi.Route, ev events.APIGatewayV2HTTPRequest) *http.Request {
	t.Helper()
	if len(ev.PathParameters) == 0 {
		req := eventRequest(t, ev, nil)
		q := req.URL.Query()
		q.Set("client", "none")
		req.URL.RawQuery = q.Encode()
		return req
	}
	path := rt.Path()
	for _, seg := range strings.Split(path, "/") {
		if strings.HasPrefix(seg, "{") {
			switch name := strings.Trim(seg, "{}"); name {
			case "res":
				path = strings.Replace(path, seg, "huge", 1)
			default:
				path = strings.Replace(path, seg, "999999", 1)
			}
		}
	}
	if rt.Pattern == "GET /publisher/publications/{id}" {
		path = strings.Replace(path, "999999", "none", 1) // an unknown publisher has an empty page
	}
	ev.RawPath = path
	return eventRequest(t, ev, nil)
}
