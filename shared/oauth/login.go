package oauth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"

	"github.com/mediacatalog/service/shared/audit"
	"github.com/mediacatalog/service/shared/auth"
	"github.com/mediacatalog/service/shared/catalog"
	"github.com/mediacatalog/service/shared/httpapi"
)

// handleLoginStart serves GET /auth/oauth/{provider}: 302 to the provider's consent
// page; 400 Unsupported provider for a provider that is unknown or not configured.
func handleLoginStart(f *flows) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := f.provider(r)
		if !ok {
			httpapi.Error(w, r, unsupported())
			return
		}
		f.begin(w, r, p, catalog.FlowLogin, 0)
	})
}

// handleLoginCallback serves GET /auth/oauth/{provider}/callback (registered as
// /auth/oauth/{provider}/{action}: any other action is 404). The provider account's
// user, found by provider and provider user id or created, is logged in: a session,
// the refreshToken cookie, and a redirect to /login?oauth_success=1. Every failure
// redirects to /login?oauth_error=<reason>.
func handleLoginCallback(f *flows, store Store, sessions Sessions) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("action") != "callback" {
			httpapi.Message(w, r, http.StatusNotFound, "Not found")
			return
		}
		if err := loginCallback(w, r, f, store, sessions); err != nil {
			f.failed(w, r, loginPage, "oauth_error", err)
			return
		}
		f.redirect(w, loginPage, url.Values{"oauth_success": {"1"}})
	})
}

func loginCallback(w http.ResponseWriter, r *http.Request, f *flows, store Store, sessions Sessions) *callbackError {
	p, ok := f.provider(r)
	if !ok {
		return fail(ReasonUnsupportedProvider, fmt.Errorf("login callback of provider %q", r.PathValue("provider")))
	}
	st, cerr := f.consume(w, r, p.Name(), catalog.FlowLogin)
	if cerr != nil {
		return cerr
	}
	acct, cerr := f.exchange(r.Context(), r, p, st)
	if cerr != nil {
		return cerr
	}
	login, tokens, err := logIn(r.Context(), store, sessions, acct)
	if err != nil {
		return fail(ReasonServerError, err)
	}
	sessions.SetCookies(w, tokens)
	if login.Created {
		audit.RecordBy(r.Context(), login.UserID, "user.signup", "user", login.UserID,
			slog.String("provider", p.Name()), slog.String("username", login.Username),
			slog.String("provider_username", acct.Username))
	}
	return nil
}

// loginAttempts bounds the lookups of a login whose link a forced logout removed
// between the lookup and the session's start; the next lookup finds the account
// unlinked (a sign-up) or linked to its new user.
const loginAttempts = 3

// logIn finds or creates the provider account's user and starts their session.
func logIn(ctx context.Context, store Store, sessions Sessions, acct catalog.ProviderAccount) (catalog.OAuthLogin, auth.Tokens, error) {
	for attempt := 1; ; attempt++ {
		login, err := store.OAuthLogin(ctx, acct)
		if err != nil {
			return catalog.OAuthLogin{}, auth.Tokens{}, err
		}
		tokens, err := sessions.IssueLogin(ctx, login.UserID, acct)
		if err == nil {
			return login, tokens, nil
		}
		if !errors.Is(err, catalog.ErrLoginMoved) || attempt == loginAttempts {
			return catalog.OAuthLogin{}, auth.Tokens{}, fmt.Errorf("log in user %d: %w", login.UserID, err)
		}
	}
}
