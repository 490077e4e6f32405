package adminusers

import (
	"context"
	"net/http"

	"github.com/mediacatalog/service/shared/avatars"
)

// The spec's success messages of the profile image routes.
const (
	MsgImageUpdated = "Profile image updated successfully"
	MsgImageDeleted = "Profile image deleted successfully"
)

// ImageService stores and removes profile images; *avatars.Service satisfies it.
type ImageService interface {
	avatars.Uploader
	UpdateUserImage(ctx context.Context, id int64, encoded string) error
	// DeleteUserImage fails with a cause that is not an apperr (a 500) when the user
	// has no image.
	DeleteUserImage(ctx context.Context, id int64) error
	RemoveUserImage(ctx context.Context, ref string) error
}

// NewImages returns the profile image side of the group (Deps.Images) over svc.
func NewImages(svc ImageService) Images { return imageRoutes{svc: svc} }

type imageRoutes struct{ svc ImageService }

func (ir imageRoutes) UpdateImage() http.Handler { return handleUpdateImage(ir.svc) }
func (ir imageRoutes) DeleteImage() http.Handler { return handleDeleteImage(ir.svc) }

func (ir imageRoutes) RemoveProfileImage(ctx context.Context, key string) error {
	return ir.svc.RemoveUserImage(ctx, key)
}

// handleUpdateImage answers POST /admin-users/update-image/{id}: the image becomes the
// user's profile image at both resolutions, and the one it replaces is removed.
func handleUpdateImage(svc ImageService) http.Handler {
	return avatars.UploadHandler(avatars.Route{Service: svc, Kind: "user", OK: MsgImageUpdated, Update: svc.UpdateUserImage})
}

// handleDeleteImage answers DELETE /admin-users/delete-image/{id}: the user goes back
// to the default image and the stored one is removed.
func handleDeleteImage(svc ImageService) http.Handler {
	return avatars.DeleteHandler(avatars.Route{Service: svc, Kind: "user", OK: MsgImageDeleted, Delete: svc.DeleteUserImage})
}
