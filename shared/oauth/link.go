package oauth

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/audit"
	"github.com/mediacatalog/service/shared/catalog"
	"github.com/mediacatalog/service/shared/httpapi"
)

// LinkSignInWindow is how recent the sign-in of the session that starts a link, or
// unlinks a provider, must be. A linked provider logs the account in, so linking and
// unlinking are as strong as a password change: a session cookie alone, stolen and
// replayed for up to its 30 days, must not be enough. The window is the state token's lifetime: a user links a provider right
// after signing in (the frontend sends them through a login first), and an intruder
// with a stolen cookie has at most that long after the victim's sign-in.
const LinkSignInWindow = StateTTL

// handleLinkStart serves GET /auth/oauth/link/{provider}: with a valid refreshToken
// cookie of a session signed in within LinkSignInWindow, 302 to the provider's
// consent page with a state bound to the user; of an older session, 302 to
// /settings?link_error=login_required and an audit record of the refusal; 400
// Unsupported provider, 401 without a valid cookie, 404 when the user is gone.
func handleLinkStart(f *flows, sessions Sessions) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := f.provider(r)
		if !ok {
			httpapi.Error(w, r, unsupported())
			return
		}
		user, err := sessions.Authenticate(r)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		if age := f.now().Sub(user.SignedInAt); age > LinkSignInWindow {
			why := fmt.Sprintf("link of %s by session %s signed in %s ago, more than %s", p.Name(), user.SessionID,
				age.Truncate(time.Second), LinkSignInWindow)
			httpapi.Refused(r.WithContext(httpapi.WithActor(r.Context(), user.UserID)), why)
			f.failed(w, r, settingsPage, "link_error", fail(ReasonLoginRequired, errors.New(why)))
			return
		}
		f.begin(w, r, p, catalog.FlowLink, user.UserID)
	})
}

// handleLinkCallback serves GET /auth/oauth/link/{provider}/callback: the state must
// be a link state of this provider bound to the user of the refreshToken cookie; the
// provider account must not be linked to another user (provider_in_use) and the user
// must not have the provider yet (already_linked). Success redirects to
// /settings?link_success=<provider>, failure to /settings?link_error=<reason>.
func handleLinkCallback(f *flows, store Store, sessions Sessions) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		provider, err := linkCallback(w, r, f, store, sessions)
		if err != nil {
			f.failed(w, r, settingsPage, "link_error", err)
			return
		}
		f.redirect(w, settingsPage, url.Values{"link_success": {provider}})
	})
}

func linkCallback(w http.ResponseWriter, r *http.Request, f *flows, store Store, sessions Sessions) (string, *callbackError) {
	p, ok := f.provider(r)
	if !ok {
		return "", fail(ReasonUnsupportedProvider, fmt.Errorf("link callback of provider %q", r.PathValue("provider")))
	}
	st, cerr := f.consume(w, r, p.Name(), catalog.FlowLink)
	if cerr != nil {
		return "", cerr
	}
	user, cerr := authenticated(r, sessions)
	if cerr != nil {
		return "", cerr
	}
	if st.UserID != strconv.FormatInt(user.UserID, 10) {
		return "", fail(ReasonInvalidState, fmt.Errorf("link state of user %s used by user %d", st.UserID, user.UserID))
	}
	acct, cerr := f.exchange(r.Context(), r, p, st)
	if cerr != nil {
		return "", cerr
	}
	err := store.LinkProvider(r.Context(), user.UserID, user.SessionID, acct)
	switch {
	case err == nil:
		audit.RecordBy(r.Context(), user.UserID, "user.link", "user", user.UserID,
			slog.String("provider", p.Name()), slog.String("provider_username", acct.Username))
		return p.Name(), nil
	case errors.Is(err, catalog.ErrProviderInUse):
		return "", fail(ReasonProviderInUse, err)
	case errors.Is(err, catalog.ErrAlreadyLinked):
		return "", fail(ReasonAlreadyLinked, err)
	case apperr.CodeOf(err) == apperr.NotFound, apperr.CodeOf(err) == apperr.Unauthorized:
		// The user is gone, or the session was revoked (a forced logout) meanwhile.
		return "", fail(ReasonUnauthorized, err)
	}
	return "", fail(ReasonServerError, err)
}
