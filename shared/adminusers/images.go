package adminusers

import (
	"context"
	"net/http"

	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/httpapi"
)

// The spec's success messages of the profile image routes.
const (
	MsgImageUpdated = "Profile image updated successfully"
	MsgImageDeleted = "Profile image deleted successfully"
)

// ImageService stores and removes profile images; *avatars.Service satisfies it.
type ImageService interface {
	// Available is apperr.Unavailable on an instance that does not handle uploads.
	Available() error
	// MaxBodyBytes bounds the JSON body of an upload.
	MaxBodyBytes() int64
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

// imageRequest is the body of POST /admin-users/update-image/{id}.
type imageRequest struct {
	Image *string `json:"image"`
}

// Validate demands a non-blank image.
func (req *imageRequest) Validate() error {
	if req.Image == nil {
		return apperr.MissingParams()
	}
	return httpapi.Required(*req.Image)
}

// handleUpdateImage answers POST /admin-users/update-image/{id}: the image (Base64, or
// a data URL) becomes the user's profile image at both resolutions, and the one it
// replaces is removed. An instance that is not a file service answers 503 once the
// caller is authenticated and authorized; bad image data is 400 and stores nothing.
func handleUpdateImage(svc ImageService) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := svc.Available(); err != nil {
			httpapi.Error(w, r, err)
			return
		}
		id, err := httpapi.PathInt(r, "id")
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		req, err := httpapi.Decode[imageRequest](w, r, svc.MaxBodyBytes())
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		if err := svc.UpdateUserImage(r.Context(), id, *req.Image); err != nil {
			httpapi.Error(w, r, err)
			return
		}
		httpapi.OK(w, r, MsgImageUpdated)
	})
}

// handleDeleteImage answers DELETE /admin-users/delete-image/{id}: the user goes back
// to the default image and the stored one is removed. A user without an image is a
// 500 Internal server error, as the spec has it.
func handleDeleteImage(svc ImageService) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := svc.Available(); err != nil {
			httpapi.Error(w, r, err)
			return
		}
		id, err := httpapi.PathInt(r, "id")
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		if err := svc.DeleteUserImage(r.Context(), id); err != nil {
			httpapi.Error(w, r, err)
			return
		}
		httpapi.OK(w, r, MsgImageDeleted)
	})
}
