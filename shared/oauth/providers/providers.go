// Package providers signs users in with the external identity providers the
// service supports (google, discord, github): OAuth 2.0 authorization code
// flow with PKCE (S256) over golang.org/x/oauth2, then one profile fetch that
// turns each provider's user document into a Profile.
//
// The package never logs; tokens and client secrets never appear in the
// errors it returns.
package providers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/endpoints"

	"github.com/mediacatalog/service/shared/dependency"
)

// Provider names, as used in paths (/auth/oauth/{provider}) and in the
// OAUTH_<PROVIDER>_* environment variables (upper-cased).
const (
	Google  = "google"
	Discord = "discord"
	GitHub  = "github"
)

// DefaultTimeout bounds every request to a provider when the caller's
// http.Client has no timeout of its own.
const DefaultTimeout = 10 * time.Second

const (
	maxBody   = 1 << 20 // largest profile response read, in bytes
	userAgent = "mediacatalog-service"
)

// Errors wrapped by Exchange and CallbackError. Callers map them to the
// redirect reasons of the login and link flows (access_denied,
// exchange_failed, ...) with errors.Is.
var (
	// ErrAccessDenied: the user declined consent at the provider.
	ErrAccessDenied = errors.New("oauth provider: access denied")
	// ErrExchange: the provider refused the authorization code (bad or
	// replayed code, wrong PKCE verifier, wrong client credentials, redirect
	// mismatch) or its token endpoint could not be reached or understood.
	ErrExchange = errors.New("oauth provider: code exchange failed")
	// ErrProfile: the token was issued but the user's profile could not be
	// fetched or was unusable.
	ErrProfile = errors.New("oauth provider: profile fetch failed")
	// ErrRateLimited: the provider refused the exchange or the profile fetch for
	// its rate limit (429, or GitHub's 403 with no requests remaining). It comes
	// wrapped with ErrExchange or ErrProfile too.
	ErrRateLimited = errors.New("oauth provider: rate limited")
)

// Profile is the provider account of a user, reduced to what the service keeps.
type Profile struct {
	ProviderUserID string  // google sub, discord id, github id (as decimal string)
	Username       string  // display name to show and to derive a username from
	Email          *string // nil when none; only a verified address
	AvatarURL      *string // nil when none
}

// Provider is one configured identity provider.
type Provider interface {
	// Name is "google", "discord" or "github".
	Name() string
	// AuthCodeURL is the provider's consent page address for one login or
	// link attempt: state is the CSRF token, codeChallenge the PKCE S256
	// challenge of the verifier later given to Exchange, redirectURL the
	// service's callback address.
	AuthCodeURL(state, codeChallenge, redirectURL string) string
	// Exchange trades the authorization code (with the PKCE verifier and
	// the same redirect address) for a token, then fetches the profile.
	// Errors wrap ErrAccessDenied, ErrExchange or ErrProfile.
	Exchange(ctx context.Context, code, verifier, redirectURL string) (Profile, error)
}

// Endpoints are a provider's addresses. Empty fields take the provider's
// real endpoints: the consent and token addresses of
// golang.org/x/oauth2/endpoints, the API addresses of the providers'
// documentation.
type Endpoints struct {
	AuthURL    string // consent page
	TokenURL   string // code exchange
	ProfileURL string // user document (google userinfo, discord /users/@me, github /user)
	EmailsURL  string // github /user/emails; unused by the others
	Issuer     string // google: expected "iss" of the ID token; unused by the others
}

// Credentials are the client registration at a provider.
type Credentials struct {
	ClientID, ClientSecret string
}

// Names lists the supported providers in a fixed order.
func Names() []string { return []string{Google, Discord, GitHub} }

// PKCE returns a fresh code verifier (43 characters from 32 random bytes)
// and its S256 code challenge (RFC 7636).
func PKCE() (verifier, challenge string) {
	verifier = oauth2.GenerateVerifier()
	return verifier, oauth2.S256ChallengeFromVerifier(verifier)
}

// CallbackError reports the error a provider put on its redirect back to
// the callback (RFC 6749 §4.1.2.1): nil when the query carries none,
// ErrAccessDenied when the user declined, ErrExchange otherwise.
func CallbackError(query url.Values) error {
	code := query.Get("error")
	switch code {
	case "":
		return nil
	case "access_denied":
		return fmt.Errorf("%w: the user declined consent", ErrAccessDenied)
	default:
		return fmt.Errorf("%w: the provider answered the authorization request with error %q", ErrExchange, clip(code))
	}
}

// FromEnv builds the providers configured through getenv:
// OAUTH_<PROVIDER>_CLIENT_ID and OAUTH_<PROVIDER>_CLIENT_SECRET, with optional
// endpoint overrides OAUTH_<PROVIDER>_AUTH_URL, _TOKEN_URL, _PROFILE_URL,
// OAUTH_GITHUB_EMAILS_URL and OAUTH_GOOGLE_ISSUER (for stand-ins in tests and
// local runs). It returns the configured providers by name and the names it
// skipped, in Names order: a provider is skipped when its client id or secret
// is absent, or when an endpoint override is not an absolute http(s) address.
// client may be nil; a client without a timeout gets DefaultTimeout.
func FromEnv(getenv func(string) string, client *http.Client) (map[string]Provider, []string) {
	configured := make(map[string]Provider, len(Names()))
	var skipped []string
	for _, name := range Names() {
		prefix := "OAUTH_" + strings.ToUpper(name) + "_"
		env := func(key string) string { return strings.TrimSpace(getenv(prefix + key)) }
		creds := Credentials{ClientID: env("CLIENT_ID"), ClientSecret: env("CLIENT_SECRET")}
		ep := Endpoints{
			AuthURL:    env("AUTH_URL"),
			TokenURL:   env("TOKEN_URL"),
			ProfileURL: env("PROFILE_URL"),
			EmailsURL:  env("EMAILS_URL"),
			Issuer:     env("ISSUER"),
		}
		p, err := New(name, creds, ep, client)
		if err != nil {
			skipped = append(skipped, name)
			continue
		}
		configured[name] = p
	}
	return configured, skipped
}

// New builds the named provider. Empty endpoint fields take the provider's
// real endpoints. client may be nil; a client without a timeout gets
// DefaultTimeout (the caller's client is not modified).
func New(name string, creds Credentials, ep Endpoints, client *http.Client) (Provider, error) {
	s, ok := specFor(name)
	if !ok {
		return nil, fmt.Errorf("oauth provider %q: not supported", name)
	}
	if creds.ClientID == "" || creds.ClientSecret == "" {
		return nil, fmt.Errorf("oauth provider %s: client id and client secret are required", name)
	}
	ep = withDefaults(ep, s.defaults)
	urls := []struct{ field, value string }{
		{"auth URL", ep.AuthURL}, {"token URL", ep.TokenURL}, {"profile URL", ep.ProfileURL},
	}
	if s.needsEmails {
		urls = append(urls, struct{ field, value string }{"emails URL", ep.EmailsURL})
	}
	for _, u := range urls {
		if err := checkURL(u.value); err != nil {
			return nil, fmt.Errorf("oauth provider %s: %s: %w", name, u.field, err)
		}
	}
	api := guarded(bounded(client), name)
	return &provider{
		name: name,
		cfg: oauth2.Config{
			ClientID:     creds.ClientID,
			ClientSecret: creds.ClientSecret,
			Endpoint:     oauth2.Endpoint{AuthURL: ep.AuthURL, TokenURL: ep.TokenURL, AuthStyle: s.authStyle},
			Scopes:       s.scopes,
		},
		ep:     ep,
		api:    api,
		token:  tokenClient(api),
		accept: s.accept,
		fetch:  s.fetch,
	}, nil
}

// spec is what differs between providers.
type spec struct {
	defaults    Endpoints
	scopes      []string
	authStyle   oauth2.AuthStyle // how the client authenticates at the token endpoint
	accept      string           // Accept header of API calls
	needsEmails bool
	fetch       func(ctx context.Context, p *provider, tok *oauth2.Token) (Profile, error)
}

func specFor(name string) (spec, bool) {
	switch name {
	case Google:
		return spec{
			defaults: Endpoints{
				AuthURL:    endpoints.Google.AuthURL,
				TokenURL:   endpoints.Google.TokenURL,
				ProfileURL: "https://openidconnect.googleapis.com/v1/userinfo",
				Issuer:     "https://accounts.google.com",
			},
			scopes:    []string{"openid", "profile", "email"},
			authStyle: oauth2.AuthStyleInParams,
			accept:    "application/json",
			fetch:     fetchGoogle,
		}, true
	case Discord:
		return spec{
			defaults: Endpoints{
				AuthURL:  endpoints.Discord.AuthURL,
				TokenURL: endpoints.Discord.TokenURL,
				// Discord's API versions are in the path; an unversioned call goes
				// to the default version, which Discord marks deprecated.
				ProfileURL: "https://discord.com/api/v10/users/@me",
			},
			scopes:    []string{"identify", "email"},
			authStyle: oauth2.AuthStyleInHeader,
			accept:    "application/json",
			fetch:     fetchDiscord,
		}, true
	case GitHub:
		return spec{
			defaults: Endpoints{
				AuthURL:    endpoints.GitHub.AuthURL,
				TokenURL:   endpoints.GitHub.TokenURL,
				ProfileURL: "https://api.github.com/user",
				EmailsURL:  "https://api.github.com/user/emails",
			},
			scopes:      []string{"read:user", "user:email"},
			authStyle:   oauth2.AuthStyleInParams,
			accept:      "application/vnd.github+json",
			needsEmails: true,
			fetch:       fetchGitHub,
		}, true
	default:
		return spec{}, false
	}
}

type provider struct {
	name   string
	cfg    oauth2.Config
	ep     Endpoints
	api    *http.Client // profile requests
	token  *http.Client // token requests: JSON answers, no redirects
	accept string
	fetch  func(ctx context.Context, p *provider, tok *oauth2.Token) (Profile, error)
}

func (p *provider) Name() string { return p.name }

func (p *provider) AuthCodeURL(state, codeChallenge, redirectURL string) string {
	cfg := p.cfg
	cfg.RedirectURL = redirectURL
	return cfg.AuthCodeURL(state,
		oauth2.SetAuthURLParam("code_challenge", codeChallenge),
		oauth2.SetAuthURLParam("code_challenge_method", "S256"),
	)
}

func (p *provider) Exchange(ctx context.Context, code, verifier, redirectURL string) (Profile, error) {
	if code == "" {
		return Profile{}, fmt.Errorf("%w: %s: no authorization code", ErrExchange, p.name)
	}
	if verifier == "" {
		return Profile{}, fmt.Errorf("%w: %s: no PKCE verifier", ErrExchange, p.name)
	}
	cfg := p.cfg
	cfg.RedirectURL = redirectURL
	tok, err := cfg.Exchange(context.WithValue(ctx, oauth2.HTTPClient, p.token), code, oauth2.VerifierOption(verifier))
	if err != nil {
		return Profile{}, p.exchangeError(err)
	}
	profile, err := p.fetch(ctx, p, tok)
	if err != nil {
		return Profile{}, err
	}
	if profile.ProviderUserID == "" {
		return Profile{}, fmt.Errorf("%w: %s: the profile has no user id", ErrProfile, p.name)
	}
	return profile, nil
}

// exchangeError classifies a token endpoint failure. It keeps the status and
// the OAuth error code only: the response body is not repeated.
func (p *provider) exchangeError(err error) error {
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) {
		return fmt.Errorf("%w: %s token endpoint: %w", ErrExchange, p.name, err)
	}
	status := 0
	if re.Response != nil {
		status = re.Response.StatusCode
	}
	if rateLimited(re.Response) {
		return fmt.Errorf("%w: %w: %s token endpoint answered %d%s", ErrExchange, ErrRateLimited, p.name, status, retryAfter(re.Response))
	}
	if re.ErrorCode == "access_denied" {
		return fmt.Errorf("%w: %s token endpoint answered %d access_denied", ErrAccessDenied, p.name, status)
	}
	if re.ErrorCode == "" {
		return fmt.Errorf("%w: %s token endpoint answered %d", ErrExchange, p.name, status)
	}
	return fmt.Errorf("%w: %s token endpoint answered %d %q", ErrExchange, p.name, status, clip(re.ErrorCode))
}

// getJSON fetches endpoint through the oauth2 client of the access token
// (which sets the Authorization header) and decodes its JSON answer into dst.
// Every failure wraps ErrProfile.
func (p *provider) getJSON(ctx context.Context, tok *oauth2.Token, endpoint string, dst any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint, nil)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrProfile, p.name, err)
	}
	req.Header.Set("Accept", p.accept)
	req.Header.Set("User-Agent", userAgent)
	// The oauth2 client takes its transport and redirect policy from p.api; the
	// timeout goes into the context, as an http.Client timeout would make the
	// oauth2 transport log a deprecation at every expiry.
	ctx, cancel := context.WithTimeout(ctx, p.api.Timeout)
	defer cancel()
	api := *p.api
	api.Timeout = 0
	resp, err := p.cfg.Client(context.WithValue(ctx, oauth2.HTTPClient, &api), tok).Do(req.WithContext(ctx))
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrProfile, p.name, err)
	}
	defer resp.Body.Close()
	if rateLimited(resp) {
		return fmt.Errorf("%w: %w: %s: GET %s answered %d%s", ErrProfile, ErrRateLimited, p.name, endpoint, resp.StatusCode, retryAfter(resp))
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("%w: %s: GET %s answered %d", ErrProfile, p.name, endpoint, resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return fmt.Errorf("%w: %s: read %s: %w", ErrProfile, p.name, endpoint, err)
	}
	if len(body) > maxBody {
		return fmt.Errorf("%w: %s: GET %s answered more than %d bytes", ErrProfile, p.name, endpoint, maxBody)
	}
	if err := json.Unmarshal(body, dst); err != nil {
		return fmt.Errorf("%w: %s: decode %s: %w", ErrProfile, p.name, endpoint, err)
	}
	return nil
}

// rateLimited reports whether a provider's answer is its rate limit: 429 at any of
// them (Discord's may be an HTML page, so only the status counts), or GitHub's 403
// with X-RateLimit-Remaining 0 (GitHub's REST API documents both).
func rateLimited(resp *http.Response) bool {
	if resp == nil {
		return false
	}
	return resp.StatusCode == http.StatusTooManyRequests ||
		resp.StatusCode == http.StatusForbidden && resp.Header.Get("X-RateLimit-Remaining") == "0"
}

// retryAfter is ", retry after N s" when the answer says when to retry.
func retryAfter(resp *http.Response) string {
	if v := resp.Header.Get("Retry-After"); v != "" {
		return ", retry after " + clip(v) + " s"
	}
	return ""
}

func withDefaults(ep, def Endpoints) Endpoints {
	pick := func(v, d string) string {
		if v != "" {
			return v
		}
		return d
	}
	return Endpoints{
		AuthURL:    pick(ep.AuthURL, def.AuthURL),
		TokenURL:   pick(ep.TokenURL, def.TokenURL),
		ProfileURL: pick(ep.ProfileURL, def.ProfileURL),
		EmailsURL:  pick(ep.EmailsURL, def.EmailsURL),
		Issuer:     pick(ep.Issuer, def.Issuer),
	}
}

func checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%q is not a URL: %w", raw, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an absolute http(s) URL", raw)
	}
	return nil
}

// bounded returns client, or a copy of it with DefaultTimeout when it has
// no timeout, or a fresh client when it is nil.
func bounded(client *http.Client) *http.Client {
	if client == nil {
		return &http.Client{Timeout: DefaultTimeout}
	}
	if client.Timeout > 0 {
		return client
	}
	c := *client
	c.Timeout = DefaultTimeout
	return &c
}

// guarded returns a copy of client whose requests go through the provider's breaker
// (one per provider and process): a provider that stops answering fails the logins at
// once, not each after its timeout.
func guarded(client *http.Client, name string) *http.Client {
	c := *client
	c.Transport = &dependency.Transport{Base: client.Transport, Breaker: dependency.NewBreaker("oauth-"+name, nil)}
	return &c
}

// tokenClient derives the client for token requests from api: it asks for
// JSON (GitHub answers form-encoded otherwise) and does not follow
// redirects, so the code and verifier are only ever posted to the token URL.
func tokenClient(api *http.Client) *http.Client {
	c := *api
	c.Transport = headerTransport{base: api.Transport, header: http.Header{
		"Accept":     {"application/json"},
		"User-Agent": {userAgent},
	}}
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &c
}

// headerTransport sets fixed headers on each request it sends.
type headerTransport struct {
	base   http.RoundTripper
	header http.Header
}

func (t headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.base
	if base == nil {
		base = http.DefaultTransport
	}
	r := req.Clone(req.Context())
	for k, v := range t.header {
		r.Header[k] = v
	}
	return base.RoundTrip(r)
}

// clip keeps provider-supplied text short and printable before it goes
// into an error message.
func clip(s string) string {
	const limit = 64
	r := []rune(strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, "")))
	if len(r) > limit {
		return string(r[:limit]) + "..."
	}
	return string(r)
}

// ptr returns a pointer to s, or nil when s is empty.
func ptr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
