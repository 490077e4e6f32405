package avatars

import (
	"context"

	"github.com/mediacatalog/service/shared/awsconfig"
	"github.com/mediacatalog/service/shared/config"
	"github.com/mediacatalog/service/shared/images"
	"github.com/mediacatalog/service/shared/s3store"
)

// FromConfig builds the image service of a function from its configuration: the bucket
// store, and notifier (admin-users: cdnnotify's; nil tells nobody). Creating the
// clients reads configuration only; nothing connects before a request needs it.
func FromConfig(ctx context.Context, cfg config.Config, store Store, notifier Notifier) (*Service, error) {
	awsCfg := awsconfig.Load(cfg)
	files, err := s3store.New(awsCfg, s3store.Options{Bucket: cfg.Bucket, Endpoint: cfg.S3Endpoint})
	if err != nil {
		return nil, err
	}
	d := Deps{
		Files: files,
		Store: store,
		Limits: images.Limits{MaxBytes: cfg.ImageMaxBytes, MaxPixels: cfg.ImageMaxPixels,
			MaxDecodedBytes: cfg.ImageMaxDecodedBytes},
		FileService: cfg.FileService,
		Notifier:    notifier,
	}
	return New(d), nil
}
