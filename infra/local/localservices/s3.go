package localservices

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3bolt"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/mediacatalog/service/shared/awsconfig"
	"github.com/mediacatalog/service/shared/config"
	"github.com/mediacatalog/service/shared/s3store"
)

// S3 returns the S3 endpoint the environment names (config.S3EndpointEnv:
// AWS_ENDPOINT_URL_S3, S3_ENDPOINT, ...) when it names one. Otherwise it serves
// gofakes3 in this process on a free loopback port, backed by Dir/s3.db (or memory
// when ephemeral), with the bucket named by S3_BUCKET created.
func S3(ctx context.Context, opts Options) (*Service, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("start s3: %w", err)
	}
	if endpoint := config.FirstEnv(opts.Getenv, config.S3EndpointEnv); endpoint != "" {
		opts.logf("s3: using the S3 endpoint %s from the environment", endpoint)
		return external("s3", endpoint), nil
	}
	svc, err := startS3(opts)
	if err != nil {
		return nil, fmt.Errorf("start s3: %w", err)
	}
	return svc, nil
}

func startS3(opts Options) (*Service, error) {
	cfg, err := config.Load(opts.Getenv)
	if err != nil {
		return nil, err
	}
	backend, closeBackend, where, err := s3Backend(opts)
	if err != nil {
		return nil, err
	}
	if err := createBucket(backend, cfg.Bucket); err != nil {
		return nil, errors.Join(err, closeBackend())
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, errors.Join(fmt.Errorf("listen: %w", err), closeBackend())
	}
	faker := gofakes3.New(backend, gofakes3.WithLogger(gofakes3.DiscardLog()))
	srv := &http.Server{Handler: faker.Server(), ReadHeaderTimeout: 30 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	endpoint := "http://" + ln.Addr().String()
	opts.logf("s3: S3 (gofakes3, in this process) at %s, bucket %s, %s", endpoint, cfg.Bucket, where)
	return &Service{Name: "s3", Endpoint: endpoint, Managed: true, stop: func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err := srv.Shutdown(ctx)
		if serveErr := <-served; !errors.Is(serveErr, http.ErrServerClosed) {
			err = errors.Join(err, serveErr)
		}
		return errors.Join(err, closeBackend())
	}}, nil
}

func s3Backend(opts Options) (backend gofakes3.Backend, closeBackend func() error, where string, err error) {
	if opts.Ephemeral {
		return s3mem.New(), func() error { return nil }, "in memory", nil
	}
	path, _, err := opts.dataPath("s3.db")
	if err != nil {
		return nil, nil, "", err
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 2 * time.Second})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, nil, "", fmt.Errorf("open %s: in use by another process (another stack on the same folder?)", path)
	}
	if err != nil {
		return nil, nil, "", fmt.Errorf("open %s: %w", path, err)
	}
	return s3bolt.New(db), db.Close, "data in " + path, nil
}

func createBucket(backend gofakes3.Backend, bucket string) error {
	exists, err := backend.BucketExists(bucket)
	if err != nil {
		return fmt.Errorf("look up bucket %s: %w", bucket, err)
	}
	if exists {
		return nil
	}
	if err := backend.CreateBucket(bucket); err != nil {
		return fmt.Errorf("create bucket %s: %w", bucket, err)
	}
	return nil
}

// EnsureBucket creates bucket at an S3-compatible endpoint unless it exists, and turns
// its versioning on, as the template's bucket has it (a deleted user's pictures are
// removed version by version). A server without versioning (gofakes3 on a file,
// NotImplemented) keeps an unversioned bucket. Without AWS credentials in the
// environment it signs with placeholder ones, which local servers accept.
func EnsureBucket(ctx context.Context, endpoint, region, bucket string) error {
	client := s3Client(endpoint, region)
	if _, err := client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: &bucket}); err != nil {
		in := &s3.CreateBucketInput{Bucket: &bucket}
		if region != "us-east-1" {
			in.CreateBucketConfiguration = &types.CreateBucketConfiguration{
				LocationConstraint: types.BucketLocationConstraint(region),
			}
		}
		_, err := client.CreateBucket(ctx, in)
		var owned *types.BucketAlreadyOwnedByYou
		if err != nil && !errors.As(err, &owned) {
			return fmt.Errorf("ensure bucket %s: %w", bucket, err)
		}
	}
	_, err := client.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: &bucket,
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}})
	var apiErr smithy.APIError
	if err != nil && !(errors.As(err, &apiErr) && apiErr.ErrorCode() == "NotImplemented") {
		return fmt.Errorf("ensure bucket %s: versioning: %w", bucket, err)
	}
	return nil
}

// DeleteBucket removes an empty bucket, every version of its objects deleted (the
// tests' own, when they end).
func DeleteBucket(ctx context.Context, endpoint, region, bucket string) error {
	_, err := s3Client(endpoint, region).DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: &bucket})
	if err != nil {
		return fmt.Errorf("delete bucket %s: %w", bucket, err)
	}
	return nil
}

// s3Client is the service's own S3 client of an S3-compatible server, addressed
// path-style.
func s3Client(endpoint, region string) *s3.Client {
	cfg := config.Config{AWSRegion: region, S3Endpoint: endpoint}
	return s3store.NewClient(awsconfig.Load(cfg), endpoint)
}
