package adminusers

import (
	"net/http"

	"github.com/mediacatalog/service/shared/avatars"
)

// The profile image routes' success messages, word for word as the OpenAPI document gives them.
const (
	MsgImageUpdated = "Profile image updated successfully"
	MsgImageDeleted = "Profile image deleted successfully"
)

// handleUpdateImage answers POST /admin-users/update-image/{id}: the image becomes the
// user's profile image at both resolutions, and the one it replaces is removed.
func handleUpdateImage(svc Images) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id, image, ok := avatars.ReadUpload(w, r, svc); ok {
			err := svc.UpdateUserImage(r.Context(), id, image)
			avatars.Answer(w, r, err, "user.image.update", "user", id, avatars.Messages{OK: MsgImageUpdated})
		}
	})
}

// handleDeleteImage answers DELETE /admin-users/delete-image/{id}: the user goes back
// to the default image and the stored one is removed.
func handleDeleteImage(svc Images) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id, ok := avatars.ReadTarget(w, r, svc); ok {
			err := svc.DeleteUserImage(r.Context(), id)
			avatars.Answer(w, r, err, "user.image.delete", "user", id, avatars.Messages{OK: MsgImageDeleted})
		}
	})
}
