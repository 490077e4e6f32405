package oauth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/auth"
	"github.com/mediacatalog/service/shared/catalog"
	"github.com/mediacatalog/service/shared/httpapi"
	"github.com/mediacatalog/service/shared/oauth/providers"
)

// StateTTL is the lifetime of a flow's state token (the 10 minutes of the OpenAPI document).
const StateTTL = 10 * time.Minute

// StateCookie is the cookie that binds a flow to the browser that started it: a
// SHA-256 hash (base64url) of the state token, HttpOnly, SameSite=Lax, Max-Age
// StateTTL. A browser runs one flow at a time: starting another replaces it.
//
// Outside DB_ENV=local it is StateCookie: the __Host- prefix makes browsers accept it
// only with Secure, Path=/ and no Domain, so a sibling subdomain (which may set cookies
// for the parent domain) cannot plant a state of its own in the victim's browser. On
// the local stack, served over plain http, it is LocalStateCookie (Path=/auth/oauth,
// not Secure): browsers refuse a __Host- cookie without Secure, and Secure cookies
// over http are not kept by every browser.
const (
	StateCookie      = "__Host-oauth_state"
	LocalStateCookie = "oauth_state"
)

// The reasons of the callbacks' error redirects (oauth_error, link_error).
const (
	ReasonAccessDenied        = "access_denied"        // the user declined at the provider
	ReasonInvalidState        = "invalid_state"        // state missing, unknown, used, expired, of another provider, flow, user or browser
	ReasonExchangeFailed      = "exchange_failed"      // code exchange or profile fetch failed
	ReasonRateLimited         = "rate_limited"         // the provider refused the exchange or profile fetch for its rate limit
	ReasonAlreadyLinked       = "already_linked"       // link: the user has that provider linked already
	ReasonProviderInUse       = "provider_in_use"      // link: the provider account belongs to another user
	ReasonUnauthorized        = "unauthorized"         // link: refreshToken cookie missing or invalid
	ReasonLoginRequired       = "login_required"       // link start: the session's sign-in is older than LinkSignInWindow
	ReasonUnsupportedProvider = "unsupported_provider" // unknown or unconfigured provider
	ReasonServerError         = "server_error"         // anything unexpected (logged)
)

// Frontend pages the callbacks land on.
const (
	loginPage    = "/login"
	settingsPage = "/settings"
)

// flows holds what the start and callback handlers share.
type flows struct {
	providers map[string]providers.Provider
	states    States
	apiURL    string
	frontend  string
	secure    bool
	now       func() time.Time
}

func newFlows(d Deps) *flows {
	now := d.Now
	if now == nil {
		now = time.Now
	}
	return &flows{
		providers: d.Providers,
		states:    d.States,
		apiURL:    d.APIURL,
		frontend:  d.FrontendURL,
		secure:    d.SecureCookies,
		now:       now,
	}
}

// provider returns the configured provider the path names.
func (f *flows) provider(r *http.Request) (providers.Provider, bool) {
	p, ok := f.providers[r.PathValue("provider")]
	return p, ok && p != nil
}

// callbackURL is the address registered at the provider for a flow's callback.
func (f *flows) callbackURL(provider string, flow catalog.OAuthFlow) string {
	if flow == catalog.FlowLink {
		return f.apiURL + "/auth/oauth/link/" + provider + "/callback"
	}
	return f.apiURL + "/auth/oauth/" + provider + "/callback"
}

// begin starts a flow: it stores a fresh state token with a PKCE verifier, sets the
// state cookie and redirects the browser to the provider's consent page. userID is
// the user being linked, 0 in the login flow.
func (f *flows) begin(w http.ResponseWriter, r *http.Request, p providers.Provider, flow catalog.OAuthFlow, userID int64) {
	verifier, challenge := providers.PKCE()
	st := catalog.OAuthState{
		Token:     NewStateToken(),
		Provider:  p.Name(),
		Flow:      flow,
		Verifier:  verifier,
		ExpiresAt: f.now().Add(StateTTL),
	}
	if userID != 0 {
		st.UserID = strconv.FormatInt(userID, 10)
	}
	if err := f.states.Put(r.Context(), st); err != nil {
		httpapi.Error(w, r, fmt.Errorf("start %s %s flow: %w", p.Name(), flow, err))
		return
	}
	http.SetCookie(w, f.stateCookie(stateHash(st.Token), int(StateTTL/time.Second)))
	found(w, p.AuthCodeURL(st.Token, challenge, f.callbackURL(p.Name(), flow)))
}

// stateCookie is the state cookie to set (StateCookie, or LocalStateCookie when the
// cookies are not Secure).
func (f *flows) stateCookie(value string, maxAge int) *http.Cookie {
	c := &http.Cookie{
		Name:     LocalStateCookie,
		Value:    value,
		Path:     "/auth/oauth",
		MaxAge:   maxAge,
		HttpOnly: true,
		SameSite: http.SameSiteLaxMode,
	}
	if f.secure {
		c.Name, c.Path, c.Secure = StateCookie, "/", true
	}
	return c
}

// NewStateToken returns a fresh state token: 32 random bytes, base64url without
// padding.
func NewStateToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails: crypto/rand.Read crashes the program instead
	return base64.RawURLEncoding.EncodeToString(b)
}

// stateHash is what the state cookie holds for a token.
func stateHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// callbackError is a failed callback: the reason the frontend is told, and the cause
// that is logged.
type callbackError struct {
	reason string
	err    error
}

func fail(reason string, err error) *callbackError { return &callbackError{reason: reason, err: err} }

// consume checks the callback's state: present, carried by the same browser (the state
// cookie), stored and unused (it is consumed here, whatever happens next), unexpired,
// and issued for this provider and flow. The state cookie is cleared.
func (f *flows) consume(w http.ResponseWriter, r *http.Request, provider string, flow catalog.OAuthFlow) (catalog.OAuthState, *callbackError) {
	http.SetCookie(w, f.stateCookie("", -1))
	token := r.URL.Query().Get("state")
	if token == "" {
		return catalog.OAuthState{}, fail(ReasonInvalidState, errors.New("no state in the callback"))
	}
	if !httpapi.ValidText(token) {
		// Never issued by us (a state is base64url): not worth a lookup.
		return catalog.OAuthState{}, fail(ReasonInvalidState, errors.New("the callback's state is not valid UTF-8 without NUL"))
	}
	c, err := r.Cookie(f.stateCookie("", 0).Name)
	if err != nil || subtle.ConstantTimeCompare([]byte(c.Value), []byte(stateHash(token))) != 1 {
		return catalog.OAuthState{}, fail(ReasonInvalidState, errors.New("the state does not match the browser's state cookie"))
	}
	st, err := f.states.Consume(r.Context(), token)
	switch {
	case errors.Is(err, catalog.ErrInvalidState):
		return catalog.OAuthState{}, fail(ReasonInvalidState, err)
	case err != nil:
		return catalog.OAuthState{}, fail(ReasonServerError, err)
	case !f.now().Before(st.ExpiresAt):
		return catalog.OAuthState{}, fail(ReasonInvalidState, errors.New("the state has expired"))
	case st.Provider != provider || st.Flow != flow:
		return catalog.OAuthState{}, fail(ReasonInvalidState,
			fmt.Errorf("the state was issued for the %s %s flow, not %s %s", st.Provider, st.Flow, provider, flow))
	}
	return st, nil
}

// exchange reads the provider's answer on the callback and trades the code for the
// user's profile.
func (f *flows) exchange(ctx context.Context, r *http.Request, p providers.Provider, st catalog.OAuthState) (catalog.ProviderAccount, *callbackError) {
	q := r.URL.Query()
	err := providers.CallbackError(q)
	if err == nil && !httpapi.ValidText(q.Get("code")) {
		// Not a provider's code: nothing to send it to the provider for.
		err = fmt.Errorf("%w: the callback's code is not valid UTF-8 without NUL", providers.ErrExchange)
	}
	if err == nil {
		var profile providers.Profile
		profile, err = p.Exchange(ctx, q.Get("code"), st.Verifier, f.callbackURL(p.Name(), st.Flow))
		if err == nil {
			return catalog.ProviderAccount{
				Provider:       p.Name(),
				ProviderUserID: profile.ProviderUserID,
				Username:       profile.Username,
				UsernameBase:   usernameBase(profile.Username),
				Email:          profile.Email,
				AvatarURL:      profile.AvatarURL,
			}, nil
		}
	}
	if errors.Is(err, providers.ErrAccessDenied) {
		return catalog.ProviderAccount{}, fail(ReasonAccessDenied, err)
	}
	// A rate limit is the provider's, not the user's or ours: the frontend can say
	// "try again in a few minutes" instead of a generic failure.
	if errors.Is(err, providers.ErrRateLimited) {
		return catalog.ProviderAccount{}, fail(ReasonRateLimited, err)
	}
	// Step 2 of the callback's rules (the OpenAPI document), exchange and profile fetch, fails as one.
	return catalog.ProviderAccount{}, fail(ReasonExchangeFailed, err)
}

// authenticated returns the principal of the link callback's refreshToken cookie.
func authenticated(r *http.Request, sessions Sessions) (auth.Principal, *callbackError) {
	p, err := sessions.Authenticate(r)
	if err == nil {
		return p, nil
	}
	switch apperr.CodeOf(err) {
	case apperr.Unauthorized, apperr.NotFound:
		return auth.Principal{}, fail(ReasonUnauthorized, err)
	default:
		return auth.Principal{}, fail(ReasonServerError, err)
	}
}

// redirect sends the browser to a frontend page with the given query.
func (f *flows) redirect(w http.ResponseWriter, page string, query url.Values) {
	found(w, f.frontend+page+"?"+query.Encode())
}

// failed logs a failed callback and redirects to the page with param=<reason>.
func (f *flows) failed(w http.ResponseWriter, r *http.Request, page, param string, e *callbackError) {
	log := httpapi.Logger(r.Context())
	if e.reason == ReasonServerError {
		log.Error("oauth callback failed", "reason", e.reason, "error", e.err.Error())
	} else {
		log.Warn("oauth callback refused", "reason", e.reason, "error", e.err.Error())
	}
	f.redirect(w, page, url.Values{param: {e.reason}})
}

// found answers 302 to location, uncached.
func found(w http.ResponseWriter, location string) {
	w.Header().Set("Location", location)
	w.Header().Set("Cache-Control", httpapi.CachePrivate)
	w.WriteHeader(http.StatusFound)
}

// unsupported is the 400 for a provider that is unknown or not configured.
func unsupported() error { return apperr.New(apperr.Invalid, catalog.MsgUnsupportedProvider) }
