package app_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/mediacatalog/service/infra/tests/tcpfreeze"
	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/app"
	"github.com/mediacatalog/service/shared/deadlines"
	"github.com/mediacatalog/service/shared/httpapi"
	"github.com/mediacatalog/service/shared/routegroups"
)

// TestFrozenDatabaseAnswersByTheCallDeadline: with the longest REQUEST_TIMEOUT (the
// local server's default) and a database frozen mid-way, a request is answered with a
// Response Model by its database call's own deadline, long before its request deadline:
// as on Lambda, whatever the function's timeout.
func TestFrozenDatabaseAnswersByTheCallDeadline(t *testing.T) {
	ctx := context.Background()
	db := testenv.NewDemoDB(t)
	u, err := url.Parse(db.URL)
	if err != nil || u.Host == "" {
		t.Skipf("the test database is not reached over TCP (%s)", db.URL)
	}
	relay := tcpfreeze.New(t, u.Host)
	u.Host = relay.Addr()
	a := newApp(t, map[string]string{"DB_ENV": "local", "DATABASE_URL": u.String(), "REQUEST_TIMEOUT": deadlines.RequestTimeout.String()})
	var groups []app.Group
	for _, g := range routegroups.All() {
		if g.Name == "tags" {
			groups = append(groups, g)
		}
	}
	h, err := a.Handler(ctx, groups...)
	if err != nil {
		t.Fatal(err)
	}
	get := func() (*httptest.ResponseRecorder, time.Duration) {
		rec := httptest.NewRecorder()
		start := time.Now()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/tags?client=1", nil))
		return rec, time.Since(start)
	}
	if rec, _ := get(); rec.Code != http.StatusOK {
		t.Fatalf("healthy: %d %s", rec.Code, rec.Body)
	}
	relay.Freeze(true)
	defer relay.Freeze(false)
	rec, took := get()
	var model httpapi.Response
	if err := json.Unmarshal(rec.Body.Bytes(), &model); err != nil || model.Code != rec.Code || rec.Code < 500 {
		t.Errorf("frozen: %d %s, want a 5xx Response Model", rec.Code, rec.Body)
	}
	// A correctness bound, not a benchmark: the call's deadline (and a connect timeout
	// for a new connection) ends it, not the request's 55 s.
	if bound := deadlines.RequestTimeout / 2; took > bound {
		t.Errorf("answered after %v: the request deadline, not the call's %v, ended it", took, deadlines.CallTimeout)
	}
}
