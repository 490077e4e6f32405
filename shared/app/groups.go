package app

import (
	"context"

	"github.com/mediacatalog/service/shared/httpapi"
)

// The route groups. Each Build names exactly the clients its group uses.
var (
	OAuth             = Group{Name: "oauth", Build: pending}
	Tags              = Group{Name: "tags", Build: pending}
	CDN               = Group{Name: "cdn", Build: pending}
	AdminUsers        = Group{Name: "admin-users", Build: pending}
	AdminRoles        = Group{Name: "admin-roles", Build: pending}
	AdminPermissions  = Group{Name: "admin-permissions", Build: pending}
	AdminContributors = Group{Name: "admin-contributors", Build: pending}
	Publishers        = Group{Name: "publishers", Build: pending}
)

func pending(context.Context, *App) ([]httpapi.Route, error) { return nil, nil }
