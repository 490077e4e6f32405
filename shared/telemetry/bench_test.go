package telemetry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/mediacatalog/service/infra/tests/testenv"
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
// the same entry with an unsampled header; and, for the share of the spans, the service
// with the unsampled header. One iteration is one request of each, in rotating order,
// so that all see the same machine; it reports each side's mean wall time, the traced
// one's ratio to the bare one (of the means, and the median of the iterations' ratios,
// which a burst of the machine's other load moves less), and each side's CPU time in
// this process.
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
	// Without gzip: compression is the service's work that the bare handler lacks, not
	// the request path's.
	event = bytes.Replace(event, []byte(`"accept-encoding"`), []byte(`"x-accept-encoding"`), 1)
	//nolint:staticcheck // the runtime client's own key for the invocation's trace header
	sampled := context.WithValue(ctx, "x-amzn-trace-id", "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1")
	//nolint:staticcheck
	unsampled := context.WithValue(ctx, "x-amzn-trace-id", "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=0")
	// side is one way of serving the request: its wall time and this process's CPU
	// time (user and system, from getrusage), which the machine's other load does not
	// stretch as it does the wall time.
	type side struct {
		ctx       context.Context
		h         http.Handler
		wall, cpu time.Duration
		last      time.Duration // the last request's wall time
	}
	cpuNow := func() time.Duration {
		var ru syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	invoke := func(s *side) {
		start, cpu := time.Now(), cpuNow()
		resp, err := lambdahttp.Invoke(s.ctx, s.h, event)
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("invoke: %d %v", resp.StatusCode, err)
		}
		s.last = time.Since(start)
		s.wall += s.last
		s.cpu += cpuNow() - cpu
	}
	traced, plain := &side{ctx: sampled, h: service}, &side{ctx: unsampled, h: bare}
	untraced := &side{ctx: unsampled, h: service}
	sides := []*side{plain, traced, untraced}
	for _, s := range sides {
		invoke(s) // the pools connect and prepare
		s.wall, s.cpu = 0, 0
	}
	ratios := make([]float64, 0, b.N) // traced / bare, request by request
	b.ResetTimer()
	for i := range b.N {
		for j := range sides {
			invoke(sides[(i+j)%len(sides)])
		}
		ratios = append(ratios, float64(traced.last)/float64(plain.last))
	}
	n := float64(b.N)
	slices.Sort(ratios)
	b.ReportMetric(ratios[len(ratios)/2], "median-ratio")
	b.ReportMetric(float64(untraced.wall.Microseconds())/n, "unsampled-µs/req")
	b.ReportMetric(float64(untraced.cpu.Microseconds())/n, "unsampled-cpu-µs/req")
	b.ReportMetric(float64(traced.wall.Microseconds())/n, "traced-µs/req")
	b.ReportMetric(float64(plain.wall.Microseconds())/n, "bare-µs/req")
	b.ReportMetric(float64(traced.wall)/float64(plain.wall), "ratio")
	b.ReportMetric(float64(traced.cpu.Microseconds())/n, "traced-cpu-µs/req")
	b.ReportMetric(float64(plain.cpu.Microseconds())/n, "bare-cpu-µs/req")
}
