package admincontributors

import (
	"net/http"
	"time"

	"github.com/mediacatalog/service/shared/auth"
	"github.com/mediacatalog/service/shared/catalog"
	"github.com/mediacatalog/service/shared/httpapi"
)

// handleContributor serves GET /admin-contributors/id/{id}. A reader who may edit
// contributors takes (or refreshes) the contributor's edit lock for lockTTL in the same
// query, unless another user holds a live one; other readers only look.
func handleContributor(store Store, lockTTL time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := httpapi.PathInt(r, "id")
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		var lock catalog.LockRequest
		if p, ok := auth.FromContext(r.Context()); ok && p.Has(auth.PermEditContributors) {
			lock = catalog.LockRequest{By: p.UserID, TTL: lockTTL}
		}
		c, err := store.Contributor(r.Context(), id, lock)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		httpapi.JSON(w, r, http.StatusOK, c)
	})
}
