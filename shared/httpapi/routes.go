package httpapi

import (
	"net/http"
	"strings"
)

// Route is one API route, one line of its group's route table (the group's Routes):
// the facts every other place derives from. Pattern is the API's route as API
// Gateway, the OpenAPI document and template.yaml name it (method, space, path with
// its {wildcards}). Mux, when set, is the pattern registered on the ServeMux instead,
// for the rare route whose API pattern overlaps another's in ways ServeMux refuses
// (see the oauth group). The route's permission is the auth.Guard that wraps its
// Handler; its documented query parameters are the OpenAPI document's. make generate
// writes template.yaml's events and alarms, the edge's cache key and the sample events
// of events/ from these facts (infra/tests/routefacts), and make test fails while they
// differ; the benchmarks and the soak derive their requests from them.
type Route struct {
	Pattern string
	Mux     string
	Handler http.Handler
	// Cache, when set, makes the route a public read under that Cache-Control policy
	// (one of the Cache constants): Register serves Handler through Public. The
	// routes under CacheCatalog and CacheRandom are the catalog's, which the edge
	// caches by the cache-key function's list.
	Cache string
	// Throttle is API Gateway's request budget of the route (template.yaml's route
	// settings); the zero value is the reads' default.
	Throttle Throttle
	// Internal: the route is called by internal services, which invoke its function
	// directly (or, over HTTP, sign with SigV4 for API Gateway's AWS_IAM), not
	// through the distribution, so the origin secret is not asked of it
	// (Options.OriginExempt).
	Internal bool
	// OwnText: the route answers a path or query that is not ValidText itself, in
	// the form its contract gives every answer (the OAuth callbacks' redirect), and
	// checks the text it reads; the text layer lets its requests through.
	OwnText bool
}

// Throttle names the template's pair of rate and burst parameters that bound a route.
type Throttle string

const (
	// ThrottleRead is the default route settings' budget (ReadRateLimit,
	// ReadBurstLimit), which every read shares the size of.
	ThrottleRead Throttle = ""
	// ThrottleWrite is a write's own, lower budget (WriteRateLimit, WriteBurstLimit).
	ThrottleWrite Throttle = "Write"
	// ThrottleOAuth is an OAuth flow's (OAuthRouteRateLimit, OAuthRouteBurstLimit).
	ThrottleOAuth Throttle = "OAuthRoute"
)

// CatalogCached reports whether the edge caches the route as a catalog read: its
// answers vary with the query parameters the OpenAPI document gives it (the
// cache-key function's list).
func (rt Route) CatalogCached() bool { return rt.Cache == CacheCatalog || rt.Cache == CacheRandom }

// Served is the handler the mux serves: Handler, through Public when the route has a
// Cache policy, marked ownText when it is OwnText.
func (rt Route) Served() http.Handler {
	h := rt.Handler
	if rt.Cache != "" {
		h = Public(rt.Cache, h)
	}
	if rt.OwnText {
		h = ownText{h}
	}
	return h
}

// MuxPattern is the pattern registered on the ServeMux.
func (rt Route) MuxPattern() string {
	if rt.Mux != "" {
		return rt.Mux
	}
	return rt.Pattern
}

// Method and Path split the API pattern.
func (rt Route) Method() string { m, _, _ := strings.Cut(rt.Pattern, " "); return m }
func (rt Route) Path() string   { _, p, _ := strings.Cut(rt.Pattern, " "); return p }

// Register adds routes to mux. ServeMux panics on a duplicate or conflicting pattern,
// so a test that registers every group catches routing mistakes.
func Register(mux *http.ServeMux, routes []Route) {
	for _, rt := range routes {
		mux.Handle(rt.MuxPattern(), rt.Served())
	}
}

// NewMux registers routes on a fresh mux whose unmatched paths answer a 404 Response
// Model instead of ServeMux's plain text.
func NewMux(routes ...[]Route) *http.ServeMux {
	mux := http.NewServeMux()
	for _, rs := range routes {
		Register(mux, rs)
	}
	mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		Message(w, r, http.StatusNotFound, "Not found")
	}))
	return mux
}
