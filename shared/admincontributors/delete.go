package admincontributors

import (
	"net/http"

	"github.com/mediacatalog/service/shared/audit"
	"github.com/mediacatalog/service/shared/httpapi"
)

// handleDeleteContributor serves DELETE /admin-contributors/delete/{id}: the contributor
// and everything that hangs on it go in one transaction; once that has committed, the
// avatar's stored objects are removed when avatars is set. Failing to remove them does
// not undo the delete: it is logged and the objects stay.
func handleDeleteContributor(store Store, avatars Avatars) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := httpapi.PathInt(r, "id")
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		image, err := store.DeleteContributor(r.Context(), id)
		if err != nil {
			httpapi.Error(w, r, failed(err, msgDeleteFailed))
			return
		}
		audit.Record(r.Context(), "contributor.delete", "contributor", id)
		if image != "" && avatars != nil {
			if err := avatars.RemoveContributorAvatar(r.Context(), image); err != nil {
				httpapi.Logger(r.Context()).Error("remove avatar of deleted contributor",
					"contributor", id, "error", err.Error())
			}
		}
		httpapi.OK(w, r, msgDeleted)
	})
}
