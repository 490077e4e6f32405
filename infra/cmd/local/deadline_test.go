package main

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mediacatalog/service/infra/samtemplate"
	"github.com/mediacatalog/service/shared/app"
	"github.com/mediacatalog/service/shared/config"
	"github.com/mediacatalog/service/shared/httpapi"
)

// TestLambdaDeadlines: locally each route's request carries the deadline of its
// function's Timeout in template.yaml, as on Lambda; every one of the 39 routes has
// one; paths outside the API get none from it.
func TestLambdaDeadlines(t *testing.T) {
	cfg, err := config.Load(func(k string) string {
		return map[string]string{"DB_ENV": "local", "DATABASE_URL": "postgres://nobody@127.0.0.1:1/none?sslmode=disable", "FILE_SERVICE": "true"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	a := app.New(cfg, nil)
	defer a.Close()
	timeouts, err := functionTimeouts(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	if len(timeouts) != 39 {
		t.Errorf("%d routes with a timeout, want 39", len(timeouts))
	}
	tpl, err := samtemplate.Load(repoTemplate())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{}
	for _, f := range tpl.Functions {
		want[f.Name] = f.Timeout
	}
	var got time.Duration
	var has bool
	// What the service's handlers see, through its middleware (no REQUEST_TIMEOUT): the
	// invocation's deadline less LambdaMargin.
	see := httpapi.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var d time.Time
		d, has = r.Context().Deadline()
		got = time.Until(d) + httpapi.LambdaMargin
	}), httpapi.Options{Log: slog.New(slog.DiscardHandler)})
	h := routes(see, see, timeouts)
	for _, tc := range []struct {
		method, path, function string
	}{
		{"GET", "/tags/id/1", "tags"},
		{"GET", "/auth/oauth/google", "oauth"},
		{"POST", "/admin-users/update-image/3", "admin-users"},
		{"GET", "/user/avatar/3/high", "cdn"},
		{"GET", "/publisher/publications/1", "publishers"},
		{"GET", "/docs", ""},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(tc.method, tc.path, nil))
			if tc.function == "" {
				if has {
					t.Errorf("a deadline %v outside the API", got)
				}
				return
			}
			limit := time.Duration(want[tc.function]) * time.Second
			// The deadline is set from now: between a second short of it and it.
			if !has || got > limit || got < limit-time.Second {
				t.Errorf("deadline in %v (set %v), want the %s function's %v", got, has, tc.function, limit)
			}
		})
	}
}

func repoTemplate() string { return samtemplate.Dir() + "/../../template.yaml" }
