// Package oauth is the oauth route group: login and registration through the external
// identity providers (google, discord, github), linking further providers to an
// account, listing the linked providers and unlinking one. Every route is under
// /auth/oauth and passes one rate limiter, keyed by the caller's source address.
//
// A flow starts at GET /auth/oauth/{provider} (login) or /auth/oauth/link/{provider}
// (link, with the refreshToken cookie of a session signed in within LinkSignInWindow;
// the link records the session, which a forced logout's revocation undoes; an unlink
// needs the same recent sign-in and is undone the same way). The start stores a state token in DynamoDB,
// bound to the provider, the flow, the user in the link flow, and the PKCE verifier;
// it expires after 10 minutes and is consumed once. The browser gets a state cookie
// (__Host-oauth_state, HttpOnly, Secure, SameSite=Lax, Path=/, 10 minutes; on the
// local stack oauth_state, Path=/auth/oauth, see StateCookie) holding a SHA-256 hash of
// the token, and a callback is accepted only from the browser that carries it:
// a login CSRF (an attacker's state and code pushed into a victim's browser) fails.
//
// The callbacks always redirect to the frontend (config FrontendURL), never to an
// address taken from the request: /login?oauth_success=1 or /login?oauth_error=<reason>
// and /settings?link_success=<provider> or /settings?link_error=<reason>. A callback
// whose path or query is not valid text redirects too (httpapi.Route.OwnText): an
// unknown provider, a state that is invalid_state, a code or error that fails as
// exchange_failed, each checked before it is looked up or sent anywhere.
package oauth

import (
	"context"
	"net/http"
	"time"

	"github.com/mediacatalog/service/shared/auth"
	"github.com/mediacatalog/service/shared/catalog"
	"github.com/mediacatalog/service/shared/httpapi"
	"github.com/mediacatalog/service/shared/oauth/providers"
)

// Store is the account data the group reads and writes; *postgres.DB satisfies it.
type Store interface {
	// OAuthLogin returns the user the provider account is linked to, or creates one.
	OAuthLogin(ctx context.Context, acct catalog.ProviderAccount) (catalog.OAuthLogin, error)
	// LinkProvider links the provider account to the user, recording the session
	// that linked it (apperr.Conflict wrapping catalog.ErrProviderInUse or
	// catalog.ErrAlreadyLinked when it may not).
	LinkProvider(ctx context.Context, userID int64, sessionID string, acct catalog.ProviderAccount) error
	// Connections lists the user's linked provider accounts.
	Connections(ctx context.Context, userID int64) ([]catalog.Connection, error)
	// UnlinkProvider removes the user's connection to provider when a login method
	// remains, recording the session that unlinked it (apperr.Unauthorized when that
	// session is no longer live).
	UnlinkProvider(ctx context.Context, userID int64, sessionID, provider string) error
}

// Sessions authenticates the refreshToken cookie and logs users in; *auth.Sessions
// satisfies it.
type Sessions interface {
	Authenticate(r *http.Request) (auth.Principal, error)
	// IssueLogin logs the user in through the provider account: catalog.ErrLoginMoved
	// when the account is no longer linked to the user by then.
	IssueLogin(ctx context.Context, userID int64, acct catalog.ProviderAccount) (auth.Tokens, error)
	SetCookies(w http.ResponseWriter, t auth.Tokens)
}

// States keeps the flows' state tokens; *dynamo.StateStore satisfies it.
type States interface {
	Put(ctx context.Context, st catalog.OAuthState) error
	// Consume returns the state once; catalog.ErrInvalidState for a token that is
	// unknown, already used or expired.
	Consume(ctx context.Context, token string) (catalog.OAuthState, error)
}

// Limiter counts requests per key; *dynamo.RateLimiter satisfies it.
type Limiter interface {
	Allow(ctx context.Context, key string) (catalog.RateDecision, error)
}

// Deps are what the group needs.
type Deps struct {
	Store    Store
	Sessions Sessions
	States   States
	Limiter  Limiter
	// Providers are the configured providers by name (LoadProviders); a provider
	// missing here is answered like an unsupported one.
	Providers map[string]providers.Provider
	// APIURL is the service's public base address (config APIURL); the callback
	// addresses registered at the providers derive from it.
	APIURL string
	// FrontendURL is the frontend's origin (config FrontendURL), the only target of
	// the callbacks' redirects.
	FrontendURL string
	// SecureCookies makes the state cookie __Host-oauth_state, Secure (every
	// environment but DB_ENV=local); without it the cookie is oauth_state.
	SecureCookies bool
	// Now is the clock of the state tokens' expiry; nil is time.Now.
	Now func() time.Time
}

// Routes is the group's whole API. Every route passes the same rate limiter.
//
// GET /auth/oauth/link/{provider} and GET /auth/oauth/{provider}/callback overlap
// (/auth/oauth/link/callback matches both), which ServeMux refuses; the login callback
// is therefore registered as /auth/oauth/{provider}/{action}. The literal link segment
// is more specific and wins, as it does at API Gateway, and an action other than
// callback is answered 404.
func Routes(d Deps) []httpapi.Route {
	limit := rateLimit(d.Limiter)
	f := newFlows(d)
	return []httpapi.Route{
		{Pattern: "GET /auth/oauth/{provider}", Throttle: httpapi.ThrottleOAuth, Handler: limit(handleLoginStart(f))},
		{Pattern: "GET /auth/oauth/{provider}/callback", Throttle: httpapi.ThrottleOAuth, Mux: "GET /auth/oauth/{provider}/{action}",
			OwnText: true, Handler: limit(handleLoginCallback(f, d.Store, d.Sessions))},
		{Pattern: "GET /auth/oauth/link/{provider}", Throttle: httpapi.ThrottleOAuth, Handler: limit(handleLinkStart(f, d.Sessions))},
		{Pattern: "GET /auth/oauth/link/{provider}/callback", Throttle: httpapi.ThrottleOAuth, OwnText: true,
			Handler: limit(handleLinkCallback(f, d.Store, d.Sessions))},
		{Pattern: "GET /auth/oauth/connections", Throttle: httpapi.ThrottleOAuth, Handler: limit(handleConnections(d.Store, d.Sessions))},
		{Pattern: "DELETE /auth/oauth/unlink/{provider}", Throttle: httpapi.ThrottleOAuth, Handler: limit(handleUnlink(f, d.Store, d.Sessions))},
	}
}
