package oauth_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mediacatalog/service/infra/local/standins"
	"github.com/mediacatalog/service/infra/local/standins/providertest"
	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/auth"
	"github.com/mediacatalog/service/shared/config"
	"github.com/mediacatalog/service/shared/dynamo"
	"github.com/mediacatalog/service/shared/httpapi"
	"github.com/mediacatalog/service/shared/oauth"
	"github.com/mediacatalog/service/shared/postgres"
)

func TestMain(m *testing.M) { testenv.Main(m) }

const (
	testAPIURL   = "https://api.mediacatalog.test"
	testFrontend = "https://app.mediacatalog.test"
	clientSecret = "stand-in-client-secret"
)

// envOptions adjust the service under test.
type envOptions struct {
	limit         int      // rate limit per window; 0: high enough never to matter
	unconfigure   []string // providers left without credentials
	frontend      string   // "" is testFrontend
	apiURL        string   // "" is testAPIURL
	consentPage   bool     // stand-ins show their HTML consent page
	limiter       oauth.Limiter
	counter       *postgres.QueryCounter
	logs          io.Writer // JSON logs of the requests; nil discards them
	secure        bool      // the cookies of every environment but DB_ENV=local
	originSecrets []string  // ORIGIN_SECRET and ORIGIN_SECRET_PREVIOUS; none: not checked
}

// env is the oauth group on a fresh database with the demo data, real DynamoDB tables
// of its own, and the three provider stand-ins.
type env struct {
	db       *testenv.DB
	h        http.Handler
	sessions *auth.Sessions
	states   *dynamo.StateStore
	stand    map[string]*providertest.Server
	frontend string
	offset   atomic.Int64 // the state clock's offset from the real clock
	// stateCookie is the name of the state cookie the group sets.
	stateCookie string
}

func newEnv(t *testing.T, o envOptions) *env {
	t.Helper()
	var dbOpts []postgres.Option
	if o.counter != nil {
		dbOpts = append(dbOpts, postgres.WithTracer(o.counter))
	}
	db := testenv.NewDemoDB(t, dbOpts...)
	e := &env{db: db, frontend: o.frontend, stand: map[string]*providertest.Server{}, stateCookie: oauth.LocalStateCookie}
	if o.secure {
		e.stateCookie = oauth.StateCookie
	}
	if e.frontend == "" {
		e.frontend = testFrontend
	}
	if o.apiURL == "" {
		o.apiURL = testAPIURL
	}
	cfg, err := config.Load(func(k string) string { return map[string]string{"DB_ENV": "local"}[k] })
	if err != nil {
		t.Fatal(err)
	}
	if e.sessions, err = auth.NewSessions(db.DB, cfg); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{}
	var standOpts []providertest.Option
	if o.consentPage {
		standOpts = append(standOpts, providertest.WithConsentPage())
	}
	for _, name := range []string{providertest.Google, providertest.Discord, providertest.GitHub} {
		// Each stand-in accepts only what an operator registers at its provider.
		opts := append(slices.Clip(standOpts), providertest.WithRedirectURIs(standins.Registered(name, o.apiURL)...))
		s := providertest.New(t, name, name+"-client-id", clientSecret, opts...)
		e.stand[name] = s
		if slices.Contains(o.unconfigure, name) {
			continue
		}
		for k, v := range s.Env() {
			vars[k] = v
		}
	}
	client, stateTable, rateTable := testenv.DynamoTables(t)
	e.states = dynamo.NewStateStore(client, stateTable)
	limiter := o.limiter
	if limiter == nil {
		limit := o.limit
		if limit == 0 {
			limit = 1_000_000
		}
		// The windows are aligned to the epoch: a test running across a boundary
		// (12:00:00, say) would see its counter start again. The limiter's clock stands
		// still in the middle of the current window.
		const window = 15 * time.Minute
		mid := time.Now().Truncate(window).Add(window / 2)
		l, err := dynamo.NewRateLimiter(client, rateTable, limit, window, dynamo.WithClock(func() time.Time { return mid }))
		if err != nil {
			t.Fatal(err)
		}
		limiter = l
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	routes := oauth.Routes(oauth.Deps{
		Store:         db.DB,
		Sessions:      e.sessions,
		States:        e.states,
		Limiter:       limiter,
		Providers:     oauth.LoadProviders(func(k string) string { return vars[k] }, nil, log),
		APIURL:        o.apiURL,
		FrontendURL:   e.frontend,
		Now:           func() time.Time { return time.Now().Add(time.Duration(e.offset.Load())) },
		SecureCookies: o.secure,
	})
	// The events in events/ come from the production frontend's origin.
	origins := []string{e.frontend, config.DefaultFrontendURL}
	if o.logs != nil {
		log = slog.New(slog.NewJSONHandler(o.logs, nil))
	}
	e.h = httpapi.Wrap(httpapi.NewMux(routes), httpapi.Options{Log: log, CORSOrigins: origins, OriginSecrets: o.originSecrets})
	return e
}

// do serves a request through the handler, checked against the OpenAPI document.
func (e *env) do(t *testing.T, method, target string, cookies ...*http.Cookie) *httptest.ResponseRecorder {
	t.Helper()
	return testenv.Do(t, e.h, testenv.Request(method, target, nil, cookies...))
}

// start begins a flow at path and returns the consent page address and the state
// cookie.
func (e *env) start(t *testing.T, path string, cookies ...*http.Cookie) (string, *http.Cookie) {
	t.Helper()
	rec := e.do(t, http.MethodGet, path, cookies...)
	if rec.Code != http.StatusFound {
		t.Fatalf("GET %s = %d %s, want 302", path, rec.Code, rec.Body)
	}
	sc := cookieNamed(rec.Result().Cookies(), e.stateCookie)
	if sc == nil || sc.Value == "" {
		t.Fatalf("GET %s set no %s cookie", path, e.stateCookie)
	}
	return rec.Header().Get("Location"), sc
}

// consent plays the user at the stand-in's consent page and returns the callback
// address the provider sends the browser to.
func consent(t *testing.T, consentURL string) *url.URL {
	t.Helper()
	cb, err := providertest.Authorize(context.Background(), consentURL)
	if err != nil {
		t.Fatalf("consent: %v", err)
	}
	return cb
}

// callback sends the browser's request to a callback address.
func (e *env) callback(t *testing.T, cb *url.URL, cookies ...*http.Cookie) *httptest.ResponseRecorder {
	t.Helper()
	return e.do(t, http.MethodGet, cb.RequestURI(), cookies...)
}

// login runs a whole login flow for the provider's next queued user (u, when given)
// and returns the refreshToken cookie it set.
func (e *env) login(t *testing.T, provider string, u *providertest.User) *http.Cookie {
	t.Helper()
	if u != nil {
		e.stand[provider].QueueUser(*u)
	}
	consentURL, sc := e.start(t, "/auth/oauth/"+provider)
	rec := e.callback(t, consent(t, consentURL), sc)
	e.wantRedirect(t, rec, "/login", url.Values{"oauth_success": {"1"}})
	refresh := cookieNamed(rec.Result().Cookies(), auth.RefreshCookie)
	if refresh == nil || refresh.Value == "" {
		t.Fatal("the login set no refreshToken cookie")
	}
	return refresh
}

// link runs a whole link flow for the cookie's user and returns the callback's answer.
func (e *env) link(t *testing.T, provider string, refresh *http.Cookie, u *providertest.User) *httptest.ResponseRecorder {
	t.Helper()
	if u != nil {
		e.stand[provider].QueueUser(*u)
	}
	consentURL, sc := e.start(t, "/auth/oauth/link/"+provider, refresh)
	return e.callback(t, consent(t, consentURL), refresh, sc)
}

// wantRedirect fails unless rec is a 302 to the frontend page with exactly query.
func (e *env) wantRedirect(t *testing.T, rec *httptest.ResponseRecorder, page string, query url.Values) {
	t.Helper()
	if rec.Code != http.StatusFound {
		t.Fatalf("status %d %s, want 302 to %s%s?%s", rec.Code, rec.Body, e.frontend, page, query.Encode())
	}
	want := e.frontend + page + "?" + query.Encode()
	if got := rec.Header().Get("Location"); got != want {
		t.Fatalf("Location = %s, want %s", got, want)
	}
}

// userOf is the user of a refreshToken cookie.
func (e *env) userOf(t *testing.T, refresh *http.Cookie) int64 {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.AddCookie(refresh)
	p, err := e.sessions.Authenticate(req)
	if err != nil {
		t.Fatalf("authenticate: %v", err)
	}
	return p.UserID
}

// tokenOf issues a refreshToken cookie for a user.
func (e *env) tokenOf(t *testing.T, userID int64) *http.Cookie {
	t.Helper()
	tok, err := e.sessions.Issue(context.Background(), userID)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Cookie{Name: auth.RefreshCookie, Value: tok.Refresh}
}

// demoUser is the id of a demo account.
func (e *env) demoUser(t *testing.T, username string) int64 {
	t.Helper()
	return queryOne[int64](t, e.db, `SELECT id FROM users WHERE username = $1`, username)
}

func queryOne[T any](t *testing.T, db *testenv.DB, sql string, args ...any) T {
	t.Helper()
	var v T
	if err := db.Pool.QueryRow(context.Background(), sql, args...).Scan(&v); err != nil {
		t.Fatalf("query %.80q: %v", sql, err)
	}
	return v
}

func execSQL(t *testing.T, db *testenv.DB, sql string, args ...any) {
	t.Helper()
	if _, err := db.Pool.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("exec %.80q: %v", sql, err)
	}
}

func cookieNamed(cs []*http.Cookie, name string) *http.Cookie {
	for _, c := range cs {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// responseModel decodes a Response Model body.
func responseModel(t *testing.T, body []byte) httpapi.Response {
	t.Helper()
	var r httpapi.Response
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("body %q is not a Response Model: %v", body, err)
	}
	return r
}

func wantMessage(t *testing.T, rec *httptest.ResponseRecorder, status int, msg string) {
	t.Helper()
	if rec.Code != status {
		t.Fatalf("status %d %s, want %d %q", rec.Code, rec.Body, status, msg)
	}
	if r := responseModel(t, rec.Body.Bytes()); r.Data != msg || r.Code != status {
		t.Fatalf("body %+v, want {%q %d}", r, msg, status)
	}
}

func newCounter() *postgres.QueryCounter { return &postgres.QueryCounter{} }

// oauthStateHash is what the documented state cookie holds for a state token: its
// SHA-256 hash, base64url without padding.
func oauthStateHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}
