package admincontributors_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/admincontributors"
	"github.com/mediacatalog/service/shared/auth"
	"github.com/mediacatalog/service/shared/avatars"
	"github.com/mediacatalog/service/shared/avatars/avatartest"
	"github.com/mediacatalog/service/shared/httpapi"
	"github.com/mediacatalog/service/shared/imageset"
)

var _ admincontributors.Avatars = (*avatars.Service)(nil)

// avatarTarget is the demo contributor the avatar events name (Eiichiro Oda).
const avatarTarget = 1

// contributorAvatars are the group's image routes, for the checks every image route
// pair passes (testenv.ImageRoutes).
var contributorAvatars = testenv.ImageRoutes{
	Group:  "admin-contributors",
	Update: "/admin-contributors/update-avatar/%d", Delete: "/admin-contributors/delete-avatar/%d",
	UpdateEvent: "update-avatar.json", DeleteEvent: "delete-avatar.json",
	Target:     avatarTarget,
	Ref:        `SELECT image FROM contributors WHERE id = $1`,
	Permission: auth.PermEditContributors,
	Updated:    "Contributor avatar updated successfully", Deleted: "Contributor avatar deleted successfully",
	NotFound:     "Contributor not found",
	UploadFailed: "An error occurred while updating the contributor avatar",
	DeleteFailed: "An error occurred while deleting the contributor avatar",
	New:          newAvatarServer,
}

func TestAvatarRoutes(t *testing.T) { contributorAvatars.Run(t) }

// newAvatarServer is the admin-contributors group with the real media side.
func newAvatarServer(t *testing.T, o testenv.ImageOptions) *testenv.ImageGroup {
	t.Helper()
	return testenv.NewImageGroup(t, o, func(db *testenv.DB, sessions *auth.Sessions, svc *avatars.Service) []httpapi.Route {
		return admincontributors.Routes(admincontributors.Deps{Store: db.DB, Auth: sessions, LockTTL: testenv.AuthConfig(t).LockTTL, Avatars: svc})
	})
}

// upload stores img as contributor id's avatar, as the editor.
func upload(t *testing.T, s *testenv.ImageGroup, id int64, img string) {
	t.Helper()
	if code, resp := s.Call(t, http.MethodPost, fmt.Sprintf("/admin-contributors/update-avatar/%d", id), map[string]any{"image": img}, s.Editor); code != 200 {
		t.Fatalf("upload: %d %s", code, resp.Data)
	}
}

// avatarRef is the contributor's image column ("" for NULL).
func avatarRef(t *testing.T, s *testenv.ImageGroup, id int64) string {
	t.Helper()
	return s.DB.Text(t, `SELECT coalesce(image, '') FROM contributors WHERE id = $1`, id)
}

func TestAvatarCycle(t *testing.T) {
	s := newAvatarServer(t, testenv.ImageOptions{})
	const id = avatarTarget

	code, resp := s.Call(t, http.MethodPost, fmt.Sprintf("/admin-contributors/update-avatar/%d", id),
		map[string]any{"image": avatartest.DataURL("image/jpeg", avatartest.JPEG(t, 800, 1000))}, s.Editor)
	if code != 200 || resp.Data != "Contributor avatar updated successfully" {
		t.Fatalf("update: %d %s", code, resp.Data)
	}
	first := avatarRef(t, s, id)
	set, err := imageset.ParseRef(first)
	if err != nil || set.Owner != imageset.Contributors || set.ID != id {
		t.Fatalf("stored reference %q (%v)", first, err)
	}
	want := []string{
		fmt.Sprintf("contributors/%d/%s/image.jpg", id, set.Name),
		fmt.Sprintf("contributors/%d/%s/scaled.jpg", id, set.Name),
	}
	if got := s.Objects(t); !slices.Equal(got, want) {
		t.Errorf("objects %v, want %v", got, want)
	}
	if big, small := s.Object(t, want[0]), s.Object(t, want[1]); len(big.Data) <= len(small.Data) {
		t.Errorf("image %d bytes, scaled %d", len(big.Data), len(small.Data))
	}

	// The detail shows the reference; a new avatar replaces the old one's objects.
	rec := testenv.Do(t, s.Handler, testenv.Request(http.MethodGet, fmt.Sprintf("/admin-contributors/id/%d", id), nil, s.Editor))
	var detail struct {
		Image string `json:"image"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &detail); err != nil || rec.Code != 200 || detail.Image != first {
		t.Errorf("detail: %d, image %q, want %q", rec.Code, detail.Image, first)
	}
	upload(t, s, id, avatartest.Base64(avatartest.GIF(t, 90, 90)))
	second := avatarRef(t, s, id)
	set, err = imageset.ParseRef(second)
	if err != nil || second == first {
		t.Fatalf("second upload stored %q (%v)", second, err)
	}
	if got := s.Objects(t); !slices.Equal(got, set.Keys()) {
		t.Errorf("objects %v, want only %v", got, set.Keys())
	}

	code, resp = s.Call(t, http.MethodDelete, fmt.Sprintf("/admin-contributors/delete-avatar/%d", id), nil, s.Editor)
	if code != 200 || resp.Data != "Contributor avatar deleted successfully" {
		t.Fatalf("delete: %d %s", code, resp.Data)
	}
	if ref, objects := avatarRef(t, s, id), s.Objects(t); ref != "" || len(objects) != 0 {
		t.Errorf("after delete: ref %q, objects %v", ref, objects)
	}
	code, resp = s.Call(t, http.MethodDelete, fmt.Sprintf("/admin-contributors/delete-avatar/%d", id), nil, s.Editor)
	if code != 500 || resp.Data != "An error occurred while deleting the contributor avatar" {
		t.Errorf("delete without an avatar: %d %q", code, resp.Data)
	}
}

// Deleting a contributor removes its avatar's objects once the deletion committed.
func TestDeleteContributorRemovesAvatar(t *testing.T) {
	s := newAvatarServer(t, testenv.ImageOptions{})
	upload(t, s, avatarTarget, avatartest.Base64(avatartest.JPEG(t, 200, 200)))
	upload(t, s, 2, avatartest.Base64(avatartest.JPEG(t, 200, 200)))
	code, resp := s.Call(t, http.MethodDelete, fmt.Sprintf("/admin-contributors/delete/%d", avatarTarget), nil, s.Admin)
	if code != 200 {
		t.Fatalf("delete: %d %s", code, resp.Data)
	}
	objects := s.Objects(t)
	if len(objects) != 2 || !strings.HasPrefix(objects[0], "contributors/2/") {
		t.Errorf("objects %v, want only contributor 2's", objects)
	}
}
