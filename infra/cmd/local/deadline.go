package main

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"time"

	"github.com/mediacatalog/service/infra/apidocs"
	"github.com/mediacatalog/service/infra/samtemplate"
	"github.com/mediacatalog/service/shared/app"
	"github.com/mediacatalog/service/shared/httpapi"
	"github.com/mediacatalog/service/shared/routegroups"
)

// functionTimeouts returns, for each route's ServeMux pattern, the Timeout that template.yaml
// gives the function serving it: what Lambda gives each invocation of that function.
func functionTimeouts(ctx context.Context, a *app.App) (map[string]time.Duration, error) {
	tpl, err := samtemplate.Load(filepath.Join(samtemplate.Dir(), "..", "..", "template.yaml"))
	if err != nil {
		return nil, err
	}
	byName := map[string]time.Duration{}
	for _, f := range tpl.Functions {
		byName[f.Name] = time.Duration(f.Timeout) * time.Second
	}
	out := map[string]time.Duration{}
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
			out[r.MuxPattern()] = d
		}
	}
	return out, nil
}

// routes is the local server's one ServeMux: the API reference at apidocs.Path (docs),
// each API route (the patterns of timeouts) with the deadline Lambda gives an
// invocation of the function that serves it (its Timeout from now), and every other
// path to api. The service's middleware then ends the request's work LambdaMargin
// before that deadline, as it does on Lambda, so a request waits locally no longer
// than the deployed function may run (REQUEST_TIMEOUT, when shorter, still wins).
// Other paths (the API reference, unknown routes) keep REQUEST_TIMEOUT alone. The
// routes share the mux with the reference, so a request is routed once here (and
// once more by the API's own mux, as on Lambda).
func routes(api, docs http.Handler, timeouts map[string]time.Duration) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle(apidocs.Path, docs)
	mux.Handle(apidocs.Path+"/", docs)
	for pattern, d := range timeouts {
		mux.Handle(pattern, lambdaDeadline(api, d))
	}
	mux.Handle("/", api)
	return mux
}

// lambdaDeadline gives each request the deadline of an invocation of timeout from now.
func lambdaDeadline(next http.Handler, timeout time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(httpapi.WithInvocationDeadline(r.Context(), time.Now().Add(timeout))))
	})
}
