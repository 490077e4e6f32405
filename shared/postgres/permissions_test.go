package postgres_test

import (
	"context"
	"testing"

	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/catalog"
	"github.com/mediacatalog/service/shared/postgres"
)

func TestPermissions(t *testing.T) {
	ctx := context.Background()
	var counter postgres.QueryCounter
	db := acctDB(t, &counter)

	counter.Reset()
	perms, err := db.Permissions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(perms) != 15 || perms[0].Name != "add-contributors" || perms[0].Description == "" {
		t.Errorf("permissions %+v, want the 15 demo ones by name", perms)
	}
	p, err := db.Permission(ctx, 1)
	if err != nil || p.Name != "view-users" {
		t.Errorf("permission 1 = %+v, %v", p, err)
	}
	if n := counter.Count(); n != 2 {
		t.Errorf("list and detail took %d queries, want 2", n)
	}
	_, err = db.Permission(ctx, 999)
	acctWant(t, err, apperr.NotFound, postgres.MsgPermissionNotFound)

	tests := []struct {
		name string
		do   func() error
		code apperr.Code
		msg  string
	}{
		{"edit", func() error {
			_, err := db.EditPermission(ctx, 15, catalog.PermissionInput{Name: "delete-contributors", Description: "Delete them"})
			return err
		}, "", ""},
		{"rename a built-in permission", func() error {
			_, err := db.EditPermission(ctx, 15, catalog.PermissionInput{Name: "remove-contributors", Description: "x"})
			return err
		}, apperr.Invalid, postgres.MsgBuiltInName},
		{"rename a built-in permission to a taken name", func() error {
			_, err := db.EditPermission(ctx, 15, catalog.PermissionInput{Name: "view-users", Description: "x"})
			return err
		}, apperr.Invalid, postgres.MsgBuiltInName},
		{"edit unknown", func() error {
			_, err := db.EditPermission(ctx, 999, catalog.PermissionInput{Name: "x", Description: "x"})
			return err
		}, apperr.NotFound, postgres.MsgPermissionNotFound},
		{"add", func() error {
			_, err := db.AddPermission(ctx, catalog.PermissionInput{Name: "view-series", Description: "View series"})
			return err
		}, "", ""},
		{"add a taken name", func() error {
			_, err := db.AddPermission(ctx, catalog.PermissionInput{Name: "view-series", Description: "again"})
			return err
		}, apperr.Conflict, postgres.MsgPermissionExists},
		{"rename an added permission", func() error {
			_, err := db.EditPermission(ctx, 16, catalog.PermissionInput{Name: "see-series", Description: "See series"})
			return err
		}, "", ""},
		{"rename an added permission to a taken name", func() error {
			_, err := db.EditPermission(ctx, 16, catalog.PermissionInput{Name: "view-users", Description: "x"})
			return err
		}, apperr.Conflict, postgres.MsgPermissionExists},
		{"rename it back", func() error {
			_, err := db.EditPermission(ctx, 16, catalog.PermissionInput{Name: "view-series", Description: "View series"})
			return err
		}, "", ""},
		{"delete unknown", func() error { return db.DeletePermission(ctx, 999) }, apperr.NotFound, postgres.MsgPermissionNotFound},
		{"delete a built-in permission", func() error { return db.DeletePermission(ctx, 1) }, apperr.Forbidden, apperr.MsgForbidden},
		{"delete an added permission", func() error {
			acctExec(t, db, `INSERT INTO role_permissions (role_id, permission_id)
				SELECT r, p.id FROM permissions p, unnest('{1,2}'::bigint[]) r WHERE p.name = 'view-series'`)
			return db.DeletePermission(ctx, acctInt(t, db, `SELECT id FROM permissions WHERE name = 'view-series'`))
		}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { acctWant(t, tt.do(), tt.code, tt.msg) })
	}
	if p, _ := db.Permission(ctx, 15); p.Description != "Delete them" {
		t.Errorf("edited permission %+v", p)
	}
	if n := acctInt(t, db, `SELECT count(*) FROM role_permissions WHERE permission_id > 15`); n != 0 {
		t.Errorf("%d roles still grant the deleted permission", n)
	}
	if n := acctInt(t, db, `SELECT count(*) FROM role_permissions WHERE role_id = 1`); n != 15 {
		t.Errorf("admin grants %d permissions after the deletion, want its 15", n)
	}
	if n := acctInt(t, db, `SELECT count(*) FROM permissions WHERE id = 1`); n != 1 {
		t.Error("the built-in permission 1 was deleted")
	}
}
