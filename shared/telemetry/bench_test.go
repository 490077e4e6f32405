package telemetry_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mediacatalog/service/infra/testenv"
	"github.com/mediacatalog/service/shared/app"
	"github.com/mediacatalog/service/shared/config"
	"github.com/mediacatalog/service/shared/lambdahttp"
	"github.com/mediacatalog/service/shared/tags"
	"github.com/mediacatalog/service/shared/telemetry"
)

// BenchmarkTracedTags measures what the instrumentation costs a request: GET
// /tags?client=1's event through the Lambda entry, served by the tags function as its
// main wires it with every span recorded (a sampled trace header) and sent to a UDP
// socket standing in for the X-Ray daemon before the invocation returns, and its EMF
// document written; beside a bare net/http handler that runs the same statement with
// pgx on a pool of its own (the same query mode, no tracer) and encodes the list, through
// the same entry with an unsampled header. One iteration is one request of each, in
// alternating order, so that both see the same machine; it reports each side's mean
// and their ratio.
func BenchmarkTracedTags(b *testing.B) {
	daemon, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer daemon.Close()
	go func() {
		buf := make([]byte, 64<<10)
		for {
			if _, _, err := daemon.ReadFrom(buf); err != nil {
				return
			}
		}
	}()
	telemetry.Setup(telemetry.Options{Function: "tags", Exporter: telemetry.NewXRayExporter(daemon.LocalAddr().String()), Metrics: io.Discard, PerInvocation: true})
	db := testenv.NewDemoDB(b)
	cfg, err := config.Load(func(k string) string {
		return map[string]string{"DB_ENV": "local", "DATABASE_URL": db.URL}[k]
	})
	if err != nil {
		b.Fatal(err)
	}
	a := app.New(cfg, slog.New(slog.DiscardHandler))
	defer a.Close()
	ctx := context.Background()
	service, err := a.Handler(ctx, tags.Group)
	if err != nil {
		b.Fatal(err)
	}
	bare := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		list, err := db.Tags(r.Context(), 1)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(list)
	})
	event, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "events", "tags", "get-tags.json"))
	if err != nil {
		b.Fatal(err)
	}
	//nolint:staticcheck // the runtime client's own key for the invocation's trace header
	sampled := context.WithValue(ctx, "x-amzn-trace-id", "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1")
	//nolint:staticcheck
	unsampled := context.WithValue(ctx, "x-amzn-trace-id", "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=0")
	invoke := func(ctx context.Context, h http.Handler) time.Duration {
		start := time.Now()
		resp, err := lambdahttp.Invoke(ctx, h, event)
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("invoke: %d %v", resp.StatusCode, err)
		}
		return time.Since(start)
	}
	invoke(sampled, service) // the pools connect and prepare
	invoke(unsampled, bare)
	var traced, plain, untraced time.Duration
	b.ResetTimer()
	for i := range b.N {
		if i%2 == 0 {
			plain += invoke(unsampled, bare)
			traced += invoke(sampled, service)
			untraced += invoke(unsampled, service)
		} else {
			untraced += invoke(unsampled, service)
			traced += invoke(sampled, service)
			plain += invoke(unsampled, bare)
		}
	}
	b.ReportMetric(float64(untraced.Microseconds())/float64(b.N), "unsampled-µs/req")
	b.ReportMetric(float64(traced.Microseconds())/float64(b.N), "traced-µs/req")
	b.ReportMetric(float64(plain.Microseconds())/float64(b.N), "bare-µs/req")
	b.ReportMetric(float64(traced)/float64(plain), "ratio")
}
