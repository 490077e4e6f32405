package adminroles

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"

	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/audit"
	"github.com/mediacatalog/service/shared/auth"
	"github.com/mediacatalog/service/shared/catalog"
	"github.com/mediacatalog/service/shared/httpapi"
)

// The success messages, word for word as the OpenAPI document gives them.
const (
	MsgRoleUpdated = "Role updated successfully"
	MsgRoleAdded   = "Role added successfully"
	MsgRoleDeleted = "Role deleted successfully"
)

// handleRoles answers GET /admin-roles: every role with its numbers of permissions and
// users.
func handleRoles(store Store) http.Handler {
	return httpapi.ReadAll(store.Roles)
}

// handleRole answers GET /admin-roles/id/{id}: the role with its permissions.
func handleRole(store Store) http.Handler {
	return httpapi.Read(httpapi.PathID, store.Role)
}

// editRoleRequest is the body of POST /admin-roles/edit/{id}. Description is kept raw
// to tell absent (unchanged) from null (cleared).
type editRoleRequest struct {
	Name               *string         `json:"name"`
	Description        json.RawMessage `json:"description"`
	AddedPermissions   []int64         `json:"added_permissions"`
	RemovedPermissions []int64         `json:"removed_permissions"`
}

// Validate demands a non-blank name and a description that is absent, null or a
// string, each within its bound (roleText).
func (req *editRoleRequest) Validate() error {
	if req.Name == nil {
		return apperr.MissingParams()
	}
	_, desc, err := req.description()
	if err != nil {
		return err
	}
	if err := httpapi.Required(*req.Name); err != nil {
		return err
	}
	return roleText(*req.Name, desc)
}

// roleText checks a role's name (a Name of at most catalog.MaxRoleName characters)
// and description (nil: none; Prose of at most catalog.MaxDescription).
func roleText(name string, desc *string) error {
	if err := httpapi.Text("name", strings.TrimSpace(name), catalog.MaxRoleName, httpapi.Name); err != nil {
		return err
	}
	if desc == nil {
		return nil
	}
	return httpapi.Text("description", strings.TrimSpace(*desc), catalog.MaxDescription, httpapi.Prose)
}

// description returns whether the request sets the description, and to what.
func (req *editRoleRequest) description() (set bool, desc *string, err error) {
	if len(req.Description) == 0 {
		return false, nil, nil
	}
	if bytes.Equal(req.Description, []byte("null")) {
		return true, nil, nil
	}
	var s string
	if err := json.Unmarshal(req.Description, &s); err != nil {
		return false, nil, apperr.Wrap(apperr.Invalid, apperr.MsgMissingParams, err)
	}
	s = strings.TrimSpace(s)
	return true, &s, nil
}

// handleEditRole answers POST /admin-roles/edit/{id}: renames the role, sets its
// description when given and adds and removes permissions, all or nothing.
func handleEditRole(store Store) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := httpapi.PathInt(r, "id")
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		req, err := httpapi.Decode[editRoleRequest](w, r, 0)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		set, desc, _ := req.description() // checked by Validate
		edit := catalog.RoleEdit{
			Name:               strings.TrimSpace(*req.Name),
			SetDescription:     set,
			Description:        desc,
			AddedPermissions:   req.AddedPermissions,
			RemovedPermissions: req.RemovedPermissions,
		}
		p, _ := auth.FromContext(r.Context())
		res, err := store.EditRole(r.Context(), id, p.UserID, edit)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		changes := roleChanges(res)
		audit.Record(r.Context(), "role.edit", "role", id, changes...)
		httpapi.OK(w, r, MsgRoleUpdated)
	})
}

// addRoleRequest is the body of POST /admin-roles/add.
type addRoleRequest struct {
	Name        *string `json:"name"`
	Description *string `json:"description"`
}

// Validate demands a non-blank name and description, each within its bound
// (roleText).
func (req *addRoleRequest) Validate() error {
	if req.Name == nil || req.Description == nil {
		return apperr.MissingParams()
	}
	if err := httpapi.Required(*req.Name, *req.Description); err != nil {
		return err
	}
	return roleText(*req.Name, req.Description)
}

// handleAddRole answers POST /admin-roles/add: a new role without permissions.
func handleAddRole(store Store) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, err := httpapi.Decode[addRoleRequest](w, r, 0)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		role := catalog.NewRole{Name: strings.TrimSpace(*req.Name), Description: strings.TrimSpace(*req.Description)}
		newID, err := store.AddRole(r.Context(), role)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		audit.Record(r.Context(), "role.add", "role", newID,
			slog.String("name", role.Name), slog.String("description", role.Description))
		httpapi.OK(w, r, MsgRoleAdded)
	})
}

// handleDeleteRole answers DELETE /admin-roles/delete/{id}: the role goes, and its
// holders who hold no other role get the default role. The default role itself cannot
// be deleted.
func handleDeleteRole(store Store) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := httpapi.PathInt(r, "id")
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		p, _ := auth.FromContext(r.Context())
		moved, err := store.DeleteRole(r.Context(), id, p.UserID)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		audit.Record(r.Context(), "role.delete", "role", id, slog.Any("moved_to_default_role", audit.IDs(moved)))
		httpapi.OK(w, r, MsgRoleDeleted)
	})
}

// roleChanges are the attributes of an edit's audit record: the name and description
// when they changed, before and after, and the permissions really added and removed.
func roleChanges(res catalog.RoleEditResult) []slog.Attr {
	var out []slog.Attr
	if res.Before.Name != res.After.Name {
		out = append(out, audit.Change("name", res.Before.Name, res.After.Name))
	}
	if !equalText(res.Before.Description, res.After.Description) {
		out = append(out, audit.Change("description", res.Before.Description, res.After.Description))
	}
	return append(out, slog.Any("added_permissions", audit.IDs(res.AddedPermissions)),
		slog.Any("removed_permissions", audit.IDs(res.RemovedPermissions)))
}

func equalText(a, b *string) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}
