package adminpermissions

import (
	"log/slog"
	"net/http"
	"strings"

	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/audit"
	"github.com/mediacatalog/service/shared/catalog"
	"github.com/mediacatalog/service/shared/httpapi"
)

// The success messages, word for word as the OpenAPI document gives them.
const (
	MsgPermissionUpdated = "Permission updated successfully"
	MsgPermissionAdded   = "Permission added successfully"
	MsgPermissionDeleted = "Permission deleted successfully"
)

// handlePermissions answers GET /admin-permissions: every permission.
func handlePermissions(store Store) http.Handler {
	return httpapi.ReadAll(store.Permissions)
}

// handlePermission answers GET /admin-permissions/id/{id}.
func handlePermission(store Store) http.Handler {
	return httpapi.Read(httpapi.PathID, store.Permission)
}

// permissionRequest is the body of POST /admin-permissions/edit/{id} and
// POST /admin-permissions/add.
type permissionRequest struct {
	Name        *string `json:"name"`
	Description *string `json:"description"`
}

// Validate demands a non-blank name (a Name of at most catalog.MaxPermissionName
// characters) and description (Prose of at most catalog.MaxDescription).
func (req *permissionRequest) Validate() error {
	if req.Name == nil || req.Description == nil {
		return apperr.MissingParams()
	}
	if err := httpapi.Required(*req.Name, *req.Description); err != nil {
		return err
	}
	if err := httpapi.Text("name", strings.TrimSpace(*req.Name), catalog.MaxPermissionName, httpapi.Name); err != nil {
		return err
	}
	return httpapi.Text("description", strings.TrimSpace(*req.Description), catalog.MaxDescription, httpapi.Prose)
}

func (req *permissionRequest) input() catalog.PermissionInput {
	return catalog.PermissionInput{Name: strings.TrimSpace(*req.Name), Description: strings.TrimSpace(*req.Description)}
}

// handleEditPermission answers POST /admin-permissions/edit/{id}: renames the
// permission and replaces its description; a built-in permission keeps its name (400).
func handleEditPermission(store Store) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := httpapi.PathInt(r, "id")
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		req, err := httpapi.Decode[permissionRequest](w, r, 0)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		in := req.input()
		before, err := store.EditPermission(r.Context(), id, in)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		var changes []slog.Attr
		if before.Name != in.Name {
			changes = append(changes, audit.Change("name", before.Name, in.Name))
		}
		if before.Description != in.Description {
			changes = append(changes, audit.Change("description", before.Description, in.Description))
		}
		audit.Record(r.Context(), "permission.edit", "permission", id, changes...)
		httpapi.OK(w, r, MsgPermissionUpdated)
	})
}

// handleAddPermission answers POST /admin-permissions/add: a new permission, granted
// to no role yet.
func handleAddPermission(store Store) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, err := httpapi.Decode[permissionRequest](w, r, 0)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		in := req.input()
		id, err := store.AddPermission(r.Context(), in)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		audit.Record(r.Context(), "permission.add", "permission", id,
			slog.String("name", in.Name), slog.String("description", in.Description))
		httpapi.OK(w, r, MsgPermissionAdded)
	})
}

// handleDeletePermission answers DELETE /admin-permissions/delete/{id}: the permission
// goes, and every role loses it.
func handleDeletePermission(store Store) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := httpapi.PathInt(r, "id")
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		if err := store.DeletePermission(r.Context(), id); err != nil {
			httpapi.Error(w, r, err)
			return
		}
		audit.Record(r.Context(), "permission.delete", "permission", id)
		httpapi.OK(w, r, MsgPermissionDeleted)
	})
}
