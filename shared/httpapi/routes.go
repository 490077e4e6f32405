package httpapi

import (
	"net/http"
	"strings"
)

// Route is one API route: Pattern is the API's route as API Gateway, the OpenAPI
// document and template.yaml name it ("GET /tags/id/{id}"). Mux, when set, is the
// pattern registered on the ServeMux instead, for the rare route whose API pattern
// overlaps another's in ways ServeMux refuses (see the oauth group).
type Route struct {
	Pattern string
	Mux     string
	Handler http.Handler
	// Internal: the route is called by internal services, which invoke its function
	// directly (or, over HTTP, sign with SigV4 for API Gateway's AWS_IAM), not
	// through the distribution, so the origin secret is not asked of it
	// (Options.OriginExempt).
	Internal bool
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
		mux.Handle(rt.MuxPattern(), rt.Handler)
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
