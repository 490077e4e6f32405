package admincontributors

import (
	"net/http"

	"github.com/mediacatalog/service/shared/avatars"
)

// The avatar routes' messages, word for word as the OpenAPI document gives them.
const (
	msgAvatarUpdated      = "Contributor avatar updated successfully"
	msgAvatarDeleted      = "Contributor avatar deleted successfully"
	msgAvatarUpdateFailed = "An error occurred while updating the contributor avatar"
	msgAvatarDeleteFailed = "An error occurred while deleting the contributor avatar"
)

// handleUpdateAvatar answers POST /admin-contributors/update-avatar/{id}: the image is
// scaled, compressed and stored as the contributor's avatar, and the previous avatar's
// objects are removed.
func handleUpdateAvatar(svc Avatars) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id, image, ok := avatars.ReadUpload(w, r, svc); ok {
			err := svc.UpdateContributorAvatar(r.Context(), id, image)
			avatars.Answer(w, r, err, "contributor.image.update", "contributor", id,
				avatars.Messages{OK: msgAvatarUpdated, Internal: msgAvatarUpdateFailed})
		}
	})
}

// handleDeleteAvatar answers DELETE /admin-contributors/delete-avatar/{id}: both
// stored resolutions are removed and the avatar reference cleared.
func handleDeleteAvatar(svc Avatars) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id, ok := avatars.ReadTarget(w, r, svc); ok {
			err := svc.DeleteContributorAvatar(r.Context(), id)
			avatars.Answer(w, r, err, "contributor.image.delete", "contributor", id,
				avatars.Messages{OK: msgAvatarDeleted, Internal: msgAvatarDeleteFailed})
		}
	})
}
