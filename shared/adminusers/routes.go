// Package adminusers is the admin-users route group: the administration of user
// accounts (list, detail with the edit lock, edit, delete, forced logout, and the
// profile image routes when Deps.Images is set). Every route demands the
// refreshToken cookie and the permission the OpenAPI document gives it.
package adminusers

import (
	"context"
	"time"

	"github.com/mediacatalog/service/shared/auth"
	"github.com/mediacatalog/service/shared/avatars"
	"github.com/mediacatalog/service/shared/catalog"
	"github.com/mediacatalog/service/shared/httpapi"
)

// Store is the user data the group reads and writes; *postgres.DB satisfies it.
type Store interface {
	Users(ctx context.Context, q catalog.UserQuery) (catalog.UserPage, error)
	User(ctx context.Context, id int64, lock catalog.LockRequest) (catalog.User, error)
	EditUser(ctx context.Context, id, editorID int64, e catalog.UserEdit) (catalog.UserEditResult, error)
	DeleteUser(ctx context.Context, id, actorID int64) error
	LogoutUser(ctx context.Context, id, actorID int64) (catalog.Logout, error)
}

// Images stores and removes profile images; *avatars.Service satisfies it. When
// Deps.Images is nil the update-image and delete-image routes are not registered and a
// deleted user's stored image objects stay (with the record of their purge).
type Images interface {
	avatars.Uploader
	// UpdateUserImage makes encoded (Base64 or a data URL) the user's profile image.
	UpdateUserImage(ctx context.Context, id int64, encoded string) error
	// DeleteUserImage fails with a cause that is not an apperr (a 500) when the user
	// has no image.
	DeleteUserImage(ctx context.Context, id int64) error
	// PurgeUsers removes every version of a deleted user id's stored pictures and
	// CloudFront's copies, when that is still to do, and what a crash or a failure left
	// of earlier deletions. It runs after a user's deletion has committed, and after a
	// deletion that finds the user gone (a retry); its failure is logged, the deletion
	// stands and the next deletion purges again.
	PurgeUsers(ctx context.Context, id int64) error
}

// Deps are what the group needs.
type Deps struct {
	Store Store
	Auth  auth.Guard
	// LockTTL is how long opening a user's detail locks it for an editor
	// (config.LockTTL).
	LockTTL time.Duration
	// Images is optional (see Images).
	Images Images
}

// Routes is the group's whole API.
func Routes(d Deps) []httpapi.Route {
	routes := []httpapi.Route{
		{Pattern: "GET /admin-users", Handler: d.Auth.Require(auth.PermViewUsers, handleUsers(d.Store))},
		{Pattern: "GET /admin-users/id/{id}", Handler: d.Auth.Require(auth.PermViewUsers, handleUser(d.Store, d.LockTTL))},
		{Pattern: "POST /admin-users/edit/{id}", Throttle: httpapi.ThrottleWrite, Handler: d.Auth.Require(auth.PermEditUsers, handleEditUser(d.Store))},
		{Pattern: "DELETE /admin-users/delete/{id}", Throttle: httpapi.ThrottleWrite, Handler: d.Auth.Require(auth.PermDeleteUsers, handleDeleteUser(d.Store, d.Images))},
		{Pattern: "POST /admin-users/logout/{id}", Throttle: httpapi.ThrottleWrite, Handler: d.Auth.Require(auth.PermEditUsers, handleLogoutUser(d.Store))},
	}
	if d.Images != nil {
		routes = append(routes,
			httpapi.Route{Pattern: "POST /admin-users/update-image/{id}", Throttle: httpapi.ThrottleWrite, Handler: d.Auth.Require(auth.PermEditUsers, handleUpdateImage(d.Images))},
			httpapi.Route{Pattern: "DELETE /admin-users/delete-image/{id}", Throttle: httpapi.ThrottleWrite, Handler: d.Auth.Require(auth.PermEditUsers, handleDeleteImage(d.Images))},
		)
	}
	return routes
}
