package admincontributors

import (
	"context"
	"net/http"
	"time"

	"github.com/mediacatalog/service/shared/auth"
	"github.com/mediacatalog/service/shared/catalog"
)

// handleContributor serves GET /admin-contributors/id/{id}. A reader who may edit
// contributors takes (or refreshes) the contributor's edit lock for lockTTL in the same
// query, unless another user holds a live one; other readers only look.
func handleContributor(store Store, lockTTL time.Duration) http.Handler {
	// A closure, not the method value store.Contributor: routes are listed before a
	// store is given (the route tests list them without one).
	return auth.LockingDetail(auth.PermEditContributors, lockTTL, func(ctx context.Context, id int64, lock catalog.LockRequest) (catalog.Contributor, error) {
		return store.Contributor(ctx, id, lock)
	})
}
