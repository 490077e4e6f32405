package faults_test

import (
	"context"
	"net/http"
	"path/filepath"
	"time"

	"github.com/mediacatalog/service/infra/tests/samtemplate"
	"github.com/mediacatalog/service/shared/app"
	"github.com/mediacatalog/service/shared/deadlines"
	"github.com/mediacatalog/service/shared/httpapi"
	"github.com/mediacatalog/service/shared/routegroups"
)

// localHandler serves every route group as the local server does (infra/local/cmd/local):
// each route in the middleware with the time its function's invocation leaves it,
// template.yaml's Timeout less deadlines.LambdaMargin, and any other path to the 404 answer. So
// a request under a fault waits no longer than the deployed function would.
func localHandler(ctx context.Context, a *app.App) (http.Handler, error) {
	tpl, err := samtemplate.Load(filepath.Join(samtemplate.Dir(), "..", "..", "..", "template.yaml"))
	if err != nil {
		return nil, err
	}
	timeouts := map[string]time.Duration{}
	for _, f := range tpl.Functions {
		timeouts[f.Name] = time.Duration(f.Timeout) * time.Second
	}
	mux := http.NewServeMux()
	for _, g := range routegroups.All() {
		rs, err := a.Routes(ctx, g)
		if err != nil {
			return nil, err
		}
		for _, r := range rs {
			mux.Handle(r.MuxPattern(), a.Wrap(r.Served(), timeouts[g.Name]-deadlines.LambdaMargin))
		}
	}
	mux.Handle("/", a.Wrap(httpapi.NewMux(), 0))
	return mux, nil
}
