package admincontributors

import (
	"context"
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

// AvatarService stores and removes contributor avatars; *avatars.Service satisfies it.
type AvatarService interface {
	avatars.Uploader
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

// handleUpdateAvatar answers POST /admin-contributors/update-avatar/{id}: the image is
// scaled, compressed and stored as the contributor's avatar, and the previous avatar's
// objects are removed.
func handleUpdateAvatar(svc AvatarService) http.Handler {
	return avatars.UploadHandler(avatars.Route{Service: svc, Kind: "contributor", OK: msgAvatarUpdated,
		Internal: msgAvatarUpdateFailed, Update: svc.UpdateContributorAvatar})
}

// handleDeleteAvatar answers DELETE /admin-contributors/delete-avatar/{id}: both
// stored resolutions are removed and the avatar reference cleared.
func handleDeleteAvatar(svc AvatarService) http.Handler {
	return avatars.DeleteHandler(avatars.Route{Service: svc, Kind: "contributor", OK: msgAvatarDeleted,
		Internal: msgAvatarDeleteFailed, Delete: svc.DeleteContributorAvatar})
}
