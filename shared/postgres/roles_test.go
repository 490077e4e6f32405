package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/catalog"
	"github.com/mediacatalog/service/shared/postgres"
)

func TestRolesRead(t *testing.T) {
	ctx := context.Background()
	var counter postgres.QueryCounter
	db := acctDB(t, &counter)
	acctExec(t, db, `INSERT INTO roles (name) VALUES ('Auditor')`)

	counter.Reset()
	roles, err := db.Roles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := counter.Count(); n != 1 {
		t.Errorf("list: %d queries, want 1", n)
	}
	got := ""
	for _, r := range roles {
		got += fmt.Sprintf("%s:%d:%d:%v ", r.Name, r.PermissionCount, r.UserCount, r.Description != nil)
	}
	if want := "admin:15:1:true Auditor:0:0:false editor:7:1:true member:0:1:true "; got != want {
		t.Errorf("roles %q, want %q", got, want)
	}

	tests := []struct {
		id        int64
		isDefault int
		perms     int
		code      apperr.Code
	}{
		{1, 0, 15, ""},
		{2, 0, 7, ""},
		{3, 1, 0, ""},
		{999, 0, 0, apperr.NotFound},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.id), func(t *testing.T) {
			counter.Reset()
			r, err := db.Role(ctx, tt.id)
			acctWant(t, err, tt.code, map[apperr.Code]string{apperr.NotFound: postgres.MsgRoleNotFound}[tt.code])
			if n := counter.Count(); n != 1 {
				t.Errorf("detail: %d queries, want 1", n)
			}
			if tt.code == "" && (r.IsDefault != tt.isDefault || len(r.Permissions) != tt.perms || r.Permissions == nil) {
				t.Errorf("role %+v, want is_default %d with %d permissions", r, tt.isDefault, tt.perms)
			}
		})
	}
}

func TestEditRole(t *testing.T) {
	ctx := context.Background()
	db := acctDB(t, nil)
	str := func(s string) *string { return &s }
	state := func() string {
		r, err := db.Role(ctx, 2)
		if err != nil {
			t.Fatal(err)
		}
		desc := "<null>"
		if r.Description != nil {
			desc = *r.Description
		}
		ids := make([]int64, len(r.Permissions))
		for i, p := range r.Permissions {
			ids[i] = p.ID
		}
		slices.Sort(ids)
		return fmt.Sprintf("%s|%s|%v", r.Name, desc, ids)
	}
	// editor: view-users 1, edit-users 2, view-roles 4, view-permissions 8, view-contributors 12,
	// edit-contributors 13, add-contributors 14.
	tests := []struct {
		name string
		id   int64
		edit catalog.RoleEdit
		code apperr.Code
		msg  string
		want string
	}{
		{"rename keeps the description", 2, catalog.RoleEdit{Name: "editors"}, "", "",
			"editors|Edits users and contributors|[1 2 4 8 12 13 14]"},
		{"set the description", 2, catalog.RoleEdit{Name: "editor", SetDescription: true, Description: str("Edits")}, "", "",
			"editor|Edits|[1 2 4 8 12 13 14]"},
		{"clear the description", 2, catalog.RoleEdit{Name: "editor", SetDescription: true}, "", "",
			"editor|<null>|[1 2 4 8 12 13 14]"},
		{"remove then add permissions", 2, catalog.RoleEdit{Name: "editor", AddedPermissions: []int64{15, 2}, RemovedPermissions: []int64{2, 13, 14}}, "", "",
			"editor|<null>|[1 2 4 8 12 15]"},
		{"unknown permission changes nothing", 2, catalog.RoleEdit{Name: "renamed", AddedPermissions: []int64{3, 404}}, apperr.Invalid, apperr.MsgMissingParams,
			"editor|<null>|[1 2 4 8 12 15]"},
		{"name of another role", 2, catalog.RoleEdit{Name: "admin"}, apperr.Conflict, postgres.MsgRoleExists,
			"editor|<null>|[1 2 4 8 12 15]"},
		{"unknown role", 999, catalog.RoleEdit{Name: "ghost"}, apperr.NotFound, postgres.MsgRoleNotFound,
			"editor|<null>|[1 2 4 8 12 15]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := db.EditRole(ctx, tt.id, 1, tt.edit)
			acctWant(t, err, tt.code, tt.msg)
			if got := state(); got != tt.want {
				t.Errorf("role 2 is %q, want %q", got, tt.want)
			}
		})
	}
}

func TestAddRole(t *testing.T) {
	ctx := context.Background()
	db := acctDB(t, nil)
	id, err := db.AddRole(ctx, catalog.NewRole{Name: "moderator", Description: "Moderates"})
	if err != nil {
		t.Fatal(err)
	}
	if id <= 3 {
		t.Errorf("new role id %d collides with the demo ids", id)
	}
	r, err := db.Role(ctx, id)
	if err != nil || r.IsDefault != 0 || len(r.Permissions) != 0 || *r.Description != "Moderates" {
		t.Errorf("new role %+v, %v", r, err)
	}
	_, err = db.AddRole(ctx, catalog.NewRole{Name: "moderator", Description: "again"})
	acctWant(t, err, apperr.Conflict, postgres.MsgRoleExists)
}

func TestDeleteRole(t *testing.T) {
	ctx := context.Background()
	db := acctDB(t, nil)
	// User 10 holds only the editor role, user 11 editor and admin, user 2 (editor) only editor.
	acctExec(t, db, `INSERT INTO users (id, slug, username) VALUES (10, 'u10', 'u10'), (11, 'u11', 'u11')`)
	acctExec(t, db, `INSERT INTO user_roles VALUES (10, 2), (11, 2), (11, 1)`)

	t.Run("default role", func(t *testing.T) {
		acctWant(t, second(db.DeleteRole(ctx, 3, 1)), apperr.NotAllowed, postgres.MsgCannotDeleteDefaultRole)
	})
	t.Run("unknown role", func(t *testing.T) {
		acctWant(t, second(db.DeleteRole(ctx, 999, 1)), apperr.NotFound, postgres.MsgRoleNotFound)
	})
	t.Run("no default role changes nothing", func(t *testing.T) {
		acctExec(t, db, `UPDATE roles SET is_default = false`)
		_, err := db.DeleteRole(ctx, 2, 1)
		acctExec(t, db, `UPDATE roles SET is_default = true WHERE id = 3`)
		if err == nil || apperr.CodeOf(err) != apperr.Internal {
			t.Fatalf("error %v, want an internal error", err)
		}
		if n := acctInt(t, db, `SELECT count(*) FROM user_roles WHERE role_id = 2`); n != 3 {
			t.Errorf("%d holders of the role after a failed deletion, want 3", n)
		}
	})
	t.Run("holders of only that role get the default", func(t *testing.T) {
		moved, err := db.DeleteRole(ctx, 2, 1)
		if err != nil {
			t.Fatal(err)
		}
		// The holders of only role 2 moved to the default role (the audit record says so).
		if fmt.Sprint(moved) != "[2 10]" {
			t.Errorf("moved %v, want [2 10]", moved)
		}
		for id, want := range map[int64]string{2: "[3]", 10: "[3]", 11: "[1]"} {
			if got := fmt.Sprint(acctRoles(t, db, id)); got != want {
				t.Errorf("user %d roles %s, want %s", id, got, want)
			}
		}
		orphans := acctInt(t, db, `SELECT
			(SELECT count(*) FROM roles WHERE id = 2) +
			(SELECT count(*) FROM user_roles WHERE role_id = 2) +
			(SELECT count(*) FROM role_permissions WHERE role_id = 2) +
			(SELECT count(*) FROM users u WHERE NOT EXISTS (SELECT 1 FROM user_roles ur WHERE ur.user_id = u.id))`)
		if orphans != 0 {
			t.Errorf("%d orphan rows or roleless users after the deletion", orphans)
		}
	})
}

// second is the error of a two-value call.
func second[T any](_ T, err error) error { return err }
