// Package providertest runs in-process stand-ins for the identity providers
// the service signs in with (google, discord, github). Each speaks its
// provider's wire format: authorization endpoint with PKCE (S256 only),
// token endpoint with one-use codes, and the profile endpoints behind a
// bearer token. google is github.com/oauth2-proxy/mockoidc, a real OpenID
// Connect provider, shaped to Google's userinfo document; discord and
// github are written here.
//
// Tests build one with NewGoogle, NewDiscord or NewGitHub and point the
// service at it with Env. A local development command uses Start, which
// needs no testing.TB. The authorization endpoint consents on its own,
// redirecting at once to the redirect_uri with a code for the next queued
// user (a default user when none is queued); WithConsentPage shows a small
// page with an "Authorize" link instead, for tests in a real browser.
package providertest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oauth2-proxy/mockoidc"
)

// Provider names, as the service spells them.
const (
	Google  = "google"
	Discord = "discord"
	GitHub  = "github"
)

const (
	codeTTL      = 10 * time.Minute
	tokenTTL     = 7 * 24 * time.Hour
	maxFormBytes = 64 << 10
)

// User is an account at a stand-in provider. Each provider reads the fields
// it has; an empty string is sent as null (or left out) where the provider
// does so.
type User struct {
	// ID is the google sub, the discord snowflake, or the github id (a
	// decimal number).
	ID string
	// Login is the discord username or the github login; google has none.
	Login string
	// Name is the google name, the discord global_name or the github name.
	Name string
	// Email is the google or discord address, or the github public profile
	// address (null on /user when empty).
	Email string
	// EmailVerified is google's email_verified or discord's verified.
	EmailVerified bool
	// Avatar is the google picture URL, the discord avatar hash ("a_..."
	// for animated ones) or the github avatar_url.
	Avatar string
	// Discriminator is discord's legacy discriminator; "" means "0" (new
	// usernames).
	Discriminator string
	// Emails is github's /user/emails list. When nil, the list holds Email
	// alone, as primary, verified when EmailVerified, and public when verified.
	// /user's "email" is the public verified entry of the list (GitHub lets a
	// user make only a verified address public), never set on its own.
	Emails []Email
	// Withhold lists scopes the user unticks on github's consent page (GitHub
	// lets the user edit the requested scopes): the token's scope lacks them.
	Withhold []string
	// EmailVerifiedText makes google's userinfo carry email_verified as the
	// string "true" or "false", a form some of Google's endpoints answer.
	EmailVerifiedText bool
}

// Email is one entry of github's /user/emails list.
type Email struct {
	Email      string
	Primary    bool
	Verified   bool
	Visibility string // "public", "private" or "" (null)
}

// Option configures a stand-in.
type Option func(*options)

type options struct {
	addr         string
	consentPage  bool
	redirectURIs []string
}

// WithAddr listens on addr (such as "127.0.0.1:9101") instead of a free
// loopback port, so a local stack can keep its provider addresses stable.
func WithAddr(addr string) Option { return func(o *options) { o.addr = addr } }

// WithConsentPage makes the authorization endpoint answer with an HTML page
// holding an "Authorize" and a "Cancel" link instead of consenting on its own.
func WithConsentPage() Option { return func(o *options) { o.consentPage = true } }

// WithRedirectURIs registers the only redirect addresses the stand-in
// accepts, as a real provider does. Without it any absolute http(s) address
// is accepted. google and discord take several and match them exactly.
//
// github takes exactly one, the OAuth app's single callback URL, and matches
// as GitHub documents (docs.github.com, "Authorizing OAuth apps", Redirect
// URLs): a redirect_uri is accepted when its scheme is the callback's, its
// host the callback's or a subdomain of it, its port the callback's (any
// port for a loopback IP), and its path the callback's path or below it. A
// missing redirect_uri means the callback URL. Any other is sent to the
// callback URL with error=redirect_uri_mismatch.
func WithRedirectURIs(uris ...string) Option {
	return func(o *options) { o.redirectURIs = append(o.redirectURIs, uris...) }
}

// Server is a running stand-in provider.
type Server struct {
	URL          string // base address
	Provider     string // "google", "discord" or "github"
	ClientID     string
	ClientSecret string
	AuthURL      string
	TokenURL     string
	ProfileURL   string
	EmailsURL    string // github only
	Issuer       string // google only: the ID token issuer

	opts     options
	flavor   flavor
	oidc     *mockoidc.MockOIDC // google only
	oidcMu   sync.Mutex         // mockoidc's session store is not safe for concurrent use
	idChange IDTokenChange      // google: of the token request being answered (under oidcMu)

	mu          sync.Mutex
	queue       []queued
	failToken   int
	failProfile int
	failEmails  int               // github: /user/emails alone
	rateLimits  []RateLimitKind   // the next profile requests answer the provider's rate limit
	idChanges   []IDTokenChange   // google: changes of the next ID tokens, in order
	codes       *recent[grant]    // the newest maxGrants codes
	tokens      *recent[session]  // the newest maxGrants access tokens
	oidcCodes   *recent[struct{}] // google: mockoidc's newest sessions (under oidcMu)

	closeOnce sync.Once
	stop      func()
}

type queued struct {
	user User
	deny bool
}

// grant is an issued authorization code.
type grant struct {
	user        User
	redirectURI string
	challenge   string
	scopes      []string
	expires     time.Time
}

// session is an issued access token.
type session struct {
	user    User
	scopes  []string
	expires time.Time
}

// New starts a stand-in for provider ("google", "discord" or "github") that
// accepts the given client credentials, and closes it when the test ends.
func New(t testing.TB, provider, clientID, secret string, opts ...Option) *Server {
	t.Helper()
	s, stop, err := Start(provider, clientID, secret, opts...)
	if err != nil {
		t.Fatalf("start %s stand-in: %v", provider, err)
	}
	t.Cleanup(stop)
	return s
}

// NewGoogle starts a google stand-in (mockoidc) for the test.
func NewGoogle(t testing.TB, clientID, secret string, opts ...Option) *Server {
	t.Helper()
	return New(t, Google, clientID, secret, opts...)
}

// NewDiscord starts a discord stand-in for the test.
func NewDiscord(t testing.TB, clientID, secret string, opts ...Option) *Server {
	t.Helper()
	return New(t, Discord, clientID, secret, opts...)
}

// Start starts a stand-in for provider outside a test, for a local
// development command. The returned func stops it.
func Start(provider, clientID, secret string, opts ...Option) (*Server, func(), error) {
	if clientID == "" || secret == "" {
		return nil, nil, fmt.Errorf("providertest: %s: client id and secret are required", provider)
	}
	s := &Server{
		Provider:     provider,
		ClientID:     clientID,
		ClientSecret: secret,
		codes:        newRecent[grant](maxGrants),
		tokens:       newRecent[session](maxGrants),
		oidcCodes:    newRecent[struct{}](maxGrants),
	}
	for _, opt := range opts {
		opt(&s.opts)
	}
	f, ok := flavors[provider]
	if !ok {
		return nil, nil, fmt.Errorf("providertest: unknown provider %q", provider)
	}
	s.flavor = f
	if provider == GitHub && len(s.opts.redirectURIs) > 1 {
		return nil, nil, fmt.Errorf("providertest: github: an OAuth app has one callback URL, got %d", len(s.opts.redirectURIs))
	}
	var err error
	switch provider {
	case Google:
		err = s.startGoogle()
	case Discord:
		err = s.startHTTP(s.discordRoutes())
	case GitHub:
		err = s.startHTTP(s.githubRoutes())
	}
	if err != nil {
		return nil, nil, fmt.Errorf("providertest: start %s: %w", provider, err)
	}
	return s, s.Close, nil
}

// Close stops the stand-in. It is safe to call more than once.
func (s *Server) Close() {
	s.closeOnce.Do(s.stop)
}

// QueueUser makes u the account that consents at the next authorization.
func (s *Server) QueueUser(u User) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, queued{user: u})
}

// QueueDenial makes the next authorization end with error=access_denied, as
// when the user cancels the consent page.
func (s *Server) QueueDenial() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, queued{deny: true})
}

// FailNextToken makes the next token request fail with the provider's
// invalid-grant answer. Calls add up.
func (s *Server) FailNextToken() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failToken++
}

// IDTokenChange is a fault in the ID token a google stand-in issues.
type IDTokenChange int

const (
	// IDTokenMissing: the token response carries no id_token.
	IDTokenMissing IDTokenChange = iota + 1
	// IDTokenExpired: exp an hour in the past.
	IDTokenExpired
	// IDTokenNoExpiry: no exp claim.
	IDTokenNoExpiry
	// IDTokenOtherAudience: aud (and azp) another client.
	IDTokenOtherAudience
	// IDTokenOtherParty: aud this client and another, azp the other one.
	IDTokenOtherParty
	// IDTokenNoPartyManyAudiences: aud this client and another, no azp.
	IDTokenNoPartyManyAudiences
	// IDTokenBareIssuer: iss without its scheme, the form accounts.google.com
	// that Google documents beside https://accounts.google.com.
	IDTokenBareIssuer
)

// AlterNextIDToken makes the next token answer of a google stand-in carry an
// ID token with change (by default the ID token is Google's: iss, aud and azp
// the client, exp an hour ahead). Calls queue up.
func (s *Server) AlterNextIDToken(change IDTokenChange) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.idChanges = append(s.idChanges, change)
}

// nextIDChange pops the change of the next ID token (0 for none).
func (s *Server) nextIDChange() IDTokenChange { return popFront(s, &s.idChanges) }

// popFront takes the first of a queued list of faults under the server's lock (the
// zero value when none is queued).
func popFront[T any](s *Server, queue *[]T) T {
	s.mu.Lock()
	defer s.mu.Unlock()
	var first T
	if len(*queue) > 0 {
		first, *queue = (*queue)[0], (*queue)[1:]
	}
	return first
}

// FailNextProfile makes the next request to a profile endpoint (google
// userinfo, discord /users/@me, github /user or /user/emails) answer 500.
// Calls add up.
func (s *Server) FailNextProfile() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failProfile++
}

// FailNextEmails makes the next request to github's /user/emails answer 500
// while /user answers as usual. Calls add up.
func (s *Server) FailNextEmails() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failEmails++
}

// RateLimitKind is the form of a provider's rate-limit answer.
type RateLimitKind int

const (
	// RateLimitJSON is the provider's documented JSON answer: Discord's 429
	// {"message", "retry_after", "global"} with Retry-After; GitHub's 403 with
	// X-RateLimit-Remaining 0; Google's 429 RESOURCE_EXHAUSTED.
	RateLimitJSON RateLimitKind = iota + 1
	// RateLimitHTML is a 429 with an HTML page, as Discord's edge (Cloudflare)
	// answers when an address is limited.
	RateLimitHTML
)

// RateLimitNext makes the next request to a profile endpoint (google
// userinfo, discord /users/@me, github /user) answer the provider's rate
// limit in the given form. Calls queue up.
func (s *Server) RateLimitNext(kind RateLimitKind) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rateLimits = append(s.rateLimits, kind)
}

// takeRateLimit pops the next queued rate limit (0 for none).
func (s *Server) takeRateLimit() RateLimitKind { return popFront(s, &s.rateLimits) }

// rateLimitHTML is the page of a limited address at Discord's edge.
const rateLimitHTML = `<!DOCTYPE html><html><head><title>Access denied | discord.com used Cloudflare to restrict access</title></head>` +
	`<body><h1>Error 1015</h1><h2>You are being rate limited</h2></body></html>`

// answerRateLimit writes the provider's rate-limit answer of kind.
func (s *Server) answerRateLimit(w http.ResponseWriter, kind RateLimitKind) {
	w.Header().Set("Retry-After", "30")
	if kind == RateLimitHTML {
		w.Header().Set("Content-Type", "text/html; charset=UTF-8")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(rateLimitHTML))
		return
	}
	switch s.Provider {
	case GitHub:
		w.Header().Set("X-RateLimit-Limit", "5000")
		w.Header().Set("X-RateLimit-Remaining", "0")
		w.Header().Set("X-RateLimit-Reset", fmt.Sprint(time.Now().Add(30*time.Second).Unix()))
		writeJSON(w, http.StatusForbidden, map[string]string{
			"message":           "API rate limit exceeded for user ID 1.",
			"documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api",
		})
	case Discord:
		w.Header().Set("X-RateLimit-Scope", "user")
		writeJSON(w, http.StatusTooManyRequests, map[string]any{"message": "You are being rate limited.", "retry_after": 30.0, "global": false})
	default:
		writeJSON(w, http.StatusTooManyRequests, map[string]any{"error": map[string]any{
			"code": 429, "message": "Quota exceeded.", "status": "RESOURCE_EXHAUSTED"}})
	}
}

// Env returns the OAUTH_<PROVIDER>_* variables that point the service at
// the stand-in: client id and secret and the endpoint overrides.
func (s *Server) Env() map[string]string {
	p := "OAUTH_" + strings.ToUpper(s.Provider) + "_"
	env := map[string]string{
		p + "CLIENT_ID":     s.ClientID,
		p + "CLIENT_SECRET": s.ClientSecret,
		p + "AUTH_URL":      s.AuthURL,
		p + "TOKEN_URL":     s.TokenURL,
		p + "PROFILE_URL":   s.ProfileURL,
	}
	if s.EmailsURL != "" {
		env[p+"EMAILS_URL"] = s.EmailsURL
	}
	if s.Issuer != "" {
		env[p+"ISSUER"] = s.Issuer
	}
	return env
}

// Authorize plays the browser at the authorization endpoint: it requests
// authURL without following the redirect and returns the address the
// provider sends the browser back to (the redirect_uri with code and state,
// or with error). It fails when the stand-in answers with anything but a
// redirect, such as its consent page or an error page.
func Authorize(ctx context.Context, authURL string) (*url.URL, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return nil, fmt.Errorf("providertest: authorize: %w", err)
	}
	client := &http.Client{
		Timeout:       10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("providertest: authorize: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		return nil, fmt.Errorf("providertest: authorize: got %s, want a 302 redirect", resp.Status)
	}
	loc, err := resp.Location()
	if err != nil {
		return nil, fmt.Errorf("providertest: authorize: %w", err)
	}
	return loc, nil
}

// flavor is what differs in the wire format of the hand-written stand-ins.
type flavor struct {
	name        string
	scopes      []string // scopes the provider knows
	splitScopes func(string) []string
	denyDesc    string // error_description of a denied consent
}

var flavors = map[string]flavor{
	Google: {
		name:        "Google",
		scopes:      mockoidc.ScopesSupported,
		splitScopes: strings.Fields,
	},
	Discord: {
		name:        "Discord",
		scopes:      []string{"identify", "email", "connections", "guilds", "guilds.join", "guilds.members.read", "openid", "role_connections.write"},
		splitScopes: strings.Fields,
		denyDesc:    "The resource owner or authorization server denied the request",
	},
	GitHub: {
		name:   "GitHub",
		scopes: []string{"repo", "public_repo", "user", "read:user", "user:email", "user:follow", "read:org", "gist", "notifications", "workflow"},
		splitScopes: func(s string) []string {
			return strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' })
		},
		denyDesc: "The user has denied your application access.",
	},
}

// authRequest is a validated authorization request.
type authRequest struct {
	redirect    *url.URL
	redirectURI string
	state       string
	challenge   string
	scopes      []string
}

// parseAuthorize validates an authorization request the way a provider
// does. A bad client or redirect address gets an error page (a provider
// never redirects to an address it cannot trust); any other mistake is
// redirected back with an OAuth error. It reports false when it answered.
func (s *Server) parseAuthorize(w http.ResponseWriter, r *http.Request) (authRequest, bool) {
	q := r.URL.Query()
	if subtle.ConstantTimeCompare([]byte(q.Get("client_id")), []byte(s.ClientID)) != 1 {
		http.Error(w, "invalid client_id", http.StatusBadRequest)
		return authRequest{}, false
	}
	ar := authRequest{redirectURI: q.Get("redirect_uri"), state: q.Get("state"), challenge: q.Get("code_challenge")}
	u, err := url.Parse(ar.redirectURI)
	if s.Provider == GitHub && len(s.opts.redirectURIs) == 1 {
		callback, _ := url.Parse(s.opts.redirectURIs[0])
		if ar.redirectURI == "" {
			ar.redirectURI, u = callback.String(), callback
		} else if err != nil || !githubRedirectAllowed(callback, u) {
			// GitHub sends the browser to the registered callback with the error.
			s.redirectError(w, r, authRequest{redirect: callback, state: ar.state}, "redirect_uri_mismatch",
				"The redirect_uri MUST match the registered callback URL for this application.")
			return authRequest{}, false
		}
	} else if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Fragment != "" {
		http.Error(w, "invalid redirect_uri", http.StatusBadRequest)
		return authRequest{}, false
	} else if len(s.opts.redirectURIs) > 0 && !slices.Contains(s.opts.redirectURIs, ar.redirectURI) {
		http.Error(w, "redirect_uri is not registered for this client", http.StatusBadRequest)
		return authRequest{}, false
	}
	ar.redirect = u
	fail := func(code, desc string) (authRequest, bool) {
		s.redirectError(w, r, ar, code, desc)
		return authRequest{}, false
	}
	if q.Get("response_type") != "code" {
		return fail("unsupported_response_type", "response_type must be code")
	}
	ar.scopes = s.flavor.splitScopes(q.Get("scope"))
	if len(ar.scopes) == 0 {
		return fail("invalid_scope", "scope is required")
	}
	for _, sc := range ar.scopes {
		if !slices.Contains(s.flavor.scopes, sc) {
			return fail("invalid_scope", "unknown scope "+sc)
		}
	}
	if ar.state == "" {
		return fail("invalid_request", "state is required")
	}
	if q.Get("code_challenge_method") != "S256" {
		return fail("invalid_request", "code_challenge_method must be S256")
	}
	if !validChallenge(ar.challenge) {
		return fail("invalid_request", "code_challenge must be a base64url SHA-256 digest")
	}
	return ar, true
}

// githubRedirectAllowed is GitHub's rule for a redirect_uri against the app's
// one callback URL (see WithRedirectURIs).
func githubRedirectAllowed(callback, u *url.URL) bool {
	if u.Scheme != callback.Scheme || u.User != nil || u.Fragment != "" || u.Host == "" {
		return false
	}
	host, cbHost := strings.ToLower(u.Hostname()), strings.ToLower(callback.Hostname())
	if host != cbHost && !strings.HasSuffix(host, "."+cbHost) {
		return false
	}
	if ip := net.ParseIP(host); !(ip != nil && ip.IsLoopback()) && u.Port() != callback.Port() {
		return false
	}
	// Compare cleaned paths segment by segment, so that /auth/oauthx is not under
	// /auth/oauth and /auth/oauth/../x is not either.
	p, cb := path.Clean("/"+u.EscapedPath()), path.Clean("/"+callback.EscapedPath())
	return p == cb || cb == "/" || strings.HasPrefix(p, cb+"/")
}

// consent decides the authorization: the consent page when enabled and not
// yet answered, a denial when the user cancelled or one is queued, else the
// next queued user. It reports false when it answered.
func (s *Server) consent(w http.ResponseWriter, r *http.Request, ar authRequest) (User, bool) {
	answer := r.URL.Query().Get("consent")
	if s.opts.consentPage && answer == "" {
		s.renderConsent(w, r, ar)
		return User{}, false
	}
	if answer == "deny" {
		s.redirectError(w, r, ar, "access_denied", s.flavor.denyDesc)
		return User{}, false
	}
	next := s.pop()
	if next.deny {
		s.redirectError(w, r, ar, "access_denied", s.flavor.denyDesc)
		return User{}, false
	}
	return next.user, true
}

func (s *Server) pop() queued {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) == 0 {
		return queued{user: defaultUser(s.Provider)}
	}
	next := s.queue[0]
	s.queue = s.queue[1:]
	return next
}

func (s *Server) peek() queued {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) == 0 {
		return queued{user: defaultUser(s.Provider)}
	}
	return s.queue[0]
}

// take consumes one queued failure from *n.
func (s *Server) take(n *int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if *n == 0 {
		return false
	}
	*n--
	return true
}

// issueCode stores a one-use authorization code for u.
func (s *Server) issueCode(u User, ar authRequest) string {
	code := rand.Text()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.codes.put(code, grant{user: u, redirectURI: ar.redirectURI, challenge: ar.challenge, scopes: s.granted(u, ar.scopes), expires: time.Now().Add(codeTTL)})
	return code
}

// granted is what the user grants of the requested scopes: GitHub lets the user
// untick scopes on its consent page; the others grant what is requested.
func (s *Server) granted(u User, requested []string) []string {
	if s.Provider != GitHub || len(u.Withhold) == 0 {
		return requested
	}
	return slices.DeleteFunc(slices.Clone(requested), func(sc string) bool { return slices.Contains(u.Withhold, sc) })
}

// redeem consumes code: a code is good for one token request, whatever its
// outcome.
func (s *Server) redeem(code string) (grant, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.codes.take(code)
	if !ok || time.Now().After(g.expires) {
		return grant{}, false
	}
	return g, true
}

func (s *Server) issueToken(g grant) string {
	tok := randomToken()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens.put(tok, session{user: g.user, scopes: g.scopes, expires: time.Now().Add(tokenTTL)})
	return tok
}

// randomToken is an opaque 52-character secret.
func randomToken() string { return rand.Text() + rand.Text() }

func (s *Server) session(token string) (session, bool) {
	if token == "" {
		return session{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, ok := s.tokens.get(token)
	if !ok || time.Now().After(sess.expires) {
		return session{}, false
	}
	return sess, true
}

// clientAuth reads the client credentials of a token request, from HTTP
// Basic authentication (form-encoded, RFC 6749 §2.3.1) or from the form.
// github reads the form only: its token endpoint documents client_id and
// client_secret as body parameters.
func (s *Server) clientAuth(r *http.Request) bool {
	id, secret := r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	if u, p, ok := r.BasicAuth(); ok && s.Provider != GitHub {
		var err1, err2 error
		id, err1 = url.QueryUnescape(u)
		secret, err2 = url.QueryUnescape(p)
		if err1 != nil || err2 != nil {
			return false
		}
		if f := r.PostForm.Get("client_id"); f != "" && f != id {
			return false
		}
	}
	okID := subtle.ConstantTimeCompare([]byte(id), []byte(s.ClientID))
	okSecret := subtle.ConstantTimeCompare([]byte(secret), []byte(s.ClientSecret))
	return okID&okSecret == 1
}

// redirectError sends the browser back to the client with an OAuth error.
func (s *Server) redirectError(w http.ResponseWriter, r *http.Request, ar authRequest, code, desc string) {
	params := url.Values{"error": {code}}
	if desc != "" {
		params.Set("error_description", desc)
	}
	if ar.state != "" {
		params.Set("state", ar.state)
	}
	redirectTo(w, r, ar.redirect, params)
}

// redirectTo redirects to base with params added to its query.
func redirectTo(w http.ResponseWriter, r *http.Request, base *url.URL, params url.Values) {
	u := *base
	q := u.Query()
	for k, v := range params {
		q[k] = v
	}
	u.RawQuery = q.Encode()
	http.Redirect(w, r, u.String(), http.StatusFound)
}

var consentPage = template.Must(template.New("consent").Parse(`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Authorize — {{.Provider}} stand-in</title></head>
<body>
<h1>{{.Provider}} stand-in</h1>
<p>The application <code>{{.ClientID}}</code> asks for access to your account ({{range $i, $s := .Scopes}}{{if $i}}, {{end}}<code>{{$s}}</code>{{end}}).</p>
<p>{{if .Deny}}The next sign-in is queued to be denied.{{else}}You will sign in as <strong>{{.Account}}</strong>.{{end}}</p>
<p><a id="authorize" href="{{.AllowURL}}">Authorize</a> <a id="cancel" href="{{.DenyURL}}">Cancel</a></p>
</body>
</html>
`))

func (s *Server) renderConsent(w http.ResponseWriter, r *http.Request, ar authRequest) {
	with := func(answer string) string {
		q := r.URL.Query()
		q.Set("consent", answer)
		return r.URL.Path + "?" + q.Encode()
	}
	next := s.peek()
	account := next.user.Name
	if account == "" {
		account = next.user.Login
	}
	if account == "" {
		account = next.user.ID
	}
	data := struct {
		Provider, ClientID, Account, AllowURL, DenyURL string
		Scopes                                         []string
		Deny                                           bool
	}{s.flavor.name, s.ClientID, account, with("allow"), with("deny"), ar.scopes, next.deny}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if err := consentPage.Execute(w, data); err != nil {
		http.Error(w, "render consent page", http.StatusInternalServerError)
	}
}

// startHTTP serves h on a loopback port (or WithAddr) and fills in the
// addresses.
func (s *Server) startHTTP(h http.Handler, paths endpointPaths) error {
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ReadHeaderTimeout = 10 * time.Second
	if s.opts.addr != "" {
		ln, err := net.Listen("tcp", s.opts.addr)
		if err != nil {
			srv.Close()
			return err
		}
		srv.Listener.Close()
		srv.Listener = ln
	}
	srv.Start()
	s.stop = srv.Close
	s.URL = srv.URL
	s.AuthURL = srv.URL + paths.auth
	s.TokenURL = srv.URL + paths.token
	s.ProfileURL = srv.URL + paths.profile
	if paths.emails != "" {
		s.EmailsURL = srv.URL + paths.emails
	}
	return nil
}

type endpointPaths struct{ auth, token, profile, emails string }

func validChallenge(c string) bool {
	if len(c) != 43 {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(c)
	return err == nil
}

// verifierMatches checks a PKCE code_verifier (RFC 7636 §4.1) against the
// S256 challenge.
func verifierMatches(verifier, challenge string) bool {
	if len(verifier) < 43 || len(verifier) > 128 {
		return false
	}
	for _, r := range verifier {
		if !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune("-._~", r)) {
			return false
		}
	}
	sum := sha256.Sum256([]byte(verifier))
	return subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(challenge)) == 1
}

// bearer returns the token of an "Authorization: Bearer" header; github
// also takes its older "token" scheme.
func bearer(r *http.Request, alsoTokenScheme bool) string {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok {
		return ""
	}
	if strings.EqualFold(scheme, "Bearer") || (alsoTokenScheme && strings.EqualFold(scheme, "token")) {
		return strings.TrimSpace(tok)
	}
	return ""
}

// parseTokenForm reads a token request's form body, bounded in size.
func parseTokenForm(w http.ResponseWriter, r *http.Request) error {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/x-www-form-urlencoded") {
		return fmt.Errorf("content type %q, want application/x-www-form-urlencoded", ct)
	}
	return r.ParseForm()
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "encode response", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// null is v, or JSON null when v is empty.
func null(v string) any {
	if v == "" {
		return nil
	}
	return v
}

func defaultUser(provider string) User {
	switch provider {
	case Google:
		return User{ID: "100000000000000000001", Name: "Jane Doe", Email: "jane.doe@example.com", EmailVerified: true,
			Avatar: "https://lh3.googleusercontent.com/a/default-user=s96-c"}
	case Discord:
		return User{ID: "80351110224678912", Login: "jane.doe", Name: "Jane Doe", Email: "jane.doe@example.com", EmailVerified: true}
	default:
		return User{ID: "583231", Login: "janedoe", Name: "Jane Doe", Avatar: "https://avatars.githubusercontent.com/u/583231?v=4",
			Emails: []Email{{Email: "jane.doe@example.com", Primary: true, Verified: true, Visibility: "private"}}}
	}
}
