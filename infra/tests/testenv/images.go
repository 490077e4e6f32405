package testenv

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/mediacatalog/service/shared/auth"
	"github.com/mediacatalog/service/shared/avatars"
	"github.com/mediacatalog/service/shared/avatars/avatartest"
	"github.com/mediacatalog/service/shared/catalog"
	"github.com/mediacatalog/service/shared/httpapi"
	"github.com/mediacatalog/service/shared/images"
	"github.com/mediacatalog/service/shared/imageset"
	"github.com/mediacatalog/service/shared/s3store"
)

// ImageLimits are the upload limits of the image tests: small, so that the refused
// inputs stay cheap to make.
var ImageLimits = images.Limits{MaxBytes: 256 << 10, MaxPixels: 1_000_000}

// ImageGroup is a route group with the real media side: images in a bucket of the
// test's own, stored by the avatars service over the group's database.
type ImageGroup struct {
	*Group
	Files   *s3store.Store
	Service *avatars.Service
}

// ImageOptions change what NewImageGroup builds.
type ImageOptions struct {
	NotFileService bool             // the upload and delete routes answer 503
	Files          *s3store.Store   // default: a fresh bucket
	DB             *DB              // default: a fresh database with the demo data
	Limits         *images.Limits   // default: ImageLimits
	Notifier       avatars.Notifier // default: nobody is told of changes
}

// NewImageGroup serves the routes that routes makes of the test's database, sessions
// and avatars service.
func NewImageGroup(t testing.TB, o ImageOptions, routes func(db *DB, sessions *auth.Sessions, svc *avatars.Service) []httpapi.Route) *ImageGroup {
	t.Helper()
	g := &ImageGroup{Files: o.Files}
	if g.Files == nil {
		g.Files = NewS3Store(t)
	}
	limits := ImageLimits
	if o.Limits != nil {
		limits = *o.Limits
	}
	g.Group = newGroup(t, o.DB, func(db *DB, sessions *auth.Sessions) []httpapi.Route {
		g.Service = avatars.New(avatars.Deps{
			Files: g.Files, Store: db.DB, Notifier: o.Notifier, Limits: limits, FileService: !o.NotFileService,
		})
		return routes(db, sessions, g.Service)
	})
	return g
}

// Objects are the keys of every object in the group's bucket.
func (g *ImageGroup) Objects(t testing.TB) []string {
	t.Helper()
	keys, err := g.Files.List(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// Object reads a stored object and checks that its content type is what its bytes are.
func (g *ImageGroup) Object(t testing.TB, key string) catalog.StoredFile {
	t.Helper()
	obj, err := g.Files.Get(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	if sniffed, ok := images.Sniff(obj.Data); !ok || sniffed != obj.ContentType {
		t.Errorf("%s: stored as %q, bytes are %q", key, obj.ContentType, sniffed)
	}
	return obj
}

// ImageRoutes describes a group's two image routes, for the checks every such pair
// must pass (Run): the same service stands behind the users' profile images and the
// contributors' avatars, but each group names its routes, messages and permission.
type ImageRoutes struct {
	Group          string // the group's folder of events/ ("admin-users")
	Update, Delete string // the routes' paths with the record's id as %d
	UpdateEvent    string // the events of the two routes, in the group's folder
	DeleteEvent    string
	// Target is the demo record the events name.
	Target int64
	// Ref is a query of a record's image reference (NULL when it has none) by id.
	Ref        string
	Permission string
	// The routes' messages: success, an unknown record, and the route's own 500 for an
	// upload that could not be stored and for a delete of a record without an image.
	Updated, Deleted, NotFound, UploadFailed, DeleteFailed string
	// New builds the group with the given options.
	New func(t *testing.T, o ImageOptions) *ImageGroup
}

const msgNotFileService = "This service is not handling file uploads."

// Run runs every check of the pair as a subtest.
func (r ImageRoutes) Run(t *testing.T) {
	t.Run("errors", r.errors)
	t.Run("decoded size refused", r.decodedSizeRefused)
	t.Run("not a file service", r.notFileService)
	t.Run("S3 unreachable", r.s3Unreachable)
	t.Run("permission matrix", r.permissionMatrix)
	t.Run("events", r.events)
}

// ref is the record's image reference, "" when it has none.
func (r ImageRoutes) ref(t *testing.T, g *ImageGroup, id int64) string {
	t.Helper()
	var ref *string
	if err := g.DB.Pool.QueryRow(context.Background(), r.Ref, id).Scan(&ref); err != nil {
		t.Fatal(err)
	}
	if ref == nil {
		return ""
	}
	return *ref
}

// upload stores img for record id through the update route, as the editor.
func (r ImageRoutes) upload(t *testing.T, g *ImageGroup, id int64, img string) {
	t.Helper()
	if code, resp := g.Call(t, http.MethodPost, fmt.Sprintf(r.Update, id), map[string]any{"image": img}, g.Editor); code != 200 {
		t.Fatalf("upload: %d %s", code, resp.Data)
	}
}

// Refused uploads and deletes answer their status and message, store nothing and
// leave the record without an image.
func (r ImageRoutes) errors(t *testing.T) {
	g := r.New(t, ImageOptions{})
	good := map[string]any{"image": avatartest.DataURL("image/png", avatartest.PNG(t, 64, 64, false))}
	update, del := func(id any) string { return strings.Replace(r.Update, "%d", fmt.Sprint(id), 1) },
		func(id any) string { return strings.Replace(r.Delete, "%d", fmt.Sprint(id), 1) }
	type row struct {
		name, method, target string
		body                 any
		cookie               *http.Cookie
		status               int
		message              string
	}
	tests := []row{
		{"unknown record", http.MethodPost, update(999999), good, g.Editor, 404, r.NotFound},
		{"unknown record, delete", http.MethodDelete, del(999999), nil, g.Editor, 404, r.NotFound},
		{"id not a number", http.MethodPost, update("abc"), good, g.Editor, 400, "Required parameters missing"},
		{"id not a number, delete", http.MethodDelete, del("x1"), nil, g.Editor, 400, "Required parameters missing"},
		{"id zero", http.MethodPost, update(0), good, g.Editor, 400, "Required parameters missing"},
		{"no cookie", http.MethodPost, update(r.Target), good, nil, 401, "Unauthorized"},
		{"no permission", http.MethodDelete, del(r.Target), nil, g.Member, 403, "Forbidden"},
		{"delete of a record without an image", http.MethodDelete, del(r.Target), nil, g.Editor, 500, r.DeleteFailed},
	}
	for _, u := range avatartest.BadUploads(t, ImageLimits.MaxBytes, ImageLimits.MaxPixels, g.Service.MaxBodyBytes()) {
		tests = append(tests, row{"bad upload: " + u.Name, http.MethodPost, update(r.Target), u.Body, g.Editor, 400, ""})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, resp := g.Call(t, tc.method, tc.target, tc.body, tc.cookie)
			if code != tc.status || (tc.message != "" && resp.Data != tc.message) {
				t.Errorf("%d %q, want %d %q", code, resp.Data, tc.status, tc.message)
			}
			if objects := g.Objects(t); len(objects) != 0 {
				t.Errorf("stored %v", objects)
			}
			if ref := r.ref(t, g, r.Target); ref != "" {
				t.Errorf("record %d points at %q", r.Target, ref)
			}
		})
	}
}

// A 7000x7000 16-bit PNG (400 KB, 392 MB decoded) is refused under the default limits
// with 400 and its own message, from its header: the handler allocates about the
// upload, not the pixels.
func (r ImageRoutes) decodedSizeRefused(t *testing.T) {
	g := r.New(t, ImageOptions{Limits: &images.Limits{}})
	body := map[string]any{"image": avatartest.DataURL("image/png", avatartest.Deep(t, 7000, 7000))}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	code, resp := g.Call(t, http.MethodPost, fmt.Sprintf(r.Update, r.Target), body, g.Editor)
	runtime.ReadMemStats(&after)
	if code != 400 || resp.Data != images.MsgImageTooDeep {
		t.Errorf("%d %q, want 400 %q", code, resp.Data, images.MsgImageTooDeep)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 64<<20 {
		t.Errorf("refusing allocated %d MB: the pixels were decoded", got>>20)
	}
	if objects := g.Objects(t); len(objects) != 0 {
		t.Errorf("stored %v", objects)
	}
}

// An instance that is not a file service answers 503, after authentication and
// authorization, and reads no body.
func (r ImageRoutes) notFileService(t *testing.T) {
	g := r.New(t, ImageOptions{NotFileService: true})
	good := map[string]any{"image": avatartest.Base64(avatartest.PNG(t, 64, 64, false))}
	update, del := fmt.Sprintf(r.Update, r.Target), fmt.Sprintf(r.Delete, r.Target)
	for _, tc := range []struct {
		method, target string
		body           any
		cookie         *http.Cookie
		status         int
		message        string
	}{
		{http.MethodPost, update, good, g.Editor, 503, msgNotFileService},
		{http.MethodPost, update, "not even JSON", g.Editor, 503, msgNotFileService},
		{http.MethodDelete, del, nil, g.Editor, 503, msgNotFileService},
		{http.MethodDelete, fmt.Sprintf(r.Delete, 999999), nil, g.Admin, 503, msgNotFileService},
		{http.MethodPost, update, good, nil, 401, "Unauthorized"},
		{http.MethodDelete, del, nil, g.Member, 403, "Forbidden"},
	} {
		code, resp := g.Call(t, tc.method, tc.target, tc.body, tc.cookie)
		if code != tc.status || resp.Data != tc.message {
			t.Errorf("%s %s: %d %q, want %d %q", tc.method, tc.target, code, resp.Data, tc.status, tc.message)
		}
	}
	if objects := g.Objects(t); len(objects) != 0 {
		t.Errorf("stored %v", objects)
	}
}

// With S3 unreachable an upload answers the route's 500 and the record keeps the image
// it had; a delete still clears the reference (the objects stay as orphans, logged),
// so nothing points at a missing object.
func (r ImageRoutes) s3Unreachable(t *testing.T) {
	good := r.New(t, ImageOptions{})
	r.upload(t, good, r.Target, avatartest.Base64(avatartest.JPEG(t, 300, 300)))
	before, objects := r.ref(t, good, r.Target), good.Objects(t)

	broken := r.New(t, ImageOptions{DB: good.DB, Files: UnreachableS3(t)})
	code, resp := broken.Call(t, http.MethodPost, fmt.Sprintf(r.Update, r.Target),
		map[string]any{"image": avatartest.Base64(avatartest.PNG(t, 100, 100, false))}, broken.Editor)
	if code != 500 || resp.Data != r.UploadFailed {
		t.Errorf("upload: %d %q, want 500 %q", code, resp.Data, r.UploadFailed)
	}
	if after := r.ref(t, good, r.Target); after != before {
		t.Errorf("the record moved from %q to %q", before, after)
	}
	if got := good.Objects(t); !slices.Equal(got, objects) {
		t.Errorf("objects %v, want %v", got, objects)
	}

	code, resp = broken.Call(t, http.MethodDelete, fmt.Sprintf(r.Delete, r.Target), nil, broken.Editor)
	if code != 200 || resp.Data != r.Deleted {
		t.Errorf("delete: %d %q, want 200 %q", code, resp.Data, r.Deleted)
	}
	if ref := r.ref(t, good, r.Target); ref != "" {
		t.Errorf("the record still points at %q", ref)
	}
}

// Both routes need the permission, and nothing else, for every kind of caller.
func (r ImageRoutes) permissionMatrix(t *testing.T) {
	g := r.New(t, ImageOptions{})
	r.upload(t, g, r.Target, avatartest.Base64(avatartest.JPEG(t, 64, 64)))
	rows := AuthMatrix{
		Handler: g.Handler,
		DB:      g.DB,
		Config:  g.Config,
		Routes: []AuthRoute{
			{Method: "POST", Path: fmt.Sprintf(r.Update, r.Target), Body: map[string]any{"image": avatartest.Base64(avatartest.PNG(t, 64, 64, false))},
				Permission: r.Permission, Message: r.Updated},
			{Method: "DELETE", Path: fmt.Sprintf(r.Delete, r.Target), Permission: r.Permission, Message: r.Deleted},
		},
	}.Run(t)
	if rows != 2*8 {
		t.Errorf("%d matrix rows, want 16", rows)
	}
}

// The events of the two routes, run through the Lambda entry: they store and remove
// the image, and the events' placeholder cookie is refused.
func (r ImageRoutes) events(t *testing.T) {
	g := r.New(t, ImageOptions{})
	for _, tc := range []struct {
		event   string
		message string
		check   func(t *testing.T)
	}{
		{r.UpdateEvent, r.Updated, func(t *testing.T) {
			set, err := imageset.ParseRef(r.ref(t, g, r.Target))
			if err != nil || !slices.Equal(g.Objects(t), set.Keys()) {
				t.Fatalf("stored %v for %+v (%v)", g.Objects(t), set, err)
			}
			g.Object(t, set.Key(imageset.High))
			g.Object(t, set.Key(imageset.Scaled))
		}},
		{r.DeleteEvent, r.Deleted, func(t *testing.T) {
			if ref, objects := r.ref(t, g, r.Target), g.Objects(t); ref != "" || len(objects) != 0 {
				t.Errorf("left %q and %v", ref, objects)
			}
		}},
	} {
		t.Run(tc.event, func(t *testing.T) {
			resp := Invoke(t, g.Handler, AuthEvent(t, r.Group+"/"+tc.event, g.Editor))
			want := fmt.Sprintf(`{"data":%q,"code":200}`, tc.message)
			if resp.StatusCode != 200 || strings.TrimSpace(resp.Body) != want {
				t.Fatalf("%d %s, want %s", resp.StatusCode, resp.Body, want)
			}
			tc.check(t)
			resp = Invoke(t, g.Handler, Event(t, r.Group+"/"+tc.event))
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("placeholder cookie: %d, want 401", resp.StatusCode)
			}
		})
	}
}
