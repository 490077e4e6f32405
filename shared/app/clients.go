package app

import (
	"context"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/mediacatalog/service/shared/avatars"
	"github.com/mediacatalog/service/shared/dynamo"
	"github.com/mediacatalog/service/shared/images"
	"github.com/mediacatalog/service/shared/s3store"
)

// The AWS clients and the image service, each created on first use. Creating an AWS
// client reads configuration only; nothing connects before a request needs it.

// Dynamo returns the DynamoDB client.
func (a *App) Dynamo(ctx context.Context) (*dynamodb.Client, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.dynamo == nil {
		c, err := dynamo.NewClient(ctx, a.Config)
		if err != nil {
			return nil, err
		}
		a.dynamo = c
	}
	return a.dynamo, nil
}

// S3 returns the image bucket's store.
func (a *App) S3(ctx context.Context) (*s3store.Store, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.s3 == nil {
		s, err := s3store.New(ctx, a.Config)
		if err != nil {
			return nil, err
		}
		a.s3 = s
	}
	return a.s3, nil
}

// Avatars returns the image service of users and contributors: S3 first, then the
// row, then the old objects; the cdn is told about users' changes.
func (a *App) Avatars(ctx context.Context) (*avatars.Service, error) {
	db, err := a.DB(ctx)
	if err != nil {
		return nil, err
	}
	files, err := a.S3(ctx)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.avatars == nil {
		notifier, err := avatars.NewNotifier(ctx, a.Config, &http.Client{Timeout: 10 * time.Second})
		if err != nil {
			return nil, err
		}
		a.avatars = avatars.New(avatars.Deps{
			Files:       files,
			Store:       db,
			Notifier:    notifier,
			Limits:      images.Limits{MaxBytes: a.Config.ImageMaxBytes, MaxPixels: a.Config.ImageMaxPixels},
			FileService: a.Config.FileService,
		})
	}
	return a.avatars, nil
}
