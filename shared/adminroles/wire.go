package adminroles

import (
	"context"

	"github.com/mediacatalog/service/shared/app"
	"github.com/mediacatalog/service/shared/httpapi"
	"github.com/mediacatalog/service/shared/secrets"
)

// Group is the admin-roles function's wiring.
var Group = app.Group{Name: "admin-roles", Secrets: secrets.Environment, Env: []string{"JWT_SECRET"},
	Build: func(ctx context.Context, a *app.App) ([]httpapi.Route, error) {
		db, s, err := a.DBAndSessions(ctx)
		if err != nil {
			return nil, err
		}
		return Routes(Deps{Store: db, Auth: s}), nil
	}}
