package oauth_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mediacatalog/service/infra/local/standins/providertest"
	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/catalog"
	"github.com/mediacatalog/service/shared/oauth"
)

// Accounts at the stand-ins.
var (
	adaGoogle  = providertest.User{ID: "104857600000000000001", Name: "Ada Lovelace", Email: "ada@example.com", EmailVerified: true, Avatar: "https://lh3.googleusercontent.com/a/ada"}
	adaDiscord = providertest.User{ID: "80351110224678913", Login: "ada.l", Name: "Ada Lovelace", Email: "ada@example.com", EmailVerified: true}
	adaGitHub  = providertest.User{ID: "4242", Login: "ada-l", Name: "Ada Lovelace", Emails: []providertest.Email{{Email: "ada@example.com", Primary: true, Verified: true}}}
	bobGitHub  = providertest.User{ID: "4343", Login: "bob", Name: "Bob Builder", Emails: []providertest.Email{{Email: "bob@example.com", Primary: true, Verified: true}}}
	bobGoogle  = providertest.User{ID: "104857600000000000002", Name: "Bob Builder", Email: "bob@example.com", EmailVerified: true}
)

func connections(t *testing.T, e *env, refresh *http.Cookie) []catalog.Connection {
	t.Helper()
	rec := e.do(t, http.MethodGet, "/auth/oauth/connections", refresh)
	if rec.Code != http.StatusOK {
		t.Fatalf("connections = %d %s", rec.Code, rec.Body)
	}
	var conns []catalog.Connection
	if err := json.Unmarshal(rec.Body.Bytes(), &conns); err != nil {
		t.Fatal(err)
	}
	return conns
}

func providersOf(conns []catalog.Connection) string {
	var names []string
	for _, c := range conns {
		names = append(names, c.Provider)
	}
	return strings.Join(names, ",")
}

func TestLoginFlow(t *testing.T) {
	e := newEnv(t, envOptions{})
	tests := []struct {
		provider string
		user     providertest.User
		username string // of the new user
	}{
		{providertest.Google, adaGoogle, "ada-lovelace"},
		{providertest.Discord, adaDiscord, "ada-lovelace-2"}, // matched by account, never by email
		{providertest.GitHub, adaGitHub, "ada-lovelace-3"},
	}
	for _, tc := range tests {
		t.Run(tc.provider, func(t *testing.T) {
			users := queryOne[int64](t, e.db, `SELECT count(*) FROM users`)
			first := e.login(t, tc.provider, &tc.user)
			id := e.userOf(t, first)
			if n := queryOne[int64](t, e.db, `SELECT count(*) FROM users`); n != users+1 {
				t.Errorf("users %d -> %d, want one new user", users, n)
			}
			if got := queryOne[string](t, e.db, `SELECT username FROM users WHERE id = $1`, id); got != tc.username {
				t.Errorf("username = %q, want %q", got, tc.username)
			}
			if role := queryOne[bool](t, e.db, `
				SELECT bool_and(r.is_default) AND count(*) = 1 FROM user_roles ur JOIN roles r ON r.id = ur.role_id
				WHERE ur.user_id = $1`, id); !role {
				t.Error("the new user does not have exactly the default role")
			}
			conns := connections(t, e, first)
			if len(conns) != 1 || conns[0].Provider != tc.provider || conns[0].ProviderUsername != tc.user.Name ||
				conns[0].ProviderEmail == nil || *conns[0].ProviderEmail != "ada@example.com" {
				t.Errorf("connections = %+v", conns)
			}

			// The second login signs in the same user, with the profile's changes.
			again := tc.user
			again.Name = "Ada King"
			second := e.login(t, tc.provider, &again)
			if got := e.userOf(t, second); got != id {
				t.Errorf("second login signed in user %d, want %d", got, id)
			}
			if n := queryOne[int64](t, e.db, `SELECT count(*) FROM users`); n != users+1 {
				t.Errorf("the second login created a user")
			}
			if conns := connections(t, e, second); conns[0].ProviderUsername != "Ada King" {
				t.Errorf("provider_username = %q after the second login, want the new name", conns[0].ProviderUsername)
			}
		})
	}
}

func TestLoginCookies(t *testing.T) {
	e := newEnv(t, envOptions{})
	consentURL, sc := e.start(t, "/auth/oauth/github")
	if sc.Path != "/auth/oauth" || !sc.HttpOnly || sc.SameSite != http.SameSiteLaxMode || sc.MaxAge != 600 {
		t.Errorf("state cookie = %+v, want Path=/auth/oauth HttpOnly SameSite=Lax Max-Age=600", sc)
	}
	u, err := url.Parse(consentURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	if q.Get("code_challenge_method") != "S256" || len(q.Get("code_challenge")) != 43 || len(q.Get("state")) < 43 {
		t.Errorf("consent URL %s lacks a PKCE S256 challenge or a strong state", consentURL)
	}
	if got, want := q.Get("redirect_uri"), testAPIURL+"/auth/oauth/github/callback"; got != want {
		t.Errorf("redirect_uri = %s, want %s", got, want)
	}
	if q.Get("scope") != "read:user user:email" {
		t.Errorf("scope = %q", q.Get("scope"))
	}
	rec := e.callback(t, consent(t, consentURL), sc)
	e.wantRedirect(t, rec, "/login", url.Values{"oauth_success": {"1"}})
	cleared := cookieNamed(rec.Result().Cookies(), oauth.LocalStateCookie)
	if cleared == nil || cleared.MaxAge >= 0 {
		t.Errorf("the callback did not clear the state cookie: %+v", cleared)
	}
	refresh := cookieNamed(rec.Result().Cookies(), "refreshToken")
	if refresh == nil || !refresh.HttpOnly || refresh.Path != "/" || refresh.SameSite != http.SameSiteLaxMode {
		t.Errorf("refreshToken cookie = %+v", refresh)
	}
	linkURL, _ := e.start(t, "/auth/oauth/link/google", refresh)
	lu, _ := url.Parse(linkURL)
	if got, want := lu.Query().Get("redirect_uri"), testAPIURL+"/auth/oauth/link/google/callback"; got != want {
		t.Errorf("link redirect_uri = %s, want %s", got, want)
	}
}

// TestStateCookie holds the state cookie to its environment: outside DB_ENV=local it
// is __Host-oauth_state (Secure, Path=/, no Domain), which browsers take only from the
// API's own host, so a cookie a sibling subdomain plants (oauth_state, or one for the
// parent domain) is not the one the callback reads. On the local stack, over http, it
// stays oauth_state without Secure.
func TestStateCookie(t *testing.T) {
	tests := []struct {
		name   string
		secure bool
		cookie string
		path   string
		// planted is a cookie with the flow's value under another name: the callback
		// must not take it for the state cookie.
		planted string
	}{
		{"production", true, "__Host-oauth_state", "/", "oauth_state"},
		{"local", false, "oauth_state", "/auth/oauth", "__Host-oauth_state"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, envOptions{secure: tc.secure})
			rec := e.do(t, http.MethodGet, "/auth/oauth/github")
			sc := cookieNamed(rec.Result().Cookies(), tc.cookie)
			if sc == nil {
				t.Fatalf("no %s cookie in %v", tc.cookie, rec.Result().Header["Set-Cookie"])
			}
			if sc.Path != tc.path || sc.Secure != tc.secure || sc.Domain != "" || !sc.HttpOnly ||
				sc.SameSite != http.SameSiteLaxMode || sc.MaxAge != 600 {
				t.Errorf("state cookie = %+v, want Path=%s Secure=%v no Domain HttpOnly SameSite=Lax Max-Age=600",
					sc, tc.path, tc.secure)
			}
			if n := len(rec.Result().Cookies()); n != 1 {
				t.Errorf("the start set %d cookies, want 1", n)
			}
			consentURL := rec.Header().Get("Location")

			planted := &http.Cookie{Name: tc.planted, Value: sc.Value}
			e.wantRedirect(t, e.callback(t, consent(t, consentURL), planted), "/login",
				url.Values{"oauth_error": {"invalid_state"}})

			consentURL, sc = e.start(t, "/auth/oauth/github")
			rec = e.callback(t, consent(t, consentURL), sc)
			e.wantRedirect(t, rec, "/login", url.Values{"oauth_success": {"1"}})
			cleared := cookieNamed(rec.Result().Cookies(), tc.cookie)
			if cleared == nil || cleared.MaxAge >= 0 || cleared.Path != tc.path || cleared.Secure != tc.secure {
				t.Errorf("the callback did not clear the state cookie: %+v", cleared)
			}
		})
	}
}

func TestLinkFlow(t *testing.T) {
	e := newEnv(t, envOptions{})
	ada := e.login(t, providertest.Google, &adaGoogle)
	bob := e.login(t, providertest.GitHub, &bobGitHub)
	adaID := e.userOf(t, ada)

	tests := []struct {
		name     string
		refresh  *http.Cookie
		provider string
		user     providertest.User
		query    url.Values // of the redirect
		want     string     // ada's providers afterwards
	}{
		{"second provider", ada, providertest.GitHub, adaGitHub, url.Values{"link_success": {"github"}}, "github,google"},
		{"third provider", ada, providertest.Discord, adaDiscord, url.Values{"link_success": {"discord"}}, "discord,github,google"},
		{"provider already linked", ada, providertest.GitHub, providertest.User{ID: "9999", Login: "ada-alt", Email: "ada.alt@example.com", EmailVerified: true}, url.Values{"link_error": {"already_linked"}}, "discord,github,google"},
		{"account of another user", ada, providertest.GitHub, bobGitHub, url.Values{"link_error": {"provider_in_use"}}, "discord,github,google"},
		{"ada's account to bob", bob, providertest.Google, adaGoogle, url.Values{"link_error": {"provider_in_use"}}, "discord,github,google"},
		{"bob links google", bob, providertest.Google, bobGoogle, url.Values{"link_success": {"google"}}, "discord,github,google"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := e.link(t, tc.provider, tc.refresh, &tc.user)
			e.wantRedirect(t, rec, "/settings", tc.query)
			if got := providersOf(connections(t, e, ada)); got != tc.want {
				t.Errorf("ada's providers = %s, want %s", got, tc.want)
			}
		})
	}
	// The linked account logs ada in.
	if got := e.userOf(t, e.login(t, providertest.Discord, &adaDiscord)); got != adaID {
		t.Errorf("login with the linked discord account signed in user %d, want ada (%d)", got, adaID)
	}
	if got := providersOf(connections(t, e, bob)); got != "github,google" {
		t.Errorf("bob's providers = %s", got)
	}
}

func TestConnectionsRoute(t *testing.T) {
	counter := newCounter()
	e := newEnv(t, envOptions{counter: counter})
	member := e.tokenOf(t, e.demoUser(t, "member"))
	ada := e.login(t, providertest.Google, &adaGoogle)
	if rec := e.link(t, providertest.Discord, ada, &adaDiscord); rec.Code != http.StatusFound {
		t.Fatal(rec.Code)
	}
	tests := []struct {
		name    string
		cookies []*http.Cookie
		status  int
		want    string
	}{
		{"two providers", []*http.Cookie{ada}, http.StatusOK, `[{"provider":"discord","provider_email":"ada@example.com","provider_username":"Ada Lovelace"},{"provider":"google","provider_email":"ada@example.com","provider_username":"Ada Lovelace"}]`},
		{"none", []*http.Cookie{member}, http.StatusOK, `[]`},
		{"no cookie", nil, http.StatusUnauthorized, "Unauthorized"},
		{"forged cookie", []*http.Cookie{{Name: "refreshToken", Value: "eyJhbGciOiJIUzI1NiJ9.e30.x"}}, http.StatusUnauthorized, "Unauthorized"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			counter.Reset()
			rec := e.do(t, http.MethodGet, "/auth/oauth/connections", tc.cookies...)
			if tc.status != http.StatusOK {
				wantMessage(t, rec, tc.status, tc.want)
				return
			}
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d %s", rec.Code, rec.Body)
			}
			if n := counter.Count(); n > 2 {
				t.Errorf("%d database round trips, want at most 2", n)
			}
			var items []map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &items); err != nil {
				t.Fatal(err)
			}
			for _, it := range items {
				at, ok := it["linked_at"].(string)
				if _, err := time.Parse(time.RFC3339, at); !ok || err != nil {
					t.Errorf("linked_at %v is not an ISO 8601 timestamp", it["linked_at"])
				}
				delete(it, "linked_at")
				if len(it) != 3 {
					t.Errorf("item %v has other fields than provider, provider_username, provider_email, linked_at", it)
				}
			}
			got, _ := json.Marshal(items)
			if string(got) != tc.want {
				t.Errorf("body = %s, want %s (without linked_at)", got, tc.want)
			}
		})
	}
	t.Run("user gone", func(t *testing.T) {
		gone := e.tokenOf(t, e.demoUser(t, "admin"))
		execSQL(t, e.db, `DELETE FROM users WHERE username = 'admin'`)
		wantMessage(t, e.do(t, http.MethodGet, "/auth/oauth/connections", gone), http.StatusNotFound, "User not found")
	})
}

func TestUnlink(t *testing.T) {
	e := newEnv(t, envOptions{})
	// ada: google and github; bob: github only, no password; carol: google and a password.
	ada := e.login(t, providertest.Google, &adaGoogle)
	if rec := e.link(t, providertest.GitHub, ada, &adaGitHub); rec.Code != http.StatusFound {
		t.Fatal(rec.Code)
	}
	bob := e.login(t, providertest.GitHub, &bobGitHub)
	carol := e.login(t, providertest.Google, &bobGoogle)
	execSQL(t, e.db, `UPDATE users SET password_hash = '$argon2id$v=19$m=65536,t=3,p=4$c2FsdA$aGFzaA' WHERE id = $1`, e.userOf(t, carol))

	tests := []struct {
		name     string
		cookie   *http.Cookie
		provider string
		status   int
		msg      string
		left     string // the user's providers afterwards
	}{
		{"another provider remains", ada, "github", http.StatusOK, "Provider unlinked successfully", "google"},
		{"only login method", ada, "google", http.StatusBadRequest, "Cannot unlink the only login method", "google"},
		{"not linked", ada, "discord", http.StatusNotFound, "Provider not linked", "google"},
		{"again", ada, "github", http.StatusNotFound, "Provider not linked", "google"},
		{"only provider, no password", bob, "github", http.StatusBadRequest, "Cannot unlink the only login method", "github"},
		{"password remains", carol, "google", http.StatusOK, "Provider unlinked successfully", ""},
		{"unsupported provider", bob, "facebook", http.StatusBadRequest, "Unsupported provider", "github"},
		{"no cookie", nil, "github", http.StatusUnauthorized, "Unauthorized", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var cookies []*http.Cookie
			if tc.cookie != nil {
				cookies = append(cookies, tc.cookie)
			}
			wantMessage(t, e.do(t, http.MethodDelete, "/auth/oauth/unlink/"+tc.provider, cookies...), tc.status, tc.msg)
			if tc.cookie != nil {
				if got := providersOf(connections(t, e, tc.cookie)); got != tc.left {
					t.Errorf("providers left: %q, want %q", got, tc.left)
				}
			}
		})
	}
}

// stateFor starts a flow and returns its state token and state cookie without
// consenting (the provider never sees it).
func stateFor(t *testing.T, e *env, path string, cookies ...*http.Cookie) (string, *http.Cookie) {
	t.Helper()
	consentURL, sc := e.start(t, path, cookies...)
	u, err := url.Parse(consentURL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query().Get("state"), sc
}

func TestStateAttacks(t *testing.T) {
	e := newEnv(t, envOptions{})
	ada := e.login(t, providertest.Google, &adaGoogle)
	bob := e.login(t, providertest.GitHub, &bobGitHub)

	type request struct {
		target  string
		cookies []*http.Cookie
	}
	tests := []struct {
		name  string
		setup func(t *testing.T) request
		page  string
		param string
	}{
		{"replayed", func(t *testing.T) request {
			consentURL, sc := e.start(t, "/auth/oauth/discord")
			cb := consent(t, consentURL)
			e.wantRedirect(t, e.callback(t, cb, sc), "/login", url.Values{"oauth_success": {"1"}})
			return request{cb.RequestURI(), []*http.Cookie{sc}}
		}, "/login", "oauth_error"},
		{"forged", func(t *testing.T) request {
			forged := oauth.NewStateToken()
			return request{"/auth/oauth/google/callback?code=abc&state=" + forged, []*http.Cookie{stateCookieFor(forged)}}
		}, "/login", "oauth_error"},
		{"malformed", func(t *testing.T) request {
			forged := "../../etc/passwd"
			return request{"/auth/oauth/google/callback?code=abc&state=" + url.QueryEscape(forged), []*http.Cookie{stateCookieFor(forged)}}
		}, "/login", "oauth_error"},
		{"expired", func(t *testing.T) request {
			e.offset.Store(int64(-11 * time.Minute))
			defer e.offset.Store(0)
			consentURL, sc := e.start(t, "/auth/oauth/google")
			return request{consent(t, consentURL).RequestURI(), []*http.Cookie{sc}}
		}, "/login", "oauth_error"},
		{"cross-provider", func(t *testing.T) request {
			consentURL, sc := e.start(t, "/auth/oauth/google")
			cb := consent(t, consentURL)
			return request{"/auth/oauth/discord/callback?" + cb.RawQuery, []*http.Cookie{sc}}
		}, "/login", "oauth_error"},
		{"cross-flow: link state at the login callback", func(t *testing.T) request {
			consentURL, sc := e.start(t, "/auth/oauth/link/github", ada)
			cb := consent(t, consentURL)
			return request{"/auth/oauth/github/callback?" + cb.RawQuery, []*http.Cookie{sc, ada}}
		}, "/login", "oauth_error"},
		{"cross-flow: login state at the link callback", func(t *testing.T) request {
			consentURL, sc := e.start(t, "/auth/oauth/github")
			cb := consent(t, consentURL)
			return request{"/auth/oauth/link/github/callback?" + cb.RawQuery, []*http.Cookie{sc, ada}}
		}, "/settings", "link_error"},
		{"cross-user", func(t *testing.T) request {
			consentURL, sc := e.start(t, "/auth/oauth/link/discord", ada)
			cb := consent(t, consentURL)
			return request{cb.RequestURI(), []*http.Cookie{sc, bob}}
		}, "/settings", "link_error"},
		{"missing state cookie", func(t *testing.T) request {
			consentURL, _ := e.start(t, "/auth/oauth/google")
			return request{consent(t, consentURL).RequestURI(), nil}
		}, "/login", "oauth_error"},
		{"state cookie of another flow", func(t *testing.T) request {
			consentURL, _ := e.start(t, "/auth/oauth/google")
			_, other := e.start(t, "/auth/oauth/google")
			return request{consent(t, consentURL).RequestURI(), []*http.Cookie{other}}
		}, "/login", "oauth_error"},
		{"state cookie holding the raw state", func(t *testing.T) request {
			state, _ := stateFor(t, e, "/auth/oauth/google")
			return request{"/auth/oauth/google/callback?code=abc&state=" + state, []*http.Cookie{{Name: oauth.LocalStateCookie, Value: state}}}
		}, "/login", "oauth_error"},
		{"missing state", func(t *testing.T) request {
			_, sc := e.start(t, "/auth/oauth/google")
			return request{"/auth/oauth/google/callback?code=abc", []*http.Cookie{sc}}
		}, "/login", "oauth_error"},
		{"link without a state", func(t *testing.T) request {
			return request{"/auth/oauth/link/google/callback?code=abc", []*http.Cookie{ada}}
		}, "/settings", "link_error"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := tc.setup(t)
			users := queryOne[int64](t, e.db, `SELECT count(*) FROM users`)
			conns := queryOne[int64](t, e.db, `SELECT count(*) FROM oauth_connections`)
			rec := e.do(t, http.MethodGet, req.target, req.cookies...)
			e.wantRedirect(t, rec, tc.page, url.Values{tc.param: {"invalid_state"}})
			if c := cookieNamed(rec.Result().Cookies(), "refreshToken"); c != nil {
				t.Error("a refused callback set a refreshToken cookie")
			}
			if n := queryOne[int64](t, e.db, `SELECT count(*) FROM users`); n != users {
				t.Errorf("users %d -> %d", users, n)
			}
			if n := queryOne[int64](t, e.db, `SELECT count(*) FROM oauth_connections`); n != conns {
				t.Errorf("connections %d -> %d", conns, n)
			}
		})
	}
	t.Run("a refused cross-user state is used up", func(t *testing.T) {
		consentURL, sc := e.start(t, "/auth/oauth/link/discord", ada)
		cb := consent(t, consentURL)
		e.wantRedirect(t, e.callback(t, cb, sc, bob), "/settings", url.Values{"link_error": {"invalid_state"}})
		e.wantRedirect(t, e.callback(t, cb, sc, ada), "/settings", url.Values{"link_error": {"invalid_state"}})
	})
}

// stateCookieFor is the state cookie a browser would hold for token.
func stateCookieFor(token string) *http.Cookie {
	return &http.Cookie{Name: oauth.LocalStateCookie, Value: oauthStateHash(token)}
}

func TestProviderErrors(t *testing.T) {
	e := newEnv(t, envOptions{})
	ada := e.login(t, providertest.Google, &adaGoogle)
	tests := []struct {
		name   string
		inject func(s *providertest.Server)
		reason string
	}{
		{"consent denied", (*providertest.Server).QueueDenial, "access_denied"},
		{"code exchange fails", (*providertest.Server).FailNextToken, "exchange_failed"},
		{"profile fetch fails", (*providertest.Server).FailNextProfile, "exchange_failed"},
		{"rate limited", func(s *providertest.Server) { s.RateLimitNext(providertest.RateLimitJSON) }, "rate_limited"},
		{"rate limited with an HTML page", func(s *providertest.Server) { s.RateLimitNext(providertest.RateLimitHTML) }, "rate_limited"},
	}
	for _, tc := range tests {
		for _, provider := range []string{providertest.Google, providertest.Discord, providertest.GitHub} {
			t.Run(tc.name+"/login/"+provider, func(t *testing.T) {
				users := queryOne[int64](t, e.db, `SELECT count(*) FROM users`)
				tc.inject(e.stand[provider])
				consentURL, sc := e.start(t, "/auth/oauth/"+provider)
				rec := e.callback(t, consent(t, consentURL), sc)
				e.wantRedirect(t, rec, "/login", url.Values{"oauth_error": {tc.reason}})
				if n := queryOne[int64](t, e.db, `SELECT count(*) FROM users`); n != users {
					t.Errorf("users %d -> %d", users, n)
				}
			})
			if provider == providertest.Google {
				continue // ada has google already
			}
			t.Run(tc.name+"/link/"+provider, func(t *testing.T) {
				tc.inject(e.stand[provider])
				consentURL, sc := e.start(t, "/auth/oauth/link/"+provider, ada)
				rec := e.callback(t, consent(t, consentURL), sc, ada)
				e.wantRedirect(t, rec, "/settings", url.Values{"link_error": {tc.reason}})
				if got := providersOf(connections(t, e, ada)); got != "google" {
					t.Errorf("ada's providers = %s", got)
				}
			})
		}
	}
	t.Run("provider error without a state", func(t *testing.T) {
		rec := e.do(t, http.MethodGet, "/auth/oauth/github/callback?error=access_denied")
		e.wantRedirect(t, rec, "/login", url.Values{"oauth_error": {"invalid_state"}})
	})
	t.Run("link callback without the refreshToken cookie", func(t *testing.T) {
		consentURL, sc := e.start(t, "/auth/oauth/link/github", ada)
		rec := e.callback(t, consent(t, consentURL), sc)
		e.wantRedirect(t, rec, "/settings", url.Values{"link_error": {"unauthorized"}})
	})
}

// TestCallbackInvalidText: a callback whose path or query is not valid UTF-8 without
// NUL still redirects to the frontend, as the document says a callback always does,
// with the reason of the part that is not: no state is looked up for a state that is
// not text, and no code that is not text is sent to the provider.
func TestCallbackInvalidText(t *testing.T) {
	e := newEnv(t, envOptions{})
	ada := e.login(t, providertest.Google, &adaGoogle)
	// genuine is the callback of a flow started at start, its parameter key set to
	// value (an error in place of the code).
	genuine := func(start, key, value string, cookies ...*http.Cookie) func(t *testing.T) (string, []*http.Cookie) {
		return func(t *testing.T) (string, []*http.Cookie) {
			consentURL, sc := e.start(t, start, cookies...)
			cb := consent(t, consentURL)
			q := cb.Query()
			q.Set(key, value)
			if key == "error" {
				q.Del("code")
			}
			return cb.Path + "?" + q.Encode(), append([]*http.Cookie{sc}, cookies...)
		}
	}
	fixed := func(target string, cookies ...*http.Cookie) func(t *testing.T) (string, []*http.Cookie) {
		return func(*testing.T) (string, []*http.Cookie) { return target, cookies }
	}
	tests := []struct {
		name    string
		request func(t *testing.T) (string, []*http.Cookie)
		page    string
		query   url.Values
	}{
		{"state with NUL, its cookie beside it", fixed("/auth/oauth/google/callback?code=abc&state=a%00b", stateCookieFor("a\x00b")),
			"/login", url.Values{"oauth_error": {"invalid_state"}}},
		{"state not UTF-8", fixed("/auth/oauth/google/callback?code=abc&state=%FF%FE", stateCookieFor("\xff\xfe")),
			"/login", url.Values{"oauth_error": {"invalid_state"}}},
		{"link: state with NUL", fixed("/auth/oauth/link/github/callback?code=abc&state=%00", stateCookieFor("\x00"), ada),
			"/settings", url.Values{"link_error": {"invalid_state"}}},
		{"provider with NUL", fixed("/auth/oauth/goo%00gle/callback?code=abc&state=x"),
			"/login", url.Values{"oauth_error": {"unsupported_provider"}}},
		{"link: provider not UTF-8", fixed("/auth/oauth/link/git%FFhub/callback?code=abc&state=x", ada),
			"/settings", url.Values{"link_error": {"unsupported_provider"}}},
		{"provider's error with NUL", genuine("/auth/oauth/google", "error", "access_denied\x00"),
			"/login", url.Values{"oauth_error": {"exchange_failed"}}},
		{"code with NUL", genuine("/auth/oauth/discord", "code", "abc\x00"),
			"/login", url.Values{"oauth_error": {"exchange_failed"}}},
		{"link: code not UTF-8", genuine("/auth/oauth/link/github", "code", "\xff", ada),
			"/settings", url.Values{"link_error": {"exchange_failed"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			target, cookies := tc.request(t)
			users := queryOne[int64](t, e.db, `SELECT count(*) FROM users`)
			req := testenv.Malformed(testenv.Request(http.MethodGet, target, nil, cookies...))
			rec := testenv.Do(t, e.h, req)
			e.wantRedirect(t, rec, tc.page, tc.query)
			if c := cookieNamed(rec.Result().Cookies(), "refreshToken"); c != nil {
				t.Error("a refused callback set a refreshToken cookie")
			}
			if n := queryOne[int64](t, e.db, `SELECT count(*) FROM users`); n != users {
				t.Errorf("users %d -> %d", users, n)
			}
		})
	}
	t.Run("a state whose code is not text is used up", func(t *testing.T) {
		consentURL, sc := e.start(t, "/auth/oauth/google")
		cb := consent(t, consentURL)
		q := cb.Query()
		code := q.Get("code")
		q.Set("code", code+"\x00")
		req := testenv.Malformed(testenv.Request(http.MethodGet, cb.Path+"?"+q.Encode(), nil, sc))
		e.wantRedirect(t, testenv.Do(t, e.h, req), "/login", url.Values{"oauth_error": {"exchange_failed"}})
		e.wantRedirect(t, e.callback(t, cb, sc), "/login", url.Values{"oauth_error": {"invalid_state"}})
	})
	t.Run("other routes still refuse it", func(t *testing.T) {
		wantMessage(t, e.do(t, http.MethodGet, "/auth/oauth/google?x=%00"), http.StatusBadRequest,
			"Invalid text: parameters must be valid UTF-8 without NUL characters")
		wantMessage(t, e.do(t, http.MethodGet, "/auth/oauth/connections?x=%FF", ada), http.StatusBadRequest,
			"Invalid text: parameters must be valid UTF-8 without NUL characters")
	})
}

func TestUnsupportedProvider(t *testing.T) {
	e := newEnv(t, envOptions{unconfigure: []string{providertest.GitHub}})
	member := e.tokenOf(t, e.demoUser(t, "member"))
	tests := []struct {
		name    string
		target  string
		cookies []*http.Cookie
	}{
		{"unknown", "/auth/oauth/facebook", nil},
		{"not configured", "/auth/oauth/github", nil},
		{"upper case", "/auth/oauth/Google", nil},
		{"link, unknown", "/auth/oauth/link/facebook", []*http.Cookie{member}},
		{"link, not configured", "/auth/oauth/link/github", []*http.Cookie{member}},
		{"link start of provider callback", "/auth/oauth/link/callback", nil},
		{"link start of provider callback, with a cookie", "/auth/oauth/link/callback", []*http.Cookie{member}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := e.do(t, http.MethodGet, tc.target, tc.cookies...)
			wantMessage(t, rec, http.StatusBadRequest, "Unsupported provider")
			if c := cookieNamed(rec.Result().Cookies(), oauth.LocalStateCookie); c != nil {
				t.Error("an unsupported provider got a state cookie")
			}
		})
	}
	callbacks := []struct{ target, page, param string }{
		{"/auth/oauth/facebook/callback?code=x&state=y", "/login", "oauth_error"},
		{"/auth/oauth/github/callback?code=x&state=y", "/login", "oauth_error"},
		{"/auth/oauth/link/github/callback?code=x&state=y", "/settings", "link_error"},
	}
	for _, tc := range callbacks {
		t.Run(tc.target, func(t *testing.T) {
			// A callback answers every input with a redirect, an unknown provider too: the
			// request is malformed on purpose, and only the answer is held to the document.
			req := testenv.Malformed(testenv.Request(http.MethodGet, tc.target, nil, member))
			e.wantRedirect(t, testenv.Do(t, e.h, req), tc.page, url.Values{tc.param: {"unsupported_provider"}})
		})
	}
	t.Run("other action", func(t *testing.T) {
		// Not an API route, so not in the OpenAPI document: served without the check.
		rec := httptest.NewRecorder()
		e.h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/auth/oauth/google/authorize", nil))
		wantMessage(t, rec, http.StatusNotFound, "Not found")
	})
	t.Run("link start without a cookie", func(t *testing.T) {
		wantMessage(t, e.do(t, http.MethodGet, "/auth/oauth/link/google"), http.StatusUnauthorized, "Unauthorized")
	})
	t.Run("link start, user gone", func(t *testing.T) {
		gone := e.tokenOf(t, e.demoUser(t, "editor"))
		execSQL(t, e.db, `DELETE FROM users WHERE username = 'editor'`)
		wantMessage(t, e.do(t, http.MethodGet, "/auth/oauth/link/google", gone), http.StatusNotFound, "User not found")
	})
}

func TestNoOpenRedirect(t *testing.T) {
	e := newEnv(t, envOptions{})
	evil := "https://evil.example/phish"
	crafted := url.Values{
		"redirect_uri": {evil}, "redirect": {evil}, "next": {evil}, "return_to": {evil},
		"frontend": {evil}, "url": {"//evil.example"},
	}
	tests := []struct {
		name   string
		target func(t *testing.T) (string, []*http.Cookie)
		page   string
		query  url.Values
	}{
		{"valid login with extra parameters", func(t *testing.T) (string, []*http.Cookie) {
			consentURL, sc := e.start(t, "/auth/oauth/google?"+crafted.Encode())
			cb := consent(t, consentURL)
			return cb.RequestURI() + "&" + crafted.Encode(), []*http.Cookie{sc}
		}, "/login", url.Values{"oauth_success": {"1"}}},
		{"invalid state with extra parameters", func(t *testing.T) (string, []*http.Cookie) {
			return "/auth/oauth/google/callback?state=x&code=y&" + crafted.Encode(), nil
		}, "/login", url.Values{"oauth_error": {"invalid_state"}}},
		{"provider error text is not echoed", func(t *testing.T) (string, []*http.Cookie) {
			return "/auth/oauth/google/callback?error=" + url.QueryEscape("x&oauth_success=1") + "&" + crafted.Encode(), nil
		}, "/login", url.Values{"oauth_error": {"invalid_state"}}},
		{"link callback, provider name crafted", func(t *testing.T) (string, []*http.Cookie) {
			return "/auth/oauth/link/evil.example/callback?" + crafted.Encode(), nil
		}, "/settings", url.Values{"link_error": {"unsupported_provider"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			target, cookies := tc.target(t)
			req := testenv.Request(http.MethodGet, target, nil, cookies...)
			req.Host = "evil.example"
			req.Header.Set("X-Forwarded-Host", "evil.example")
			req.Header.Set("Referer", evil)
			if strings.Contains(target, "evil.example/") {
				req = testenv.Malformed(req) // the provider is not one of the document's
			}
			rec := testenv.Do(t, e.h, req)
			e.wantRedirect(t, rec, tc.page, tc.query)
		})
	}
}
