package testenv

// A bucket of its own per test on the test S3 server (S3Endpoint: gofakes3, or
// AWS_ENDPOINT_URL_S3), so that tests of several packages running at once never see
// each other's objects, and a store whose S3 is unreachable.

import (
	"context"
	"net"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/mediacatalog/service/infra/local/localservices"
	"github.com/mediacatalog/service/shared/awsconfig"
	"github.com/mediacatalog/service/shared/config"
	"github.com/mediacatalog/service/shared/s3store"
)

// S3Config returns a configuration naming the test S3 server and a fresh, empty bucket
// of the test's own, versioned as the template's is; the bucket and every version of
// its objects are removed at cleanup.
func S3Config(t testing.TB) config.Config {
	t.Helper()
	endpoint := S3Endpoint(t)
	cfg, err := config.Load(func(k string) string {
		switch k {
		case "AWS_ENDPOINT_URL_S3":
			return endpoint
		case "S3_BUCKET":
			return "t-" + randomHex(8)
		}
		return ""
	})
	if err != nil {
		t.Fatalf("testenv: s3: config: %v", err)
	}
	ctx := context.Background()
	if err := localservices.EnsureBucket(ctx, endpoint, cfg.AWSRegion, cfg.Bucket); err != nil {
		t.Fatalf("testenv: s3: create bucket: %v", err)
	}
	t.Cleanup(func() {
		_, _ = newS3Store(t, cfg, nil).DeleteVersions(ctx, "")
		_ = localservices.DeleteBucket(ctx, endpoint, cfg.AWSRegion, cfg.Bucket)
	})
	return cfg
}

// NewS3Store returns a store on a fresh bucket of the test's own (see Config).
func NewS3Store(t testing.TB) *s3store.Store {
	t.Helper()
	return newS3Store(t, S3Config(t), nil)
}

// UnreachableS3 returns a store whose endpoint is a closed local port: every request
// fails to connect, at its first attempt (the SDK's retries would only wait).
func UnreachableS3(t testing.TB) *s3store.Store {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("testenv: s3: listen: %v", err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	cfg, err := config.Load(func(k string) string {
		if k == "AWS_ENDPOINT_URL_S3" {
			return "http://" + addr
		}
		return ""
	})
	if err != nil {
		t.Fatalf("testenv: s3: config: %v", err)
	}
	return newS3Store(t, cfg, func(c *aws.Config) { c.RetryMaxAttempts = 1 })
}

func newS3Store(t testing.TB, cfg config.Config, adjust func(*aws.Config)) *s3store.Store {
	t.Helper()
	awsCfg := awsconfig.Load(cfg)
	if adjust != nil {
		adjust(&awsCfg)
	}
	store, err := s3store.New(awsCfg, s3store.Options{Bucket: cfg.Bucket, Endpoint: cfg.S3Endpoint})
	if err != nil {
		t.Fatalf("testenv: s3: store: %v", err)
	}
	return store
}
