package auth_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/auth"
	"github.com/mediacatalog/service/shared/config"
	"github.com/mediacatalog/service/shared/httpapi"
	"github.com/mediacatalog/service/shared/postgres"
)

// tokenClaims is the wire format of the service's tokens, written out here so the tests
// check it rather than share it.
type tokenClaims struct {
	jwt.RegisteredClaims
	SID string `json:"sid"`
	Typ string `json:"typ"`
}

func sign(t *testing.T, method jwt.SigningMethod, key any, c tokenClaims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(method, c).SignedString(key)
	if err != nil {
		t.Fatalf("sign: %v", err)
	}
	return s
}

func refreshClaims(userID int64, sid string, iat, exp time.Time) tokenClaims {
	return tokenClaims{
		RegisteredClaims: jwt.RegisteredClaims{
			Subject:   strconv.FormatInt(userID, 10),
			IssuedAt:  jwt.NewNumericDate(iat),
			ExpiresAt: jwt.NewNumericDate(exp),
		},
		SID: sid,
		Typ: "refresh",
	}
}

func authenticate(s *auth.Sessions, value string, cookieName string) (auth.Principal, error) {
	r := httptest.NewRequest(http.MethodGet, "/admin-users", nil)
	if cookieName != "" {
		r.AddCookie(&http.Cookie{Name: cookieName, Value: value})
	}
	return s.Authenticate(r)
}

func TestAuthenticateAcceptsIssuedRefreshToken(t *testing.T) {
	db := testenv.NewDB(t)
	cfg := testenv.AuthConfig(t)
	s := testenv.NewSessions(t, db, cfg)
	id := testenv.NewUser(t, db, "reader", auth.PermViewUsers, auth.PermViewRoles)

	tok, err := s.Issue(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	p, err := authenticate(s, tok.Refresh, auth.RefreshCookie)
	if err != nil {
		t.Fatalf("authenticate: %v", err)
	}
	if p.UserID != id || p.Username != "reader" || p.SessionID != tok.SessionID {
		t.Errorf("principal %+v, want user %d reader session %s", p, id, tok.SessionID)
	}
	for _, perm := range []string{auth.PermViewUsers, auth.PermViewRoles} {
		if !p.Has(perm) {
			t.Errorf("principal lacks %s: %v", perm, p.Permissions)
		}
	}
	if p.Has(auth.PermEditUsers) {
		t.Errorf("principal has edit-users: %v", p.Permissions)
	}
	if got := tok.RefreshExpires.Sub(tok.AccessExpires); got != cfg.RefreshTokenTTL-cfg.AccessTokenTTL {
		t.Errorf("refresh outlives access by %v, want %v", got, cfg.RefreshTokenTTL-cfg.AccessTokenTTL)
	}
}

func TestAuthenticateRefusesTokens(t *testing.T) {
	ctx := context.Background()
	db := testenv.NewDB(t)
	cfg := testenv.AuthConfig(t)
	s := testenv.NewSessions(t, db, cfg)
	secret := []byte(cfg.JWTSecret)
	alice := testenv.NewUser(t, db, "alice", auth.PermViewUsers)
	bob := testenv.NewUser(t, db, "bob", auth.PermViewUsers)
	tok, err := s.Issue(ctx, alice)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	live := refreshClaims(alice, tok.SessionID, now.Add(-time.Minute), now.Add(time.Hour))
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	with := func(f func(*tokenClaims)) tokenClaims { c := live; f(&c); return c }

	// The control: the same claims, HS256 with the secret, pass.
	if _, err := authenticate(s, sign(t, jwt.SigningMethodHS256, secret, live), auth.RefreshCookie); err != nil {
		t.Fatalf("control token refused: %v", err)
	}

	tests := []struct {
		name   string
		cookie string // cookie name; "" sends none
		token  string
		want   apperr.Code
	}{
		{"no cookie", "", "", apperr.Unauthorized},
		{"empty cookie", auth.RefreshCookie, "", apperr.Unauthorized},
		{"garbage", auth.RefreshCookie, "not.a.jwt", apperr.Unauthorized},
		{"alg none", auth.RefreshCookie, sign(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, live), apperr.Unauthorized},
		{"RS256", auth.RefreshCookie, sign(t, jwt.SigningMethodRS256, rsaKey, live), apperr.Unauthorized},
		{"HS384 with the secret", auth.RefreshCookie, sign(t, jwt.SigningMethodHS384, secret, live), apperr.Unauthorized},
		{"HS512 with the secret", auth.RefreshCookie, sign(t, jwt.SigningMethodHS512, secret, live), apperr.Unauthorized},
		{"HS256 with another secret", auth.RefreshCookie, sign(t, jwt.SigningMethodHS256, []byte("another-secret-of-at-least-32-bytes!"), live), apperr.Unauthorized},
		{"access token as refresh token", auth.RefreshCookie, tok.Access, apperr.Unauthorized},
		{"refresh token in the accessToken cookie", auth.AccessCookie, tok.Refresh, apperr.Unauthorized},
		{"typ access", auth.RefreshCookie, sign(t, jwt.SigningMethodHS256, secret, with(func(c *tokenClaims) { c.Typ = "access" })), apperr.Unauthorized},
		{"no typ", auth.RefreshCookie, sign(t, jwt.SigningMethodHS256, secret, with(func(c *tokenClaims) { c.Typ = "" })), apperr.Unauthorized},
		{"expired", auth.RefreshCookie, sign(t, jwt.SigningMethodHS256, secret, with(func(c *tokenClaims) {
			c.IssuedAt, c.ExpiresAt = jwt.NewNumericDate(now.Add(-2*time.Hour)), jwt.NewNumericDate(now.Add(-time.Hour))
		})), apperr.Unauthorized},
		{"no exp", auth.RefreshCookie, sign(t, jwt.SigningMethodHS256, secret, with(func(c *tokenClaims) { c.ExpiresAt = nil })), apperr.Unauthorized},
		{"issued in the future", auth.RefreshCookie, sign(t, jwt.SigningMethodHS256, secret, with(func(c *tokenClaims) {
			c.IssuedAt = jwt.NewNumericDate(now.Add(time.Hour))
		})), apperr.Unauthorized},
		{"subject not a user id", auth.RefreshCookie, sign(t, jwt.SigningMethodHS256, secret, with(func(c *tokenClaims) { c.Subject = "alice" })), apperr.Unauthorized},
		{"session of another user", auth.RefreshCookie, sign(t, jwt.SigningMethodHS256, secret, with(func(c *tokenClaims) {
			c.Subject = strconv.FormatInt(bob, 10)
		})), apperr.Unauthorized},
		{"session id not a UUID", auth.RefreshCookie, sign(t, jwt.SigningMethodHS256, secret, with(func(c *tokenClaims) { c.SID = "1; DROP TABLE sessions" })), apperr.Unauthorized},
		{"unknown session", auth.RefreshCookie, sign(t, jwt.SigningMethodHS256, secret, with(func(c *tokenClaims) {
			c.SID = "00000000-0000-4000-8000-000000000000"
		})), apperr.Unauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := authenticate(s, tt.token, tt.cookie)
			if got := apperr.CodeOf(err); err == nil || got != tt.want {
				t.Fatalf("error %v (code %s), want code %s", err, got, tt.want)
			}
			if e, _ := apperr.As(err); e.Message != apperr.MsgUnauthorized {
				t.Errorf("message %q, want %q", e.Message, apperr.MsgUnauthorized)
			}
		})
	}
}

func TestAuthenticateFollowsTheSessionRow(t *testing.T) {
	ctx := context.Background()
	db := testenv.NewDB(t)
	cfg := testenv.AuthConfig(t)
	s := testenv.NewSessions(t, db, cfg)

	tests := []struct {
		name    string
		change  string // SQL run with $1 = the session id, after issuing
		want    apperr.Code
		message string
	}{
		{"live", `SELECT $1::uuid`, "", ""},
		{"revoked", `UPDATE sessions SET revoked_at = now() WHERE id = $1`, apperr.Unauthorized, apperr.MsgUnauthorized},
		{"expired", `UPDATE sessions SET expires_at = now() - interval '1 second' WHERE id = $1`, apperr.Unauthorized, apperr.MsgUnauthorized},
		{"deleted", `DELETE FROM sessions WHERE id = $1`, apperr.Unauthorized, apperr.MsgUnauthorized},
		{"user deleted", `DELETE FROM users WHERE id = (SELECT user_id FROM sessions WHERE id = $1)`, apperr.NotFound, apperr.MsgUserNotFound},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := testenv.NewUser(t, db, "user"+strconv.Itoa(i))
			tok, err := s.Issue(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.Pool.Exec(ctx, tt.change, tok.SessionID); err != nil {
				t.Fatal(err)
			}
			_, err = authenticate(s, tok.Refresh, auth.RefreshCookie)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			e, ok := apperr.As(err)
			if !ok || e.Code != tt.want || e.Message != tt.message {
				t.Fatalf("error %v, want %s %q", err, tt.want, tt.message)
			}
		})
	}
}

func TestIssueForUnknownUser(t *testing.T) {
	db := testenv.NewDB(t)
	s := testenv.NewSessions(t, db, testenv.AuthConfig(t))
	_, err := s.Issue(context.Background(), 424242)
	if e, ok := apperr.As(err); !ok || e.Code != apperr.NotFound || e.Message != apperr.MsgUserNotFound {
		t.Fatalf("error %v, want 404 User not found", err)
	}
}

func TestAuthenticateWithOneQuery(t *testing.T) {
	var counter postgres.QueryCounter
	db := testenv.NewDB(t, postgres.WithTracer(&counter))
	s := testenv.NewSessions(t, db, testenv.AuthConfig(t))
	id := testenv.NewUser(t, db, "counted", auth.PermViewUsers)
	tok, err := s.Issue(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	counter.Reset()
	if _, err := authenticate(s, tok.Refresh, auth.RefreshCookie); err != nil {
		t.Fatal(err)
	}
	if n := counter.Count(); n != 1 {
		t.Errorf("authenticate took %d queries, want 1", n)
	}
}

func TestRequire(t *testing.T) {
	db := testenv.NewDB(t)
	s := testenv.NewSessions(t, db, testenv.AuthConfig(t))
	viewer := testenv.SessionCookie(t, s, testenv.NewUser(t, db, "viewer", auth.PermViewUsers))
	var seen auth.Principal
	h := s.Require(auth.PermViewUsers, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen, _ = auth.FromContext(r.Context())
		w.WriteHeader(http.StatusNoContent)
	}))
	editOnly := s.Require(auth.PermEditUsers, h)
	anyUser := s.RequireUser(h)

	tests := []struct {
		name    string
		h       http.Handler
		cookie  *http.Cookie
		status  int
		message string
	}{
		{"permission held", h, viewer, http.StatusNoContent, ""},
		{"permission lacking", editOnly, viewer, http.StatusForbidden, apperr.MsgForbidden},
		{"no cookie", h, nil, http.StatusUnauthorized, apperr.MsgUnauthorized},
		{"any user", anyUser, viewer, http.StatusNoContent, ""},
		{"any user without cookie", anyUser, nil, http.StatusUnauthorized, apperr.MsgUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seen = auth.Principal{}
			r := httptest.NewRequest(http.MethodGet, "/x", nil)
			if tt.cookie != nil {
				r.AddCookie(tt.cookie)
			}
			rec := httptest.NewRecorder()
			tt.h.ServeHTTP(rec, r)
			if rec.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.status, rec.Body)
			}
			if tt.message == "" {
				if seen.Username != "viewer" {
					t.Errorf("principal in context %+v, want viewer", seen)
				}
				return
			}
			var body struct {
				Data string `json:"data"`
				Code int    `json:"code"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Data != tt.message || body.Code != tt.status {
				t.Errorf("body %s, want {data: %q, code: %d}", rec.Body, tt.message, tt.status)
			}
		})
	}
}

func TestSetCookies(t *testing.T) {
	db := testenv.NewDB(t)
	id := testenv.NewUser(t, db, "cookie")
	for _, env := range []string{"local", "production"} {
		t.Run(env, func(t *testing.T) {
			vars := map[string]string{"DB_ENV": env, "JWT_SECRET": "a-test-secret-that-is-long-enough-32"}
			cfg, err := config.Load(func(k string) string { return vars[k] })
			if err != nil {
				t.Fatal(err)
			}
			s := testenv.NewSessions(t, db, cfg)
			tok, err := s.Issue(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			rec := httptest.NewRecorder()
			s.SetCookies(rec, tok)
			cookies := map[string]*http.Cookie{}
			for _, c := range rec.Result().Cookies() {
				cookies[c.Name] = c
			}
			for name, want := range map[string]struct {
				value  string
				maxAge time.Duration
			}{
				auth.RefreshCookie: {tok.Refresh, cfg.RefreshTokenTTL},
				auth.AccessCookie:  {tok.Access, cfg.AccessTokenTTL},
			} {
				c := cookies[name]
				if c == nil {
					t.Fatalf("no %s cookie in %v", name, rec.Header()["Set-Cookie"])
				}
				if c.Value != want.value || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/" ||
					c.Secure != (env != "local") {
					t.Errorf("%s cookie %s: want the token, HttpOnly, SameSite=Lax, Path=/, Secure=%v", name, c, env != "local")
				}
				if d := time.Duration(c.MaxAge) * time.Second; d < want.maxAge-5*time.Second || d > want.maxAge {
					t.Errorf("%s Max-Age %v, want about %v", name, d, want.maxAge)
				}
			}
		})
	}
}

func TestNewSessionsRefusesUnusableSecrets(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
	}{
		{"no secret outside local", map[string]string{"DB_ENV": "production"}},
		{"development secret outside local", map[string]string{"DB_ENV": "production", "JWT_SECRET": config.DevJWTSecret}},
		{"short secret", map[string]string{"DB_ENV": "production", "JWT_SECRET": "short"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := config.Load(func(k string) string { return tt.env[k] })
			if err != nil {
				t.Fatal(err)
			}
			if _, err := auth.NewSessions(nil, cfg); err == nil {
				t.Fatal("NewSessions accepted the configuration")
			}
		})
	}
	cfg, err := config.Load(func(k string) string { return map[string]string{"DB_ENV": "local"}[k] })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := auth.NewSessions(nil, cfg); err != nil {
		t.Errorf("local development secret refused: %v", err)
	}
}

// TestOneRefreshCookie: a request carrying more than one refreshToken cookie is 401,
// whatever their order and whichever is valid, with an audit record of the refusal. A
// sibling subdomain can plant a second one for the parent domain on a narrower path,
// which the browser sends first; before, the first one was read, so a planted cookie
// decided who the request was.
func TestOneRefreshCookie(t *testing.T) {
	db := testenv.NewDB(t)
	cfg := testenv.AuthConfig(t)
	s := testenv.NewSessions(t, db, cfg)
	issue := func(name string, perms ...string) string {
		tok, err := s.Issue(context.Background(), testenv.NewUser(t, db, name, perms...))
		if err != nil {
			t.Fatal(err)
		}
		return tok.Refresh
	}
	admin, member := issue("admin", auth.PermViewUsers), issue("member")
	tests := []struct {
		name   string
		cookie string
		status int
	}{
		{"the admin's alone", "refreshToken=" + admin, http.StatusOK},
		{"the member's alone", "refreshToken=" + member, http.StatusForbidden},
		{"the member's, then the admin's", "refreshToken=" + member + "; refreshToken=" + admin, http.StatusUnauthorized},
		{"the admin's, then the member's", "refreshToken=" + admin + "; refreshToken=" + member, http.StatusUnauthorized},
		{"the admin's twice", "refreshToken=" + admin + "; refreshToken=" + admin, http.StatusUnauthorized},
		{"the admin's and an empty one", "refreshToken=; refreshToken=" + admin, http.StatusUnauthorized},
		{"the admin's beside other cookies", "accessToken=x; refreshToken=" + admin + "; theme=dark", http.StatusOK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			mux := http.NewServeMux()
			mux.Handle("GET /admin-users", s.Require(auth.PermViewUsers, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				httpapi.OK(w, r, "ok")
			})))
			h := httpapi.Wrap(mux, httpapi.Options{Log: slog.New(slog.NewJSONHandler(&logs, nil))})
			r := httptest.NewRequest(http.MethodGet, "/admin-users", nil)
			r.Header.Set("Cookie", tc.cookie)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tc.status {
				t.Fatalf("status %d %s, want %d", w.Code, w.Body, tc.status)
			}
			const record = `"actor_id":0,"action":"refused","route":"GET /admin-users","target":{"id":0},"reason":"2 refreshToken cookies"`
			if got := strings.Contains(logs.String(), record); got != (tc.status == http.StatusUnauthorized) {
				t.Errorf("refusal record %v in\n%s", got, logs.String())
			}
		})
	}
}
