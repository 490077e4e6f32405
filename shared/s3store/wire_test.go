package s3store_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mediacatalog/service/shared/awsconfig"
	"github.com/mediacatalog/service/shared/config"
	"github.com/mediacatalog/service/shared/imageset"
	"github.com/mediacatalog/service/shared/s3store"
)

// s3StandIn answers S3's REST API with scripted errors by path, for the answers
// gofakes3 does not give: a refused key, and a DeleteObjects that fails for one key.
type s3StandIn struct {
	t      *testing.T
	mu     sync.Mutex
	calls  map[string]int // "METHOD path" -> requests
	errors map[string]string
}

func (s *s3StandIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	defer s.mu.Unlock()
	op := r.Method + " " + r.URL.EscapedPath()
	s.calls[op]++
	if code, ok := s.errors[op]; ok {
		status := map[string]int{"NoSuchKey": 404, "AccessDenied": 403}[code]
		w.WriteHeader(status)
		_, _ = io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>`+code+`</Code><Message>scripted</Message><RequestId>r</RequestId></Error>`)
		return
	}
	switch r.Method {
	case http.MethodPut:
	case http.MethodPost: // DeleteObjects
		if _, ok := r.URL.Query()["delete"]; !ok || !strings.Contains(string(body), "<Key>users/1/a.png</Key>") {
			s.t.Errorf("DeleteObjects: query %q, body %s", r.URL.RawQuery, body)
		}
		_, _ = io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><DeleteResult><Error><Key>users/1/b.png</Key><Code>AccessDenied</Code><Message>Access Denied</Message></Error></DeleteResult>`)
	}
}

func TestErrorAnswers(t *testing.T) {
	stand := &s3StandIn{t: t, calls: map[string]int{}, errors: map[string]string{
		"GET /b/missing.png": "NoSuchKey",
		"GET /b/denied.png":  "AccessDenied",
	}}
	srv := httptest.NewServer(stand)
	defer srv.Close()
	cfg := config.Config{AWSRegion: "us-east-1", Bucket: "b", S3Endpoint: srv.URL}
	ctx := context.Background()
	awsCfg := awsconfig.Load(cfg)
	store, err := s3store.New(awsCfg, s3store.Options{Bucket: cfg.Bucket, Endpoint: cfg.S3Endpoint})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Put(ctx, "users/1/a b.png", []byte("png bytes"), "image/png"); err != nil {
		t.Fatalf("Put: %v", err)
	}
	if _, err := store.Get(ctx, "missing.png"); !errors.Is(err, imageset.ErrNotFound) {
		t.Errorf("Get of a missing key: %v, want ErrNotFound", err)
	}
	if _, err := store.Get(ctx, "denied.png"); !errors.Is(err, imageset.ErrAccessDenied) || errors.Is(err, imageset.ErrNotFound) || !strings.Contains(err.Error(), "AccessDenied") {
		t.Errorf("Get of a denied key: %v, want ErrAccessDenied (and S3's code)", err)
	}
	err = store.Delete(ctx, "users/1/a.png", "users/1/b.png")
	if err == nil || !strings.Contains(err.Error(), "users/1/b.png: AccessDenied") {
		t.Errorf("Delete: %v, want the key S3 failed to delete", err)
	}
	// Path-style, the key escaped; a refusal is not retried.
	want := map[string]int{"PUT /b/users/1/a%20b.png": 1, "GET /b/missing.png": 1, "GET /b/denied.png": 1, "POST /b": 1}
	for op, n := range want {
		if stand.calls[op] != n {
			t.Errorf("%s: %d requests, want %d (all: %v)", op, stand.calls[op], n, stand.calls)
		}
	}
}

func TestNewWithoutBucket(t *testing.T) {
	awsCfg := awsconfig.Load(config.Config{AWSRegion: "us-east-1"})
	if _, err := s3store.New(awsCfg, s3store.Options{}); err == nil {
		t.Error("a store without a bucket was made")
	}
}
