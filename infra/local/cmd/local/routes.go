package main

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"time"

	"github.com/mediacatalog/service/infra/local/apidocs"
	"github.com/mediacatalog/service/infra/tests/samtemplate"
	"github.com/mediacatalog/service/shared/app"
	"github.com/mediacatalog/service/shared/deadlines"
	"github.com/mediacatalog/service/shared/httpapi"
	"github.com/mediacatalog/service/shared/routegroups"
)

// functionRoute is an API route and the Timeout that template.yaml gives the function
// serving it: what Lambda gives each invocation of that function.
type functionRoute struct {
	httpapi.Route
	timeout time.Duration
}

// functionRoutes builds every route group once and returns its routes with their
// function's Timeout.
func functionRoutes(ctx context.Context, a *app.App) ([]functionRoute, error) {
	tpl, err := samtemplate.Load(filepath.Join(samtemplate.Dir(), "..", "..", "..", "template.yaml"))
	if err != nil {
		return nil, err
	}
	byName := map[string]time.Duration{}
	for _, f := range tpl.Functions {
		byName[f.Name] = time.Duration(f.Timeout) * time.Second
	}
	var out []functionRoute
	for _, g := range routegroups.All() {
		d, ok := byName[g.Name]
		if !ok || d <= 0 {
			return nil, fmt.Errorf("template.yaml gives the %s function no timeout", g.Name)
		}
		rs, err := a.Routes(ctx, g)
		if err != nil {
			return nil, err
		}
		for _, r := range rs {
			out = append(out, functionRoute{Route: r, timeout: d})
		}
	}
	return out, nil
}

// routes is the local server's one ServeMux, which routes a request once, as a
// function's does: the API reference at apidocs.Path (docs); each API route in the
// service's middleware (wrap, app.App.Wrap) with the time its function's invocation
// leaves the work, the function's Timeout less deadlines.LambdaMargin, as the middleware computes
// it from Lambda's deadline (REQUEST_TIMEOUT, when shorter, still wins); every other
// path to the API's 404 answer, in the middleware with REQUEST_TIMEOUT alone. So a
// request waits locally no longer than the deployed function may run.
func routes(rs []functionRoute, docs http.Handler, wrap func(http.Handler, time.Duration) http.Handler) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle(apidocs.Path, docs)
	mux.Handle(apidocs.Path+"/", docs)
	for _, r := range rs {
		mux.Handle(r.MuxPattern(), wrap(r.Served(), r.timeout-deadlines.LambdaMargin))
	}
	mux.Handle("/", wrap(httpapi.NewMux(), 0))
	return mux
}
