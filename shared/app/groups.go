package app

import (
	"context"

	"github.com/mediacatalog/service/shared/admincontributors"
	"github.com/mediacatalog/service/shared/adminpermissions"
	"github.com/mediacatalog/service/shared/adminroles"
	"github.com/mediacatalog/service/shared/adminusers"
	"github.com/mediacatalog/service/shared/cdn"
	"github.com/mediacatalog/service/shared/dynamo"
	"github.com/mediacatalog/service/shared/httpapi"
	"github.com/mediacatalog/service/shared/oauth"
	"github.com/mediacatalog/service/shared/publishers"
	"github.com/mediacatalog/service/shared/tags"
)

func buildAdminUsers(ctx context.Context, a *App) ([]httpapi.Route, error) {
	db, s, err := a.dbAndSessions(ctx)
	if err != nil {
		return nil, err
	}
	av, err := a.Avatars(ctx)
	if err != nil {
		return nil, err
	}
	return adminusers.Routes(adminusers.Deps{Store: db, Auth: s, LockTTL: a.Config.LockTTL, Images: adminusers.NewImages(av)}), nil
}

func buildAdminContributors(ctx context.Context, a *App) ([]httpapi.Route, error) {
	db, s, err := a.dbAndSessions(ctx)
	if err != nil {
		return nil, err
	}
	av, err := a.Avatars(ctx)
	if err != nil {
		return nil, err
	}
	return admincontributors.Routes(admincontributors.Deps{Store: db, Auth: s, LockTTL: a.Config.LockTTL, Avatars: admincontributors.NewAvatars(av)}), nil
}

func buildCDN(ctx context.Context, a *App) ([]httpapi.Route, error) {
	db, err := a.DB(ctx)
	if err != nil {
		return nil, err
	}
	files, err := a.S3(ctx)
	if err != nil {
		return nil, err
	}
	d := cdn.Deps{Users: db, Files: files, CacheBytes: a.Config.CDNCacheBytes}
	if a.Config.CloudFrontDistID != "" {
		cf, err := cdn.NewCloudFront(ctx, a.Config)
		if err != nil {
			return nil, err
		}
		d.Invalidator = cf
	}
	return cdn.Routes(d), nil
}

func buildOAuth(ctx context.Context, a *App) ([]httpapi.Route, error) {
	db, s, err := a.dbAndSessions(ctx)
	if err != nil {
		return nil, err
	}
	dc, err := a.Dynamo(ctx)
	if err != nil {
		return nil, err
	}
	limiter, err := dynamo.NewRateLimiter(dc, a.Config.RateLimitTable, a.Config.OAuthRateLimit, a.Config.OAuthRateWindow)
	if err != nil {
		return nil, err
	}
	return oauth.Routes(oauth.Deps{
		Store:         db,
		Sessions:      s,
		States:        dynamo.NewStateStore(dc, a.Config.StateTable),
		Limiter:       limiter,
		Providers:     oauth.LoadProviders(a.Getenv, nil, a.Log),
		APIURL:        a.Config.APIURL,
		FrontendURL:   a.Config.FrontendURL,
		SecureCookies: !a.Config.Local(),
	}), nil
}

// Variables every function reads (set in template.yaml's Globals).
var CommonEnv = []string{"DB_ENV", "API_URL", "FRONTEND_URL", "CORS_ORIGINS", "LOG_LEVEL", "DATABASE_URL", "DB_MAX_CONNS"}

// The route groups. Each Build names exactly the clients its group uses, and Env the
// variables beyond CommonEnv that its wiring reads: the template test holds
// template.yaml to them.
var (
	OAuth = Group{Name: "oauth", Build: buildOAuth, Env: []string{
		"JWT_SECRET", "OAUTH_STATE_TABLE", "RATE_LIMIT_TABLE", "OAUTH_RATE_LIMIT", "OAUTH_RATE_WINDOW",
		"OAUTH_GOOGLE_CLIENT_ID", "OAUTH_GOOGLE_CLIENT_SECRET", "OAUTH_DISCORD_CLIENT_ID",
		"OAUTH_DISCORD_CLIENT_SECRET", "OAUTH_GITHUB_CLIENT_ID", "OAUTH_GITHUB_CLIENT_SECRET"}}
	Tags = Group{Name: "tags", Build: func(ctx context.Context, a *App) ([]httpapi.Route, error) {
		db, err := a.DB(ctx)
		if err != nil {
			return nil, err
		}
		return tags.Routes(tags.Deps{Store: db}), nil
	}}
	CDN        = Group{Name: "cdn", Build: buildCDN, Env: []string{"S3_BUCKET", "CDN_CACHE_BYTES", "CLOUDFRONT_DISTRIBUTION_ID"}}
	AdminUsers = Group{Name: "admin-users", Build: buildAdminUsers, Env: []string{
		"JWT_SECRET", "S3_BUCKET", "FILE_SERVICE", "AVATAR_NOTIFIER", "CDN_FUNCTION_NAME", "EDIT_LOCK_TTL"}}
	AdminRoles = Group{Name: "admin-roles", Env: []string{"JWT_SECRET"}, Build: func(ctx context.Context, a *App) ([]httpapi.Route, error) {
		db, s, err := a.dbAndSessions(ctx)
		if err != nil {
			return nil, err
		}
		return adminroles.Routes(adminroles.Deps{Store: db, Auth: s}), nil
	}}
	AdminPermissions = Group{Name: "admin-permissions", Env: []string{"JWT_SECRET"}, Build: func(ctx context.Context, a *App) ([]httpapi.Route, error) {
		db, s, err := a.dbAndSessions(ctx)
		if err != nil {
			return nil, err
		}
		return adminpermissions.Routes(adminpermissions.Deps{Store: db, Auth: s}), nil
	}}
	AdminContributors = Group{Name: "admin-contributors", Build: buildAdminContributors, Env: []string{
		"JWT_SECRET", "S3_BUCKET", "FILE_SERVICE", "EDIT_LOCK_TTL"}}
	Publishers = Group{Name: "publishers", Build: func(ctx context.Context, a *App) ([]httpapi.Route, error) {
		db, err := a.DB(ctx)
		if err != nil {
			return nil, err
		}
		return publishers.Routes(publishers.Deps{Store: db}), nil
	}}
)
