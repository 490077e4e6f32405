package admincontributors

import (
	"context"

	"github.com/mediacatalog/service/shared/app"
	"github.com/mediacatalog/service/shared/avatars"
	"github.com/mediacatalog/service/shared/httpapi"
	"github.com/mediacatalog/service/shared/imageset"
	"github.com/mediacatalog/service/shared/secrets"
)

// Group is the admin-contributors function's wiring. The avatar routes are always
// served; on an instance that is not a file service they answer 503.
var Group = app.Group{Name: "admin-contributors", Secrets: secrets.Environment,
	Env: []string{"JWT_SECRET", "S3_BUCKET", "FILE_SERVICE", "IMAGE_MAX_BYTES", "EDIT_LOCK_TTL"},
	Build: func(ctx context.Context, a *app.App) ([]httpapi.Route, error) {
		db, s, err := a.DBAndSessions(ctx)
		if err != nil {
			return nil, err
		}
		av, err := avatars.FromConfig(ctx, a.Config, db, nil)
		if err != nil {
			return nil, err
		}
		a.Check("s3", av.Ready(imageset.Contributors))
		return Routes(Deps{Store: db, Auth: s, LockTTL: a.Config.LockTTL, Avatars: av}), nil
	}}
