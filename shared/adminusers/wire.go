package adminusers

import (
	"context"
	"net/http"
	"time"

	"github.com/mediacatalog/service/shared/app"
	"github.com/mediacatalog/service/shared/avatars"
	"github.com/mediacatalog/service/shared/awsconfig"
	"github.com/mediacatalog/service/shared/cdnnotify"
	"github.com/mediacatalog/service/shared/httpapi"
	"github.com/mediacatalog/service/shared/imageset"
	"github.com/mediacatalog/service/shared/secrets"
	"github.com/mediacatalog/service/shared/telemetry"
)

// Group is the admin-users function's wiring. The image routes are always served; on
// an instance that is not a file service they answer 503.
var Group = app.Group{Name: "admin-users", Secrets: secrets.Environment,
	Env: []string{"JWT_SECRET", "S3_BUCKET", "FILE_SERVICE", "IMAGE_MAX_BYTES", "AVATAR_NOTIFIER", "CDN_FUNCTION_NAME", "EDIT_LOCK_TTL"},
	Build: func(ctx context.Context, a *app.App) ([]httpapi.Route, error) {
		db, s, err := a.DBAndSessions(ctx)
		if err != nil {
			return nil, err
		}
		notifier, err := cdnnotify.NewNotifier(awsconfig.Load(a.Config), cdnnotify.Options{
			Kind: a.Config.AvatarNotifier, URL: a.Config.CDNURL, Client: &http.Client{Timeout: 10 * time.Second, Transport: telemetry.Transport(nil)},
			Function: a.Config.CDNFunctionName, LambdaEndpoint: a.Config.LambdaEndpoint,
		})
		if err != nil {
			return nil, err
		}
		av, err := avatars.FromConfig(ctx, a.Config, db, notifier)
		if err != nil {
			return nil, err
		}
		a.Check("s3", av.Ready(imageset.Users))
		return Routes(Deps{Store: db, Auth: s, LockTTL: a.Config.LockTTL, Images: av}), nil
	}}
