package admincontributors

import (
	"net/http"

	"github.com/mediacatalog/service/shared/avatars"
)

// The spec's messages of the avatar routes.
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
	return avatars.UploadHandler(avatars.Route{Service: svc, OK: msgAvatarUpdated,
		Internal: msgAvatarUpdateFailed, Update: svc.UpdateContributorAvatar})
}

// handleDeleteAvatar answers DELETE /admin-contributors/delete-avatar/{id}: both
// stored resolutions are removed and the avatar reference cleared.
func handleDeleteAvatar(svc Avatars) http.Handler {
	return avatars.DeleteHandler(avatars.Route{Service: svc, OK: msgAvatarDeleted,
		Internal: msgAvatarDeleteFailed, Delete: svc.DeleteContributorAvatar})
}
