package main

import (
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/mediacatalog/service/infra/tests/routefacts"
)

// notBenched are the API's routes the benchmark leaves out, each with its reason. The
// test below fails when a route is neither benched nor named here, and when a route
// named here is gone or benched after all, so the list cannot go stale.
var notBenched = map[string]string{
	// Image uploads and removals: their cost is the picture's (decoding, scaling, S3),
	// held by the image benchmark (make bench, P5); a removal also needs an upload
	// before each request.
	"POST /admin-users/update-image/{id}":           "image upload: its cost is the picture's (make bench)",
	"DELETE /admin-users/delete-image/{id}":         "image removal: needs an upload before each request; its cost is S3's",
	"POST /admin-contributors/update-avatar/{id}":   "image upload: its cost is the picture's (make bench)",
	"DELETE /admin-contributors/delete-avatar/{id}": "image removal: needs an upload before each request; its cost is S3's",
	// The OAuth flows talk to the providers: the starts redirect to a registered
	// application's consent page, the callbacks exchange a code with the provider.
	"GET /auth/oauth/{provider}":               "OAuth start: a redirect to the provider's consent page, no catalog work",
	"GET /auth/oauth/{provider}/callback":      "OAuth callback: exchanges a code with the provider",
	"GET /auth/oauth/link/{provider}":          "OAuth link start: a redirect to the provider's consent page, no catalog work",
	"GET /auth/oauth/link/{provider}/callback": "OAuth link callback: exchanges a code with the provider",
	"DELETE /auth/oauth/unlink/{provider}":     "a user's own write, not an admin one; each unlink needs a link made through a provider",
	"POST /user/avatar/change/{id}":            "internal notice that checks no access; it waits out the avatar reference's cache age by design",
}

// testAPI is the route tables and the OpenAPI document's parameters, as the benchmark
// reads them.
func testAPI(t *testing.T) api {
	t.Helper()
	a, err := loadAPI()
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// someShape is a catalog's shape with every id set, for listing the routes.
func someShape() catalogShape {
	v, m := "v", "m"
	return catalogShape{big: 11, links: 1000, publishers: 100, contributors: 100, users: 100,
		typicalPublisher: "g2-publisher-50",
		contributor:      contributorRow{id: 12, first: "A", last: "B", gender: &v, kind: &m, links: []string{"https://x.example"}},
		user:             userRow{id: 13, username: "u"}, nextUser: 14, tag: 15, defaultRole: 3,
		editor: roleRow{id: 2, name: "editor"}, permission: 16, extraPermission: 17}
}

// benchedPatterns routes each bench entry's first request through the route tables'
// ServeMux and returns the API pattern it reaches, by entry label.
func benchedPatterns(a api) map[string]string {
	router := routefacts.NewRouter(a.groups)
	out := map[string]string{}
	for _, r := range benchRoutes(a, someShape(), nil) {
		path := r.path
		if r.target != nil {
			path = r.target(0)
		}
		rt, _ := router.Route(r.verb(), path)
		out[r.label] = rt.Pattern // "" when it reaches no route
	}
	return out
}

// TestEveryRouteBenched: every route is benched or has its reason here. A read is
// benched by its route-table line alone when fills has its parameters; a write needs
// its entry in writes.routes.
func TestEveryRouteBenched(t *testing.T) {
	a := testAPI(t)
	benched := map[string]bool{}
	for label, pattern := range benchedPatterns(a) {
		if pattern == "" {
			t.Errorf("bench entry %q reaches no route of the API", label)
		}
		benched[pattern] = true
	}
	_, skipped := a.reads(someShape())
	var api []string
	for _, g := range a.groups {
		for _, rt := range g.Routes {
			api = append(api, rt.Pattern)
		}
	}
	sort.Strings(api)
	for _, p := range api {
		reason, excepted := notBenched[p]
		switch {
		case benched[p] && excepted:
			t.Errorf("%s is benched and also excepted (%s): drop the exception", p, reason)
		case !benched[p] && !excepted && skipped[p] != "":
			t.Errorf("%s is not benched: %s; add it to fills, or a reason in notBenched", p, skipped[p])
		case !benched[p] && !excepted:
			t.Errorf("%s has no bench entry in writes.routes and no reason in notBenched", p)
		}
	}
	for p := range notBenched {
		if !slices.Contains(api, p) {
			t.Errorf("notBenched names %s, which is not a route of the API", p)
		}
	}
}

// Every GET route and every admin write of the API is held to the rule above; this
// checks the rule covers each route listed below (a route group added later joins
// through routegroups.All).
func TestEveryKindCovered(t *testing.T) {
	benched := map[string]bool{}
	for _, p := range benchedPatterns(testAPI(t)) {
		benched[p] = true
	}
	for _, want := range []string{
		"GET /publishers", "GET /publisher/slug/{slug}", "GET /publisher/random", "GET /publisher/publications/{id}",
		"GET /tags", "GET /tags/id/{id}", "GET /auth/oauth/connections", "GET /user/avatar/{id}", "GET /user/avatar/{id}/{res}",
		"GET /admin-roles", "GET /admin-roles/id/{id}", "GET /admin-permissions", "GET /admin-permissions/id/{id}",
		"GET /admin-users/id/{id}", "GET /admin-contributors/id/{id}",
		"POST /admin-users/edit/{id}", "POST /admin-users/logout/{id}", "DELETE /admin-users/delete/{id}",
		"POST /admin-roles/edit/{id}", "POST /admin-roles/add", "DELETE /admin-roles/delete/{id}",
		"POST /admin-permissions/add", "POST /admin-permissions/edit/{id}", "DELETE /admin-permissions/delete/{id}",
		"POST /admin-contributors/add", "POST /admin-contributors/edit/{id}", "DELETE /admin-contributors/delete/{id}",
	} {
		if !benched[want] {
			t.Errorf("%s is not benched", want)
		}
	}
}

// The edits alternate between two states: after a cycle, what one request added the
// next removes, and a toggled field is back.
func TestWritesReturnAfterACycle(t *testing.T) {
	for _, r := range benchRoutes(testAPI(t), someShape(), nil) {
		if r.method == "" {
			continue
		}
		if r.cycle == 0 && r.body != nil && r.cleanup == nil && r.prepare == nil {
			t.Errorf("%s: a write with a body needs a cycle, a clean-up or throwaway rows", r.label)
		}
		if r.cycle != 2 {
			continue
		}
		a, b := r.body(0), r.body(1)
		if a == b {
			t.Errorf("%s: the two requests of a cycle are the same: %s", r.label, a)
		}
		if strings.Contains(a, "added_") != strings.Contains(b, "removed_") {
			t.Errorf("%s: what request 0 adds, request 1 must remove: %s then %s", r.label, a, b)
		}
		if r.body(2) != a {
			t.Errorf("%s: request 2 is not request 0 again: %s, %s", r.label, r.body(2), a)
		}
	}
}
