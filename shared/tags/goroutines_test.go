package tags_test

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"runtime/metrics"
	"testing"

	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/app"
	"github.com/mediacatalog/service/shared/config"
	"github.com/mediacatalog/service/shared/lambdahttp"
	"github.com/mediacatalog/service/shared/tags"
)

// TestNoGoroutinePerRequest serves the tags read as the tags function's main wires it
// (app.New: the guarded pool, the budget, the whole middleware) through the Lambda
// entry and counts the goroutines the runtime creates meanwhile. A request that makes
// one (a context left following the request's work context when it ends is cancelled
// by a goroutine of context.AfterFunc's) pays for its creation and for waking a second
// thread to run it, on every invocation.
func TestNoGoroutinePerRequest(t *testing.T) {
	db := testenv.NewDemoDB(t)
	cfg, err := config.Load(func(k string) string {
		return map[string]string{"DB_ENV": "local", "DATABASE_URL": db.URL}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	a := app.New(cfg, slog.New(slog.DiscardHandler))
	t.Cleanup(a.Close)
	ctx := context.Background()
	h, err := a.Handler(ctx, tags.Group)
	if err != nil {
		t.Fatal(err)
	}
	event, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "events", "tags", "get-tags.json"))
	if err != nil {
		t.Fatal(err)
	}
	invoke := func() {
		resp, err := lambdahttp.Invoke(ctx, h, event)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("invoke: %d %v", resp.StatusCode, err)
		}
	}
	for range 3 {
		invoke() // the pool connects, the statement is prepared
	}
	sample := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	created := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	const requests = 200
	before := created()
	for range requests {
		invoke()
	}
	// A few allowed for the runtime's and the pool's own (a health check, a GC worker).
	n := created() - before
	t.Logf("%d requests created %d goroutines", requests, n)
	if n > requests/10 {
		t.Errorf("%d requests created %d goroutines; want none per request", requests, n)
	}
}
