package awsconfig_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/mediacatalog/service/shared/awsconfig"
	"github.com/mediacatalog/service/shared/config"
	"github.com/mediacatalog/service/shared/dependency"
)

// TestGuard: the clients of a configuration go through their service's breaker: S3's
// answers (an object, a missing key) leave it closed, and a streamed body is read
// whole; operations that time out open it, and the next one is refused before it is
// sent, as Unavailable.
func TestGuard(t *testing.T) {
	hang := make(chan struct{})
	var sent atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sent.Add(1)
		switch {
		case strings.HasSuffix(r.URL.Path, "/hang"):
			select {
			case <-hang:
			case <-r.Context().Done():
			}
		case strings.HasSuffix(r.URL.Path, "/missing"):
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `<Error><Code>NoSuchKey</Code><Message>none</Message></Error>`)
		default:
			io.WriteString(w, "bytes of the object")
		}
	}))
	t.Cleanup(func() { close(hang); srv.Close() })
	cfg := awsconfig.FromEnv(config.Config{AWSRegion: "us-east-1", S3Endpoint: srv.URL}, func(string) string { return "" })
	client := s3.NewFromConfig(cfg, func(o *s3.Options) { o.BaseEndpoint = aws.String(srv.URL); o.UsePathStyle = true })
	get := func(key string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
		defer cancel()
		out, err := client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("b"), Key: aws.String(key)})
		if err != nil {
			return "", err
		}
		defer out.Body.Close()
		b, err := io.ReadAll(out.Body)
		return string(b), err
	}
	for range 3 {
		if body, err := get("object"); err != nil || body != "bytes of the object" {
			t.Fatalf("an object: %q, %v", body, err)
		}
		if _, err := get("missing"); err == nil {
			t.Fatal("a missing key was found")
		}
	}
	for i := range dependency.Trips {
		if _, err := get("hang"); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("hung operation %d: %v", i, err)
		}
	}
	before := sent.Load()
	_, err := get("object")
	var u *dependency.Unavailable
	if !errors.As(err, &u) || u.Dependency != "s3" {
		t.Errorf("after %d timeouts: %v, want Unavailable", dependency.Trips, err)
	}
	if sent.Load() != before {
		t.Error("the refused operation reached the server")
	}
}
