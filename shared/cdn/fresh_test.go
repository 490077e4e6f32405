package cdn_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/mediacatalog/service/infra/local/demo"
	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/avatars"
	"github.com/mediacatalog/service/shared/avatars/avatartest"
	"github.com/mediacatalog/service/shared/cdn"
	"github.com/mediacatalog/service/shared/cdnnotify"
	"github.com/mediacatalog/service/shared/httpapi"
	"github.com/mediacatalog/service/shared/images"
	"github.com/mediacatalog/service/shared/imageset"
	"github.com/mediacatalog/service/shared/lambdahttp"
)

// TestSpellings: each picture has one URL. Any other spelling of it (percent-encoded
// digits or letters, leading zeros, a sign, a trailing slash, another case of the
// resolution) is 404 without caching headers, through the handler and through the
// Lambda entry (an API Gateway v2 event whose rawPath is that spelling).
func TestSpellings(t *testing.T) {
	w := newWorld(t)
	h := w.handler(cdn.Deps{CacheBytes: 1 << 20})
	// The events name demo user 3, the member: give them a picture.
	w.upload(t, demo.MemberUserID, avatartest.Base64(avatartest.JPEG(t, 1024, 768)))
	for _, path := range []string{"/user/avatar/3", "/user/avatar/3/high", "/user/avatar/3/scaled"} {
		t.Run(path, func(t *testing.T) {
			direct := get(t, h, path)
			if direct.Code != http.StatusOK {
				t.Fatalf("the canonical URL: %d %s", direct.Code, direct.Body)
			}
			ev := testenv.Event(t, "cdn/get-avatar-res.json")
			ev.RawPath, ev.RequestContext.HTTP.Path = path, path
			if resp := testenv.Invoke(t, h, ev); resp.StatusCode != http.StatusOK || resp.Headers["Cache-Control"] != direct.Header().Get("Cache-Control") {
				t.Errorf("Lambda: %d %v", resp.StatusCode, resp.Headers)
			}
		})
	}
	spellings := []string{
		"/user/avatar/%33/high",
		"/user/avatar/3/hig%68",
		"/user/avatar/3/%68igh",
		"/user/avatar/%33",
		"/user/avatar/%33/scaled",
		"/user/avatar/3/scal%65d",
		"/user/avatar/03",
		"/user/avatar/03/high",
		"/user/avatar/+3",
		"/user/avatar/%2B3/high",
		"/user/avatar/3/",
		"/user/avatar/3/high/",
		"/user/avatar/3/HIGH",
		"/user/avatar/3/High",
		"/user/avatar/3/SCALED",
		"/user/avatar/3/%48IGH",
		"/user/avatar/3%2Fhigh",
	}
	for _, path := range spellings {
		t.Run(path, func(t *testing.T) {
			check := func(via string, status int, header http.Header, body []byte) {
				t.Helper()
				msg := testenv.Message(t, body)
				if status != http.StatusNotFound || msg.Code != http.StatusNotFound {
					t.Errorf("%s: %d %s, want 404", via, status, body)
				}
				// Short-lived (the route's 404), or not cached at all (the mux's, a path of
				// no route): never a picture's lifetime.
				if cc := header.Get("Cache-Control"); cc != httpapi.CacheMissing && cc != httpapi.CachePrivate {
					t.Errorf("%s: a 404 with Cache-Control %q, want %q or %q", via, cc, httpapi.CacheMissing, httpapi.CachePrivate)
				}
			}
			// Not through testenv.Do: some spellings are no route of the OpenAPI
			// document at all, which that check reports.
			req := httptest.NewRequest(http.MethodGet, path, nil)
			if req.URL.EscapedPath() != path {
				t.Fatalf("the request's path is %q, not the spelling", req.URL.EscapedPath())
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			check("handler", rec.Code, rec.Header(), rec.Body.Bytes())

			ev := testenv.Event(t, "cdn/get-avatar-res.json")
			decoded, err := url.PathUnescape(path)
			if err != nil {
				t.Fatal(err)
			}
			ev.RawPath, ev.RequestContext.HTTP.Path = path, decoded
			resp, err := invokeRaw(h, ev)
			if err != nil {
				t.Fatal(err)
			}
			header := http.Header{}
			for k, v := range resp.Headers {
				header.Set(k, v)
			}
			check("Lambda", resp.StatusCode, header, []byte(resp.Body))
		})
	}
}

// TestTwoContainers: two warm cdn containers share the database and the bucket; the
// change call (the avatars service's notifier) reaches one of them. Once a picture is
// replaced or removed, the other never serves the old picture.
func TestTwoContainers(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	reached := w.handler(cdn.Deps{CacheBytes: 1 << 20})
	other := w.handler(cdn.Deps{CacheBytes: 1 << 20})
	srv := httptest.NewServer(reached)
	defer srv.Close()
	notifier, err := cdnnotify.NewHTTPNotifier(srv.URL, srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	uploads := avatars.New(avatars.Deps{Files: w.files, Store: w.db.DB, Notifier: notifier, FileService: true})
	id := w.jpegUser
	paths := []string{fmt.Sprintf("/user/avatar/%d/high", id), fmt.Sprintf("/user/avatar/%d", id), fmt.Sprintf("/user/avatar/%d/scaled", id)}
	served := func(h http.Handler) map[string]string {
		got := map[string]string{}
		for _, p := range paths {
			rec := get(t, h, p)
			if rec.Code != http.StatusOK {
				t.Fatalf("%s: %d %s", p, rec.Code, rec.Body)
			}
			got[p] = rec.Body.String()
		}
		return got
	}
	steps := []struct {
		name   string
		change func() error
		want   func(path string) []byte // nil: the picture the reached container serves
	}{
		{"replaced", func() error {
			return uploads.UpdateUserImage(ctx, id, avatartest.Base64(avatartest.PNG(t, 300, 300, true)))
		}, nil},
		{"replaced again", func() error {
			return uploads.UpdateUserImage(ctx, id, avatartest.Base64(avatartest.JPEG(t, 700, 700)))
		}, nil},
		{"removed", func() error { return uploads.DeleteUserImage(ctx, id) }, func(path string) []byte {
			res := imageset.Scaled
			if strings.HasSuffix(path, "/high") {
				res = imageset.High
			}
			return images.DefaultAvatar(res).Data
		}},
	}
	for _, s := range steps {
		// Both containers are warm with the current picture.
		old := served(other)
		if now := served(reached); fmt.Sprint(now) != fmt.Sprint(old) {
			t.Fatalf("%s: the containers disagree before the change", s.name)
		}
		if err := s.change(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		fresh := served(reached)
		for range 3 {
			for p, body := range served(other) {
				if body == old[p] {
					t.Errorf("%s: %s: the other container served the old picture", s.name, p)
				}
				want := fresh[p]
				if s.want != nil {
					want = string(s.want(p))
				}
				if body != want {
					t.Errorf("%s: %s: the other container served %d bytes that are not the current picture", s.name, p, len(body))
				}
			}
		}
	}
}

// s3Wire sits in front of the bucket (gofakes3) on the cdn's S3 client. Before the
// first GetObject it runs race, a change that commits between the reference read and
// the object read; with denyMissing, it answers a missing key as S3 does to a reader
// without s3:ListBucket: 403 AccessDenied in S3's error document.
type s3Wire struct {
	base        http.RoundTripper
	denyMissing bool
	mu          sync.Mutex
	race        func()
}

func (s *s3Wire) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet {
		s.mu.Lock()
		race := s.race
		s.race = nil
		s.mu.Unlock()
		if race != nil {
			race()
		}
	}
	resp, err := s.base.RoundTrip(req)
	if err != nil || !s.denyMissing || req.Method != http.MethodGet || resp.StatusCode != http.StatusNotFound {
		return resp, err
	}
	resp.Body.Close()
	body := `<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
		`<Error><Code>AccessDenied</Code><Message>Access Denied</Message><RequestId>4442587FB7D0A2F9</RequestId><HostId>Uuag1LuByRx9e6j5Onimru9pO4ZVKnJ2Qz7/C1NPcfTWAtRPfTaOFg==</HostId></Error>`
	return &http.Response{
		Status: "403 Forbidden", StatusCode: http.StatusForbidden,
		Proto: resp.Proto, ProtoMajor: resp.ProtoMajor, ProtoMinor: resp.ProtoMinor,
		Header:        http.Header{"Content-Type": {"application/xml"}, "X-Amz-Request-Id": {"4442587FB7D0A2F9"}},
		Body:          io.NopCloser(strings.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req,
	}, nil
}

// TestObjectRace: a change between the reference read and the object read ends in the
// new picture or the default one, never a 500, whether S3 says NoSuchKey or, to a cdn
// that may not list the bucket, AccessDenied (logged as a warning).
func TestObjectRace(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	id := w.jpegUser
	path := fmt.Sprintf("/user/avatar/%d/high", id)
	newPNG := avatartest.Base64(avatartest.PNG(t, 300, 300, true))
	tests := []struct {
		name        string
		denyMissing bool
		race        func()
		wantType    string
		wantSide    int
		wantDefault bool
		wantLog     string
	}{
		{"replaced, NoSuchKey", false, func() { w.upload(t, id, newPNG) }, images.TypePNG, 300, false, `level=INFO msg="profile image object missing`},
		{"replaced, AccessDenied", true, func() { w.upload(t, id, newPNG) }, images.TypePNG, 300, false, `level=WARN msg="profile image object missing`},
		{"removed, NoSuchKey", false, func() {
			if err := w.uploads.DeleteUserImage(ctx, id); err != nil {
				t.Error(err)
			}
		}, images.TypePNG, 512, true, `level=INFO msg="profile image object missing`},
		{"removed, AccessDenied", true, func() {
			if err := w.uploads.DeleteUserImage(ctx, id); err != nil {
				t.Error(err)
			}
		}, images.TypePNG, 512, true, `level=WARN msg="profile image object missing`},
		{"objects gone, reference stands, AccessDenied", true, func() {
			ref := w.db.Text(t, `SELECT profile_image FROM users WHERE id = $1`, id)
			keys, err := w.files.List(ctx, ref[:strings.LastIndexByte(ref, '.')])
			if err != nil || len(keys) != 2 {
				t.Errorf("objects of %s: %v %v", ref, keys, err)
			}
			if err := w.files.Delete(ctx, keys...); err != nil {
				t.Error(err)
			}
		}, images.TypePNG, 512, true, `level=ERROR msg="profile image objects are missing, serving the default image"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w.upload(t, id, avatartest.Base64(avatartest.JPEG(t, 900, 600)))
			wire := &s3Wire{base: http.DefaultTransport, denyMissing: tc.denyMissing, race: tc.race}
			var logs bytes.Buffer
			h := httpapi.Wrap(httpapi.NewMux(cdn.Routes(cdn.Deps{Users: w.db.DB, Files: w.store(t, wire), CacheBytes: 1 << 20})),
				httpapi.Options{Log: slog.New(slog.NewTextHandler(&logs, nil))})
			rec := get(t, h, path)
			checkImage(t, rec, tc.wantType, tc.wantSide)
			isDefault := bytes.Equal(rec.Body.Bytes(), images.DefaultAvatar(imageset.High).Data)
			if isDefault != tc.wantDefault {
				t.Errorf("served the default image: %v, want %v", isDefault, tc.wantDefault)
			}
			if wire.race != nil {
				t.Error("the race never ran: no object was read")
			}
			if !strings.Contains(logs.String(), tc.wantLog) {
				t.Errorf("logs lack %q:\n%s", tc.wantLog, logs.String())
			}
		})
	}
}

// BenchmarkAvatar is the cost of one request for a hot avatar through the handler,
// the image from the in-memory cache: with the reference read reused (RefMaxAge, the
// default) and read by a query of its own on every request; and that query alone.
func BenchmarkAvatar(b *testing.B) {
	w := newWorld(b)
	for _, mode := range []struct {
		name   string
		maxAge time.Duration
	}{{"reused", 0}, {"read-per-request", -1}} {
		h := w.handler(cdn.Deps{CacheBytes: 1 << 20, RefMaxAge: mode.maxAge})
		for _, res := range []string{"scaled", "high"} {
			req := httptest.NewRequest(http.MethodGet, fmt.Sprintf("/user/avatar/%d/%s", w.jpegUser, res), nil)
			b.Run(mode.name+"/"+res, func(b *testing.B) {
				for b.Loop() {
					rec := httptest.NewRecorder()
					h.ServeHTTP(rec, req)
					if rec.Code != http.StatusOK {
						b.Fatalf("%d", rec.Code)
					}
				}
			})
		}
	}
	b.Run("query", func(b *testing.B) {
		ctx := context.Background()
		for b.Loop() {
			if _, err := w.db.UserImage(ctx, w.jpegUser); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// invokeRaw runs ev through the Lambda entry without the OpenAPI check (see
// TestSpellings).
func invokeRaw(h http.Handler, ev events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	raw, err := json.Marshal(ev)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	return lambdahttp.Invoke(context.Background(), h, raw)
}
