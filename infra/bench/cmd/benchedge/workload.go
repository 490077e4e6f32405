package main

import (
	"fmt"
	"math/rand"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/mediacatalog/service/infra/tests/routefacts"
	"github.com/mediacatalog/service/shared/httpapi"
)

// A kind is one public read route, as the workload names its requests.
type kind struct {
	name    string // the route's pattern
	group   string // its route group, which names its path parameters in values
	route   httpapi.Route
	params  []routefacts.Param
	edgeTTL time.Duration
}

// kinds are the public read routes of the tables (a Cache policy), each with the edge
// lifetime its 200 answers have (its policy's s-maxage): the ideal cache's freshness.
// router tells a URL's kind.
var kinds, router = publicReads()

func publicReads() ([]kind, *routefacts.Router) {
	groups, err := routefacts.Groups()
	if err != nil {
		panic("benchedge: the route tables: " + err.Error())
	}
	params, err := routefacts.Params()
	if err != nil {
		panic("benchedge: the OpenAPI document: " + err.Error())
	}
	var out []kind
	for _, g := range groups {
		for _, rt := range g.Routes {
			if rt.Cache != "" && rt.Method() == http.MethodGet {
				out = append(out, kind{name: rt.Pattern, group: g.Name, route: rt, params: params[rt.Pattern], edgeTTL: routefacts.EdgeTTL(rt.Cache)})
			}
		}
	}
	return out, routefacts.NewRouter(groups)
}

// missingTTL is the edge lifetime of a public 4xx.
var missingTTL = routefacts.EdgeTTL(httpapi.CacheMissing)

func kindOf(name string) kind {
	for _, k := range kinds {
		if k.name == name {
			return k
		}
	}
	panic("benchedge: no kind " + name)
}

// kindOfPath is the kind of a URL of the workload: the public read it reaches; "" for
// any other.
func kindOfPath(p string) string {
	rt, ok := router.Route(http.MethodGet, p)
	if !ok || rt.Cache == "" {
		return ""
	}
	return rt.Pattern
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

// values are what the public reads' parameters take over the catalog, by
// routefacts.ParamKey ("tags id", "?client"), escaped for the URL. A public read whose
// parameters all have values is in the workload with no line of its own: a URL for
// each combination (routefacts.URLs).
func values(c catalog) map[string][]string {
	ids := func(v []int64) []string {
		out := make([]string, len(v))
		for i, id := range v {
			out[i] = strconv.FormatInt(id, 10)
		}
		return out
	}
	var pubIDs []int64
	var slugs []string
	for _, p := range c.publishers {
		pubIDs, slugs = append(pubIDs, p.id), append(slugs, url.PathEscape(p.slug))
	}
	return map[string][]string{
		"?client":         ids(c.clients),
		"tags id":         ids(c.tags),
		"publishers id":   ids(pubIDs),
		"publishers slug": slugs,
		"cdn id":          ids(c.users),
		"cdn res":         {"high"},
	}
}

// universe lists every URL the workload may ask for: each public read route over the
// catalog's ids and slugs (routefacts.URLs over values), the lists instead with the frontend's usual
// query parameters (every order and page of the publishers, a first page of each
// publisher's publications).
func universe(c catalog) []target {
	lists := map[string][]string{}
	for _, cl := range c.clients {
		for _, order := range []string{"name-asc", "name-desc", "added-asc", "added-desc"} {
			for p := range max(c.pubsPages, 1) {
				lists["GET /publishers"] = append(lists["GET /publishers"],
					fmt.Sprintf("/publishers?client=%d&order=%s&limit=%d&offset=%d", cl, order, c.pageSize, p*c.pageSize))
			}
		}
	}
	for _, p := range c.publishers {
		for _, cl := range c.clients {
			lists["GET /publisher/publications/{id}"] = append(lists["GET /publisher/publications/{id}"],
				fmt.Sprintf("/publisher/publications/%d?client=%d&limit=%d&offset=0", p.id, cl, c.pageSize))
		}
	}
	vals := values(c)
	var out []target
	for _, k := range kinds {
		urls, ok := lists[k.name]
		if !ok {
			urls, _ = routefacts.URLs(k.group, k.route, k.params, vals)
		}
		for _, u := range urls {
			out = append(out, target{path: u, kind: k.name})
		}
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
