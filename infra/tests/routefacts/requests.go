package routefacts

import (
	"net/http"
	"net/url"
	"slices"
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

// ParamKey names a parameter in URLs' values: a path parameter by its route group and
// name ("tags id"), a query parameter by "?" and its name ("?client").
func ParamKey(group string, p Param) string {
	if p.In == "path" {
		return group + " " + p.Name
	}
	return "?" + p.Name
}

// URLs are the requests for a route of group: each combination of values (by
// ParamKey, written as they go in the URL) for its path parameters and its required
// query parameters, the query in the OpenAPI document's order. None when a parameter
// has no values; missing is then its key.
func URLs(group string, rt httpapi.Route, params []Param, values map[string][]string) (urls []string, missing string) {
	type request struct {
		path  string
		query []string
	}
	out := []request{{path: rt.Path()}}
	for _, p := range params {
		if p.In != "path" && (p.In != "query" || !p.Required) {
			continue
		}
		key := ParamKey(group, p)
		if len(values[key]) == 0 {
			return nil, key
		}
		var next []request
		for _, r := range out {
			for _, v := range values[key] {
				if p.In == "path" {
					next = append(next, request{strings.Replace(r.path, "{"+p.Name+"}", v, 1), r.query})
				} else {
					next = append(next, request{r.path, append(slices.Clip(r.query), p.Name+"="+v)})
				}
			}
		}
		out = next
	}
	for _, r := range out {
		u := r.path
		if len(r.query) > 0 {
			u += "?" + strings.Join(r.query, "&")
		}
		urls = append(urls, u)
	}
	return urls, ""
}
