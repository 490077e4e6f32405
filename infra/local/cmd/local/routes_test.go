package main

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mediacatalog/service/infra/tests/routefacts"
	"github.com/mediacatalog/service/infra/tests/samtemplate"
	"github.com/mediacatalog/service/shared/app"
	"github.com/mediacatalog/service/shared/config"
	"github.com/mediacatalog/service/shared/deadlines"
)

// TestLambdaDeadlines: locally each route's work ends when it would on Lambda, its
// function's Timeout in template.yaml less LambdaMargin; every route of the route
// tables has its function's; REQUEST_TIMEOUT wins when shorter; a path outside the API gets
// REQUEST_TIMEOUT, and the API reference no deadline.
func TestLambdaDeadlines(t *testing.T) {
	tpl, err := samtemplate.Load(repoTemplate())
	if err != nil {
		t.Fatal(err)
	}
	all, err := routefacts.RouteCount()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]time.Duration{}
	for _, f := range tpl.Functions {
		want[f.Name] = time.Duration(f.Timeout) * time.Second
	}
	for _, requestTimeout := range []time.Duration{deadlines.RequestTimeout, 12 * time.Second} {
		cfg, err := config.Load(func(k string) string {
			return map[string]string{"DB_ENV": "local", "DATABASE_URL": "postgres://nobody@127.0.0.1:1/none?sslmode=disable",
				"FILE_SERVICE": "true", "REQUEST_TIMEOUT": requestTimeout.String()}[k]
		})
		if err != nil {
			t.Fatal(err)
		}
		a := app.New(cfg, slog.New(slog.DiscardHandler))
		defer a.Close()
		rs, err := functionRoutes(context.Background(), a)
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) != all {
			t.Errorf("%d routes with a timeout, want the tables' %d", len(rs), all)
		}
		// What the service's handlers see, through its middleware.
		var got time.Duration
		var has bool
		see := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var d time.Time
			d, has = r.Context().Deadline()
			got = time.Until(d)
			w.WriteHeader(http.StatusNoContent)
		})
		for i := range rs {
			rs[i].Handler = see
		}
		h := routes(rs, see, func(next http.Handler, budget time.Duration) http.Handler {
			if _, api := next.(*http.ServeMux); api {
				next = see // the API's 404: see what it would get
			}
			return a.Wrap(next, budget)
		})
		for _, tc := range []struct {
			method, path, function string
		}{
			{"GET", "/tags/id/1", "tags"},
			{"GET", "/auth/oauth/google", "oauth"},
			{"POST", "/admin-users/update-image/3", "admin-users"},
			{"GET", "/user/avatar/3/high", "cdn"},
			{"POST", "/user/avatar/change/3", "cdn"},
			{"GET", "/publisher/publications/1", "publishers"},
			{"GET", "/no/such/route", ""},
			{"GET", "/docs", "-"},
		} {
			t.Run(requestTimeout.String()+" "+tc.method+" "+tc.path, func(t *testing.T) {
				has = false
				h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(tc.method, tc.path, nil))
				var limit time.Duration
				switch tc.function {
				case "-":
					if has {
						t.Errorf("a deadline in %v on the API reference", got)
					}
					return
				case "":
					limit = requestTimeout
				default:
					limit = min(want[tc.function]-deadlines.LambdaMargin, requestTimeout)
				}
				// The deadline is set from now: between a second short of it and it.
				if !has || got > limit || got < limit-time.Second {
					t.Errorf("deadline in %v (set %v), want %v (the %q function's)", got, has, limit, tc.function)
				}
			})
		}
	}
}

func repoTemplate() string { return samtemplate.Dir() + "/../../../template.yaml" }
