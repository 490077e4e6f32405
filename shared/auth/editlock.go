package auth

import (
	"context"
	"net/http"
	"time"

	"github.com/mediacatalog/service/shared/catalog"
	"github.com/mediacatalog/service/shared/httpapi"
)

// LockingDetail answers GET /<group>/id/{id}, the detail of a record that editors lock
// while they edit it (users, contributors): a reader who holds perm, the group's edit
// permission, takes (or refreshes) the record's edit lock for ttl in the same query as
// the read, unless another user holds a live one; other readers only look.
func LockingDetail[T any](perm string, ttl time.Duration,
	read func(ctx context.Context, id int64, lock catalog.LockRequest) (T, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := httpapi.PathInt(r, "id")
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		var lock catalog.LockRequest
		if p, ok := FromContext(r.Context()); ok && p.Has(perm) {
			lock = catalog.LockRequest{By: p.UserID, TTL: ttl}
		}
		v, err := read(r.Context(), id, lock)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		httpapi.JSON(w, r, http.StatusOK, v)
	})
}
