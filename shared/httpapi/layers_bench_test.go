package httpapi

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/mediacatalog/service/shared/telemetry"
)

// BenchmarkLayers is the shared middleware's cost, layer by layer, around the two
// answers the request path is judged by: the tags read (a public JSON list of 40 tags
// through Public, 2.4 kB) and the cdn's cached avatar (ServeContent of 3,927 and 37,557
// bytes with the route's header values, no request line), served from memory into a
// response writer that keeps nothing, so that what is measured is the middleware's and
// the handler's alone. For each answer: "handler", the route's handler alone (named by
// telemetry.Route, as every route is); "from=<layer>", the layers from that one inward
// (layers), so that one layer's share is the difference between its line and the next;
// all of them as under Lambda with the trace unsampled (the share of "from=telemetry"),
// with every span recorded and exported to a UDP socket as X-Ray's daemon, and with no
// tracer set up at all (the local server without OTEL_EXPORTER_OTLP_ENDPOINT).
func BenchmarkLayers(b *testing.B) {
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
	exporter := telemetry.NewXRayExporter(daemon.LocalAddr().String())
	defer telemetry.Setup(telemetry.Options{})

	type tag struct {
		ID   int64  `json:"id"`
		Name string `json:"name"`
		Type string `json:"type"`
	}
	tags := make([]tag, 40)
	for i := range tags {
		tags[i] = tag{int64(i + 1), "Tag name " + strconv.Itoa(i), "genre"}
	}
	picture := func(size int) http.Handler {
		body := bytes.Repeat([]byte{0xff, 0xd8, 0x42}, size/3+1)[:size]
		etag, cc, ct := []string{`"0123456789abcdef0123456789abcdef"`}, []string{CacheAvatar}, []string{"image/jpeg"}
		return Public(CacheAvatar, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			LogErrorsOnly(r)
			h := w.Header()
			h["Etag"], h["Cache-Control"], h["Content-Type"] = etag, cc, ct
			http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
		}))
	}
	answers := []struct {
		name, pattern, path string
		h                   http.Handler
	}{
		{"tags", "GET /tags", "/tags?client=1", Public(CacheCatalog, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			JSON(w, r, http.StatusOK, tags)
		}))},
		{"avatar-scaled", "GET /user/avatar/{id}/{res}", "/user/avatar/3/scaled", picture(3927)},
		{"avatar-high", "GET /user/avatar/{id}/{res}", "/user/avatar/3/high", picture(37557)},
	}
	opts := Options{Log: slog.New(slog.NewJSONHandler(io.Discard, nil)), CORSOrigins: []string{"https://example.com"},
		RequestTimeout: 20 * time.Second, OriginSecrets: []string{"origin-secret"}}
	traceID, _ := trace.TraceIDFromHex("5759e988bd862e3fe1be46a994272793")
	spanID, _ := trace.SpanIDFromHex("53995c3f42cd8ad8")
	parent := func(flags trace.TraceFlags) context.Context {
		return trace.ContextWithRemoteSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
			TraceID: traceID, SpanID: spanID, TraceFlags: flags, Remote: true}))
	}
	// A Lambda invocation's context: its deadline, and the trace Lambda began.
	lambdaCtx := func(flags trace.TraceFlags) (context.Context, context.CancelFunc) {
		return context.WithTimeout(parent(flags), 10*time.Second)
	}
	run := func(b *testing.B, h http.Handler, ctx context.Context, path string, flush bool) {
		req := httptest.NewRequest(http.MethodGet, path, nil).WithContext(ctx)
		req.Header.Set("X-Origin-Verify", "origin-secret")
		req.Header.Set("Origin", "https://example.com")
		b.ReportAllocs()
		for b.Loop() {
			r := req.Clone(ctx) // checkOrigin removes the secret
			s := &discard{header: http.Header{}}
			h.ServeHTTP(s, r)
			if s.status != http.StatusOK {
				b.Fatal(s.status)
			}
			if flush {
				telemetry.Flush(ctx)
			}
		}
	}
	for _, a := range answers {
		route := telemetry.Route(a.pattern, a.h)
		telemetry.Setup(telemetry.Options{Function: "bench", Exporter: exporter, Metrics: io.Discard, PerInvocation: true})
		ctx, cancel := lambdaCtx(0)
		b.Run(a.name+"/handler", func(b *testing.B) { run(b, route, ctx, a.path, false) })
		for i := len(layers) - 1; i >= 0; i-- {
			var h http.Handler = route
			for j := len(layers) - 1; j >= i; j-- {
				h = layers[j].wrap(h, &opts)
			}
			b.Run(a.name+"/from="+layers[i].name, func(b *testing.B) { run(b, h, ctx, a.path, false) })
		}
		cancel()
		sampled, cancel := lambdaCtx(trace.FlagsSampled)
		b.Run(a.name+"/traced", func(b *testing.B) { run(b, Wrap(route, opts), sampled, a.path, true) })
		cancel()
		telemetry.Setup(telemetry.Options{})
		b.Run(a.name+"/untraced-local", func(b *testing.B) { run(b, Wrap(route, opts), context.Background(), a.path, false) })
	}
}

// discard is a response writer that keeps only the status.
type discard struct {
	header http.Header
	status int
}

func (d *discard) Header() http.Header { return d.header }
func (d *discard) WriteHeader(code int) {
	if d.status == 0 {
		d.status = code
	}
}
func (d *discard) Write(b []byte) (int, error) {
	if d.status == 0 {
		d.status = http.StatusOK
	}
	return len(b), nil
}
