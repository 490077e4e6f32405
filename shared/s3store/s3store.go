// Package s3store is the S3 adapter: the bucket that holds profile images and
// contributor avatars, reached through aws-sdk-go-v2. Locally and in tests S3_ENDPOINT
// names an S3-compatible server (gofakes3), addressed path-style.
package s3store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	"github.com/mediacatalog/service/shared/awsconfig"

	"github.com/mediacatalog/service/shared/config"
)

// ErrNotFound is returned by Get for a key that holds no object.
var ErrNotFound = errors.New("no such object")

// maxDeleteBatch is the most keys one DeleteObjects request takes.
const maxDeleteBatch = 1000

// Store is one bucket.
type Store struct {
	client *s3.Client
	bucket string
}

// Object is a stored object's content and metadata.
type Object struct {
	Data        []byte
	ContentType string
	ETag        string // as S3 reports it, quotes included
}

// New returns a Store for cfg.Bucket. It does not connect: the first request does.
// When cfg.S3Endpoint is set the client talks to that endpoint path-style, and signs
// with placeholder credentials unless the environment provides real ones (local
// S3-compatible servers do not check them).
func New(ctx context.Context, cfg config.Config, optFns ...func(*s3.Options)) (*Store, error) {
	if cfg.Bucket == "" {
		return nil, errors.New("s3store: S3_BUCKET is not set")
	}
	awsCfg := awsconfig.Load(cfg.AWSRegion, cfg.S3Endpoint, os.Getenv)
	client := s3.NewFromConfig(awsCfg, func(o *s3.Options) {
		if cfg.S3Endpoint != "" {
			o.BaseEndpoint = aws.String(cfg.S3Endpoint)
			o.UsePathStyle = true
		}
		for _, fn := range optFns {
			fn(o)
		}
	})
	return &Store{client: client, bucket: cfg.Bucket}, nil
}

// Put stores data under key with the given content type, replacing any object there.
func (s *Store) Put(ctx context.Context, key string, data []byte, contentType string) error {
	_, err := s.client.PutObject(ctx, &s3.PutObjectInput{
		Bucket:        aws.String(s.bucket),
		Key:           aws.String(key),
		Body:          bytes.NewReader(data),
		ContentLength: aws.Int64(int64(len(data))),
		ContentType:   aws.String(contentType),
	})
	if err != nil {
		return fmt.Errorf("s3store: put %s: %w", key, err)
	}
	return nil
}

// Get returns the object under key; ErrNotFound when there is none.
func (s *Store) Get(ctx context.Context, key string) (Object, error) {
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(key)})
	if err != nil {
		if isNotFound(err) {
			return Object{}, fmt.Errorf("s3store: get %s: %w", key, ErrNotFound)
		}
		return Object{}, fmt.Errorf("s3store: get %s: %w", key, err)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	if err != nil {
		return Object{}, fmt.Errorf("s3store: read %s: %w", key, err)
	}
	return Object{Data: data, ContentType: aws.ToString(out.ContentType), ETag: aws.ToString(out.ETag)}, nil
}

// Delete removes the objects under keys, in batches of up to 1000 keys per request.
// Keys without an object are no error. It reports every key S3 failed to delete.
func (s *Store) Delete(ctx context.Context, keys ...string) error {
	for len(keys) > 0 {
		n := min(len(keys), maxDeleteBatch)
		batch := keys[:n]
		keys = keys[n:]
		ids := make([]types.ObjectIdentifier, len(batch))
		for i, k := range batch {
			ids[i] = types.ObjectIdentifier{Key: aws.String(k)}
		}
		out, err := s.client.DeleteObjects(ctx, &s3.DeleteObjectsInput{
			Bucket: aws.String(s.bucket),
			Delete: &types.Delete{Objects: ids, Quiet: aws.Bool(true)},
		})
		if err != nil {
			return fmt.Errorf("s3store: delete %s: %w", strings.Join(batch, ", "), err)
		}
		if len(out.Errors) > 0 {
			errs := make([]error, len(out.Errors))
			for i, e := range out.Errors {
				errs[i] = fmt.Errorf("s3store: delete %s: %s: %s",
					aws.ToString(e.Key), aws.ToString(e.Code), aws.ToString(e.Message))
			}
			return errors.Join(errs...)
		}
	}
	return nil
}

// List returns the keys under prefix, in lexical order.
func (s *Store) List(ctx context.Context, prefix string) ([]string, error) {
	var keys []string
	p := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{
		Bucket: aws.String(s.bucket),
		Prefix: aws.String(prefix),
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("s3store: list %s: %w", prefix, err)
		}
		for _, o := range page.Contents {
			keys = append(keys, aws.ToString(o.Key))
		}
	}
	return keys, nil
}

// isNotFound reports whether err says the key holds no object.
func isNotFound(err error) bool {
	var nsk *types.NoSuchKey
	var nf *types.NotFound
	if errors.As(err, &nsk) || errors.As(err, &nf) {
		return true
	}
	var api smithy.APIError
	return errors.As(err, &api) && (api.ErrorCode() == "NoSuchKey" || api.ErrorCode() == "NotFound")
}
