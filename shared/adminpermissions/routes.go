// Package adminpermissions is the admin-permissions route group: the administration of
// permissions (list, detail, edit, add, delete). Every route demands the refreshToken
// cookie and the permission the OpenAPI document gives it.
package adminpermissions

import (
	"context"

	"github.com/mediacatalog/service/shared/auth"
	"github.com/mediacatalog/service/shared/catalog"
	"github.com/mediacatalog/service/shared/httpapi"
)

// Store is the permission data the group reads and writes; *postgres.DB satisfies it.
type Store interface {
	Permissions(ctx context.Context) ([]catalog.Permission, error)
	Permission(ctx context.Context, id int64) (catalog.Permission, error)
	EditPermission(ctx context.Context, id int64, in catalog.PermissionInput) (before catalog.Permission, err error)
	AddPermission(ctx context.Context, in catalog.PermissionInput) (int64, error)
	DeletePermission(ctx context.Context, id int64) error
}

// Deps are what the group needs.
type Deps struct {
	Store Store
	Auth  auth.Guard
}

// Routes is the group's whole API.
func Routes(d Deps) []httpapi.Route {
	return []httpapi.Route{
		{Pattern: "GET /admin-permissions", Handler: d.Auth.Require(auth.PermViewPermissions, handlePermissions(d.Store))},
		{Pattern: "GET /admin-permissions/id/{id}", Handler: d.Auth.Require(auth.PermViewPermissions, handlePermission(d.Store))},
		{Pattern: "POST /admin-permissions/edit/{id}", Throttle: httpapi.ThrottleWrite, Handler: d.Auth.Require(auth.PermEditPermissions, handleEditPermission(d.Store))},
		{Pattern: "POST /admin-permissions/add", Throttle: httpapi.ThrottleWrite, Handler: d.Auth.Require(auth.PermAddPermissions, handleAddPermission(d.Store))},
		{Pattern: "DELETE /admin-permissions/delete/{id}", Throttle: httpapi.ThrottleWrite, Handler: d.Auth.Require(auth.PermDeletePermissions, handleDeletePermission(d.Store))},
	}
}
