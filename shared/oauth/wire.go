package oauth

import (
	"context"
	"net/http"

	"github.com/mediacatalog/service/shared/app"
	"github.com/mediacatalog/service/shared/awsconfig"
	"github.com/mediacatalog/service/shared/dynamo"
	"github.com/mediacatalog/service/shared/httpapi"
	"github.com/mediacatalog/service/shared/secrets"
	"github.com/mediacatalog/service/shared/telemetry"
)

// Group is the oauth function's wiring.
var Group = app.Group{Name: "oauth", Secrets: secrets.Environment,
	Env: []string{"JWT_SECRET", "OAUTH_STATE_TABLE", "RATE_LIMIT_TABLE", "OAUTH_RATE_LIMIT", "OAUTH_RATE_WINDOW",
		"OAUTH_GOOGLE_CLIENT_ID", "OAUTH_GOOGLE_CLIENT_SECRET", "OAUTH_DISCORD_CLIENT_ID",
		"OAUTH_DISCORD_CLIENT_SECRET", "OAUTH_GITHUB_CLIENT_ID", "OAUTH_GITHUB_CLIENT_SECRET"},
	Build: func(ctx context.Context, a *app.App) ([]httpapi.Route, error) {
		db, s, err := a.DBAndSessions(ctx)
		if err != nil {
			return nil, err
		}
		awsCfg := awsconfig.Load(a.Config)
		dc := dynamo.NewClient(awsCfg, a.Config.DynamoEndpoint)
		limiter, err := dynamo.NewRateLimiter(dc, a.Config.RateLimitTable, a.Config.OAuthRateLimit, a.Config.OAuthRateWindow)
		if err != nil {
			return nil, err
		}
		states := dynamo.NewStateStore(dc, a.Config.StateTable)
		a.Check("dynamodb", states.Ready)
		return Routes(Deps{
			Store:         db,
			Sessions:      s,
			States:        states,
			Limiter:       limiter,
			Providers:     LoadProviders(a.Getenv, &http.Client{Transport: telemetry.Transport(nil)}, a.Log),
			APIURL:        a.Config.APIURL,
			FrontendURL:   a.Config.FrontendURL,
			SecureCookies: !a.Config.Local(),
		}), nil
	}}
