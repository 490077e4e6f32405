package main

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"time"

	"github.com/mediacatalog/service/infra/samtemplate"
	"github.com/mediacatalog/service/shared/app"
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

// lambdaDeadlines gives each request the deadline Lambda gives an invocation of the
// function that serves its route (its Timeout from now). The service's middleware then
// ends the request's work LambdaMargin before it, as it does on Lambda, so a request
// waits locally no longer than the deployed function may run (REQUEST_TIMEOUT, when
// shorter, still wins). Other paths (the API reference, unknown routes) keep
// REQUEST_TIMEOUT alone.
func lambdaDeadlines(next http.Handler, timeouts map[string]time.Duration) http.Handler {
	routes := http.NewServeMux()
	for pattern := range timeouts {
		routes.Handle(pattern, http.NotFoundHandler())
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, pattern := routes.Handler(r)
		if d, ok := timeouts[pattern]; ok {
			ctx, cancel := context.WithTimeout(r.Context(), d)
			defer cancel()
			r = r.WithContext(ctx)
		}
		next.ServeHTTP(w, r)
	})
}
