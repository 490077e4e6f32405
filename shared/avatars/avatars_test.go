package avatars_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/mediacatalog/service/infra/local/demo"
	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/avatars"
	"github.com/mediacatalog/service/shared/avatars/avatartest"
	"github.com/mediacatalog/service/shared/images"
	"github.com/mediacatalog/service/shared/imageset"
	"github.com/mediacatalog/service/shared/s3store"
)

// recorder is a Notifier that records the users it is told about and fails when err
// is set.
type recorder struct {
	mu    sync.Mutex
	users []int64
	err   error
}

func (r *recorder) AvatarChanged(_ context.Context, userID int64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.users = append(r.users, userID)
	return r.err
}

func (r *recorder) told() []int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := slices.Clone(r.users)
	r.users = nil
	return out
}

type fixture struct {
	db       *testenv.DB
	files    *s3store.Store
	notifier *recorder
	svc      *avatars.Service
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	db := testenv.NewDemoDB(t)
	f := &fixture{db: db, files: testenv.NewS3Store(t), notifier: &recorder{}}
	f.svc = avatars.New(avatars.Deps{
		Files: f.files, Store: db.DB, Notifier: f.notifier,
		Limits: images.Limits{MaxBytes: 1 << 20, MaxPixels: 4_000_000}, FileService: true,
	})
	return f
}

func (f *fixture) keys(t *testing.T, prefix string) []string {
	t.Helper()
	keys, err := f.files.List(context.Background(), prefix)
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

func (f *fixture) ref(t *testing.T, sql string, id int64) string {
	t.Helper()
	var ref *string
	if err := f.db.Pool.QueryRow(context.Background(), sql, id).Scan(&ref); err != nil {
		t.Fatal(err)
	}
	if ref == nil {
		return ""
	}
	return *ref
}

const (
	userRef        = `SELECT profile_image FROM users WHERE id = $1`
	contributorRef = `SELECT image FROM contributors WHERE id = $1`
)

func TestUserImageLifecycle(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	id := demo.MemberUserID

	// Two uploads of the same picture: each gets objects of its own, and the second
	// removes the first's.
	pic := avatartest.DataURL("image/png", avatartest.PNG(t, 300, 200, false))
	var refs []string
	for i := range 2 {
		if err := f.svc.UpdateUserImage(ctx, id, pic); err != nil {
			t.Fatalf("upload %d: %v", i, err)
		}
		ref := f.ref(t, userRef, id)
		set, err := imageset.ParseRef(ref)
		if err != nil {
			t.Fatalf("upload %d stored %q: %v", i, ref, err)
		}
		if got := f.keys(t, "users/"); !slices.Equal(got, set.Keys()) {
			t.Errorf("upload %d: objects %v, want exactly %v", i, got, set.Keys())
		}
		refs = append(refs, ref)
	}
	if refs[0] == refs[1] {
		t.Errorf("both uploads stored under %s", refs[0])
	}
	if got := f.notifier.told(); !slices.Equal(got, []int64{id, id}) {
		t.Errorf("cdn told about %v, want the user twice", got)
	}

	if err := f.svc.DeleteUserImage(ctx, id); err != nil {
		t.Fatal(err)
	}
	if ref := f.ref(t, userRef, id); ref != "" || len(f.keys(t, "")) != 0 {
		t.Errorf("after delete: ref %q, objects %v", ref, f.keys(t, ""))
	}
	if got := f.notifier.told(); !slices.Equal(got, []int64{id}) {
		t.Errorf("cdn told about %v after the delete, want the user", got)
	}
	if err := f.svc.DeleteUserImage(ctx, id); !errors.Is(err, avatars.ErrNoImage) || apperr.CodeOf(err) != apperr.Internal {
		t.Errorf("deleting a missing image: %v, want ErrNoImage (internal)", err)
	}
	if err := f.svc.DeleteUserImage(ctx, 999999); apperr.CodeOf(err) != apperr.NotFound {
		t.Errorf("deleting the image of an unknown user: %v, want not found", err)
	}
}

// A failing notification does not fail the change: it is committed.
func TestNotifierFailureKeepsTheChange(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	f.notifier.err = errors.New("cdn unreachable")
	if err := f.svc.UpdateUserImage(ctx, demo.EditorUserID, avatartest.Base64(avatartest.JPEG(t, 64, 64))); err != nil {
		t.Fatalf("update with a failing notifier: %v", err)
	}
	if f.ref(t, userRef, demo.EditorUserID) == "" || len(f.keys(t, "users/")) != 2 {
		t.Error("the update did not stand")
	}
}

func TestFailedUploadsStoreNothing(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	good := avatartest.DataURL("image/png", avatartest.PNG(t, 50, 50, true))
	tests := []struct {
		name string
		call func(svc *avatars.Service) error
		code apperr.Code
	}{
		{"unknown user", func(svc *avatars.Service) error { return svc.UpdateUserImage(ctx, 999999, good) }, apperr.NotFound},
		{"unknown contributor", func(svc *avatars.Service) error { return svc.UpdateContributorAvatar(ctx, 999999, good) }, apperr.NotFound},
		{"bad image", func(svc *avatars.Service) error {
			return svc.UpdateUserImage(ctx, demo.MemberUserID, "data:image/png;base64,AAAA")
		}, apperr.Invalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.call(f.svc); apperr.CodeOf(err) != tc.code {
				t.Errorf("error %v, want code %s", err, tc.code)
			}
			if keys := f.keys(t, ""); len(keys) != 0 {
				t.Errorf("left objects %v", keys)
			}
			if got := f.notifier.told(); len(got) != 0 {
				t.Errorf("cdn told about %v", got)
			}
		})
	}

	// S3 unreachable: an internal error, and the row keeps pointing at what it had.
	if err := f.svc.UpdateUserImage(ctx, demo.MemberUserID, good); err != nil {
		t.Fatal(err)
	}
	before := f.ref(t, userRef, demo.MemberUserID)
	broken := avatars.New(avatars.Deps{Files: testenv.UnreachableS3(t), Store: f.db.DB, Notifier: f.notifier, FileService: true})
	err := broken.UpdateUserImage(ctx, demo.MemberUserID, good)
	if err == nil || apperr.CodeOf(err) != apperr.Internal {
		t.Errorf("upload with S3 unreachable: %v, want an internal error", err)
	}
	if after := f.ref(t, userRef, demo.MemberUserID); after != before {
		t.Errorf("the row moved from %q to %q", before, after)
	}
}

// putHook is the fixture's bucket with a step run once just before the first Put: what
// another admin's request does while an upload is under way.
type putHook struct {
	*s3store.Store
	once   sync.Once
	before func(ctx context.Context)
}

func (p *putHook) Put(ctx context.Context, key string, data []byte, contentType string) error {
	p.once.Do(func() { p.before(ctx) })
	return p.Store.Put(ctx, key, data, contentType)
}

// TestUploadRacingDeletion: an admin uploads a user's picture while another deletes
// the user, whose deletion commits and whose purge (every version under users/<id>/)
// finishes after the upload's check and before its objects are stored. The upload
// then finds the user gone (404) and leaves no version of its objects: the deleted
// user's picture does not stay in the versioned bucket, and no purge record is left
// to remove it later.
func TestUploadRacingDeletion(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	pic := avatartest.Base64(avatartest.PNG(t, 64, 64, false))
	files := &putHook{Store: f.files}
	svc := avatars.New(avatars.Deps{Files: files, Store: f.db.DB, Notifier: f.notifier,
		Limits: images.Limits{MaxBytes: 1 << 20, MaxPixels: 4_000_000}, FileService: true})
	files.before = func(ctx context.Context) {
		if err := f.db.DeleteUser(ctx, demo.MemberUserID, demo.AdminUserID); err != nil {
			t.Error(err)
		}
		if err := f.svc.PurgeUsers(ctx, demo.MemberUserID); err != nil {
			t.Error(err)
		}
	}
	if err := svc.UpdateUserImage(ctx, demo.MemberUserID, pic); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("upload beside the deletion: %v, want not found", err)
	}
	if n := f.db.Text(t, `SELECT count(*)::text FROM user_purges`); n != "0" {
		t.Fatalf("%s purges left: the deletion's purge did not finish before the upload stored", n)
	}
	v, err := f.files.Versions(ctx, imageset.Prefix(imageset.Users, demo.MemberUserID))
	if err != nil {
		t.Fatal(err)
	}
	if len(v) != 0 {
		t.Errorf("the deleted user's upload left %d versions: %v", len(v), v)
	}
}

func TestRemoveAfterDeletion(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	pic := avatartest.Base64(avatartest.PNG(t, 64, 64, false))
	if err := f.svc.UpdateUserImage(ctx, demo.MemberUserID, pic); err != nil {
		t.Fatal(err)
	}
	if err := f.svc.UpdateContributorAvatar(ctx, 1, pic); err != nil {
		t.Fatal(err)
	}
	f.notifier.told()
	userImage, contributorImage := f.ref(t, userRef, demo.MemberUserID), f.ref(t, contributorRef, 1)

	// A contributor's avatar refuses a user's references, and references that are not ours.
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"user ref as avatar", f.svc.RemoveContributorAvatar(ctx, userImage)},
		{"foreign reference", f.svc.RemoveContributorAvatar(ctx, "publishers/kodansha.png")},
	} {
		if tc.err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
	if n := len(f.keys(t, "")); n != 4 {
		t.Fatalf("%d objects, want 4 untouched", n)
	}
	if err := f.svc.RemoveContributorAvatar(ctx, contributorImage); err != nil {
		t.Fatal(err)
	}
	if keys := f.keys(t, "contributors/"); len(keys) != 0 {
		t.Errorf("left objects %v", keys)
	}
	if got := f.notifier.told(); len(got) != 0 {
		t.Errorf("cdn told about %v, want nobody (it serves users only)", got)
	}
}

// TestPurgeUsers: a deleted user's purge removes every version of their pictures (two
// uploads and a removal leave noncurrent versions and delete markers in the versioned
// bucket), tells the cdn and removes the purge's record; it finishes a purge an earlier
// deletion left (a crash after its commit) and leaves alone the users who exist. A purge
// that fails (S3 unreachable, the cdn failing) keeps its record for the next one.
func TestPurgeUsers(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	pic := avatartest.Base64(avatartest.PNG(t, 64, 64, false))
	for _, id := range []int64{demo.MemberUserID, demo.MemberUserID, demo.EditorUserID, demo.AdminUserID} {
		if err := f.svc.UpdateUserImage(ctx, id, pic); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.svc.DeleteUserImage(ctx, demo.EditorUserID); err != nil {
		t.Fatal(err)
	}
	f.notifier.told()
	versions := func(prefix string) []string {
		t.Helper()
		v, err := f.files.Versions(ctx, prefix)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if n := len(versions("users/3/")); n != 6 {
		t.Fatalf("%d versions of the member's pictures, want 6 (two uploads, the first one's delete markers)", n)
	}
	if n := len(versions("users/2/")); n != 4 {
		t.Fatalf("%d versions of the editor's pictures, want 4 (an upload and its delete markers)", n)
	}
	pending := func() string {
		return f.db.Text(t, `SELECT coalesce(string_agg(user_id::text, ',' ORDER BY user_id), '') FROM user_purges`)
	}

	// The editor's deletion crashed after its commit, a while ago.
	if err := f.db.DeleteUser(ctx, demo.EditorUserID, demo.AdminUserID); err != nil {
		t.Fatal(err)
	}
	f.db.Exec(t, `UPDATE user_purges SET deleted_at = now() - interval '10 minutes'`)
	if err := f.db.DeleteUser(ctx, demo.MemberUserID, demo.AdminUserID); err != nil {
		t.Fatal(err)
	}

	// The cdn failing: the versions go, the records stay (CloudFront is told next time).
	f.notifier.err = errors.New("cdn down")
	if err := f.svc.PurgeUsers(ctx, demo.MemberUserID); err == nil {
		t.Error("a purge whose cdn call failed succeeded")
	}
	if got := pending(); got != "2,3" {
		t.Errorf("pending purges %q after the cdn failed, want 2,3", got)
	}
	f.notifier.err = nil
	f.notifier.told()

	if err := f.svc.PurgeUsers(ctx, demo.MemberUserID); err != nil {
		t.Fatal(err)
	}
	for _, prefix := range []string{"users/3/", "users/2/"} {
		if v := versions(prefix); len(v) != 0 {
			t.Errorf("versions of a deleted user stay: %v", v)
		}
	}
	if n := len(versions("users/1/")); n != 2 {
		t.Errorf("%d versions of the admin's picture, want their 2 untouched", n)
	}
	if got := f.notifier.told(); !slices.Equal(got, []int64{demo.MemberUserID, demo.EditorUserID}) {
		t.Errorf("cdn told about %v, want the member, then the editor", got)
	}
	if got := pending(); got != "" {
		t.Errorf("pending purges %q, want none", got)
	}
	// Nothing left to do: another call purges nothing and tells nobody.
	if err := f.svc.PurgeUsers(ctx, demo.MemberUserID); err != nil {
		t.Fatal(err)
	}
	if got := f.notifier.told(); len(got) != 0 {
		t.Errorf("cdn told about %v after the purge was done", got)
	}

	// S3 unreachable (last: the failures open the process's S3 breaker): the record stays.
	f.db.Exec(t, `INSERT INTO users (id, slug, username) VALUES (50, 'gone', 'Gone')`)
	if err := f.db.DeleteUser(ctx, 50, demo.AdminUserID); err != nil {
		t.Fatal(err)
	}
	broken := avatars.New(avatars.Deps{Files: testenv.UnreachableS3(t), Store: f.db.DB, Notifier: f.notifier, FileService: true})
	if err := broken.PurgeUsers(ctx, 50); err == nil {
		t.Error("a purge with S3 unreachable succeeded")
	}
	if got := pending(); got != "50" {
		t.Errorf("pending purges %q after a failed one, want 50", got)
	}
}

func TestAvailableAndBodyLimit(t *testing.T) {
	on := avatars.New(avatars.Deps{FileService: true, Limits: images.Limits{MaxBytes: 3 << 20}})
	off := avatars.New(avatars.Deps{})
	if err := on.Available(); err != nil {
		t.Errorf("file service: %v", err)
	}
	e, ok := apperr.As(off.Available())
	if !ok || e.Code != apperr.Unavailable || e.Message != apperr.MsgNoFileService {
		t.Errorf("not a file service: %v", off.Available())
	}
	// The Base64 of the largest image, in JSON, fits.
	if n := on.MaxBodyBytes(); n < (3<<20)*4/3+1024 || n > 5<<20 {
		t.Errorf("body limit %d for 3 MiB images", n)
	}
	if n := off.MaxBodyBytes(); n < images.DefaultMaxBytes*4/3 {
		t.Errorf("default body limit %d", n)
	}
}
