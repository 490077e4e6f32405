package routefacts_test

import (
	"bytes"
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mediacatalog/service/infra/tests/routefacts"
	"github.com/mediacatalog/service/shared/httpapi"
)

var update = flag.Bool("update", false, "rewrite the generated regions from the route tables (make generate)")

// TestGenerated: every generated region is what the route tables, the OpenAPI document
// and the edge's files make of it; with -update (make generate) it rewrites them.
func TestGenerated(t *testing.T) {
	root := routefacts.Root()
	files, err := routefacts.Generate(root)
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range files {
		full := filepath.Join(root, path)
		got, err := os.ReadFile(full)
		switch {
		case errors.Is(err, fs.ErrNotExist) && want == nil:
			continue
		case errors.Is(err, fs.ErrNotExist):
			got = nil
		case err != nil:
			t.Fatal(err)
		case want == nil:
			if *update {
				if err := os.Remove(full); err != nil {
					t.Fatal(err)
				}
				t.Logf("removed %s", path)
				continue
			}
			t.Errorf("%s is the event of no route: run make generate and commit the result", path)
			continue
		}
		if got != nil && bytes.Equal(got, want) {
			continue
		}
		if *update {
			if err := os.WriteFile(full, want, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("wrote %s", path)
			continue
		}
		if got == nil {
			t.Errorf("%s is missing: run make generate and commit the result", path)
			continue
		}
		t.Errorf("%s differs from what the route tables make of it: run make generate and commit the result", path)
	}
}

// TestThrottleClasses: every write and OAuth flow has its own budget, and a read of
// the catalog or the admin pages shares the default one; the route table says which.
func TestThrottleClasses(t *testing.T) {
	groups, err := routefacts.Groups()
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range groups {
		for _, rt := range g.Routes {
			want := httpapi.ThrottleRead
			switch {
			case g.Name == "oauth":
				want = httpapi.ThrottleOAuth
			case rt.Method() != "GET":
				want = httpapi.ThrottleWrite
			}
			if rt.Throttle != want {
				t.Errorf("%s: throttle %q, want %q", rt.Pattern, rt.Throttle, want)
			}
		}
	}
}

func TestEventName(t *testing.T) {
	for _, tc := range []struct{ pattern, want string }{
		{"GET /tags", "GetTags"},
		{"GET /tags/id/{id}", "GetTagsIdId"},
		{"POST /admin-users/update-image/{id}", "PostAdminUsersUpdateImageId"},
		{"GET /auth/oauth/{provider}/callback", "GetAuthOauthProviderCallback"},
	} {
		if got := routefacts.EventName(httpapi.Route{Pattern: tc.pattern}); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.pattern, got, tc.want)
		}
	}
	seen := []string{}
	groups, err := routefacts.Groups()
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range groups {
		for _, rt := range g.Routes {
			n := routefacts.EventName(rt)
			if slices.Contains(seen, n) {
				t.Errorf("%s: event name %s taken", rt.Pattern, n)
			}
			seen = append(seen, n)
		}
	}
}

// TestRouter: a request reaches the route the functions' ServeMux gives it, with or
// without its query, the oauth callback through its own mux pattern; a path of no
// route reaches none.
func TestRouter(t *testing.T) {
	groups, err := routefacts.Groups()
	if err != nil {
		t.Fatal(err)
	}
	router := routefacts.NewRouter(groups)
	for _, tc := range []struct{ method, target, want string }{
		{"GET", "/tags?client=1", "GET /tags"},
		{"GET", "/publisher/slug/kodansha", "GET /publisher/slug/{slug}"},
		{"GET", "/user/avatar/3/high", "GET /user/avatar/{id}/{res}"},
		{"GET", "/user/avatar/3", "GET /user/avatar/{id}"},
		{"GET", "/auth/oauth/google/callback?code=x", "GET /auth/oauth/{provider}/callback"},
		{"POST", "/admin-roles/add", "POST /admin-roles/add"},
		{"GET", "/admin-roles/add", ""},
		{"GET", "/no/such/route", ""},
	} {
		rt, ok := router.Route(tc.method, tc.target)
		if rt.Pattern != tc.want || ok != (tc.want != "") {
			t.Errorf("%s %s: %q %v, want %q", tc.method, tc.target, rt.Pattern, ok, tc.want)
		}
	}
}

func TestEdgeTTL(t *testing.T) {
	for _, tc := range []struct {
		cache string
		want  time.Duration
	}{
		{httpapi.CacheCatalog, 240 * time.Second},
		{httpapi.CacheRandom, 0},
		{httpapi.CacheAvatar, 24 * time.Hour},
		{httpapi.CacheMissing, time.Minute},
		{httpapi.CachePrivate, 0},
		{"", 0},
	} {
		if got := routefacts.EdgeTTL(tc.cache); got != tc.want {
			t.Errorf("%q: %v, want %v", tc.cache, got, tc.want)
		}
	}
}

// TestURLs: a route's requests are every combination of its path parameters' and
// required query parameters' values, the optional ones left out; none, naming the
// parameter, when one has no values.
func TestURLs(t *testing.T) {
	params, err := routefacts.Params()
	if err != nil {
		t.Fatal(err)
	}
	values := map[string][]string{"?client": {"1", "2"}, "tags id": {"7"}, "cdn id": {"3"}, "cdn res": {"high", "scaled"}}
	for _, tc := range []struct {
		group, pattern string
		want           []string
		missing        string
	}{
		{"tags", "GET /tags", []string{"/tags?client=1", "/tags?client=2"}, ""},
		{"tags", "GET /tags/id/{id}", []string{"/tags/id/7"}, ""},
		{"cdn", "GET /user/avatar/{id}/{res}", []string{"/user/avatar/3/high", "/user/avatar/3/scaled"}, ""},
		{"publishers", "GET /publisher/publications/{id}", nil, "publishers id"},
		{"admin-roles", "GET /admin-roles", []string{"/admin-roles"}, ""},
	} {
		got, missing := routefacts.URLs(tc.group, httpapi.Route{Pattern: tc.pattern}, params[tc.pattern], values)
		if !slices.Equal(got, tc.want) || missing != tc.missing {
			t.Errorf("%s: %q missing %q, want %q missing %q", tc.pattern, got, missing, tc.want, tc.missing)
		}
	}
}

func TestStatuses(t *testing.T) {
	st, err := routefacts.Statuses()
	if err != nil {
		t.Fatal(err)
	}
	for op, want := range map[string][]int{
		"GET /tags/id/{id}":                {200, 304, 400, 404, 500, 503},
		"GET /publisher/publications/{id}": {200, 304, 400, 500, 503},
	} {
		if !slices.Equal(st[op], want) {
			t.Errorf("%s: %v, want %v", op, st[op], want)
		}
	}
}

func TestEventFile(t *testing.T) {
	for _, tc := range []struct{ pattern, want string }{
		{"GET /tags", "get-tags.json"},
		{"GET /tags/count", "get-tags-count.json"},
		{"GET /tags/id/{id}", "get-tags-id.json"},
		{"DELETE /auth/oauth/unlink/{provider}", "delete-auth-oauth-unlink.json"},
	} {
		if got := routefacts.EventFile(httpapi.Route{Pattern: tc.pattern}); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.pattern, got, tc.want)
		}
	}
}
