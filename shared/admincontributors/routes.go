// Package admincontributors is the admin-contributors route group: the administration
// of a client's contributors (list, detail with the edit lock, add, edit, delete, and
// the avatar routes when Deps.Avatars is set). Every route demands the refreshToken
// cookie and the permission the OpenAPI document gives it.
package admincontributors

import (
	"context"
	"time"

	"github.com/mediacatalog/service/shared/auth"
	"github.com/mediacatalog/service/shared/avatars"
	"github.com/mediacatalog/service/shared/catalog"
	"github.com/mediacatalog/service/shared/httpapi"
)

// Store is the contributor data the group reads and writes; *postgres.DB satisfies it.
type Store interface {
	Contributors(ctx context.Context, q catalog.ContributorQuery) (catalog.ContributorPage, error)
	Contributor(ctx context.Context, id int64, lock catalog.LockRequest) (catalog.Contributor, error)
	AddContributor(ctx context.Context, c catalog.NewContributor) (int64, error)
	EditContributor(ctx context.Context, id, editorID int64, e catalog.ContributorEdit) error
	DeleteContributor(ctx context.Context, id int64) (image string, err error)
}

// Avatars stores and removes contributor avatars; *avatars.Service satisfies it. When
// Deps.Avatars is nil (an instance that is not a file service) the update-avatar and
// delete-avatar routes are not registered and a deleted contributor's stored avatar
// objects stay.
type Avatars interface {
	avatars.Uploader
	// UpdateContributorAvatar makes encoded (Base64 or a data URL) the contributor's
	// avatar.
	UpdateContributorAvatar(ctx context.Context, id int64, encoded string) error
	// DeleteContributorAvatar fails with a cause that is not an apperr (a 500) when
	// the contributor has no avatar.
	DeleteContributorAvatar(ctx context.Context, id int64) error
	// RemoveContributorAvatar removes every stored object (each resolution) of the
	// avatar whose key (contributors.image) is ref. It runs after a contributor's
	// deletion has committed; its failure is logged and the deletion stands.
	RemoveContributorAvatar(ctx context.Context, ref string) error
}

// Deps are what the group needs.
type Deps struct {
	Store Store
	Auth  auth.Guard
	// LockTTL is how long opening a contributor's detail locks it for an editor
	// (config.LockTTL).
	LockTTL time.Duration
	// Avatars is optional (see Avatars).
	Avatars Avatars
}

// Routes is the group's whole API.
func Routes(d Deps) []httpapi.Route {
	routes := []httpapi.Route{
		{Pattern: "GET /admin-contributors", Handler: d.Auth.Require(auth.PermViewContributors, handleContributors(d.Store))},
		{Pattern: "GET /admin-contributors/id/{id}", Handler: d.Auth.Require(auth.PermViewContributors, handleContributor(d.Store, d.LockTTL))},
		{Pattern: "POST /admin-contributors/add", Throttle: httpapi.ThrottleWrite, Handler: d.Auth.Require(auth.PermAddContributors, handleAddContributor(d.Store))},
		{Pattern: "POST /admin-contributors/edit/{id}", Throttle: httpapi.ThrottleWrite, Handler: d.Auth.Require(auth.PermEditContributors, handleEditContributor(d.Store))},
		{Pattern: "DELETE /admin-contributors/delete/{id}", Throttle: httpapi.ThrottleWrite, Handler: d.Auth.Require(auth.PermDeleteContributors, handleDeleteContributor(d.Store, d.Avatars))},
	}
	if d.Avatars != nil {
		routes = append(routes,
			httpapi.Route{Pattern: "POST /admin-contributors/update-avatar/{id}", Throttle: httpapi.ThrottleWrite, Handler: d.Auth.Require(auth.PermEditContributors, handleUpdateAvatar(d.Avatars))},
			httpapi.Route{Pattern: "DELETE /admin-contributors/delete-avatar/{id}", Throttle: httpapi.ThrottleWrite, Handler: d.Auth.Require(auth.PermEditContributors, handleDeleteAvatar(d.Avatars))},
		)
	}
	return routes
}
