package adminusers

import (
	"context"

	"github.com/mediacatalog/service/shared/app"
	"github.com/mediacatalog/service/shared/avatars"
	"github.com/mediacatalog/service/shared/httpapi"
)

// Group is the admin-users function's wiring. The image routes are always served; on
// an instance that is not a file service they answer 503.
var Group = app.Group{Name: "admin-users",
	Env: []string{"JWT_SECRET", "S3_BUCKET", "FILE_SERVICE", "IMAGE_MAX_BYTES", "AVATAR_NOTIFIER", "CDN_FUNCTION_NAME", "EDIT_LOCK_TTL"},
	Build: func(ctx context.Context, a *app.App) ([]httpapi.Route, error) {
		db, s, err := a.DBAndSessions(ctx)
		if err != nil {
			return nil, err
		}
		av, err := avatars.FromConfig(ctx, a.Config, db, true)
		if err != nil {
			return nil, err
		}
		return Routes(Deps{Store: db, Auth: s, LockTTL: a.Config.LockTTL, Images: av}), nil
	}}
