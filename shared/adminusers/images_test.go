package adminusers_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	_ "image/jpeg"
	_ "image/png"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/mediacatalog/service/infra/local/demo"
	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/adminusers"
	"github.com/mediacatalog/service/shared/auth"
	"github.com/mediacatalog/service/shared/avatars"
	"github.com/mediacatalog/service/shared/avatars/avatartest"
	"github.com/mediacatalog/service/shared/awsconfig"
	"github.com/mediacatalog/service/shared/cdn"
	"github.com/mediacatalog/service/shared/cdnnotify"
	"github.com/mediacatalog/service/shared/config"
	"github.com/mediacatalog/service/shared/httpapi"
	"github.com/mediacatalog/service/shared/images"
	"github.com/mediacatalog/service/shared/imageset"
)

var _ adminusers.Images = (*avatars.Service)(nil)

// userImages are the group's image routes, for the checks every image route pair
// passes (testenv.ImageRoutes).
var userImages = testenv.ImageRoutes{
	Group:  "admin-users",
	Update: "/admin-users/update-image/%d", Delete: "/admin-users/delete-image/%d",
	UpdateEvent: "update-image.json", DeleteEvent: "delete-image.json",
	Target:     demo.MemberUserID,
	Ref:        `SELECT profile_image FROM users WHERE id = $1`,
	Permission: auth.PermEditUsers,
	Updated:    "Profile image updated successfully", Deleted: "Profile image deleted successfully",
	NotFound: "User not found", UploadFailed: "Internal server error", DeleteFailed: "Internal server error",
	New: func(t *testing.T, o testenv.ImageOptions) *testenv.ImageGroup { return newImgServer(t, o).ImageGroup },
}

func TestImageRoutes(t *testing.T) { userImages.Run(t) }

// imgServer is the admin-users group with the real media side (testenv.ImageGroup) and
// the cdn group behind a real HTTP server, told about changes by the http notifier,
// which invalidates a CloudFront stand-in.
type imgServer struct {
	*testenv.ImageGroup
	cdn *httptest.Server
	cf  *testenv.CloudFront
}

func newImgServer(t *testing.T, o testenv.ImageOptions) *imgServer {
	t.Helper()
	if o.DB == nil {
		o.DB = testenv.NewDemoDB(t)
	}
	if o.Files == nil {
		o.Files = testenv.NewS3Store(t)
	}
	s := &imgServer{cf: testenv.NewCloudFront(t, "E2EXAMPLE12345")}
	inv, err := cdn.NewCloudFront(awsconfig.Load(config.Config{AWSRegion: "us-east-1", CloudFrontEndpoint: s.cf.URL}),
		cdn.CloudFrontOptions{Distribution: s.cf.Dist, Endpoint: s.cf.URL})
	if err != nil {
		t.Fatal(err)
	}
	s.cdn = httptest.NewServer(httpapi.Wrap(httpapi.NewMux(cdn.Routes(cdn.Deps{
		Users: o.DB.DB, Files: o.Files, CacheBytes: 1 << 20, Invalidator: inv, Ledger: o.DB.DB,
	})), httpapi.Options{Log: slog.New(slog.DiscardHandler)}))
	t.Cleanup(s.cdn.Close)
	notifier, err := cdnnotify.NewHTTPNotifier(s.cdn.URL, s.cdn.Client())
	if err != nil {
		t.Fatal(err)
	}
	o.Notifier = notifier
	s.ImageGroup = testenv.NewImageGroup(t, o, func(db *testenv.DB, sessions *auth.Sessions, svc *avatars.Service) []httpapi.Route {
		return adminusers.Routes(adminusers.Deps{Store: db.DB, Auth: sessions, LockTTL: testenv.AuthConfig(t).LockTTL, Images: svc})
	})
	return s
}

func (s *imgServer) upload(t *testing.T, id int64, img string) {
	t.Helper()
	if code, resp := s.Call(t, http.MethodPost, fmt.Sprintf("/admin-users/update-image/%d", id), map[string]any{"image": img}, s.Editor); code != 200 {
		t.Fatalf("upload: %d %s", code, resp.Data)
	}
}

// ref is the user's profile_image column ("" for NULL).
func (s *imgServer) ref(t *testing.T, id int64) string {
	t.Helper()
	return s.DB.Text(t, `SELECT coalesce(profile_image, '') FROM users WHERE id = $1`, id)
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
	s := newImgServer(t, testenv.ImageOptions{})
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

	code, resp := s.Call(t, http.MethodPost, fmt.Sprintf("/admin-users/update-image/%d", id),
		map[string]any{"image": avatartest.DataURL("image/jpeg", avatartest.JPEG(t, 1024, 768))}, s.Editor)
	if code != 200 || resp.Data != "Profile image updated successfully" {
		t.Fatalf("update: %d %s", code, resp.Data)
	}
	first := s.ref(t, id)
	set, err := imageset.ParseRef(first)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Objects(t); !slices.Equal(got, set.Keys()) {
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
	if got := s.Objects(t); !slices.Equal(got, set.Keys()) {
		t.Errorf("objects %v, want only %v", got, set.Keys())
	}
	check("after the second upload", high, images.TypePNG, 150)
	if status, _, _, _ := s.avatar(t, high, "If-None-Match", etag); status != http.StatusOK {
		t.Errorf("the old ETag: %d, want 200", status)
	}

	code, resp = s.Call(t, http.MethodDelete, fmt.Sprintf("/admin-users/delete-image/%d", id), nil, s.Editor)
	if code != 200 || resp.Data != "Profile image deleted successfully" {
		t.Fatalf("delete: %d %s", code, resp.Data)
	}
	if ref, objects := s.ref(t, id), s.Objects(t); ref != "" || len(objects) != 0 {
		t.Errorf("after delete: ref %q, objects %v", ref, objects)
	}
	if check("after delete", high, images.TypePNG, images.HighSize) != defaultHigh {
		t.Error("not the default image after the delete")
	}

	code, resp = s.Call(t, http.MethodDelete, fmt.Sprintf("/admin-users/delete-image/%d", id), nil, s.Editor)
	if code != 500 || resp.Data != "Internal server error" {
		t.Errorf("delete without an image: %d %s, want 500 Internal server error", code, resp.Data)
	}
}

// TestDeleteUserIsIrreversible: deleting a user takes every version of their pictures
// from the versioned bucket (two uploads leave the first one's as noncurrent versions
// and delete markers), every row that names them (the ledger of CloudFront
// invalidations included), and CloudFront's copies of their three avatar URLs; the cdn,
// whose container served the picture a moment before, answers 404. Another user's
// pictures stay.
func TestDeleteUserIsIrreversible(t *testing.T) {
	s := newImgServer(t, testenv.ImageOptions{})
	ctx := context.Background()
	s.upload(t, demo.MemberUserID, avatartest.Base64(avatartest.JPEG(t, 200, 200)))
	s.upload(t, demo.MemberUserID, avatartest.Base64(avatartest.PNG(t, 200, 200, true)))
	s.upload(t, demo.EditorUserID, avatartest.Base64(avatartest.JPEG(t, 200, 200)))
	for _, path := range []string{"/user/avatar/3", "/user/avatar/3/high"} {
		if status, _, _, _ := s.avatar(t, path); status != http.StatusOK {
			t.Fatalf("GET %s before the deletion: %d", path, status)
		}
	}
	versions := func(prefix string) []string {
		t.Helper()
		v, err := s.Files.Versions(ctx, prefix)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if n := len(versions("users/3/")); n < 6 {
		t.Fatalf("%d versions of the member's pictures before the deletion, want 6 (a versioned bucket)", n)
	}
	s.cf.Reset(false)

	code, resp := s.Call(t, http.MethodDelete, "/admin-users/delete/3", nil, s.Admin)
	if code != 200 || resp.Data != adminusers.MsgUserDeleted {
		t.Fatalf("delete: %d %s", code, resp.Data)
	}
	if v := versions("users/3/"); len(v) != 0 {
		t.Errorf("%d versions of the deleted user's pictures stay in the bucket: %v", len(v), v)
	}
	if rows := s.DB.RowsNamingUser(t, demo.MemberUserID); len(rows) != 0 {
		t.Errorf("rows still name the deleted user: %v", rows)
	}
	batches, _ := s.cf.Invalidations()
	if want := "[[/user/avatar/3 /user/avatar/3/high /user/avatar/3/scaled]]"; fmt.Sprint(batches) != want {
		t.Errorf("CloudFront invalidations %v, want %s", batches, want)
	}
	for _, path := range []string{"/user/avatar/3", "/user/avatar/3/high"} {
		if status, _, _, _ := s.avatar(t, path); status != http.StatusNotFound {
			t.Errorf("cdn answers GET %s of the deleted user with %d, want 404", path, status)
		}
	}
	if n := len(versions("users/2/")); n != 2 {
		t.Errorf("%d versions of the editor's picture, want their 2 untouched", n)
	}
}

// TestDeleteUserRetried: a crash after the deletion committed left the purge undone;
// the admin's retry answers 404 (the user is gone) and finishes it, and the next
// deletion of anyone finishes one a crash left longer ago.
func TestDeleteUserRetried(t *testing.T) {
	s := newImgServer(t, testenv.ImageOptions{})
	ctx := context.Background()
	s.upload(t, demo.MemberUserID, avatartest.Base64(avatartest.JPEG(t, 200, 200)))
	s.upload(t, demo.EditorUserID, avatartest.Base64(avatartest.JPEG(t, 200, 200)))
	// Both deletions crash right after their commits: the rows are gone, the pictures stay.
	for _, id := range []int64{demo.MemberUserID, demo.EditorUserID} {
		if err := s.DB.DeleteUser(ctx, id, demo.AdminUserID); err != nil {
			t.Fatal(err)
		}
	}
	s.DB.Exec(t, `UPDATE user_purges SET deleted_at = now() - interval '5 minutes' WHERE user_id = $1`, demo.EditorUserID)
	if n := len(s.Objects(t)); n != 4 {
		t.Fatalf("%d objects after the crashed deletions, want 4", n)
	}
	code, resp := s.Call(t, http.MethodDelete, "/admin-users/delete/3", nil, s.Admin)
	if code != 404 || resp.Data != "User not found" {
		t.Fatalf("retried delete: %d %s, want 404 User not found", code, resp.Data)
	}
	for _, id := range []int64{demo.MemberUserID, demo.EditorUserID} {
		if v, _ := s.Files.Versions(ctx, fmt.Sprintf("users/%d/", id)); len(v) != 0 {
			t.Errorf("user %d: %d versions stay after the retry", id, len(v))
		}
		if rows := s.DB.RowsNamingUser(t, id); len(rows) != 0 {
			t.Errorf("user %d: rows still name the deleted user: %v", id, rows)
		}
	}
}
