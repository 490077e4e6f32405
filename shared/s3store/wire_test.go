package s3store_test

import (
	"context"
	"crypto/md5"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/mediacatalog/service/shared/awsapi/awsapitest"
	"github.com/mediacatalog/service/shared/config"
	"github.com/mediacatalog/service/shared/s3store"
)

func TestObjectURL(t *testing.T) {
	tests := []struct {
		name string
		cfg  config.Config
		key  string
		want string
	}{
		{"AWS: virtual-hosted", config.Config{AWSRegion: "eu-central-1", Bucket: "media-catalog-images"}, "users/3/0123456789abcdef-01234567/high.jpg",
			"https://media-catalog-images.s3.eu-central-1.amazonaws.com/users/3/0123456789abcdef-01234567/high.jpg"},
		{"AWS China", config.Config{AWSRegion: "cn-north-1", Bucket: "images"}, "a.jpg", "https://images.s3.cn-north-1.amazonaws.com.cn/a.jpg"},
		{"dotted bucket: path-style", config.Config{AWSRegion: "us-east-1", Bucket: "images.example.com"}, "a.jpg",
			"https://s3.us-east-1.amazonaws.com/images.example.com/a.jpg"},
		{"stand-in: path-style", config.Config{AWSRegion: "us-east-1", Bucket: "b", S3Endpoint: "http://127.0.0.1:9000/"}, "a.jpg", "http://127.0.0.1:9000/b/a.jpg"},
		{"key escaped, slashes kept", config.Config{AWSRegion: "us-east-1", Bucket: "b", S3Endpoint: "http://s3.local"}, "a b/c+d/é~_.-x",
			"http://s3.local/b/a%20b/c%2Bd/%C3%A9~_.-x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := s3store.New(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if got := s3store.ObjectURL(s, tt.key); got != tt.want {
				t.Errorf("ObjectURL(%q) = %q, want %q", tt.key, got, tt.want)
			}
		})
	}
}

// s3StandIn answers S3's REST API from a script of XML errors by path, and checks each
// request's signature.
type s3StandIn struct {
	t      *testing.T
	mu     sync.Mutex
	calls  map[string]int // "METHOD path" -> requests
	errors map[string]string
	bodies map[string][]byte
}

func (s *s3StandIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	awsapitest.VerifySignature(s.t, r, body, "s3", "us-east-1", func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
	s.mu.Lock()
	defer s.mu.Unlock()
	op := r.Method + " " + r.URL.EscapedPath()
	s.calls[op]++
	if code, ok := s.errors[op]; ok {
		status := map[string]int{"SlowDown": 503, "NoSuchKey": 404, "AccessDenied": 403}[code]
		w.WriteHeader(status)
		_, _ = io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>`+code+`</Code><Message>scripted</Message><RequestId>r</RequestId></Error>`)
		return
	}
	switch r.Method {
	case http.MethodPut:
		s.bodies[r.URL.EscapedPath()] = body
	case http.MethodGet:
		w.Header().Set("Content-Type", "image/png")
		w.Header().Set("ETag", `"abc"`)
		_, _ = w.Write(s.bodies[r.URL.EscapedPath()])
	case http.MethodPost: // DeleteObjects
		sum := md5.Sum(body)
		if r.URL.RawQuery != "delete=" || r.Header.Get("Content-Md5") != base64.StdEncoding.EncodeToString(sum[:]) {
			s.t.Errorf("DeleteObjects: query %q, Content-MD5 %q", r.URL.RawQuery, r.Header.Get("Content-Md5"))
		}
		if !strings.Contains(string(body), "<Quiet>true</Quiet><Object><Key>users/1/a.png</Key></Object>") {
			s.t.Errorf("DeleteObjects body %s", body)
		}
		_, _ = io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><DeleteResult><Error><Key>users/1/b.png</Key><Code>AccessDenied</Code><Message>Access Denied</Message></Error></DeleteResult>`)
	}
}

func TestWireFormat(t *testing.T) {
	stand := &s3StandIn{t: t, calls: map[string]int{}, bodies: map[string][]byte{}, errors: map[string]string{
		"GET /b/missing.png": "NoSuchKey",
		"GET /b/slow.png":    "SlowDown",
		"GET /b/denied.png":  "AccessDenied",
	}}
	srv := httptest.NewServer(stand)
	defer srv.Close()
	store, err := s3store.New(config.Config{AWSRegion: "us-east-1", Bucket: "b", S3Endpoint: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := store.Put(ctx, "users/1/a b.png", []byte("png bytes"), "image/png"); err != nil {
		t.Fatalf("Put: %v", err)
	}
	obj, err := store.Get(ctx, "users/1/a b.png")
	if err != nil || string(obj.Data) != "png bytes" || obj.ContentType != "image/png" || obj.ETag != `"abc"` {
		t.Errorf("Get = %+v, %v", obj, err)
	}
	if _, err := store.Get(ctx, "missing.png"); !errors.Is(err, s3store.ErrNotFound) {
		t.Errorf("Get of a missing key: %v, want ErrNotFound", err)
	}
	if _, err := store.Get(ctx, "denied.png"); err == nil || errors.Is(err, s3store.ErrNotFound) || !strings.Contains(err.Error(), "AccessDenied") {
		t.Errorf("Get of a denied key: %v, want AccessDenied", err)
	}
	if _, err := store.Get(ctx, "slow.png"); err == nil || !strings.Contains(err.Error(), "SlowDown") {
		t.Errorf("Get while throttled: %v, want SlowDown", err)
	}
	err = store.Delete(ctx, "users/1/a.png", "users/1/b.png")
	if err == nil || !strings.Contains(err.Error(), "users/1/b.png: AccessDenied") {
		t.Errorf("Delete: %v, want the key S3 failed to delete", err)
	}
	want := map[string]int{"PUT /b/users/1/a%20b.png": 1, "GET /b/users/1/a%20b.png": 1, "GET /b/missing.png": 1,
		"GET /b/denied.png": 1, "GET /b/slow.png": 3, "POST /b/": 1}
	for op, n := range want {
		if stand.calls[op] != n {
			t.Errorf("%s: %d requests, want %d (all: %v)", op, stand.calls[op], n, stand.calls)
		}
	}
}
