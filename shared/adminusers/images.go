package adminusers

import (
	"net/http"

	"github.com/mediacatalog/service/shared/avatars"
)

// The spec's success messages of the profile image routes.
const (
	MsgImageUpdated = "Profile image updated successfully"
	MsgImageDeleted = "Profile image deleted successfully"
)

// handleUpdateImage answers POST /admin-users/update-image/{id}: the image becomes the
// user's profile image at both resolutions, and the one it replaces is removed.
func handleUpdateImage(svc Images) http.Handler {
	return avatars.UploadHandler(avatars.Route{Service: svc, OK: MsgImageUpdated, Update: svc.UpdateUserImage})
}

// handleDeleteImage answers DELETE /admin-users/delete-image/{id}: the user goes back
// to the default image and the stored one is removed.
func handleDeleteImage(svc Images) http.Handler {
	return avatars.DeleteHandler(avatars.Route{Service: svc, OK: MsgImageDeleted, Delete: svc.DeleteUserImage})
}
