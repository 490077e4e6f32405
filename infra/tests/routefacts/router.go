package routefacts

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/mediacatalog/service/shared/httpapi"
)

// Router tells which route of the tables a request reaches, through a ServeMux holding
// each route's pattern as the functions register it: the tools that send requests name
// them by their route without a list of their own.
type Router struct {
	mux   *http.ServeMux
	byMux map[string]httpapi.Route
}

// NewRouter holds every route of groups.
func NewRouter(groups []Group) *Router {
	r := &Router{mux: http.NewServeMux(), byMux: map[string]httpapi.Route{}}
	for _, g := range groups {
		for _, rt := range g.Routes {
			r.mux.Handle(rt.MuxPattern(), http.NotFoundHandler())
			r.byMux[rt.MuxPattern()] = rt
		}
	}
	return r
}

// Route is the route a request for method and target (a path, with or without its
// query) reaches; false when it reaches none.
func (r *Router) Route(method, target string) (httpapi.Route, bool) {
	u, err := url.ParseRequestURI(target)
	if err != nil {
		return httpapi.Route{}, false
	}
	_, pattern := r.mux.Handler(&http.Request{Method: method, URL: u})
	rt, ok := r.byMux[pattern]
	return rt, ok
}

// EdgeTTL is how long the edge keeps a 200 under a Cache policy (its s-maxage); 0 when
// the policy has none or is private.
func EdgeTTL(cache string) time.Duration {
	for _, d := range strings.Split(cache, ",") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(d), "s-maxage="); ok {
			if n, err := strconv.Atoi(v); err == nil {
				return time.Duration(n) * time.Second
			}
		}
	}
	return 0
}
