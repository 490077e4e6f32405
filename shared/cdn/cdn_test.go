package cdn_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	_ "image/jpeg"
	_ "image/png"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mediacatalog/service/infra/local/demo"
	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/avatars"
	"github.com/mediacatalog/service/shared/avatars/avatartest"
	"github.com/mediacatalog/service/shared/awsconfig"
	"github.com/mediacatalog/service/shared/catalog"
	"github.com/mediacatalog/service/shared/cdn"
	"github.com/mediacatalog/service/shared/config"
	"github.com/mediacatalog/service/shared/httpapi"
	"github.com/mediacatalog/service/shared/images"
	"github.com/mediacatalog/service/shared/imageset"
	"github.com/mediacatalog/service/shared/postgres"
	"github.com/mediacatalog/service/shared/s3store"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// countingFiles is the real bucket, counting the reads that reach it.
type countingFiles struct {
	*s3store.Store
	gets atomic.Int64
}

func (f *countingFiles) Get(ctx context.Context, key string) (catalog.StoredFile, error) {
	f.gets.Add(1)
	return f.Store.Get(ctx, key)
}

// world is a database with the demo data and profile images in a bucket of the
// test's own: user jpegUser has an opaque picture (stored as JPEG), pngUser one with
// transparency (stored as PNG); the member has none.
type world struct {
	db                *testenv.DB
	counter           *postgres.QueryCounter
	s3                config.Config // the bucket of the test's own
	files             *countingFiles
	uploads           *avatars.Service
	jpegUser, pngUser int64
}

func newWorld(t testing.TB) *world {
	t.Helper()
	counter := &postgres.QueryCounter{}
	db := testenv.NewDemoDB(t, postgres.WithTracer(counter))
	w := &world{db: db, counter: counter, s3: testenv.S3Config(t), jpegUser: demo.AdminUserID, pngUser: demo.EditorUserID}
	w.files = &countingFiles{Store: w.store(t, nil)}
	w.uploads = avatars.New(avatars.Deps{Files: w.files, Store: db.DB, FileService: true})
	w.upload(t, w.jpegUser, avatartest.DataURL("image/jpeg", avatartest.JPEG(t, 900, 600)))
	w.upload(t, w.pngUser, avatartest.Base64(avatartest.PNG(t, 300, 300, true)))
	return w
}

// store is a client of the world's bucket whose requests go through transport (the
// default transport when nil).
func (w *world) store(t testing.TB, transport http.RoundTripper) *s3store.Store {
	t.Helper()
	awsCfg := awsconfig.Load(w.s3)
	if transport != nil {
		awsCfg.HTTPClient = &http.Client{Transport: transport}
	}
	store, err := s3store.New(awsCfg, s3store.Options{Bucket: w.s3.Bucket, Endpoint: w.s3.S3Endpoint})
	if err != nil {
		t.Fatal(err)
	}
	return store
}

func (w *world) upload(t testing.TB, id int64, img string) {
	t.Helper()
	if err := w.uploads.UpdateUserImage(context.Background(), id, img); err != nil {
		t.Fatal(err)
	}
}

// handler is the cdn group over the world, wrapped as the function serves it.
func (w *world) handler(d cdn.Deps) http.Handler {
	d.Users, d.Files = w.db.DB, w.files
	return httpapi.Wrap(httpapi.NewMux(cdn.Routes(d)), httpapi.Options{Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
}

// costs returns the database queries and S3 reads since the last call.
func (w *world) costs() (queries, gets int64) {
	return w.counter.Reset(), w.files.gets.Swap(0)
}

func get(t *testing.T, h http.Handler, path string, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := testenv.Request(http.MethodGet, path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return testenv.Do(t, h, req)
}

// checkImage asserts a served image: its type is what its bytes are, its size, and
// the caching headers.
func checkImage(t *testing.T, rec *httptest.ResponseRecorder, wantType string, wantSide int) {
	t.Helper()
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	body := rec.Body.Bytes()
	sniffed, ok := images.Sniff(body)
	if !ok || sniffed != wantType || rec.Header().Get("Content-Type") != sniffed {
		t.Errorf("Content-Type %q, bytes are %q, want %q", rec.Header().Get("Content-Type"), sniffed, wantType)
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	if cfg.Width != wantSide || cfg.Height != wantSide {
		t.Errorf("%dx%d, want %dx%d", cfg.Width, cfg.Height, wantSide, wantSide)
	}
	if got := rec.Header().Get("Cache-Control"); got != httpapi.CacheAvatar {
		t.Errorf("Cache-Control %q", got)
	}
	if etag := rec.Header().Get("ETag"); len(etag) < 3 || etag[0] != '"' || etag[len(etag)-1] != '"' || strings.HasPrefix(etag, "W/") {
		t.Errorf("ETag %q is not a strong tag", etag)
	}
	if got := rec.Header().Get("Content-Length"); got != strconv.Itoa(len(body)) {
		t.Errorf("Content-Length %s, body %d bytes", got, len(body))
	}
}

func TestServe(t *testing.T) {
	w := newWorld(t)
	h := w.handler(cdn.Deps{CacheBytes: 1 << 20})
	tests := []struct {
		path     string
		wantType string
		wantSide int
	}{
		{fmt.Sprintf("/user/avatar/%d/high", w.jpegUser), images.TypeJPEG, 512},
		{fmt.Sprintf("/user/avatar/%d/scaled", w.jpegUser), images.TypeJPEG, 128},
		{fmt.Sprintf("/user/avatar/%d", w.jpegUser), images.TypeJPEG, 128},
		{fmt.Sprintf("/user/avatar/%d/high", w.pngUser), images.TypePNG, 300}, // never upscaled
		{fmt.Sprintf("/user/avatar/%d", w.pngUser), images.TypePNG, 128},
		{fmt.Sprintf("/user/avatar/%d/high", demo.MemberUserID), images.TypePNG, 512}, // the default image
		{fmt.Sprintf("/user/avatar/%d", demo.MemberUserID), images.TypePNG, 128},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			checkImage(t, get(t, h, tc.path), tc.wantType, tc.wantSide)
		})
	}
	// The default image is the images package's.
	rec := get(t, h, fmt.Sprintf("/user/avatar/%d/high", demo.MemberUserID))
	if !bytes.Equal(rec.Body.Bytes(), images.DefaultAvatar(imageset.High).Data) {
		t.Error("a user without an image did not get the default image")
	}
	// Both sizes of one user are different images.
	high, scaled := get(t, h, fmt.Sprintf("/user/avatar/%d/high", w.jpegUser)), get(t, h, fmt.Sprintf("/user/avatar/%d", w.jpegUser))
	if high.Header().Get("ETag") == scaled.Header().Get("ETag") {
		t.Error("high and scaled share an ETag")
	}
}

func TestServeErrors(t *testing.T) {
	w := newWorld(t)
	h := w.handler(cdn.Deps{CacheBytes: 1 << 20})
	tests := []struct {
		path    string
		status  int
		message string
	}{
		{"/user/avatar/999999", 404, "User not found"},
		{"/user/avatar/999999/high", 404, "User not found"},
		{"/user/avatar/abc", 404, "User not found"},
		{"/user/avatar/-1/high", 404, "User not found"},
		{"/user/avatar/0", 404, "User not found"},
		{"/user/avatar/+1", 404, "User not found"},
		{"/user/avatar/01/high", 404, "User not found"},
		{"/user/avatar/%201", 404, "User not found"},
		{"/user/avatar/99999999999999999999999", 404, "User not found"},
		{"/user/avatar/1/medium", 400, "Required parameters missing"},
		{"/user/avatar/1/HIGH", 404, "User not found"}, // a spelling of high (TestSpellings)
		{"/user/avatar/abc/huge", 400, "Required parameters missing"},
		{"/user/avatar/%20", 400, "Required parameters missing"},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			rec := get(t, h, tc.path)
			want := fmt.Sprintf(`{"data":%q,"code":%d}`, tc.message, tc.status)
			if rec.Code != tc.status || strings.TrimSpace(rec.Body.String()) != want {
				t.Errorf("%d %s, want %d %s", rec.Code, rec.Body, tc.status, want)
			}
			// Short-lived, never an image's lifetime: what is created is found within a
			// minute, and no spelling of a URL keeps a picture.
			if rec.Header().Get("Cache-Control") != httpapi.CacheMissing {
				t.Errorf("an error's Cache-Control %q, want %q", rec.Header().Get("Cache-Control"), httpapi.CacheMissing)
			}
		})
	}
}

func TestConditional(t *testing.T) {
	w := newWorld(t)
	h := w.handler(cdn.Deps{CacheBytes: 1 << 20})
	for _, path := range []string{fmt.Sprintf("/user/avatar/%d/high", w.jpegUser), fmt.Sprintf("/user/avatar/%d", demo.MemberUserID)} {
		etag := get(t, h, path).Header().Get("ETag")
		tests := []struct {
			ifNoneMatch string
			status      int
		}{
			{etag, http.StatusNotModified},
			{"W/" + etag, http.StatusNotModified},
			{`"other", ` + etag, http.StatusNotModified},
			{"*", http.StatusNotModified},
			{`"other"`, http.StatusOK},
			{strings.Trim(etag, `"`), http.StatusOK}, // unquoted: not the tag
		}
		for _, tc := range tests {
			t.Run(path+" "+tc.ifNoneMatch, func(t *testing.T) {
				rec := get(t, h, path, "If-None-Match", tc.ifNoneMatch)
				if rec.Code != tc.status {
					t.Fatalf("status %d, want %d", rec.Code, tc.status)
				}
				if rec.Header().Get("ETag") != etag || rec.Header().Get("Cache-Control") == "" {
					t.Errorf("headers %v", rec.Header())
				}
				if tc.status == http.StatusNotModified && rec.Body.Len() != 0 {
					t.Errorf("304 with a %d-byte body", rec.Body.Len())
				}
			})
		}
	}
}

// TestRequestLines: an image answered (200, 304) writes no request line (API
// Gateway's access log records those requests); every error answer of the route still
// writes one.
func TestRequestLines(t *testing.T) {
	w := newWorld(t)
	var logs bytes.Buffer
	d := cdn.Deps{Users: w.db.DB, Files: w.files, CacheBytes: 1 << 20}
	h := httpapi.Wrap(httpapi.NewMux(cdn.Routes(d)), httpapi.Options{Log: slog.New(slog.NewJSONHandler(&logs, nil))})
	high := fmt.Sprintf("/user/avatar/%d/high", w.jpegUser)
	etag := get(t, h, high).Header().Get("ETag")
	tests := []struct {
		path, ifNoneMatch string
		status            int
		line              bool
	}{
		{high, "", http.StatusOK, false},
		{high, etag, http.StatusNotModified, false},
		{fmt.Sprintf("/user/avatar/%d", demo.MemberUserID), "", http.StatusOK, false}, // the default image
		{"/user/avatar/999999/high", "", http.StatusNotFound, true},
		{fmt.Sprintf("/user/avatar/%d/HIGH", w.jpegUser), "", http.StatusNotFound, true},
		{fmt.Sprintf("/user/avatar/%d/medium", w.jpegUser), "", http.StatusBadRequest, true},
	}
	for _, tc := range tests {
		t.Run(tc.path+" "+tc.ifNoneMatch, func(t *testing.T) {
			logs.Reset()
			rec := get(t, h, tc.path, "If-None-Match", tc.ifNoneMatch)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d", rec.Code, tc.status)
			}
			line := strings.Contains(logs.String(), `"msg":"request"`)
			if line != tc.line || (line && !strings.Contains(logs.String(), `"status":`+strconv.Itoa(tc.status))) {
				t.Errorf("request line %v, want %v: %s", line, tc.line, logs.String())
			}
		})
	}
}

// Range requests get the whole image, 200, as the OpenAPI document answers (no 206, no 416), and
// no answer offers ranges (Accept-Ranges).
func TestRangeIgnored(t *testing.T) {
	w := newWorld(t)
	h := w.handler(cdn.Deps{CacheBytes: 1 << 20})
	path := fmt.Sprintf("/user/avatar/%d/high", w.jpegUser)
	whole := get(t, h, path).Body.Len()
	for _, rng := range []string{"bytes=0-9", "bytes=999999999-", "nonsense"} {
		t.Run(rng, func(t *testing.T) {
			rec := get(t, h, path, "Range", rng)
			if rec.Code != http.StatusOK || rec.Body.Len() != whole || rec.Header().Get("Content-Range") != "" || rec.Header()["Accept-Ranges"] != nil {
				t.Errorf("status %d, %d bytes of %d, Content-Range %q, Accept-Ranges %q; want 200 and the whole image, no ranges offered",
					rec.Code, rec.Body.Len(), whole, rec.Header().Get("Content-Range"), rec.Header()["Accept-Ranges"])
			}
		})
	}
}

// TestCache: with no reuse of reference reads, every request reads the reference (one
// query); the image bytes of a reference are read from S3 once, and a change (a new
// reference) is served at once, change call or not.
func TestCache(t *testing.T) {
	w := newWorld(t)
	h := w.handler(cdn.Deps{CacheBytes: 1 << 20, RefMaxAge: -1})
	jpegHigh := fmt.Sprintf("/user/avatar/%d/high", w.jpegUser)
	jpegScaled := fmt.Sprintf("/user/avatar/%d", w.jpegUser)
	member := fmt.Sprintf("/user/avatar/%d", demo.MemberUserID)
	change := func(id int64) {
		t.Helper()
		if rec := testenv.Do(t, h, testenv.Request(http.MethodPost, fmt.Sprintf("/user/avatar/change/%d", id), nil)); rec.Code != 200 {
			t.Fatalf("change: %d %s", rec.Code, rec.Body)
		}
	}
	w.costs()
	steps := []struct {
		name           string
		do             func()
		queries, reads int64
	}{
		{"first request", func() { get(t, h, jpegHigh) }, 1, 1},
		{"hot avatar", func() { get(t, h, jpegHigh) }, 1, 0},
		{"hot avatar, conditional", func() { get(t, h, jpegHigh, "If-None-Match", `"x"`) }, 1, 0},
		{"other resolution", func() { get(t, h, jpegScaled) }, 1, 1},
		{"other resolution again", func() { get(t, h, jpegScaled) }, 1, 0},
		{"default image", func() { get(t, h, member) }, 1, 0},
		{"a change call alone drops nothing", func() { change(w.jpegUser); get(t, h, jpegHigh); get(t, h, jpegScaled) }, 2, 0},
		{"unknown users", func() { get(t, h, "/user/avatar/999999"); get(t, h, "/user/avatar/999999") }, 2, 0},
		{"an alternate spelling costs nothing", func() { get(t, h, "/user/avatar/01") }, 0, 0},
	}
	for _, s := range steps {
		s.do()
		if q, g := w.costs(); q != s.queries || g != s.reads {
			t.Errorf("%s: %d queries and %d S3 reads, want %d and %d", s.name, q, g, s.queries, s.reads)
		}
	}

	// A change reaches the next request at once, before any change call.
	w.upload(t, w.jpegUser, avatartest.Base64(avatartest.PNG(t, 200, 200, true)))
	w.costs()
	checkImage(t, get(t, h, jpegHigh), images.TypePNG, 200)
	if q, g := w.costs(); q != 1 || g != 1 {
		t.Errorf("the new picture: %d queries and %d S3 reads, want 1 and 1", q, g)
	}
}

func TestCacheBounds(t *testing.T) {
	w := newWorld(t)
	w.upload(t, demo.MemberUserID, avatartest.Base64(avatartest.JPEG(t, 800, 800)))
	a, b := fmt.Sprintf("/user/avatar/%d/high", w.jpegUser), fmt.Sprintf("/user/avatar/%d/high", demo.MemberUserID)
	sizeA, sizeB := get(t, w.handler(cdn.Deps{}), a).Body.Len(), get(t, w.handler(cdn.Deps{}), b).Body.Len()
	if min(sizeA, sizeB) < 4096 {
		t.Fatalf("test images too small: %d and %d bytes", sizeA, sizeB)
	}
	tests := []struct {
		name  string
		deps  cdn.Deps
		paths []string
		// S3 reads of each request
		want []int64
	}{
		{"no cache", cdn.Deps{RefMaxAge: -1}, []string{a, a}, []int64{1, 1}},
		{"room for one image: the least recently used goes", cdn.Deps{CacheBytes: int64(max(sizeA, sizeB) + 1024), RefMaxAge: -1},
			[]string{a, a, b, b, a}, []int64{1, 0, 1, 0, 1}},
		{"room for both", cdn.Deps{CacheBytes: int64(sizeA + sizeB + 4096), RefMaxAge: -1},
			[]string{a, b, a, b}, []int64{1, 1, 0, 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := w.handler(tc.deps)
			w.costs()
			for i, p := range tc.paths {
				get(t, h, p)
				if q, g := w.costs(); q != 1 || g != tc.want[i] {
					t.Errorf("request %d (%s): %d queries and %d S3 reads, want 1 and %d", i, p, q, g, tc.want[i])
				}
			}
		})
	}
}

// A reference whose objects are gone is served the default image, uncached, and
// logged; a reference that changed meanwhile is followed.
func TestMissingObjects(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	h := w.handler(cdn.Deps{CacheBytes: 1 << 20, RefMaxAge: -1})
	set, err := imageset.NewImageSet(imageset.Users, demo.MemberUserID, images.TypeJPEG, []byte("gone"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.db.SetUserImage(ctx, demo.MemberUserID, set.Ref()); err != nil {
		t.Fatal(err)
	}
	path := fmt.Sprintf("/user/avatar/%d/high", demo.MemberUserID)
	w.costs()
	for range 2 {
		rec := get(t, h, path)
		checkImage(t, rec, images.TypePNG, 512)
		if q, g := w.costs(); q != 2 || g != 1 {
			t.Errorf("%d queries and %d reads, want 2 (the reference read twice) and 1, uncached", q, g)
		}
	}
}

// TestRefReuse: within RefMaxAge a container reuses a user's reference read (both
// resolutions), but a missing object has the reference read again at once.
func TestRefReuse(t *testing.T) {
	w := newWorld(t)
	h := w.handler(cdn.Deps{CacheBytes: 1 << 20, RefMaxAge: time.Hour})
	high, scaled := fmt.Sprintf("/user/avatar/%d/high", w.jpegUser), fmt.Sprintf("/user/avatar/%d", w.jpegUser)
	gone := fmt.Sprintf("/user/avatar/%d/high", demo.MemberUserID)
	set, err := imageset.NewImageSet(imageset.Users, demo.MemberUserID, images.TypeJPEG, []byte("gone"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.db.SetUserImage(context.Background(), demo.MemberUserID, set.Ref()); err != nil {
		t.Fatal(err)
	}
	w.costs()
	steps := []struct {
		path           string
		queries, reads int64
	}{
		{high, 1, 1},
		{high, 0, 0},
		{scaled, 0, 1},
		{scaled, 0, 0},
		{gone, 2, 1}, // read, missing, read again: the same reference
		{gone, 1, 1}, // the reused reference, missing, read again
	}
	for i, s := range steps {
		checkImage(t, get(t, h, s.path), map[bool]string{true: images.TypePNG, false: images.TypeJPEG}[s.path == gone],
			map[bool]int{true: 128, false: 512}[s.path == scaled])
		if q, g := w.costs(); q != s.queries || g != s.reads {
			t.Errorf("step %d %s: %d queries and %d S3 reads, want %d and %d", i, s.path, q, g, s.queries, s.reads)
		}
	}
}

// TestChange: the public change route creates an invalidation only when the user's
// picture changed since the last one, for the exact URLs; a failed invalidation is
// retried, counted as a metric and left for the next call.
func TestChange(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	cf := testenv.NewCloudFront(t, "E2EXAMPLE12345")
	cfg, err := config.Load(func(k string) string {
		return map[string]string{"CLOUDFRONT_DISTRIBUTION_ID": cf.Dist, "AWS_ENDPOINT_URL_CLOUDFRONT": cf.URL}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	awsCfg := awsconfig.Load(cfg)
	inv, err := cdn.NewCloudFront(awsCfg, cdn.CloudFrontOptions{Distribution: cfg.CloudFrontDistID, Endpoint: cfg.CloudFrontEndpoint})
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	h := httpapi.Wrap(httpapi.NewMux(cdn.Routes(cdn.Deps{Users: w.db.DB, Files: w.files, Ledger: w.db.DB,
		Invalidator: inv, RetryDelay: time.Millisecond})), httpapi.Options{Log: slog.New(slog.NewJSONHandler(&logs, nil))})
	exact := func(id int64) []string {
		base := fmt.Sprintf("/user/avatar/%d", id)
		return []string{base, base + "/high", base + "/scaled"}
	}
	jpeg, png, member := w.jpegUser, w.pngUser, demo.MemberUserID
	tests := []struct {
		name      string
		before    func()
		id        string
		fail      bool
		status    int
		wantPaths []string // the one invalidation expected; nil: none
	}{
		{"a user with a picture, first call", nil, fmt.Sprint(jpeg), false, 200, exact(jpeg)},
		{"unchanged", nil, fmt.Sprint(jpeg), false, 200, nil},
		{"unchanged again", nil, fmt.Sprint(jpeg), false, 200, nil},
		{"a user who never had a picture", nil, fmt.Sprint(member), false, 200, nil},
		{"an unknown user", nil, "999999", false, 200, nil},
		{"a new picture", func() { w.upload(t, jpeg, avatartest.Base64(avatartest.PNG(t, 64, 64, true))) }, fmt.Sprint(jpeg), false, 200, exact(jpeg)},
		{"the new picture, unchanged", nil, fmt.Sprint(jpeg), false, 200, nil},
		{"the picture removed", func() {
			if err := w.uploads.DeleteUserImage(ctx, jpeg); err != nil {
				t.Fatal(err)
			}
		}, fmt.Sprint(jpeg), false, 200, exact(jpeg)},
		{"removed, unchanged", nil, fmt.Sprint(jpeg), false, 200, nil},
		{"CloudFront fails", func() { w.upload(t, png, avatartest.Base64(avatartest.PNG(t, 80, 80, true))) }, fmt.Sprint(png), true, 500, nil},
		{"the next call retries", nil, fmt.Sprint(png), false, 200, exact(png)},
		{"then nothing", nil, fmt.Sprint(png), false, 200, nil},
		{"not a number", nil, "abc", false, 400, nil},
		{"zero", nil, "0", false, 400, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.before != nil {
				tc.before()
			}
			cf.Reset(tc.fail)
			logs.Reset()
			rec := testenv.Do(t, h, testenv.Request(http.MethodPost, "/user/avatar/change/"+tc.id, nil))
			if rec.Code != tc.status {
				t.Fatalf("%d %s, want %d", rec.Code, rec.Body, tc.status)
			}
			batches, calls := cf.Invalidations()
			switch {
			case tc.wantPaths == nil && len(batches) != 0:
				t.Errorf("invalidated %v, want no invalidation", batches)
			case tc.wantPaths != nil && (len(batches) != 1 || strings.Join(batches[0], " ") != strings.Join(tc.wantPaths, " ")):
				t.Errorf("invalidated %v, want exactly one of %v", batches, tc.wantPaths)
			}
			failures := metricLines(t, logs.Bytes(), "InvalidationFailures")
			if tc.fail {
				if calls < 3 {
					t.Errorf("%d CreateInvalidation requests, want 3 attempts at least", calls)
				}
				if failures != 1 {
					t.Errorf("%d InvalidationFailures metric lines, want 1:\n%s", failures, logs.String())
				}
			} else if failures != 0 {
				t.Errorf("%d InvalidationFailures metric lines, want none", failures)
			}
		})
	}
	if _, err := cdn.NewCloudFront(awsCfg, cdn.CloudFrontOptions{}); err == nil {
		t.Error("a CloudFront invalidator without a distribution was made")
	}
}

// metricLines counts the log lines that are embedded-metric-format documents
// recording metric name (namespace MediaCatalog, dimension Function=cdn, value 1).
func metricLines(t *testing.T, logs []byte, name string) int {
	t.Helper()
	n := 0
	for _, line := range bytes.Split(bytes.TrimSpace(logs), []byte("\n")) {
		var doc struct {
			AWS struct {
				Timestamp         int64
				CloudWatchMetrics []struct {
					Namespace  string
					Dimensions [][]string
					Metrics    []struct{ Name, Unit string }
				}
			} `json:"_aws"`
			FunctionName string
		}
		if len(line) == 0 || json.Unmarshal(line, &doc) != nil || len(doc.AWS.CloudWatchMetrics) != 1 {
			continue
		}
		var value map[string]any
		_ = json.Unmarshal(line, &value)
		m := doc.AWS.CloudWatchMetrics[0]
		if m.Namespace == cdn.MetricsNamespace && len(m.Metrics) == 1 && m.Metrics[0].Name == name && m.Metrics[0].Unit == "Count" &&
			len(m.Dimensions) == 1 && strings.Join(m.Dimensions[0], ",") == cdn.MetricDimension && doc.FunctionName == "cdn" &&
			doc.AWS.Timestamp > 0 && value[name] == float64(1) {
			n++
		}
	}
	return n
}

// TestEvents runs each route's event from events/cdn through the Lambda entry: the
// image survives the adapter byte for byte (Base64 in the response).
func TestEvents(t *testing.T) {
	w := newWorld(t)
	h := w.handler(cdn.Deps{CacheBytes: 1 << 20})
	// The events name demo user 3, the member: give them a picture.
	w.upload(t, demo.MemberUserID, avatartest.Base64(avatartest.JPEG(t, 1024, 768)))
	tests := []struct {
		event string
		path  string // the same request through the handler
		side  int
	}{
		{"get-avatar-res.json", "/user/avatar/3/high", 512},
		{"get-avatar.json", "/user/avatar/3", 128},
	}
	for _, tc := range tests {
		t.Run(tc.event, func(t *testing.T) {
			direct := get(t, h, tc.path)
			checkImage(t, direct, images.TypeJPEG, tc.side)
			ev := testenv.Event(t, "cdn/"+tc.event)
			resp := testenv.Invoke(t, h, ev)
			body := testenv.ResponseBody(t, resp)
			if resp.StatusCode != 200 || !resp.IsBase64Encoded || !bytes.Equal(body, direct.Body.Bytes()) {
				t.Fatalf("status %d, base64 %v, %d bytes; want 200, base64, the %d bytes the handler serves",
					resp.StatusCode, resp.IsBase64Encoded, len(body), direct.Body.Len())
			}
			if resp.Headers["Content-Type"] != images.TypeJPEG || resp.Headers["Etag"]+resp.Headers["ETag"] != direct.Header().Get("ETag") {
				t.Errorf("headers %v", resp.Headers)
			}
			// A conditional request through the adapter.
			ev.Headers["if-none-match"] = direct.Header().Get("ETag")
			resp = testenv.Invoke(t, h, ev)
			if resp.StatusCode != http.StatusNotModified || resp.Body != "" {
				t.Errorf("conditional: status %d, body %q", resp.StatusCode, resp.Body)
			}
		})
	}
	t.Run("change-avatar.json", func(t *testing.T) {
		get(t, h, "/user/avatar/3")
		w.costs()
		resp := testenv.Invoke(t, h, testenv.Event(t, "cdn/change-avatar.json"))
		if resp.StatusCode != 200 || strings.TrimSpace(resp.Body) != `{"data":"Success","code":200}` {
			t.Fatalf("%d %s", resp.StatusCode, resp.Body)
		}
		get(t, h, "/user/avatar/3")
		if q, g := w.costs(); q != 1 || g != 0 {
			t.Errorf("after the change call: %d queries, %d reads; want the reference read and the unchanged picture from the cache", q, g)
		}
	})
}
