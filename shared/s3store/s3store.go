// Package s3store is the S3 adapter: the bucket that holds profile images and
// contributor avatars, through the SDK's S3 client. Locally and in tests an endpoint
// override (AWS_ENDPOINT_URL_S3, or S3_ENDPOINT) names an S3-compatible server
// (gofakes3), addressed path-style.
package s3store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/mediacatalog/service/shared/awsconfig"
	"github.com/mediacatalog/service/shared/catalog"
	"github.com/mediacatalog/service/shared/imageset"
)

// Get's errors are the image vocabulary's: imageset.ErrNotFound for a key without an
// object, imageset.ErrAccessDenied when S3 answers AccessDenied.

// maxDeleteBatch is the most keys one DeleteObjects request takes.
const maxDeleteBatch = 1000

// NewClient returns the SDK's S3 client for awsCfg (awsconfig.Load). With an endpoint
// (config's S3Endpoint) it talks to that endpoint path-style (local S3-compatible
// servers do not serve bucket subdomains); in AWS ("") the SDK addresses the bucket
// virtual-hosted style.
func NewClient(awsCfg aws.Config, endpoint string) *s3.Client {
	return s3.NewFromConfig(awsCfg, func(o *s3.Options) {
		o.BaseEndpoint = awsconfig.BaseEndpoint(endpoint)
		o.UsePathStyle = endpoint != ""
	})
}

// Options name the bucket and where S3 is.
type Options struct {
	Bucket   string // config's Bucket (S3_BUCKET)
	Endpoint string // config's S3Endpoint: an S3-compatible server; "" in AWS
}

// Store is one bucket.
type Store struct {
	client *s3.Client
	bucket *string
}

// New returns a Store for o.Bucket. It does not connect: the first request does.
func New(awsCfg aws.Config, o Options) (*Store, error) {
	if o.Bucket == "" {
		return nil, errors.New("s3store: S3_BUCKET is not set")
	}
	return &Store{client: NewClient(awsCfg, o.Endpoint), bucket: aws.String(o.Bucket)}, nil
}

// Put stores data under key with the given content type, replacing any object there.
func (s *Store) Put(ctx context.Context, key string, data []byte, contentType string) error {
	_, err := s.client.PutObject(ctx, &s3.PutObjectInput{
		Bucket:        s.bucket,
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

// Get returns the object under key; imageset.ErrNotFound when there is none.
func (s *Store) Get(ctx context.Context, key string) (catalog.StoredFile, error) {
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: s.bucket, Key: aws.String(key)})
	if err != nil {
		if notFound(err) {
			return catalog.StoredFile{}, fmt.Errorf("s3store: get %s: %w", key, imageset.ErrNotFound)
		}
		if accessDenied(err) {
			return catalog.StoredFile{}, fmt.Errorf("s3store: get %s: %w (%w)", key, imageset.ErrAccessDenied, err)
		}
		return catalog.StoredFile{}, fmt.Errorf("s3store: get %s: %w", key, err)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	if err != nil {
		return catalog.StoredFile{}, fmt.Errorf("s3store: get %s: read: %w", key, err)
	}
	return catalog.StoredFile{Data: data, ContentType: aws.ToString(out.ContentType), ETag: aws.ToString(out.ETag)}, nil
}

// Ready is the readiness check of a function that keeps owner's pictures: it lists
// at most one key under the owner's prefix ("users/"), which S3 answers only when the
// bucket exists, the request was signed with valid credentials and the function's role
// may list that prefix (the grant its deletions and reads need anyway). Any error
// (NoSuchBucket, InvalidAccessKeyId, AccessDenied, a timeout) is the check's failure,
// and a call that AWS authorizes, so that a deploy leaves no AccessDenied behind.
func (s *Store) Ready(owner imageset.Owner) func(ctx context.Context) error {
	prefix := string(owner) + "/"
	return func(ctx context.Context) error {
		_, err := s.client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: s.bucket, Prefix: aws.String(prefix), MaxKeys: aws.Int32(1)})
		if err != nil {
			return fmt.Errorf("s3store: list %s of bucket %s: %w", prefix, aws.ToString(s.bucket), err)
		}
		return nil
	}
}

// notFound reports S3's NoSuchKey, and a 404 without S3's error document (some
// S3-compatible servers), which the SDK reports as the code NotFound.
func notFound(err error) bool {
	var nsk *types.NoSuchKey
	var apiErr smithy.APIError
	return errors.As(err, &nsk) || errors.As(err, &apiErr) && apiErr.ErrorCode() == "NotFound"
}

// accessDenied reports S3's AccessDenied error code.
func accessDenied(err error) bool {
	var apiErr smithy.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode() == "AccessDenied"
}

// Delete removes the objects under keys, in batches of up to 1000 keys per request.
// Keys without an object are no error. It reports every key S3 failed to delete. In the
// versioned bucket it leaves a delete marker: the replaced versions stay for the
// bucket's noncurrent lifetime (the undo of an overwrite or a delete).
func (s *Store) Delete(ctx context.Context, keys ...string) error {
	ids := make([]types.ObjectIdentifier, len(keys))
	for i, k := range keys {
		ids[i].Key = aws.String(k)
	}
	return s.deleteObjects(ctx, ids)
}

// DeleteVersions removes, for good, every version of every object whose key begins
// with prefix, and every delete marker there: what Delete leaves in a versioned bucket.
// prefix ends with "/" ("users/3/" is never "users/31/"), or is "" for the whole bucket
// (the tests' buckets). Each page of ListObjectVersions (up to 1000 versions and
// markers) is deleted by version id with one DeleteObjects; it returns how many
// versions and markers it removed. An S3-compatible server without versioning (the
// local stack's file-backed gofakes3) answers ListObjectVersions NotImplemented: there
// the current objects are all there is, and those are deleted.
func (s *Store) DeleteVersions(ctx context.Context, prefix string) (int, error) {
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		return 0, fmt.Errorf("s3store: delete the versions under %q: a prefix ends with /", prefix)
	}
	n := 0
	pages := s3.NewListObjectVersionsPaginator(s.client, &s3.ListObjectVersionsInput{Bucket: s.bucket, Prefix: aws.String(prefix)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if notImplemented(err) && n == 0 {
			return s.deleteCurrent(ctx, prefix)
		}
		if err != nil {
			return n, fmt.Errorf("s3store: list the versions under %s: %w", prefix, err)
		}
		ids := make([]types.ObjectIdentifier, 0, len(page.Versions)+len(page.DeleteMarkers))
		for _, v := range page.Versions {
			ids = append(ids, types.ObjectIdentifier{Key: v.Key, VersionId: v.VersionId})
		}
		for _, m := range page.DeleteMarkers {
			ids = append(ids, types.ObjectIdentifier{Key: m.Key, VersionId: m.VersionId})
		}
		if err := s.deleteObjects(ctx, ids); err != nil {
			return n, err
		}
		n += len(ids)
	}
	return n, nil
}

// deleteCurrent deletes the objects under prefix of a bucket without versions.
func (s *Store) deleteCurrent(ctx context.Context, prefix string) (int, error) {
	keys, err := s.List(ctx, prefix)
	if err != nil {
		return 0, err
	}
	return len(keys), s.Delete(ctx, keys...)
}

// notImplemented reports S3's NotImplemented error code.
func notImplemented(err error) bool {
	var apiErr smithy.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode() == "NotImplemented"
}

// deleteObjects deletes ids (keys, with a version id for one version) in batches of up
// to 1000 per DeleteObjects request, and reports every one S3 failed to delete.
func (s *Store) deleteObjects(ctx context.Context, ids []types.ObjectIdentifier) error {
	for len(ids) > 0 {
		n := min(len(ids), maxDeleteBatch)
		batch := ids[:n]
		ids = ids[n:]
		out, err := s.client.DeleteObjects(ctx, &s3.DeleteObjectsInput{
			Bucket: s.bucket,
			Delete: &types.Delete{Objects: batch, Quiet: aws.Bool(true)},
		})
		if err != nil {
			keys := make([]string, len(batch))
			for i, id := range batch {
				keys[i] = aws.ToString(id.Key)
			}
			return fmt.Errorf("s3store: delete %s: %w", strings.Join(keys, ", "), err)
		}
		if len(out.Errors) > 0 {
			errs := make([]error, len(out.Errors))
			for i, e := range out.Errors {
				errs[i] = fmt.Errorf("s3store: delete %s: %s: %s", aws.ToString(e.Key), aws.ToString(e.Code), aws.ToString(e.Message))
			}
			return errors.Join(errs...)
		}
	}
	return nil
}

// List returns the keys under prefix, in lexical order (tests clean their buckets
// with it).
func (s *Store) List(ctx context.Context, prefix string) ([]string, error) {
	var keys []string
	pages := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{Bucket: s.bucket, Prefix: aws.String(prefix)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("s3store: list %s: %w", prefix, err)
		}
		for _, o := range page.Contents {
			keys = append(keys, aws.ToString(o.Key))
		}
	}
	return keys, nil
}

// Versions returns every version and delete marker under prefix as "key version-id"
// (a marker's id followed by " marker"), in the order S3 lists them (the tests look for
// what a purge left with it).
func (s *Store) Versions(ctx context.Context, prefix string) ([]string, error) {
	var out []string
	pages := s3.NewListObjectVersionsPaginator(s.client, &s3.ListObjectVersionsInput{Bucket: s.bucket, Prefix: aws.String(prefix)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("s3store: list the versions under %s: %w", prefix, err)
		}
		for _, v := range page.Versions {
			out = append(out, aws.ToString(v.Key)+" "+aws.ToString(v.VersionId))
		}
		for _, m := range page.DeleteMarkers {
			out = append(out, aws.ToString(m.Key)+" "+aws.ToString(m.VersionId)+" marker")
		}
	}
	return out, nil
}
