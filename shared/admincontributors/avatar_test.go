package admincontributors_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/mediacatalog/service/infra/demo"
	"github.com/mediacatalog/service/infra/testenv"
	"github.com/mediacatalog/service/shared/admincontributors"
	"github.com/mediacatalog/service/shared/auth"
	"github.com/mediacatalog/service/shared/avatars"
	"github.com/mediacatalog/service/shared/avatars/avatartest"
	"github.com/mediacatalog/service/shared/catalog"
	"github.com/mediacatalog/service/shared/config"
	"github.com/mediacatalog/service/shared/httpapi"
	"github.com/mediacatalog/service/shared/images"
	"github.com/mediacatalog/service/shared/imageset"
	"github.com/mediacatalog/service/shared/s3store"
)

var _ admincontributors.Avatars = (*avatars.Service)(nil)

// Upload limits of the avatar tests: small, so that the refused inputs stay cheap.
const (
	avatarMaxBytes  = 256 << 10
	avatarMaxPixels = 1_000_000
	// avatarTarget is the demo contributor the avatar events name (Eiichiro Oda).
	avatarTarget = 1
)

// avatarServer is the admin-contributors group with the real media side: avatars in a
// bucket of the test's own, over a database with the demo data.
type avatarServer struct {
	h     http.Handler
	db    *testenv.DB
	cfg   config.Config
	files *s3store.Store
	svc   *avatars.Service
	// admin holds every permission, editor edit-contributors (not delete), member none.
	admin, editor, member *http.Cookie
}

type avatarOptions struct {
	notFileService bool
	files          *s3store.Store // default: a fresh bucket
	db             *testenv.DB    // default: a fresh database with the demo data
}

func newAvatarServer(t *testing.T, o avatarOptions) *avatarServer {
	t.Helper()
	s := &avatarServer{db: o.db, files: o.files, cfg: testenv.AuthConfig(t)}
	if s.db == nil {
		s.db = testenv.NewDemoDB(t)
	}
	if s.files == nil {
		s.files = testenv.NewS3Store(t)
	}
	s.svc = avatars.New(avatars.Deps{
		Files: s.files, Store: s.db.DB,
		Limits:      images.Limits{MaxBytes: avatarMaxBytes, MaxPixels: avatarMaxPixels},
		FileService: !o.notFileService,
	})
	sessions := testenv.NewSessions(t, s.db, s.cfg)
	routes := admincontributors.Routes(admincontributors.Deps{
		Store: s.db.DB, Auth: sessions, LockTTL: s.cfg.LockTTL, Avatars: s.svc,
	})
	s.h = httpapi.Wrap(httpapi.NewMux(routes), httpapi.Options{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), CORSOrigins: s.cfg.CORSOrigins})
	s.admin = testenv.SessionCookie(t, sessions, demo.AdminUserID)
	s.editor = testenv.SessionCookie(t, sessions, demo.EditorUserID)
	s.member = testenv.SessionCookie(t, sessions, demo.MemberUserID)
	return s
}

// call serves a request through the group (checked against the OpenAPI document).
func (s *avatarServer) call(t *testing.T, method, target string, body any, c *http.Cookie) (int, httpapi.Response) {
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

func (s *avatarServer) upload(t *testing.T, id int64, img string) {
	t.Helper()
	if code, resp := s.call(t, http.MethodPost, fmt.Sprintf("/admin-contributors/update-avatar/%d", id), map[string]any{"image": img}, s.editor); code != 200 {
		t.Fatalf("upload: %d %s", code, resp.Data)
	}
}

// ref is the contributor's image column ("" for NULL).
func (s *avatarServer) ref(t *testing.T, id int64) string {
	t.Helper()
	var ref *string
	if err := s.db.Pool.QueryRow(context.Background(), `SELECT image FROM contributors WHERE id = $1`, id).Scan(&ref); err != nil {
		t.Fatal(err)
	}
	if ref == nil {
		return ""
	}
	return *ref
}

func (s *avatarServer) objects(t *testing.T) []string {
	t.Helper()
	keys, err := s.files.List(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// object reads a stored object and checks that its content type is what its bytes are.
func (s *avatarServer) object(t *testing.T, key string) catalog.StoredFile {
	t.Helper()
	obj, err := s.files.Get(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	if sniffed, ok := images.Sniff(obj.Data); !ok || sniffed != obj.ContentType {
		t.Errorf("%s: stored as %q, bytes are %q", key, obj.ContentType, sniffed)
	}
	return obj
}

func TestAvatarCycle(t *testing.T) {
	s := newAvatarServer(t, avatarOptions{})
	const id = avatarTarget

	code, resp := s.call(t, http.MethodPost, fmt.Sprintf("/admin-contributors/update-avatar/%d", id),
		map[string]any{"image": avatartest.DataURL("image/jpeg", avatartest.JPEG(t, 800, 1000))}, s.editor)
	if code != 200 || resp.Data != "Contributor avatar updated successfully" {
		t.Fatalf("update: %d %s", code, resp.Data)
	}
	first := s.ref(t, id)
	set, err := imageset.ParseRef(first)
	if err != nil || set.Owner != imageset.Contributors || set.ID != id {
		t.Fatalf("stored reference %q (%v)", first, err)
	}
	want := []string{
		fmt.Sprintf("contributors/%d/%s/image.jpg", id, set.Name),
		fmt.Sprintf("contributors/%d/%s/scaled.jpg", id, set.Name),
	}
	if got := s.objects(t); !slices.Equal(got, want) {
		t.Errorf("objects %v, want %v", got, want)
	}
	if big, small := s.object(t, want[0]), s.object(t, want[1]); len(big.Data) <= len(small.Data) {
		t.Errorf("image %d bytes, scaled %d", len(big.Data), len(small.Data))
	}

	// The detail shows the reference; a new avatar replaces the old one's objects.
	rec := testenv.Do(t, s.h, testenv.Request(http.MethodGet, fmt.Sprintf("/admin-contributors/id/%d", id), nil, s.editor))
	var detail struct {
		Image string `json:"image"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &detail); err != nil || rec.Code != 200 || detail.Image != first {
		t.Errorf("detail: %d, image %q, want %q", rec.Code, detail.Image, first)
	}
	s.upload(t, id, avatartest.Base64(avatartest.GIF(t, 90, 90)))
	second := s.ref(t, id)
	set, err = imageset.ParseRef(second)
	if err != nil || second == first {
		t.Fatalf("second upload stored %q (%v)", second, err)
	}
	if got := s.objects(t); !slices.Equal(got, set.Keys()) {
		t.Errorf("objects %v, want only %v", got, set.Keys())
	}

	code, resp = s.call(t, http.MethodDelete, fmt.Sprintf("/admin-contributors/delete-avatar/%d", id), nil, s.editor)
	if code != 200 || resp.Data != "Contributor avatar deleted successfully" {
		t.Fatalf("delete: %d %s", code, resp.Data)
	}
	if ref, objects := s.ref(t, id), s.objects(t); ref != "" || len(objects) != 0 {
		t.Errorf("after delete: ref %q, objects %v", ref, objects)
	}
	code, resp = s.call(t, http.MethodDelete, fmt.Sprintf("/admin-contributors/delete-avatar/%d", id), nil, s.editor)
	if code != 500 || resp.Data != "An error occurred while deleting the contributor avatar" {
		t.Errorf("delete without an avatar: %d %q", code, resp.Data)
	}
}

func TestAvatarErrors(t *testing.T) {
	s := newAvatarServer(t, avatarOptions{})
	good := map[string]any{"image": avatartest.DataURL("image/png", avatartest.PNG(t, 64, 64, false))}
	type row struct {
		name    string
		method  string
		target  string
		body    any
		cookie  *http.Cookie
		status  int
		message string
	}
	tests := []row{
		{"unknown contributor", http.MethodPost, "/admin-contributors/update-avatar/99999", good, s.editor, 404, "Contributor not found"},
		{"unknown contributor, delete", http.MethodDelete, "/admin-contributors/delete-avatar/99999", nil, s.editor, 404, "Contributor not found"},
		{"id not a number", http.MethodPost, "/admin-contributors/update-avatar/abc", good, s.editor, 400, "Required parameters missing"},
		{"id not a number, delete", http.MethodDelete, "/admin-contributors/delete-avatar/x1", nil, s.editor, 400, "Required parameters missing"},
		{"no cookie", http.MethodPost, "/admin-contributors/update-avatar/1", good, nil, 401, "Unauthorized"},
		{"no permission", http.MethodDelete, "/admin-contributors/delete-avatar/1", nil, s.member, 403, "Forbidden"},
	}
	for _, u := range avatartest.BadUploads(t, avatarMaxBytes, avatarMaxPixels, s.svc.MaxBodyBytes()) {
		tests = append(tests, row{"bad upload: " + u.Name, http.MethodPost, "/admin-contributors/update-avatar/1", u.Body, s.editor, 400, ""})
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
			if ref := s.ref(t, avatarTarget); ref != "" {
				t.Errorf("the contributor points at %q", ref)
			}
		})
	}
}

func TestAvatarNotFileService(t *testing.T) {
	s := newAvatarServer(t, avatarOptions{notFileService: true})
	good := map[string]any{"image": avatartest.Base64(avatartest.PNG(t, 64, 64, false))}
	for _, tc := range []struct {
		method, target string
		body           any
		cookie         *http.Cookie
		status         int
		message        string
	}{
		{http.MethodPost, "/admin-contributors/update-avatar/1", good, s.editor, 503, "This service is not handling file uploads."},
		{http.MethodPost, "/admin-contributors/update-avatar/1", "{", s.editor, 503, "This service is not handling file uploads."},
		{http.MethodDelete, "/admin-contributors/delete-avatar/1", nil, s.editor, 503, "This service is not handling file uploads."},
		{http.MethodPost, "/admin-contributors/update-avatar/1", good, nil, 401, "Unauthorized"},
		{http.MethodDelete, "/admin-contributors/delete-avatar/1", nil, s.member, 403, "Forbidden"},
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

// With S3 unreachable an upload answers the route's 500 and the contributor keeps the
// avatar it had.
func TestAvatarS3Unreachable(t *testing.T) {
	good := newAvatarServer(t, avatarOptions{})
	good.upload(t, avatarTarget, avatartest.Base64(avatartest.JPEG(t, 300, 300)))
	before, objects := good.ref(t, avatarTarget), good.objects(t)

	broken := newAvatarServer(t, avatarOptions{db: good.db, files: testenv.UnreachableS3(t)})
	code, resp := broken.call(t, http.MethodPost, "/admin-contributors/update-avatar/1",
		map[string]any{"image": avatartest.Base64(avatartest.PNG(t, 100, 100, false))}, broken.editor)
	if code != 500 || resp.Data != "An error occurred while updating the contributor avatar" {
		t.Errorf("upload: %d %q", code, resp.Data)
	}
	if after := good.ref(t, avatarTarget); after != before {
		t.Errorf("the contributor moved from %q to %q", before, after)
	}
	if got := good.objects(t); !slices.Equal(got, objects) {
		t.Errorf("objects %v, want %v", got, objects)
	}
}

// Deleting a contributor removes its avatar's objects once the deletion committed.
func TestDeleteContributorRemovesAvatar(t *testing.T) {
	s := newAvatarServer(t, avatarOptions{})
	s.upload(t, avatarTarget, avatartest.Base64(avatartest.JPEG(t, 200, 200)))
	s.upload(t, 2, avatartest.Base64(avatartest.JPEG(t, 200, 200)))
	code, resp := s.call(t, http.MethodDelete, fmt.Sprintf("/admin-contributors/delete/%d", avatarTarget), nil, s.admin)
	if code != 200 {
		t.Fatalf("delete: %d %s", code, resp.Data)
	}
	objects := s.objects(t)
	if len(objects) != 2 || !strings.HasPrefix(objects[0], "contributors/2/") {
		t.Errorf("objects %v, want only contributor 2's", objects)
	}
}

func TestAvatarPermissionMatrix(t *testing.T) {
	s := newAvatarServer(t, avatarOptions{})
	s.upload(t, avatarTarget, avatartest.Base64(avatartest.JPEG(t, 64, 64)))
	rows := testenv.AuthMatrix{
		Handler: s.h,
		DB:      s.db,
		Config:  s.cfg,
		Routes: []testenv.AuthRoute{
			{Method: "POST", Path: "/admin-contributors/update-avatar/1", Body: map[string]any{"image": avatartest.Base64(avatartest.PNG(t, 64, 64, false))},
				Permission: auth.PermEditContributors, Message: "Contributor avatar updated successfully"},
			{Method: "DELETE", Path: "/admin-contributors/delete-avatar/1", Permission: auth.PermEditContributors,
				Message: "Contributor avatar deleted successfully"},
		},
	}.Run(t)
	if rows != 2*8 {
		t.Errorf("%d matrix rows, want 16", rows)
	}
}

// TestAvatarEvents runs the events of the two avatar routes through the Lambda entry.
func TestAvatarEvents(t *testing.T) {
	s := newAvatarServer(t, avatarOptions{})
	for _, tc := range []struct {
		event   string
		message string
		check   func(t *testing.T)
	}{
		{"update-avatar.json", "Contributor avatar updated successfully", func(t *testing.T) {
			set, err := imageset.ParseRef(s.ref(t, avatarTarget))
			if err != nil || !slices.Equal(s.objects(t), set.Keys()) {
				t.Errorf("stored %v for %+v (%v)", s.objects(t), set, err)
			}
			s.object(t, set.Key(imageset.High))
		}},
		{"delete-avatar.json", "Contributor avatar deleted successfully", func(t *testing.T) {
			if s.ref(t, avatarTarget) != "" || len(s.objects(t)) != 0 {
				t.Errorf("left %q and %v", s.ref(t, avatarTarget), s.objects(t))
			}
		}},
	} {
		t.Run(tc.event, func(t *testing.T) {
			resp := testenv.Invoke(t, s.h, testenv.AuthEvent(t, "admin-contributors/"+tc.event, s.editor))
			want := fmt.Sprintf(`{"data":%q,"code":200}`, tc.message)
			if resp.StatusCode != 200 || strings.TrimSpace(resp.Body) != want {
				t.Fatalf("%d %s, want %s", resp.StatusCode, resp.Body, want)
			}
			tc.check(t)
			resp = testenv.Invoke(t, s.h, testenv.Event(t, "admin-contributors/"+tc.event))
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("placeholder cookie: %d, want 401", resp.StatusCode)
			}
		})
	}
}
