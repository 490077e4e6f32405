package app

import (
	"context"

	"github.com/mediacatalog/service/shared/httpapi"
)

func buildOAuth(context.Context, *App) ([]httpapi.Route, error) { return nil, nil }
func buildCDN(context.Context, *App) ([]httpapi.Route, error)   { return nil, nil }
