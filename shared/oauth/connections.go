package oauth

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/audit"
	"github.com/mediacatalog/service/shared/catalog"
	"github.com/mediacatalog/service/shared/httpapi"
	"github.com/mediacatalog/service/shared/oauth/providers"
)

// handleConnections serves GET /auth/oauth/connections: the providers linked to the
// cookie's user, each {provider, provider_username, provider_email, linked_at}.
func handleConnections(store Store, sessions Sessions) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, err := sessions.Authenticate(r)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		conns, err := store.Connections(r.Context(), user.UserID)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		if conns == nil {
			conns = []catalog.Connection{}
		}
		httpapi.JSON(w, r, http.StatusOK, conns)
	})
}

// handleUnlink serves DELETE /auth/oauth/unlink/{provider}: 200 Provider unlinked
// successfully; 400 Unsupported provider for a name that is none of the three (a
// provider no longer configured can still be unlinked), 400 Cannot unlink the only
// login method, 401, 404 Provider not linked (or User not found).
//
// Like a link start it needs a session signed in within LinkSignInWindow: an unlink
// takes a way to log in away from the account, and with a replayed cookie it could
// shut the owner out (their next login would sign up a new user) while an intruder's
// link stays. An older session gets 401 Recent login required and an audit record of
// the refusal: a 401, because signing in again is the remedy (the session itself is
// still valid, so the frontend tells this 401 from Unauthorized by its message and
// sends the user through a login, then unlinks). The unlink records its session, so a
// forced logout that revokes it puts the link back.
func handleUnlink(f *flows, store Store, sessions Sessions) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		provider := r.PathValue("provider")
		if !slices.Contains(providers.Names(), provider) {
			httpapi.Error(w, r, unsupported())
			return
		}
		user, err := sessions.Authenticate(r)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		if age := f.now().Sub(user.SignedInAt); age > LinkSignInWindow {
			why := fmt.Sprintf("unlink of %s by session %s signed in %s ago, more than %s", provider, user.SessionID,
				age.Truncate(time.Second), LinkSignInWindow)
			httpapi.Refused(r.WithContext(httpapi.WithActor(r.Context(), user.UserID)), why)
			httpapi.Error(w, r, apperr.Wrap(apperr.Unauthorized, catalog.MsgRecentLoginRequired, errors.New(why)))
			return
		}
		if err := store.UnlinkProvider(r.Context(), user.UserID, user.SessionID, provider); err != nil {
			httpapi.Error(w, r, err)
			return
		}
		audit.RecordBy(r.Context(), user.UserID, "user.unlink", "user", user.UserID, slog.String("provider", provider))
		httpapi.OK(w, r, catalog.MsgProviderUnlinked)
	})
}
