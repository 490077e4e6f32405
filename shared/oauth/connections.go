package oauth

import (
	"log/slog"
	"net/http"
	"slices"

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
func handleUnlink(store Store, sessions Sessions) http.Handler {
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
		if err := store.UnlinkProvider(r.Context(), user.UserID, provider); err != nil {
			httpapi.Error(w, r, err)
			return
		}
		audit.RecordBy(r.Context(), user.UserID, "user.unlink", "user", user.UserID, slog.String("provider", provider))
		httpapi.OK(w, r, catalog.MsgProviderUnlinked)
	})
}
