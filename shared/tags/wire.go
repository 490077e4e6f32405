package tags

import (
	"context"

	"github.com/mediacatalog/service/shared/app"
	"github.com/mediacatalog/service/shared/httpapi"
	"github.com/mediacatalog/service/shared/secrets"
)

// Group is the tags function's wiring.
var Group = app.Group{Name: "tags", Secrets: secrets.Environment, Build: func(ctx context.Context, a *app.App) ([]httpapi.Route, error) {
	db, err := a.DB(ctx)
	if err != nil {
		return nil, err
	}
	return Routes(Deps{Store: db}), nil
}}
