// Package s3test gives tests a bucket of their own on the test S3 server
// (testenv.S3Endpoint: gofakes3, or S3_ENDPOINT), so that tests of several packages
// running at once never see each other's objects, and a store whose S3 is unreachable.
package s3test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"testing"

	"github.com/mediacatalog/service/infra/stack"
	"github.com/mediacatalog/service/infra/testenv"
	"github.com/mediacatalog/service/shared/config"
	"github.com/mediacatalog/service/shared/s3store"
)

// Config returns a configuration naming the test S3 server and a fresh, empty bucket
// of the test's own; the bucket and its objects are removed at cleanup.
func Config(t testing.TB) config.Config {
	t.Helper()
	endpoint := testenv.S3Endpoint(t)
	cfg, err := config.Load(func(k string) string {
		switch k {
		case "S3_ENDPOINT":
			return endpoint
		case "S3_BUCKET":
			return "t-" + randomHex(8)
		}
		return ""
	})
	if err != nil {
		t.Fatalf("s3test: config: %v", err)
	}
	ctx := context.Background()
	if err := stack.EnsureBucket(ctx, endpoint, cfg.AWSRegion, cfg.Bucket); err != nil {
		t.Fatalf("s3test: create bucket: %v", err)
	}
	t.Cleanup(func() {
		store, err := s3store.New(cfg)
		if err != nil {
			return
		}
		if keys, err := store.List(ctx, ""); err == nil && len(keys) > 0 {
			_ = store.Delete(ctx, keys...)
		}
		_ = stack.DeleteBucket(ctx, endpoint, cfg.AWSRegion, cfg.Bucket)
	})
	return cfg
}

// NewStore returns a store on a fresh bucket of the test's own (see Config).
func NewStore(t testing.TB) *s3store.Store {
	t.Helper()
	store, err := s3store.New(Config(t))
	if err != nil {
		t.Fatalf("s3test: store: %v", err)
	}
	return store
}

// Unreachable returns a store whose endpoint is a closed local port: every request
// fails to connect.
func Unreachable(t testing.TB) *s3store.Store {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("s3test: listen: %v", err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	cfg, err := config.Load(func(k string) string {
		if k == "S3_ENDPOINT" {
			return "http://" + addr
		}
		return ""
	})
	if err != nil {
		t.Fatalf("s3test: config: %v", err)
	}
	store, err := s3store.New(cfg)
	if err != nil {
		t.Fatalf("s3test: store: %v", err)
	}
	return store
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
