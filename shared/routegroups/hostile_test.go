package routegroups_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/mediacatalog/service/infra/local/demo"
	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/app"
	"github.com/mediacatalog/service/shared/auth"
	"github.com/mediacatalog/service/shared/config"
	"github.com/mediacatalog/service/shared/httpapi"
	"github.com/mediacatalog/service/shared/routegroups"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// server is every route group on one handler, built as the local server builds it
// (app.Handler over routegroups.All), on a database with the demo data, DynamoDB
// tables and a bucket of the test's own; avatar changes are told to the same handler.
type server struct {
	h      http.Handler
	db     *testenv.DB
	routes []httpapi.Route
	cookie *http.Cookie // the demo admin's session (every permission)
	userID int64
	logs   *errorRecorder
	// sessions issue the sessions of other users
	sessions *auth.Sessions
}

func newServer(t *testing.T, extra map[string]string) *server {
	t.Helper()
	return newServerWith(t, serverOptions{extra: extra})
}

// serverOptions change what newServerWith builds.
type serverOptions struct {
	extra map[string]string // environment beside the defaults
	db    *testenv.DB       // default: a fresh database with the demo data
	log   slog.Handler      // default: errors are kept (server.logs)
}

func newServerWith(t *testing.T, o serverOptions) *server {
	t.Helper()
	db := o.db
	if db == nil {
		db = testenv.NewDemoDB(t)
	}
	extra := o.extra
	_, stateTable, rateTable := testenv.DynamoTables(t)
	var h http.Handler
	cdnSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	t.Cleanup(cdnSrv.Close)
	env := map[string]string{
		"DB_ENV":            "test",
		"JWT_SECRET":        "hostile-test-secret-0123456789abcdef",
		"DATABASE_URL":      db.URL,
		"DYNAMODB_ENDPOINT": testenv.DynamoEndpoint(t),
		"OAUTH_STATE_TABLE": stateTable,
		"RATE_LIMIT_TABLE":  rateTable,
		"OAUTH_RATE_LIMIT":  "1000000",
		"S3_ENDPOINT":       testenv.S3Endpoint(t),
		"S3_BUCKET":         os.Getenv("S3_BUCKET"),
		"FILE_SERVICE":      "true",
		"AVATAR_NOTIFIER":   "http",
		"CDN_URL":           cdnSrv.URL,
		"IMAGE_MAX_BYTES":   "262144",
		"REQUEST_TIMEOUT":   "20s",
	}
	for k, v := range extra {
		env[k] = v
	}
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	logs := &errorRecorder{}
	var log slog.Handler = logs
	if o.log != nil {
		log = o.log
	}
	a := app.New(cfg, slog.New(log))
	a.Getenv = func(k string) string { return env[k] }
	a.SetDB(db.DB)
	ctx := context.Background()
	h, err = a.Handler(ctx, routegroups.All()...)
	if err != nil {
		t.Fatal(err)
	}
	routes, err := a.Routes(ctx, routegroups.All()...)
	if err != nil {
		t.Fatal(err)
	}
	sessions, err := a.Sessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	uid := demo.AdminUserID
	return &server{h: h, db: db, routes: routes, cookie: testenv.SessionCookie(t, sessions, uid), userID: uid, logs: logs,
		sessions: sessions}
}

// errorRecorder is a slog handler that keeps the messages of error records.
type errorRecorder struct {
	mu     sync.Mutex
	errors []string
}

func (c *errorRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (c *errorRecorder) Handle(_ context.Context, r slog.Record) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r.Level >= slog.LevelError {
		msg := r.Message
		r.Attrs(func(a slog.Attr) bool { msg += " " + a.String(); return true })
		c.errors = append(c.errors, msg)
	}
	return nil
}
func (c *errorRecorder) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c *errorRecorder) WithGroup(string) slog.Handler      { return c }

// Hostile pieces. Path values are raw (already escaped) URL text.
var (
	hostileIDs = []string{"0", "-1", "+1", "01", "%201", "1%20", "1.0", "1e3", "0x1", "9223372036854775808",
		"99999999999999999999", "abc", "%00", "1%00", "%FF", "%C3%28", "%EF%BC%91", "-0", "1,2", "%2B1", "%09"}
	hostileText = []string{"", "%20", "%00", "a%00b", "%FF%FE", "%C3%28", "%ED%A0%80", "%25", "_", "%5C", "%27",
		"%22", "%25_%5C%27%22", "%F0%9F%98%80", "%E2%80%AE", "..", strings.Repeat("a", 3000), "%0D%0A", "null", "%3Cscript%3E"}
	hostileQueryNames = []string{"client", "limit", "offset", "order", "search", "user_lang", "lang", "res", "code", "state", "error"}
	// JSON values put in a body's fields; raw invalid UTF-8 too.
	hostileJSON = []string{`"\u0000"`, `"a\u0000b"`, "\"\xff\xfe\"", "\"\xc3\x28\"", `""`, `" "`, `null`, `0`, `-1`,
		`1.5`, `9223372036854775808`, `1e400`, `true`, `[]`, `{}`, `["\u0000"]`, `[{"a":"\u0000"}]`, `"%_\\'\""`,
		`"` + strings.Repeat("x", 5000) + `"`, `"\ud800"`, `[1,"2",null,-3]`, `{"id":"\u0000"}`}
	// Whole bodies that are not the shape a route wants.
	hostileBodies = []string{"", "{", "}", "null", "[]", `"x"`, "{} {}", "\x00", "\xff\xfe", `{"a":1,}`,
		strings.Repeat("[", 10000), `{"name":"a"`, "true"}
)

// bodyFields are the fields of each route's body (the OpenAPI document's schemas), valid values.
var bodyFields = map[string]map[string]string{
	"POST /admin-users/edit/{id}":                 {"username": `"someone"`, "age_verified": `false`, "added_roles": `[2]`, "removed_roles": `[]`},
	"POST /admin-users/update-image/{id}":         {"image": `"data:image/png;base64,iVBORw0KGgo="`},
	"POST /admin-roles/edit/{id}":                 {"name": `"r"`, "description": `"d"`, "added_permissions": `[1]`, "removed_permissions": `[2]`},
	"POST /admin-roles/add":                       {"name": `"r"`, "description": `"d"`},
	"POST /admin-permissions/edit/{id}":           {"name": `"p"`, "description": `"d"`},
	"POST /admin-permissions/add":                 {"name": `"p"`, "description": `"d"`},
	"POST /admin-contributors/add":                {"first_name": `"F"`, "last_name": `"L"`, "client": `1`},
	"POST /admin-contributors/update-avatar/{id}": {"image": `"data:image/png;base64,iVBORw0KGgo="`},
	"POST /admin-contributors/edit/{id}": {"first_name": `"F"`, "last_name": `"L"`, "gender": `"f"`, "type": `"t"`,
		"links": `["https://example.com"]`, "public": `true`,
		"added_aliases": `[{"title":"t","language":"en"}]`, "removed_aliases": `[1]`,
		"added_descriptions":    `[{"description":"d","language":"en","source":"s"}]`,
		"removed_descriptions":  `[1]`,
		"modified_descriptions": `[{"id":1,"description":"d","language":"en","source":""}]`,
		"added_relations":       `[{"relation_id":1,"type":"self"}]`, "removed_relations": `[1]`,
		"modified_relations": `[{"id":1,"relation_id":2,"type":"friend"}]`},
}

// destructive routes get unknown ids only, so that the test's own user, its role and
// its permissions stay as they are (deleting user 1 would not tell us more than 404).
func destructive(pattern string) bool {
	if strings.Contains(pattern, "delete-image") || strings.Contains(pattern, "delete-avatar") {
		return false // only an image goes, and the OpenAPI document's own 500 gets its turn
	}
	return strings.HasPrefix(pattern, "DELETE /admin-") || strings.Contains(pattern, "/logout/") ||
		strings.HasPrefix(pattern, "POST /admin-permissions/edit") || strings.HasPrefix(pattern, "POST /admin-roles/edit") ||
		strings.HasPrefix(pattern, "POST /admin-users/edit")
}

// specFiveHundreds are the routes whose spec answers 500 for a client's request:
// deleting an image that does not exist, with the route's message.
var specFiveHundreds = map[string]string{
	"DELETE /admin-users/delete-image/{id}":         "Internal server error",
	"DELETE /admin-contributors/delete-avatar/{id}": "An error occurred while deleting the contributor avatar",
}

type hostileRequest struct {
	route  string
	method string
	target string
	body   []byte
	ctype  string
	cookie bool
	// forged, when cookie is false, is a Cookie header to send instead: a refreshToken
	// that is empty, not a token, or the test user's with a byte changed.
	forged string
}

func (s *server) hostile(rng *rand.Rand, rt httpapi.Route) hostileRequest {
	pick := func(xs []string) string { return xs[rng.IntN(len(xs))] }
	req := hostileRequest{route: rt.Pattern, method: rt.Method(), cookie: rng.IntN(10) != 0}
	if !req.cookie && rng.IntN(2) == 0 {
		tampered := []byte(s.cookie.Value)
		tampered[len(tampered)/2] ^= 1
		req.forged = s.cookie.Name + "=" + pick([]string{"", "x", "a.b.c", "null", string(tampered), s.cookie.Value + "x", strings.Repeat("e", 5000)})
	}
	// The path: each {param} canonical or hostile.
	var b strings.Builder
	for _, seg := range strings.Split(rt.Path(), "/")[1:] {
		b.WriteByte('/')
		if !strings.HasPrefix(seg, "{") {
			b.WriteString(seg)
			continue
		}
		name := strings.Trim(seg, "{}")
		switch {
		case name == "id" && rng.IntN(3) == 0:
			if destructive(rt.Pattern) {
				b.WriteString(pick([]string{"999999", "9223372036854775807"}))
			} else {
				b.WriteString(pick([]string{"1", "2", "3", "999999"}))
			}
		case rng.IntN(3) == 0 && name == "provider":
			b.WriteString(pick([]string{"google", "github", "discord"}))
		case rng.IntN(3) == 0 && name == "res":
			b.WriteString(pick([]string{"high", "scaled"}))
		case rng.IntN(3) == 0 && name == "slug":
			b.WriteString(pick([]string{"kodansha", "shueisha"}))
		case name == "id":
			b.WriteString(pick(append(hostileIDs, hostileText...)))
		default:
			t := pick(hostileText)
			if t == "" || t == ".." {
				t = "x" + t
			}
			b.WriteString(t)
		}
	}
	q := []string{}
	if rng.IntN(4) != 0 {
		q = append(q, "client=1")
	}
	for range rng.IntN(4) {
		v := pick(hostileText)
		if rng.IntN(2) == 0 {
			v = pick(hostileIDs)
		}
		q = append(q, pick(hostileQueryNames)+"="+v)
	}
	req.target = b.String()
	if len(q) > 0 {
		req.target += "?" + strings.Join(q, "&")
	}
	if fields, ok := bodyFields[rt.Pattern]; ok {
		req.ctype = "application/json"
		switch n := rng.IntN(20); {
		case n == 0:
			req.body = []byte(pick(hostileBodies))
		case n == 1:
			req.ctype = pick([]string{"text/plain", "", "application/x-www-form-urlencoded", "application/json; charset=utf-8"})
			req.body = jsonObject(rng, fields, nil)
		case n == 2:
			req.body = bytes.Repeat([]byte(" "), 2<<20) // over the body limit
		default:
			req.body = jsonObject(rng, fields, func() string { return pick(hostileJSON) })
		}
	}
	return req
}

// jsonObject writes the fields, each kept valid, dropped, or (hostile set) replaced;
// arrays of objects get a hostile element inside as well.
func jsonObject(rng *rand.Rand, fields map[string]string, hostile func() string) []byte {
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	sort.Strings(names) // map order is random: keep the seed's requests the same
	var parts []string
	for _, k := range names {
		v := fields[k]
		switch n := rng.IntN(6); {
		case n == 0:
			continue
		case hostile != nil && n <= 2:
			v = hostile()
		case hostile != nil && n == 3 && strings.HasPrefix(v, "[{"):
			v = strings.Replace(v, `"en"`, hostile(), 1)
		}
		parts = append(parts, fmt.Sprintf("%q:%s", k, v))
	}
	return []byte("{" + strings.Join(parts, ",") + "}")
}

// TestHostileInput sends a few thousand malformed requests (seeded, so every run sends
// the same ones) over every route, through the handler the local server and, route
// group by route group, the functions serve. No answer may be a 5xx other than the
// spec's own, every error must be a Response Model, every answer one the OpenAPI
// document gives its route, and the service must still work.
func TestHostileInput(t *testing.T) {
	s := newServer(t, nil)
	const perRoute = 80
	rng := rand.New(rand.NewPCG(12, 2026))
	byStatus := map[int]int{}
	total, specOwn := 0, 0
	for _, rt := range s.routes {
		for range perRoute {
			hr := s.hostile(rng, rt)
			req := httptest.NewRequest(hr.method, "http://api.test"+hr.target, bytes.NewReader(hr.body))
			if hr.ctype != "" {
				req.Header.Set("Content-Type", hr.ctype)
			}
			if hr.cookie {
				req.AddCookie(s.cookie)
			} else if hr.forged != "" {
				req.Header.Set("Cookie", hr.forged)
			}
			req.RemoteAddr = "192.0.2.7:5555"
			rec := httptest.NewRecorder()
			s.h.ServeHTTP(rec, req)
			// Every answer is one the document gives its route; a path with an empty
			// segment ("/tags/id/") is no route of the document's to hold it to.
			if path, _, _ := strings.Cut(hr.target, "?"); !strings.Contains(path+"/", "//") {
				testenv.CheckResponse(t, testenv.Malformed(req), rec.Code, rec.Header(), rec.Body.Bytes())
			}
			total++
			byStatus[rec.Code]++
			if checkAnswer(t, hr, rec) {
				specOwn++
			}
		}
	}
	statuses := make([]int, 0, len(byStatus))
	for st := range byStatus {
		statuses = append(statuses, st)
	}
	sort.Ints(statuses)
	var summary []string
	for _, st := range statuses {
		summary = append(summary, fmt.Sprintf("%d×%d", byStatus[st], st))
	}
	t.Logf("%d requests over %d routes: %s (%d of them the OpenAPI document's own 500 of a missing image)", total, len(s.routes), strings.Join(summary, " "), specOwn)
	if len(s.routes) < 39 {
		t.Errorf("%d routes, the API has at least 39", len(s.routes))
	}

	// Still serving, the test's user still an admin; search wildcards matched literally.
	for _, target := range []string{"/tags?client=1", "/admin-users", "/publishers?client=1&search=kodansha"} {
		req := httptest.NewRequest(http.MethodGet, target, nil)
		req.AddCookie(s.cookie)
		rec := httptest.NewRecorder()
		s.h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			t.Errorf("after the hostile requests, GET %s: %d %s", target, rec.Code, rec.Body)
		}
	}
}

// checkAnswer holds one answer to the rules, and reports whether it is the OpenAPI document's own
// 500.
func checkAnswer(t *testing.T, hr hostileRequest, rec *httptest.ResponseRecorder) bool {
	t.Helper()
	if rec.Code < 400 {
		return false
	}
	var resp httpapi.Response
	dec := json.NewDecoder(bytes.NewReader(rec.Body.Bytes()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&resp); err != nil || resp.Code != rec.Code || resp.Data == "" ||
		!strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
		t.Errorf("%s %.200q: %d without a Response Model: %.300q", hr.method, hr.target, rec.Code, rec.Body)
		return false
	}
	if rec.Code >= 500 {
		if msg, ok := specFiveHundreds[hr.route]; ok && rec.Code == 500 && resp.Data == msg {
			return true
		}
		t.Errorf("%s %.200q (body %.200q, %q): %d %q", hr.method, hr.target, hr.body, hr.ctype, rec.Code, resp.Data)
	}
	return false
}

// TestSearchIsLiteral: %, _, \ and quotes in a search match themselves, not as
// wildcards or SQL.
func TestSearchIsLiteral(t *testing.T) {
	s := newServer(t, nil)
	s.db.Exec(t, `INSERT INTO publishers (client_id, name, slug) VALUES (1, '100% _Pure\ O''Brien "Q"', 'pure-literal')`)
	tests := []struct {
		search string
		want   int
	}{
		{"100%25", 1},
		{"%25", 1},
		{"_Pure", 1},
		{"%5C", 1},
		{"O'Brien", 1},
		{"%22Q%22", 1},
		{"1_0", 0},
		{"%25%25", 0},
		{"%5C%25", 0},
	}
	for _, tt := range tests {
		req := httptest.NewRequest(http.MethodGet, "/publishers?client=1&search="+tt.search, nil)
		rec := httptest.NewRecorder()
		s.h.ServeHTTP(rec, req)
		var got []json.RawMessage
		if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &got) != nil {
			t.Fatalf("search %s: %d %s", tt.search, rec.Code, rec.Body)
		}
		if len(got) != tt.want {
			t.Errorf("search %s: %d publishers, want %d: %s", tt.search, len(got), tt.want, rec.Body)
		}
	}
}
