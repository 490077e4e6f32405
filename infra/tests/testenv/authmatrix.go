package testenv

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/auth"
	"github.com/mediacatalog/service/shared/config"
)

// AuthConfig is a configuration for tests of authenticated routes: a deployed
// environment (Secure cookies) with a random JWT secret of its own.
func AuthConfig(t testing.TB) config.Config {
	t.Helper()
	env := map[string]string{"DB_ENV": "test", "JWT_SECRET": "test-secret-" + randomHex(16)}
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("testenv: config: %v", err)
	}
	return cfg
}

// NewSessions returns auth.Sessions over db with cfg, as a server would make them.
func NewSessions(t testing.TB, db *DB, cfg config.Config, opts ...auth.Option) *auth.Sessions {
	t.Helper()
	s, err := auth.NewSessions(db.DB, cfg, opts...)
	if err != nil {
		t.Fatalf("testenv: sessions: %v", err)
	}
	return s
}

// NewUser creates a user named username (also their slug) who holds exactly perms,
// through a role of their own (no role when perms is empty), and returns their id.
// Permissions that do not exist yet are created.
func NewUser(t testing.TB, db *DB, username string, perms ...string) int64 {
	t.Helper()
	ctx := context.Background()
	var id int64
	err := db.Pool.QueryRow(ctx, `
		WITH u AS (INSERT INTO users (slug, username) VALUES ($1, $1) RETURNING id),
		     p AS (INSERT INTO permissions (name) SELECT unnest($2::text[]) ON CONFLICT (name) DO NOTHING)
		SELECT id FROM u`, username, perms).Scan(&id)
	if err != nil {
		t.Fatalf("testenv: create user %s: %v", username, err)
	}
	if len(perms) == 0 {
		return id
	}
	_, err = db.Pool.Exec(ctx, `
		WITH r AS (INSERT INTO roles (name, description) VALUES ($2, 'role of ' || $2) RETURNING id),
		     ur AS (INSERT INTO user_roles (user_id, role_id) SELECT $1, id FROM r)
		INSERT INTO role_permissions (role_id, permission_id)
		SELECT r.id, p.id FROM r, permissions p WHERE p.name = ANY($3)`,
		id, username+"-role", perms)
	if err != nil {
		t.Fatalf("testenv: grant %v to %s: %v", perms, username, err)
	}
	return id
}

// SessionCookie logs userID in through sessions (auth.Sessions.Issue, as a login does)
// and returns the refreshToken cookie a browser would send.
func SessionCookie(t testing.TB, sessions *auth.Sessions, userID int64) *http.Cookie {
	t.Helper()
	tok, err := sessions.Issue(context.Background(), userID)
	if err != nil {
		t.Fatalf("testenv: issue a session for user %d: %v", userID, err)
	}
	return &http.Cookie{Name: auth.RefreshCookie, Value: tok.Refresh}
}

// AuthEvent reads an event from events/ and replaces its refreshToken cookie (the
// files carry a placeholder) with c.
func AuthEvent(t testing.TB, name string, c *http.Cookie) events.APIGatewayV2HTTPRequest {
	t.Helper()
	ev := Event(t, name)
	cookies := []string{c.String()}
	for _, s := range ev.Cookies {
		if !strings.HasPrefix(s, auth.RefreshCookie+"=") {
			cookies = append(cookies, s)
		}
	}
	ev.Cookies = cookies
	return ev
}

// AuthRoute is one route of a permission matrix.
type AuthRoute struct {
	Method string
	// Path is a concrete path ("/admin-users/id/3"). The case holding the permission
	// runs last, so a route that deletes may point at a target made for it.
	Path string
	// Body is the request body (as Request takes it), nil for none.
	Body any
	// Permission is the permission the route demands.
	Permission string
	// Status is what the route answers to a user holding Permission (default 200);
	// Message, when set, the data of the Response Model it answers.
	Status  int
	Message string
}

// AuthMatrix runs every route of a group against every kind of credential and asserts
// status and message of each answer:
//
//	no cookie, malformed cookie, forged (another secret),
//	expired token, revoked session                        401 Unauthorized
//	valid token of a deleted user                         404 User not found
//	user holding every permission but the route's         403 Forbidden
//	user holding only the route's permission              the route's Status (and Message)
//
// Handler must authenticate with auth.Sessions made from Config over DB.
type AuthMatrix struct {
	Handler http.Handler
	DB      *DB
	Config  config.Config
	Routes  []AuthRoute
}

// authCase is one kind of credential of the matrix.
type authCase struct {
	name    string
	cookie  func(rt AuthRoute) *http.Cookie // nil: no cookie
	status  func(rt AuthRoute) int
	message func(rt AuthRoute) string
}

// Run runs the matrix as subtests and returns the number of rows (routes times cases).
func (m AuthMatrix) Run(t *testing.T) int {
	t.Helper()
	ctx := context.Background()
	valid := NewSessions(t, m.DB, m.Config)
	forgedCfg := m.Config
	forgedCfg.JWTSecret = "another-secret-" + randomHex(16)
	forged := NewSessions(t, m.DB, forgedCfg)
	past := time.Now().Add(-2 * (m.Config.RefreshTokenTTL + time.Hour))
	expired := NewSessions(t, m.DB, m.Config, auth.WithClock(func() time.Time { return past }))

	perms := map[string]bool{}
	var all []string
	for _, rt := range m.Routes {
		if !perms[rt.Permission] {
			perms[rt.Permission] = true
			all = append(all, rt.Permission)
		}
	}
	suffix := randomHex(4)
	user := func(kind string, perms ...string) int64 {
		return NewUser(t, m.DB, fmt.Sprintf("matrix-%s-%s", kind, suffix), perms...)
	}

	forgedCookie := SessionCookie(t, forged, user("forged", all...))
	expiredCookie := SessionCookie(t, expired, user("expired", all...))
	revokedID := user("revoked", all...)
	revokedCookie := SessionCookie(t, valid, revokedID)
	if _, err := m.DB.Pool.Exec(ctx, `UPDATE sessions SET revoked_at = now() WHERE user_id = $1`, revokedID); err != nil {
		t.Fatalf("authmatrix: revoke: %v", err)
	}
	deletedID := user("deleted", all...)
	deletedCookie := SessionCookie(t, valid, deletedID)
	if _, err := m.DB.Pool.Exec(ctx, `DELETE FROM users WHERE id = $1`, deletedID); err != nil {
		t.Fatalf("authmatrix: delete user: %v", err)
	}
	holding := map[string]*http.Cookie{}
	lacking := map[string]*http.Cookie{}
	for i, p := range all {
		holding[p] = SessionCookie(t, valid, user(fmt.Sprintf("holds%d", i), p))
		var others []string
		if err := m.DB.Pool.QueryRow(ctx, `SELECT coalesce(array_agg(name), '{}') FROM permissions WHERE name <> $1`, p).Scan(&others); err != nil {
			t.Fatalf("authmatrix: permissions: %v", err)
		}
		lacking[p] = SessionCookie(t, valid, user(fmt.Sprintf("lacks%d", i), others...))
	}

	fixed := func(c *http.Cookie) func(AuthRoute) *http.Cookie { return func(AuthRoute) *http.Cookie { return c } }
	status := func(s int) func(AuthRoute) int { return func(AuthRoute) int { return s } }
	message := func(s string) func(AuthRoute) string { return func(AuthRoute) string { return s } }
	cases := []authCase{
		{"no cookie", fixed(nil), status(http.StatusUnauthorized), message(apperr.MsgUnauthorized)},
		{"malformed cookie", fixed(&http.Cookie{Name: auth.RefreshCookie, Value: "not.a.jwt"}), status(http.StatusUnauthorized), message(apperr.MsgUnauthorized)},
		{"forged cookie", fixed(forgedCookie), status(http.StatusUnauthorized), message(apperr.MsgUnauthorized)},
		{"expired token", fixed(expiredCookie), status(http.StatusUnauthorized), message(apperr.MsgUnauthorized)},
		{"revoked session", fixed(revokedCookie), status(http.StatusUnauthorized), message(apperr.MsgUnauthorized)},
		{"deleted user", fixed(deletedCookie), status(http.StatusNotFound), message(apperr.MsgUserNotFound)},
		{"lacking permission", func(rt AuthRoute) *http.Cookie { return lacking[rt.Permission] }, status(http.StatusForbidden), message(apperr.MsgForbidden)},
		{"holding permission", func(rt AuthRoute) *http.Cookie { return holding[rt.Permission] },
			func(rt AuthRoute) int {
				if rt.Status == 0 {
					return http.StatusOK
				}
				return rt.Status
			},
			func(rt AuthRoute) string { return rt.Message }},
	}

	rows := 0
	for _, rt := range m.Routes {
		for _, c := range cases {
			rows++
			t.Run(fmt.Sprintf("%s %s/%s", rt.Method, rt.Path, c.name), func(t *testing.T) {
				var cookies []*http.Cookie
				if ck := c.cookie(rt); ck != nil {
					cookies = append(cookies, ck)
				}
				rec := Do(t, m.Handler, Request(rt.Method, rt.Path, rt.Body, cookies...))
				if want := c.status(rt); rec.Code != want {
					t.Fatalf("status %d, want %d; body %s", rec.Code, want, rec.Body.Bytes())
				}
				want := c.message(rt)
				if want == "" {
					return
				}
				var body struct {
					Data string `json:"data"`
					Code int    `json:"code"`
				}
				if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
					t.Fatalf("body %s is not a Response Model: %v", rec.Body.Bytes(), err)
				}
				if body.Data != want || body.Code != rec.Code {
					t.Errorf("body %+v, want {data: %q, code: %d}", body, want, rec.Code)
				}
			})
		}
	}
	return rows
}
