package admincontributors

import (
	"context"
	"net/http"

	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/httpapi"
)

// The spec's messages of the avatar routes.
const (
	msgAvatarUpdated      = "Contributor avatar updated successfully"
	msgAvatarDeleted      = "Contributor avatar deleted successfully"
	msgAvatarUpdateFailed = "An error occurred while updating the contributor avatar"
	msgAvatarDeleteFailed = "An error occurred while deleting the contributor avatar"
)

// AvatarService stores and removes contributor avatars; *avatars.Service satisfies it.
type AvatarService interface {
	// Available is apperr.Unavailable on an instance that does not handle uploads.
	Available() error
	// MaxBodyBytes bounds the JSON body of an upload.
	MaxBodyBytes() int64
	UpdateContributorAvatar(ctx context.Context, id int64, encoded string) error
	// DeleteContributorAvatar fails with a cause that is not an apperr (a 500) when
	// the contributor has no avatar.
	DeleteContributorAvatar(ctx context.Context, id int64) error
	RemoveContributorAvatar(ctx context.Context, ref string) error
}

// NewAvatars returns the avatar side of the group (Deps.Avatars) over svc.
func NewAvatars(svc AvatarService) Avatars { return avatarRoutes{svc: svc} }

type avatarRoutes struct{ svc AvatarService }

func (a avatarRoutes) UpdateAvatar() http.Handler { return handleUpdateAvatar(a.svc) }
func (a avatarRoutes) DeleteAvatar() http.Handler { return handleDeleteAvatar(a.svc) }

func (a avatarRoutes) RemoveContributorAvatar(ctx context.Context, key string) error {
	return a.svc.RemoveContributorAvatar(ctx, key)
}

// avatarRequest is the body of POST /admin-contributors/update-avatar/{id}.
type avatarRequest struct {
	Image *string `json:"image"`
}

// Validate demands a non-blank image.
func (req *avatarRequest) Validate() error {
	if req.Image == nil {
		return apperr.MissingParams()
	}
	return httpapi.Required(*req.Image)
}

// handleUpdateAvatar answers POST /admin-contributors/update-avatar/{id}: the image
// (a data URL, or bare Base64) is scaled, compressed and stored as the contributor's
// avatar, and the previous avatar's objects are removed. An instance that is not a
// file service answers 503 once the caller is authenticated and authorized; bad image
// data is 400 and stores nothing.
func handleUpdateAvatar(svc AvatarService) http.Handler {
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
		req, err := httpapi.Decode[avatarRequest](w, r, svc.MaxBodyBytes())
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		if err := svc.UpdateContributorAvatar(r.Context(), id, *req.Image); err != nil {
			httpapi.Error(w, r, failed(err, msgAvatarUpdateFailed))
			return
		}
		httpapi.OK(w, r, msgAvatarUpdated)
	})
}

// handleDeleteAvatar answers DELETE /admin-contributors/delete-avatar/{id}: both
// stored resolutions are removed and the avatar reference cleared. A contributor
// without an avatar is a 500, as the spec has it.
func handleDeleteAvatar(svc AvatarService) http.Handler {
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
		if err := svc.DeleteContributorAvatar(r.Context(), id); err != nil {
			httpapi.Error(w, r, failed(err, msgAvatarDeleteFailed))
			return
		}
		httpapi.OK(w, r, msgAvatarDeleted)
	})
}
