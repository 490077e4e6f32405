package testenv

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"testing"

	"github.com/mediacatalog/service/infra/local/demo"
	"github.com/mediacatalog/service/shared/auth"
	"github.com/mediacatalog/service/shared/config"
	"github.com/mediacatalog/service/shared/httpapi"
	"github.com/mediacatalog/service/shared/postgres"
)

// Group is a route group served as the functions serve it (the shared middleware
// around the group's mux) over a database of its own with the demo data, counting its
// queries, with the demo users' session cookies.
type Group struct {
	Handler  http.Handler
	DB       *DB
	Config   config.Config
	Sessions *auth.Sessions
	Counter  *postgres.QueryCounter
	Admin    *http.Cookie // demo.AdminUserID: a full admin
	Editor   *http.Cookie // demo.EditorUserID
	Member   *http.Cookie // demo.MemberUserID: no administration
}

// NewGroup serves the routes that routes makes of the test's database and sessions.
func NewGroup(t testing.TB, routes func(db *DB, sessions *auth.Sessions) []httpapi.Route) *Group {
	t.Helper()
	return newGroup(t, nil, routes)
}

// newGroup is NewGroup over db, or over a new demo database when db is nil. Only a
// new database counts its queries (Counter); a given one was opened without the tracer.
func newGroup(t testing.TB, db *DB, routes func(db *DB, sessions *auth.Sessions) []httpapi.Route) *Group {
	t.Helper()
	g := &Group{Counter: &postgres.QueryCounter{}, Config: AuthConfig(t), DB: db}
	if g.DB == nil {
		g.DB = NewDemoDB(t, postgres.WithTracer(g.Counter))
	}
	g.Sessions = NewSessions(t, g.DB, g.Config)
	g.Handler = httpapi.Wrap(httpapi.NewMux(routes(g.DB, g.Sessions)),
		httpapi.Options{Log: slog.New(slog.DiscardHandler), CORSOrigins: g.Config.CORSOrigins})
	g.Admin = SessionCookie(t, g.Sessions, demo.AdminUserID)
	g.Editor = SessionCookie(t, g.Sessions, demo.EditorUserID)
	g.Member = SessionCookie(t, g.Sessions, demo.MemberUserID)
	return g
}

// Call serves a request through the group as the demo user of cookie c (none when nil),
// checks the response against the OpenAPI document and that it is a Response Model
// whose code is the status, and returns both.
func (g *Group) Call(t testing.TB, method, target string, body any, c *http.Cookie) (int, httpapi.Response) {
	t.Helper()
	var cookies []*http.Cookie
	if c != nil {
		cookies = append(cookies, c)
	}
	rec := Do(t, g.Handler, Request(method, target, body, cookies...))
	var resp httpapi.Response
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil || resp.Code != rec.Code {
		t.Fatalf("%s %s: %d %q is not a Response Model", method, target, rec.Code, rec.Body)
	}
	return rec.Code, resp
}

// Do serves a request through the group as the demo user of cookie c (none when nil),
// checks the response against the OpenAPI document, and returns its status and body.
func (g *Group) Do(t testing.TB, method, target string, body any, c *http.Cookie) (int, []byte) {
	t.Helper()
	var cookies []*http.Cookie
	if c != nil {
		cookies = append(cookies, c)
	}
	rec := Do(t, g.Handler, Request(method, target, body, cookies...))
	return rec.Code, rec.Body.Bytes()
}
