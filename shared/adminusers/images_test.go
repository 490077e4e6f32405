package adminusers_test

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
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/mediacatalog/service/infra/demo"
	"github.com/mediacatalog/service/infra/testenv"
	"github.com/mediacatalog/service/shared/adminusers"
	"github.com/mediacatalog/service/shared/auth"
	"github.com/mediacatalog/service/shared/avatars"
	"github.com/mediacatalog/service/shared/avatars/avatartest"
	"github.com/mediacatalog/service/shared/cdn"
	"github.com/mediacatalog/service/shared/cdnnotify"
	"github.com/mediacatalog/service/shared/config"
	"github.com/mediacatalog/service/shared/httpapi"
	"github.com/mediacatalog/service/shared/images"
	"github.com/mediacatalog/service/shared/imageset"
	"github.com/mediacatalog/service/shared/s3store"
)

var _ adminusers.Images = (*avatars.Service)(nil)

// Upload limits of the image tests: small, so that the refused inputs stay cheap.
const (
	imgMaxBytes  = 256 << 10
	imgMaxPixels = 1_000_000
)

// imgServer is the admin-users group with the real media side: images in a bucket of
// the test's own, the cdn group behind a real HTTP server, told about changes by the
// http notifier, over a database with the demo data.
type imgServer struct {
	h     http.Handler
	db    *testenv.DB
	cfg   config.Config
	files *s3store.Store
	svc   *avatars.Service
	cdn   *httptest.Server
	// admin holds every permission, editor edit-users, member none.
	admin, editor, member *http.Cookie
}

type imgOptions struct {
	notFileService bool
	files          *s3store.Store // default: a fresh bucket
	db             *testenv.DB    // default: a fresh database with the demo data
	limits         *images.Limits // default: imgMaxBytes, imgMaxPixels
}

func newImgServer(t *testing.T, o imgOptions) *imgServer {
	t.Helper()
	s := &imgServer{db: o.db, files: o.files, cfg: testenv.AuthConfig(t)}
	if s.db == nil {
		s.db = testenv.NewDemoDB(t)
	}
	if s.files == nil {
		s.files = testenv.NewS3Store(t)
	}
	quiet := httpapi.Options{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), CORSOrigins: s.cfg.CORSOrigins}
	s.cdn = httptest.NewServer(httpapi.Wrap(httpapi.NewMux(cdn.Routes(cdn.Deps{
		Users: s.db.DB, Files: s.files, CacheBytes: 1 << 20,
	})), quiet))
	t.Cleanup(s.cdn.Close)
	notifier, err := cdnnotify.NewHTTPNotifier(s.cdn.URL, s.cdn.Client())
	if err != nil {
		t.Fatal(err)
	}
	limits := images.Limits{MaxBytes: imgMaxBytes, MaxPixels: imgMaxPixels}
	if o.limits != nil {
		limits = *o.limits
	}
	s.svc = avatars.New(avatars.Deps{
		Files: s.files, Store: s.db.DB, Notifier: notifier,
		Limits:      limits,
		FileService: !o.notFileService,
	})
	sessions := testenv.NewSessions(t, s.db, s.cfg)
	routes := adminusers.Routes(adminusers.Deps{
		Store: s.db.DB, Auth: sessions, LockTTL: s.cfg.LockTTL, Images: s.svc,
	})
	s.h = httpapi.Wrap(httpapi.NewMux(routes), quiet)
	s.admin = testenv.SessionCookie(t, sessions, demo.AdminUserID)
	s.editor = testenv.SessionCookie(t, sessions, demo.EditorUserID)
	s.member = testenv.SessionCookie(t, sessions, demo.MemberUserID)
	return s
}

// call serves a request through the group (checked against the OpenAPI document).
func (s *imgServer) call(t *testing.T, method, target string, body any, c *http.Cookie) (int, httpapi.Response) {
	t.Helper()
	var cookies []*http.Cookie
	if c != nil {
		cookies = append(cookies, c)
	}
	rec := testenv.Do(t, s.h, testenv.Request(method, target, body, cookies...))
	var resp httpapi.Response
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil || resp.Code != rec.Code {
		t.Fatalf("%s %s: %d %q is not a Response Model", method, target, rec.Code, rec.Body)
	}
	return rec.Code, resp
}

func (s *imgServer) upload(t *testing.T, id int64, img string) {
	t.Helper()
	if code, resp := s.call(t, http.MethodPost, fmt.Sprintf("/admin-users/update-image/%d", id), map[string]any{"image": img}, s.editor); code != 200 {
		t.Fatalf("upload: %d %s", code, resp.Data)
	}
}

// ref is the user's profile_image column ("" for NULL).
func (s *imgServer) ref(t *testing.T, id int64) string {
	t.Helper()
	var ref *string
	if err := s.db.Pool.QueryRow(context.Background(), `SELECT profile_image FROM users WHERE id = $1`, id).Scan(&ref); err != nil {
		t.Fatal(err)
	}
	if ref == nil {
		return ""
	}
	return *ref
}

func (s *imgServer) objects(t *testing.T) []string {
	t.Helper()
	keys, err := s.files.List(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// avatar fetches an image from the cdn and returns its type, side and ETag.
func (s *imgServer) avatar(t *testing.T, path string, header ...string) (status int, contentType string, side int, etag string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.cdn.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := s.cdn.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, "", 0, resp.Header.Get("ETag")
	}
	sniffed, _ := images.Sniff(body)
	if got := resp.Header.Get("Content-Type"); got != sniffed {
		t.Errorf("GET %s: Content-Type %q, bytes are %q", path, got, sniffed)
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(body))
	if err != nil || cfg.Width != cfg.Height {
		t.Fatalf("GET %s: %dx%d, %v", path, cfg.Width, cfg.Height, err)
	}
	return resp.StatusCode, sniffed, cfg.Width, resp.Header.Get("ETag")
}

// TestImageCycle: upload through update-image, both sizes served by the cdn, 304 with
// the ETag, a second upload replacing the first, delete, the default image again.
func TestImageCycle(t *testing.T) {
	s := newImgServer(t, imgOptions{})
	const id = demo.MemberUserID
	high, scaled := fmt.Sprintf("/user/avatar/%d/high", id), fmt.Sprintf("/user/avatar/%d", id)
	check := func(step, path, wantType string, wantSide int) string {
		t.Helper()
		status, ct, side, etag := s.avatar(t, path)
		if status != 200 || ct != wantType || side != wantSide {
			t.Errorf("%s: GET %s = %d %s %dpx, want %s %dpx", step, path, status, ct, side, wantType, wantSide)
		}
		return etag
	}
	defaultHigh := check("before", high, images.TypePNG, images.HighSize)
	check("before", scaled, images.TypePNG, images.ScaledSize)

	code, resp := s.call(t, http.MethodPost, fmt.Sprintf("/admin-users/update-image/%d", id),
		map[string]any{"image": avatartest.DataURL("image/jpeg", avatartest.JPEG(t, 1024, 768))}, s.editor)
	if code != 200 || resp.Data != "Profile image updated successfully" {
		t.Fatalf("update: %d %s", code, resp.Data)
	}
	first := s.ref(t, id)
	set, err := imageset.ParseRef(first)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.objects(t); !slices.Equal(got, set.Keys()) {
		t.Errorf("objects %v, want %v", got, set.Keys())
	}
	// The notification reached the cdn: it serves the new image at once.
	etag := check("after upload", high, images.TypeJPEG, images.HighSize)
	check("after upload", scaled, images.TypeJPEG, images.ScaledSize)
	if etag == defaultHigh {
		t.Error("the new image has the default image's ETag")
	}
	if status, _, _, _ := s.avatar(t, high, "If-None-Match", etag); status != http.StatusNotModified {
		t.Errorf("If-None-Match with the ETag: %d, want 304", status)
	}

	// A transparent picture replaces it: stored as PNG, the first one's objects go.
	s.upload(t, id, avatartest.Base64(avatartest.PNG(t, 200, 150, true)))
	second := s.ref(t, id)
	set, err = imageset.ParseRef(second)
	if err != nil || second == first || set.Ext != "png" {
		t.Fatalf("second upload stored %q (%v)", second, err)
	}
	if got := s.objects(t); !slices.Equal(got, set.Keys()) {
		t.Errorf("objects %v, want only %v", got, set.Keys())
	}
	check("after the second upload", high, images.TypePNG, 150)
	if status, _, _, _ := s.avatar(t, high, "If-None-Match", etag); status != http.StatusOK {
		t.Errorf("the old ETag: %d, want 200", status)
	}

	code, resp = s.call(t, http.MethodDelete, fmt.Sprintf("/admin-users/delete-image/%d", id), nil, s.editor)
	if code != 200 || resp.Data != "Profile image deleted successfully" {
		t.Fatalf("delete: %d %s", code, resp.Data)
	}
	if ref, objects := s.ref(t, id), s.objects(t); ref != "" || len(objects) != 0 {
		t.Errorf("after delete: ref %q, objects %v", ref, objects)
	}
	if check("after delete", high, images.TypePNG, images.HighSize) != defaultHigh {
		t.Error("not the default image after the delete")
	}

	code, resp = s.call(t, http.MethodDelete, fmt.Sprintf("/admin-users/delete-image/%d", id), nil, s.editor)
	if code != 500 || resp.Data != "Internal server error" {
		t.Errorf("delete without an image: %d %s, want 500 Internal server error", code, resp.Data)
	}
}

func TestImageErrors(t *testing.T) {
	s := newImgServer(t, imgOptions{})
	good := map[string]any{"image": avatartest.DataURL("image/png", avatartest.PNG(t, 64, 64, false))}
	tests := []struct {
		name    string
		method  string
		target  string
		body    any
		cookie  *http.Cookie
		status  int
		message string
	}{
		{"unknown user", http.MethodPost, "/admin-users/update-image/999999", good, s.editor, 404, "User not found"},
		{"unknown user, delete", http.MethodDelete, "/admin-users/delete-image/999999", nil, s.editor, 404, "User not found"},
		{"id not a number", http.MethodPost, "/admin-users/update-image/abc", good, s.editor, 400, "Required parameters missing"},
		{"id not a number, delete", http.MethodDelete, "/admin-users/delete-image/abc", nil, s.editor, 400, "Required parameters missing"},
		{"id zero", http.MethodPost, "/admin-users/update-image/0", good, s.editor, 400, "Required parameters missing"},
		{"no cookie", http.MethodPost, "/admin-users/update-image/3", good, nil, 401, "Unauthorized"},
		{"no permission", http.MethodDelete, "/admin-users/delete-image/3", nil, s.member, 403, "Forbidden"},
	}
	for _, u := range avatartest.BadUploads(t, imgMaxBytes, imgMaxPixels, s.svc.MaxBodyBytes()) {
		tests = append(tests, struct {
			name    string
			method  string
			target  string
			body    any
			cookie  *http.Cookie
			status  int
			message string
		}{"bad upload: " + u.Name, http.MethodPost, "/admin-users/update-image/3", u.Body, s.editor, 400, ""})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, resp := s.call(t, tc.method, tc.target, tc.body, tc.cookie)
			if code != tc.status || (tc.message != "" && resp.Data != tc.message) {
				t.Errorf("%d %q, want %d %q", code, resp.Data, tc.status, tc.message)
			}
			if objects := s.objects(t); len(objects) != 0 {
				t.Errorf("stored %v", objects)
			}
			if ref := s.ref(t, demo.MemberUserID); ref != "" {
				t.Errorf("the user points at %q", ref)
			}
		})
	}
}

// A 7000x7000 16-bit PNG (400 KB, 392 MB decoded) is refused under the default
// limits with 400 and its own message, from its header: the handler allocates about
// the upload, not the pixels.
func TestImageDecodedSizeRefused(t *testing.T) {
	s := newImgServer(t, imgOptions{limits: &images.Limits{}})
	body := map[string]any{"image": avatartest.DataURL("image/png", avatartest.Deep(t, 7000, 7000))}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	code, resp := s.call(t, http.MethodPost, "/admin-users/update-image/3", body, s.editor)
	runtime.ReadMemStats(&after)
	if code != 400 || resp.Data != images.MsgImageTooDeep {
		t.Errorf("%d %q, want 400 %q", code, resp.Data, images.MsgImageTooDeep)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 64<<20 {
		t.Errorf("refusing allocated %d MB: the pixels were decoded", got>>20)
	}
	if objects := s.objects(t); len(objects) != 0 {
		t.Errorf("stored %v", objects)
	}
}

// An instance that is not a file service answers 503, after authentication and
// authorization, and reads no body.
func TestImageNotFileService(t *testing.T) {
	s := newImgServer(t, imgOptions{notFileService: true})
	good := map[string]any{"image": avatartest.Base64(avatartest.PNG(t, 64, 64, false))}
	for _, tc := range []struct {
		method, target string
		body           any
		cookie         *http.Cookie
		status         int
		message        string
	}{
		{http.MethodPost, "/admin-users/update-image/3", good, s.editor, 503, "This service is not handling file uploads."},
		{http.MethodPost, "/admin-users/update-image/3", "not even JSON", s.editor, 503, "This service is not handling file uploads."},
		{http.MethodDelete, "/admin-users/delete-image/3", nil, s.editor, 503, "This service is not handling file uploads."},
		{http.MethodDelete, "/admin-users/delete-image/999999", nil, s.admin, 503, "This service is not handling file uploads."},
		{http.MethodPost, "/admin-users/update-image/3", good, nil, 401, "Unauthorized"},
		{http.MethodDelete, "/admin-users/delete-image/3", nil, s.member, 403, "Forbidden"},
	} {
		code, resp := s.call(t, tc.method, tc.target, tc.body, tc.cookie)
		if code != tc.status || resp.Data != tc.message {
			t.Errorf("%s %s: %d %q, want %d %q", tc.method, tc.target, code, resp.Data, tc.status, tc.message)
		}
	}
	if objects := s.objects(t); len(objects) != 0 {
		t.Errorf("stored %v", objects)
	}
}

// With S3 unreachable an upload is a 500 Response Model and the user keeps pointing
// at the image they had; a delete still clears the reference (the objects stay as
// orphans, logged), so nothing points at a missing object.
func TestImageS3Unreachable(t *testing.T) {
	good := newImgServer(t, imgOptions{})
	good.upload(t, demo.MemberUserID, avatartest.Base64(avatartest.JPEG(t, 300, 300)))
	before, objects := good.ref(t, demo.MemberUserID), good.objects(t)

	broken := newImgServer(t, imgOptions{db: good.db, files: testenv.UnreachableS3(t)})
	code, resp := broken.call(t, http.MethodPost, "/admin-users/update-image/3",
		map[string]any{"image": avatartest.Base64(avatartest.PNG(t, 100, 100, false))}, broken.editor)
	if code != 500 || resp.Data != "Internal server error" {
		t.Errorf("upload: %d %q, want 500 Internal server error", code, resp.Data)
	}
	if after := good.ref(t, demo.MemberUserID); after != before {
		t.Errorf("the user moved from %q to %q", before, after)
	}
	if got := good.objects(t); !slices.Equal(got, objects) {
		t.Errorf("objects %v, want %v", got, objects)
	}

	code, resp = broken.call(t, http.MethodDelete, "/admin-users/delete-image/3", nil, broken.editor)
	if code != 200 || resp.Data != "Profile image deleted successfully" {
		t.Errorf("delete: %d %q", code, resp.Data)
	}
	if ref := good.ref(t, demo.MemberUserID); ref != "" {
		t.Errorf("the user still points at %q", ref)
	}
}

// Deleting a user removes their image's objects once the deletion committed.
func TestDeleteUserRemovesImage(t *testing.T) {
	s := newImgServer(t, imgOptions{})
	s.upload(t, demo.MemberUserID, avatartest.Base64(avatartest.JPEG(t, 200, 200)))
	s.upload(t, demo.EditorUserID, avatartest.Base64(avatartest.JPEG(t, 200, 200)))
	if _, _, _, etag := s.avatar(t, "/user/avatar/3"); etag == "" {
		t.Fatal("no image served")
	}
	code, resp := s.call(t, http.MethodDelete, "/admin-users/delete/3", nil, s.admin)
	if code != 200 {
		t.Fatalf("delete: %d %s", code, resp.Data)
	}
	for _, k := range s.objects(t) {
		if strings.HasPrefix(k, "users/3/") {
			t.Errorf("object %s of the deleted user stays", k)
		}
	}
	if n := len(s.objects(t)); n != 2 {
		t.Errorf("%d objects, want the editor's 2", n)
	}
	// The cdn was told: the deleted user is gone there too.
	if status, _, _, _ := s.avatar(t, "/user/avatar/3"); status != http.StatusNotFound {
		t.Errorf("cdn answers %d for the deleted user, want 404", status)
	}
}

func TestImagePermissionMatrix(t *testing.T) {
	s := newImgServer(t, imgOptions{})
	s.upload(t, demo.MemberUserID, avatartest.Base64(avatartest.JPEG(t, 64, 64)))
	rows := testenv.AuthMatrix{
		Handler: s.h,
		DB:      s.db,
		Config:  s.cfg,
		Routes: []testenv.AuthRoute{
			{Method: "POST", Path: "/admin-users/update-image/3", Body: map[string]any{"image": avatartest.Base64(avatartest.PNG(t, 64, 64, false))},
				Permission: auth.PermEditUsers, Message: "Profile image updated successfully"},
			{Method: "DELETE", Path: "/admin-users/delete-image/3", Permission: auth.PermEditUsers,
				Message: "Profile image deleted successfully"},
		},
	}.Run(t)
	if rows != 2*8 {
		t.Errorf("%d matrix rows, want 16", rows)
	}
}

// TestImageEvents runs the events of the two image routes through the Lambda entry.
func TestImageEvents(t *testing.T) {
	s := newImgServer(t, imgOptions{})
	for _, tc := range []struct {
		event   string
		message string
		check   func(t *testing.T)
	}{
		{"update-image.json", "Profile image updated successfully", func(t *testing.T) {
			set, err := imageset.ParseRef(s.ref(t, demo.MemberUserID))
			if err != nil || !slices.Equal(s.objects(t), set.Keys()) {
				t.Errorf("stored %v for %+v (%v)", s.objects(t), set, err)
			}
		}},
		{"delete-image.json", "Profile image deleted successfully", func(t *testing.T) {
			if s.ref(t, demo.MemberUserID) != "" || len(s.objects(t)) != 0 {
				t.Errorf("left %q and %v", s.ref(t, demo.MemberUserID), s.objects(t))
			}
		}},
	} {
		t.Run(tc.event, func(t *testing.T) {
			resp := testenv.Invoke(t, s.h, testenv.AuthEvent(t, "admin-users/"+tc.event, s.editor))
			want := fmt.Sprintf(`{"data":%q,"code":200}`, tc.message)
			if resp.StatusCode != 200 || strings.TrimSpace(resp.Body) != want {
				t.Fatalf("%d %s, want %s", resp.StatusCode, resp.Body, want)
			}
			tc.check(t)
			resp = testenv.Invoke(t, s.h, testenv.Event(t, "admin-users/"+tc.event))
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("placeholder cookie: %d, want 401", resp.StatusCode)
			}
		})
	}
}
