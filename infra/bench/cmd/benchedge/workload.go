package main

import (
	"fmt"
	"math/rand"
	"net/url"
	"strings"
	"time"
)

// A kind is one public read route, as the workload names its requests.
type kind struct {
	name    string // the route, "GET /tags/id/{id}"
	edgeTTL time.Duration
}

// kinds are the public read routes the workload covers, each with the edge lifetime its
// 200 answers have (s-maxage, httpapi's Cache constants): the ideal cache's freshness.
var kinds = []kind{
	{"GET /tags", 240 * time.Second},
	{"GET /tags/id/{id}", 240 * time.Second},
	{"GET /publishers", 240 * time.Second},
	{"GET /publisher/slug/{slug}", 240 * time.Second},
	{"GET /publisher/random", 0},
	{"GET /publisher/publications/{id}", 240 * time.Second},
	{"GET /user/avatar/{id}/{res}", 86400 * time.Second},
	{"GET /user/avatar/{id}", 86400 * time.Second},
}

// missingTTL is the edge lifetime of a public 4xx (httpapi.CacheMissing).
const missingTTL = 60 * time.Second

func kindOf(name string) kind {
	for _, k := range kinds {
		if k.name == name {
			return k
		}
	}
	panic("benchedge: no kind " + name)
}

// target is one URL of the workload.
type target struct {
	path string // path and query
	kind string
}

// catalog is what the URLs name: ids and slugs of the seeded catalog.
type catalog struct {
	clients    []int64
	tags       []int64
	publishers []struct {
		id   int64
		slug string
	}
	users     []int64
	pageSize  int
	pubsPages int // pages of GET /publishers per client and order
}

// universe lists every URL the workload may ask for: each public read route, over the
// catalog's ids and slugs, with the frontend's usual query parameters.
func universe(c catalog) []target {
	var out []target
	add := func(kind, format string, args ...any) {
		out = append(out, target{path: fmt.Sprintf(format, args...), kind: kind})
	}
	for _, cl := range c.clients {
		add("GET /tags", "/tags?client=%d", cl)
		add("GET /publisher/random", "/publisher/random?client=%d", cl)
		for _, order := range []string{"name-asc", "name-desc", "added-asc", "added-desc"} {
			for p := range max(c.pubsPages, 1) {
				add("GET /publishers", "/publishers?client=%d&order=%s&limit=%d&offset=%d", cl, order, c.pageSize, p*c.pageSize)
			}
		}
	}
	for _, id := range c.tags {
		add("GET /tags/id/{id}", "/tags/id/%d", id)
	}
	for _, p := range c.publishers {
		add("GET /publisher/slug/{slug}", "/publisher/slug/%s", url.PathEscape(p.slug))
		for _, cl := range c.clients {
			add("GET /publisher/publications/{id}", "/publisher/publications/%d?client=%d&limit=%d&offset=0", p.id, cl, c.pageSize)
		}
	}
	for _, id := range c.users {
		add("GET /user/avatar/{id}", "/user/avatar/%d", id)
		add("GET /user/avatar/{id}/{res}", "/user/avatar/%d/high", id)
	}
	return out
}

// request is one request of the workload: a target and whether it carries the
// frontend's Origin (a browser's fetch) or none (a navigation, a crawler).
type request struct {
	target
	origin bool
}

// workload draws n requests over targets by a Zipf law of exponent s (rank r asked
// in proportion to 1/r^s), ranks shuffled across kinds; a share noOrigin of them carry
// no Origin. The same seed gives the same workload.
func workload(targets []target, n int, s, noOrigin float64, seed int64) []request {
	rng := rand.New(rand.NewSource(seed))
	ranked := append([]target(nil), targets...)
	rng.Shuffle(len(ranked), func(i, j int) { ranked[i], ranked[j] = ranked[j], ranked[i] })
	z := rand.NewZipf(rng, s, 1, uint64(len(ranked)-1))
	out := make([]request, n)
	for i := range out {
		out[i] = request{target: ranked[z.Uint64()], origin: rng.Float64() >= noOrigin}
	}
	return out
}

// event is one answered request, as the ideal cache replays it.
type event struct {
	at     time.Time
	path   string
	kind   string
	origin bool
	status int
}

// idealHits is how many of events an ideal cache would answer: every request whose key
// was filled within its freshness (the edge lifetime of what filled it: the kind's for
// a 2xx, missingTTL for a 4xx, none for a 5xx). The key is the path, with the Origin
// when withOrigin (Vary: Origin, Origin in CloudFront's key) or without it (an
// answer with Access-Control-Allow-Origin: *, the same for every origin).
func idealHits(events []event, withOrigin bool) int {
	type fill struct {
		at    time.Time
		fresh time.Duration
	}
	filled := map[string]fill{}
	hits := 0
	for _, e := range events {
		key := e.path
		if withOrigin && e.origin {
			key += "\x00origin"
		}
		if f, ok := filled[key]; ok && e.at.Sub(f.at) < f.fresh {
			hits++
			continue
		}
		filled[key] = fill{e.at, freshness(e)}
	}
	return hits
}

// freshness is how long an answer like e's stays fresh at the edge.
func freshness(e event) time.Duration {
	switch {
	case e.status >= 500:
		return 0
	case e.status >= 400:
		return missingTTL
	}
	return kindOf(e.kind).edgeTTL
}

// hit reports whether the cache status nginx gave an answer means it came from the
// cache: fresh (HIT), stale while refreshed (STALE, UPDATING), or after a 304
// (REVALIDATED).
func hit(status string) bool {
	switch strings.ToUpper(status) {
	case "HIT", "STALE", "UPDATING", "REVALIDATED":
		return true
	}
	return false
}
