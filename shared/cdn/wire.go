package cdn

import (
	"context"

	"github.com/mediacatalog/service/shared/app"
	"github.com/mediacatalog/service/shared/awsconfig"
	"github.com/mediacatalog/service/shared/httpapi"
	"github.com/mediacatalog/service/shared/imageset"
	"github.com/mediacatalog/service/shared/s3store"
	"github.com/mediacatalog/service/shared/secrets"
)

// Group is the cdn function's wiring.
var Group = app.Group{Name: "cdn", Secrets: secrets.Environment, Env: []string{"S3_BUCKET", "CDN_CACHE_BYTES", "CLOUDFRONT_DISTRIBUTION_ID"},
	Build: func(ctx context.Context, a *app.App) ([]httpapi.Route, error) {
		db, err := a.DB(ctx)
		if err != nil {
			return nil, err
		}
		awsCfg := awsconfig.Load(a.Config)
		files, err := s3store.New(awsCfg, s3store.Options{Bucket: a.Config.Bucket, Endpoint: a.Config.S3Endpoint})
		if err != nil {
			return nil, err
		}
		a.Check("s3", files.Ready(imageset.Users))
		d := Deps{Users: db, Files: files, CacheBytes: a.Config.CDNCacheBytes}
		if a.Config.CloudFrontDistID != "" {
			cf, err := NewCloudFront(awsCfg, CloudFrontOptions{Distribution: a.Config.CloudFrontDistID, Endpoint: a.Config.CloudFrontEndpoint})
			if err != nil {
				return nil, err
			}
			d.Invalidator, d.Ledger = cf, db
		}
		return Routes(d), nil
	}}
