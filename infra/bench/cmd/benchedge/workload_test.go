package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/mediacatalog/service/shared/openapi"
)

func toyCatalog() catalog {
	c := catalog{clients: []int64{1, 2}, tags: []int64{1, 2, 3}, users: []int64{1, 2}, pageSize: 20, pubsPages: 2}
	c.publishers = append(c.publishers, struct {
		id   int64
		slug string
	}{1, "kodansha"}, struct {
		id   int64
		slug string
	}{2, "shueisha"})
	return c
}

// TestWorkloadCoversEveryPublicRead: the workload's kinds (the route tables' routes
// with a Cache policy) are exactly the OpenAPI document's public reads (every GET
// outside /admin- and /auth/), each with URLs (values fills its parameters, or a list
// of universe's), and each URL is told back to its kind.
func TestWorkloadCoversEveryPublicRead(t *testing.T) {
	var doc struct {
		Paths map[string]map[string]any `yaml:"paths"`
	}
	if err := yaml.Unmarshal(openapi.Document, &doc); err != nil {
		t.Fatal(err)
	}
	var want []string
	for path, item := range doc.Paths {
		if _, ok := item["get"]; ok && !strings.HasPrefix(path, "/admin-") && !strings.HasPrefix(path, "/auth/") {
			want = append(want, "GET "+path)
		}
	}
	var got []string
	for _, k := range kinds {
		got = append(got, k.name)
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("the workload's routes %v, the document's public reads %v", got, want)
	}
	per := map[string]int{}
	for _, tg := range universe(toyCatalog()) {
		per[tg.kind]++
		if k := kindOfPath(tg.path); k != tg.kind {
			t.Errorf("%s is told as %q, made as %q", tg.path, k, tg.kind)
		}
	}
	for _, k := range kinds {
		if per[k.name] == 0 {
			t.Errorf("no URL of %s", k.name)
		}
	}
}

// TestWorkloadZipf: the same seed gives the same requests; the most asked URL is asked
// far more than the median one; about the asked share goes without an Origin.
func TestWorkloadZipf(t *testing.T) {
	targets := universe(toyCatalog())
	a, b := workload(targets, 5000, 1.1, 0.1, 7), workload(targets, 5000, 1.1, 0.1, 7)
	if !slices.Equal(a, b) {
		t.Fatal("one seed, two workloads")
	}
	count := map[string]int{}
	noOrigin := 0
	for _, r := range a {
		count[r.path]++
		if !r.origin {
			noOrigin++
		}
	}
	var counts []int
	for _, c := range count {
		counts = append(counts, c)
	}
	slices.Sort(counts)
	if top, median := counts[len(counts)-1], counts[len(counts)/2]; top < 10*median {
		t.Errorf("the most asked URL %d times, the median %d: not a Zipf law", top, median)
	}
	if noOrigin < 350 || noOrigin > 650 {
		t.Errorf("%d of 5000 without an Origin, want about 500", noOrigin)
	}
}

// TestIdealHits: a request is an ideal hit when its key was filled within the
// freshness of what filled it; Origin splits keys only when it is in the key.
func TestIdealHits(t *testing.T) {
	t0 := time.Unix(0, 0)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	tests := []struct {
		name             string
		events           []event
		withOrigin, star int
	}{
		{"again within s-maxage", []event{{at(0), "/tags?client=1", "GET /tags", true, 200}, {at(100), "/tags?client=1", "GET /tags", true, 200}}, 1, 1},
		{"again past s-maxage", []event{{at(0), "/tags?client=1", "GET /tags", true, 200}, {at(241), "/tags?client=1", "GET /tags", true, 200}}, 0, 0},
		{"refilled, then within", []event{{at(0), "/t", "GET /tags", true, 200}, {at(241), "/t", "GET /tags", true, 200}, {at(300), "/t", "GET /tags", true, 200}}, 1, 1},
		{"another Origin", []event{{at(0), "/t", "GET /tags", true, 200}, {at(1), "/t", "GET /tags", false, 200}}, 0, 1},
		{"random never", []event{{at(0), "/publisher/random?client=1", "GET /publisher/random", true, 200}, {at(1), "/publisher/random?client=1", "GET /publisher/random", true, 200}}, 0, 0},
		{"a 404 a minute", []event{{at(0), "/tags/id/9", "GET /tags/id/{id}", true, 404}, {at(59), "/tags/id/9", "GET /tags/id/{id}", true, 404}, {at(120), "/tags/id/9", "GET /tags/id/{id}", true, 404}}, 1, 1},
		{"a 500 never", []event{{at(0), "/t", "GET /tags", true, 500}, {at(1), "/t", "GET /tags", true, 200}}, 0, 0},
		{"an avatar a day", []event{{at(0), "/user/avatar/1", "GET /user/avatar/{id}", true, 200}, {at(3600), "/user/avatar/1", "GET /user/avatar/{id}", true, 200}}, 1, 1},
	}
	for _, tc := range tests {
		if got := idealHits(tc.events, true); got != tc.withOrigin {
			t.Errorf("%s, Origin in the key: %d hits, want %d", tc.name, got, tc.withOrigin)
		}
		if got := idealHits(tc.events, false); got != tc.star {
			t.Errorf("%s, Origin not in the key: %d hits, want %d", tc.name, got, tc.star)
		}
	}
}
