// Package adminroles is the admin-roles route group: the administration of roles
// (list, detail, edit with the role's permissions, add, delete). Every route demands
// the refreshToken cookie and the permission the OpenAPI document gives it.
package adminroles

import (
	"context"

	"github.com/mediacatalog/service/shared/auth"
	"github.com/mediacatalog/service/shared/catalog"
	"github.com/mediacatalog/service/shared/httpapi"
)

// Store is the role data the group reads and writes; *postgres.DB satisfies it.
type Store interface {
	Roles(ctx context.Context) ([]catalog.Role, error)
	Role(ctx context.Context, id int64) (catalog.RoleDetail, error)
	EditRole(ctx context.Context, id, actorID int64, e catalog.RoleEdit) (catalog.RoleEditResult, error)
	AddRole(ctx context.Context, r catalog.NewRole) (int64, error)
	DeleteRole(ctx context.Context, id, actorID int64) (moved []int64, err error)
}

// Deps are what the group needs.
type Deps struct {
	Store Store
	Auth  auth.Guard
}

// Routes is the group's whole API.
func Routes(d Deps) []httpapi.Route {
	return []httpapi.Route{
		{Pattern: "GET /admin-roles", Handler: d.Auth.Require(auth.PermViewRoles, handleRoles(d.Store))},
		{Pattern: "GET /admin-roles/id/{id}", Handler: d.Auth.Require(auth.PermViewRoles, handleRole(d.Store))},
		{Pattern: "POST /admin-roles/edit/{id}", Throttle: httpapi.ThrottleWrite, Handler: d.Auth.Require(auth.PermEditRoles, handleEditRole(d.Store))},
		{Pattern: "POST /admin-roles/add", Throttle: httpapi.ThrottleWrite, Handler: d.Auth.Require(auth.PermAddRoles, handleAddRole(d.Store))},
		{Pattern: "DELETE /admin-roles/delete/{id}", Throttle: httpapi.ThrottleWrite, Handler: d.Auth.Require(auth.PermDeleteRoles, handleDeleteRole(d.Store))},
	}
}
