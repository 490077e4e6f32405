package routefacts_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"

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
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(got, want) {
			continue
		}
		if *update {
			if err := os.WriteFile(full, want, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("rewrote %s", path)
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
