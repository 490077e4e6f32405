package telemetry_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/mediacatalog/service/infra/local/localservices"
	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/app"
	"github.com/mediacatalog/service/shared/auth"
	"github.com/mediacatalog/service/shared/config"
	"github.com/mediacatalog/service/shared/lambdahttp"
	"github.com/mediacatalog/service/shared/routegroups"
	"github.com/mediacatalog/service/shared/telemetry"
)

func TestMain(m *testing.M) { testenv.Main(m) }

var update = flag.Bool("update", false, "rewrite testdata/span-trees.txt from what the routes send")

// The trace Lambda began for the invocation: its segment is the invocation span's parent.
const (
	traceHeader   = "Root=1-67891233-abcdef012345678912345678;Parent=53995c3f42cd8ad8;Sampled=1"
	lambdaSegment = "53995c3f42cd8ad8"
)

// TestRouteSpanTrees serves every event of events/ through its function's Lambda
// entry, built by the functions' own wiring (app), with every span recorded, and holds
// each to its tree: one invocation span continuing Lambda's trace; under it one span
// named by the event's route, with the answer's status (an error status for a 5xx);
// every other span under that one. Every dependency call is traced: the statements
// PostgreSQL received (counted on the wire, by a proxy in front of it) are the
// request's statement spans, and the DynamoDB and S3 requests that reached the
// stand-ins are its AWS spans. And each request wrote one EMF document naming its route
// and its statements. The trees, with each span's status, are testdata/span-trees.txt
// (the first use of a statement on a connection adds a "prepare" span, left out there);
// the test fails when a route's tree differs from it (-update rewrites it).
func TestRouteSpanTrees(t *testing.T) {
	if testing.Short() {
		t.Skip("serves every route")
	}
	spans := tracetest.NewInMemoryExporter()
	var emf lockedBuffer
	telemetry.Setup(telemetry.Options{Function: "test", Exporter: spans, Metrics: &emf})
	t.Setenv("_X_AMZN_TRACE_ID", traceHeader)
	getenv, cookie, stats := stack(t)
	cfg, err := config.Load(getenv)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var trees strings.Builder
	for _, g := range routegroups.All() {
		a := app.New(cfg, slog.New(slog.DiscardHandler))
		a.Getenv = getenv
		t.Cleanup(a.Close)
		h, err := a.Handler(ctx, g)
		if err != nil {
			t.Fatal(err)
		}
		names, events := eventsOf(t, g.Name, cookie)
		for i, ev := range events {
			var route struct {
				RouteKey string `json:"routeKey"`
			}
			if err := json.Unmarshal(ev, &route); err != nil {
				t.Fatal(err)
			}
			t.Run(g.Name+"/"+names[i], func(t *testing.T) {
				telemetry.Flush(ctx) // the spans of the set-up's calls, then none
				spans.Reset()
				emf.Reset()
				stats.reset()
				resp, err := lambdahttp.Invoke(ctx, h, ev)
				if err != nil {
					t.Fatal(err)
				}
				tree := newTree(spans.GetSpans().Snapshots())
				t.Logf("%d\n%s", resp.StatusCode, tree)
				fmt.Fprintf(&trees, "%s %s -> %d\n%s\n", g.Name, names[i], resp.StatusCode, tree)
				checkTree(t, tree, route.RouteKey, resp.StatusCode)
				if got, want := tree.count(isStatement), stats.statements.Load(); int64(got) != want {
					t.Errorf("%d statement spans, PostgreSQL received %d statements", got, want)
				}
				if got, want := tree.count(isAWS), stats.aws.Load(); int64(got) != want {
					t.Errorf("%d AWS spans, the stand-ins received %d requests", got, want)
				}
				checkEMF(t, emf.String(), route.RouteKey, tree.count(isStatement))
			})
		}
	}
	golden := filepath.Join("testdata", "span-trees.txt")
	if *update {
		if err := os.WriteFile(golden, []byte(trees.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got := trees.String(); got != string(want) {
		t.Errorf("the routes' span trees differ from %s (go test -run TestRouteSpanTrees -update rewrites it):\n%s", golden, got)
	}
}

func isStatement(s sdktrace.ReadOnlySpan) bool {
	return strings.HasPrefix(s.Name(), "query ") || strings.HasPrefix(s.Name(), "batch query ")
}

func isAWS(s sdktrace.ReadOnlySpan) bool {
	for _, kv := range s.Attributes() {
		if kv.Key == "rpc.system" && kv.Value.AsString() == "aws-api" {
			return true
		}
	}
	return false
}

func checkTree(t *testing.T, tree *spanTree, routeKey string, status int) {
	t.Helper()
	roots := tree.children[lambdaSegment]
	if len(roots) != 1 || roots[0].Name() != "test" {
		t.Fatalf("want one invocation span under Lambda's segment, got %d", len(roots))
	}
	inv := roots[0]
	if want := "1-67891233-abcdef012345678912345678"; telemetry.TraceID(trace.ContextWithSpanContext(context.Background(), inv.SpanContext())) != want {
		t.Errorf("invocation's trace is not Lambda's %s", want)
	}
	routes := tree.children[inv.SpanContext().SpanID().String()]
	if len(routes) != 1 {
		t.Fatalf("want one route span under the invocation, got %d", len(routes))
	}
	rt := routes[0]
	if rt.Name() != routeKey {
		t.Errorf("route span %q, want %q", rt.Name(), routeKey)
	}
	gotStatus := int64(0)
	for _, kv := range rt.Attributes() {
		if kv.Key == "http.response.status_code" {
			gotStatus = kv.Value.AsInt64()
		}
	}
	if gotStatus != int64(status) {
		t.Errorf("route span's status %d, the answer's %d", gotStatus, status)
	}
	if isErr := rt.Status().Code == codes.Error; isErr != (status >= 500) {
		t.Errorf("route span's error status %v for a %d", isErr, status)
	}
	if got := len(tree.spans); got != 2+tree.descendants(rt) {
		t.Errorf("%d spans, of which %d under the route span: some are outside the tree", got, tree.descendants(rt))
	}
}

// checkEMF holds the request's metrics document to its route and statements.
func checkEMF(t *testing.T, out, routeKey string, statements int) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 1 {
		t.Fatalf("want one EMF document, got %d: %q", len(lines), out)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &doc); err != nil {
		t.Fatal(err)
	}
	if doc[telemetry.DimRoute] != routeKey || doc[telemetry.MetricStatements] != float64(statements) {
		t.Errorf("EMF document: route %v, statements %v; want %s, %d", doc[telemetry.DimRoute],
			doc[telemetry.MetricStatements], routeKey, statements)
	}
	if doc["traceId"] != "1-67891233-abcdef012345678912345678" || doc["requestId"] == "" {
		t.Errorf("EMF document without the request's ids: %v, %v", doc["traceId"], doc["requestId"])
	}
}

// spanTree indexes spans by their parent's id.
type spanTree struct {
	spans    []sdktrace.ReadOnlySpan
	children map[string][]sdktrace.ReadOnlySpan
}

func newTree(spans []sdktrace.ReadOnlySpan) *spanTree {
	tr := &spanTree{spans: spans, children: map[string][]sdktrace.ReadOnlySpan{}}
	sort.Slice(spans, func(i, j int) bool { return spans[i].StartTime().Before(spans[j].StartTime()) })
	for _, s := range spans {
		p := s.Parent().SpanID().String()
		tr.children[p] = append(tr.children[p], s)
	}
	return tr
}

func (tr *spanTree) descendants(s sdktrace.ReadOnlySpan) int {
	n := 0
	for _, c := range tr.children[s.SpanContext().SpanID().String()] {
		n += 1 + tr.descendants(c)
	}
	return n
}

func (tr *spanTree) count(f func(sdktrace.ReadOnlySpan) bool) int {
	n := 0
	for _, s := range tr.spans {
		if f(s) {
			n++
		}
	}
	return n
}

// String draws the tree: each span indented under its parent, with its status.
func (tr *spanTree) String() string {
	var b strings.Builder
	var draw func(id string, depth int)
	draw = func(id string, depth int) {
		for _, s := range tr.children[id] {
			if strings.HasPrefix(s.Name(), "prepare ") {
				continue
			}
			fmt.Fprintf(&b, "%s%s [%s]\n", strings.Repeat("  ", depth), s.Name(), s.Status().Code)
			draw(s.SpanContext().SpanID().String(), depth+1)
		}
	}
	draw(lambdaSegment, 0)
	return b.String()
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string { b.mu.Lock(); defer b.mu.Unlock(); return b.buf.String() }
func (b *lockedBuffer) Reset()         { b.mu.Lock(); defer b.mu.Unlock(); b.buf.Reset() }

// callStats are the calls the dependencies received.
type callStats struct{ statements, aws atomic.Int64 }

func (s *callStats) reset() { s.statements.Store(0); s.aws.Store(0) }

// stack is the functions' environment: a demo database behind a statement-counting
// proxy, dynalite and gofakes3 behind request-counting proxies; and the demo admin's
// session cookie.
func stack(t *testing.T) (func(string) string, string, *callStats) {
	t.Helper()
	ctx := context.Background()
	stats := &callStats{}
	db := testenv.NewDemoDB(t)
	dbURL, err := url.Parse(db.URL)
	if err != nil {
		t.Fatal(err)
	}
	dbURL.Host = pgProxy(t, dbURL.Host, &stats.statements)
	vars := map[string]string{
		"DB_ENV":                    "local",
		"DATABASE_URL":              dbURL.String(),
		"AWS_ENDPOINT_URL_DYNAMODB": httpProxy(t, testenv.DynamoEndpoint(t), &stats.aws),
		"AWS_ENDPOINT_URL_S3":       httpProxy(t, testenv.S3Endpoint(t), &stats.aws),
		"S3_BUCKET":                 "telemetry-images",
		"OAUTH_STATE_TABLE":         "telemetry-state",
		"RATE_LIMIT_TABLE":          "telemetry-rate",
		"FILE_SERVICE":              "true",
		"CORS_ORIGINS":              "https://mediacatalog.app", // the events' origin
		"AWS_REGION":                "eu-central-1",
		"AWS_ACCESS_KEY_ID":         "test",
		"AWS_SECRET_ACCESS_KEY":     "test",
	}
	getenv := func(k string) string { return vars[k] }
	cfg, err := config.Load(getenv)
	if err != nil {
		t.Fatal(err)
	}
	if err := localservices.EnsureTables(ctx, cfg.DynamoEndpoint, cfg.AWSRegion, cfg.StateTable, cfg.RateLimitTable); err != nil {
		t.Fatal(err)
	}
	if err := localservices.EnsureBucket(ctx, cfg.S3Endpoint, cfg.AWSRegion, cfg.Bucket); err != nil {
		t.Fatal(err)
	}
	sessions, err := auth.NewSessions(db.DB, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var adminID int64
	if err := db.Pool.QueryRow(ctx, `SELECT id FROM users WHERE username = 'admin'`).Scan(&adminID); err != nil {
		t.Fatal(err)
	}
	tok, err := sessions.Issue(ctx, adminID)
	if err != nil {
		t.Fatal(err)
	}
	return getenv, tok.Refresh, stats
}

// httpProxy forwards to target, counting the requests.
func httpProxy(t *testing.T, target string, n *atomic.Int64) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// pgProxy forwards connections to target, counting the statements the clients send
// in PostgreSQL's protocol: each Execute of the extended protocol and each simple
// Query (pgx's transaction control) but the pool's health checks ("-- ping").
func pgProxy(t *testing.T, target string, n *atomic.Int64) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			go func() { _, _ = io.Copy(c, s); c.Close() }()
			go func() { countStatements(c, s, n); s.Close() }()
		}
	}()
	return ln.Addr().String()
}

// countStatements forwards the client's side of a connection to the server message
// by message, counting each before the server has it (so before its answer): untyped
// messages (an SSL or GSS request, then the startup message), then typed ones.
func countStatements(r io.Reader, w io.Writer, n *atomic.Int64) {
	var hdr [8]byte
	for {
		if _, err := io.ReadFull(r, hdr[:4]); err != nil {
			return
		}
		body := make([]byte, binary.BigEndian.Uint32(hdr[:4])-4)
		if _, err := io.ReadFull(r, body); err != nil {
			return
		}
		if _, err := w.Write(append(hdr[:4:4], body...)); err != nil {
			return
		}
		if code := binary.BigEndian.Uint32(body[:4]); code != 80877103 && code != 80877104 {
			break // the startup message
		}
	}
	for {
		if _, err := io.ReadFull(r, hdr[:5]); err != nil {
			return
		}
		body := make([]byte, binary.BigEndian.Uint32(hdr[1:5])-4)
		if _, err := io.ReadFull(r, body); err != nil {
			return
		}
		switch hdr[0] {
		case 'E':
			n.Add(1)
		case 'Q':
			if !bytes.HasPrefix(body, []byte("-- ping")) {
				n.Add(1)
			}
		}
		if _, err := w.Write(append(hdr[:5:5], body...)); err != nil {
			return
		}
	}
}

var cookieRE = regexp.MustCompile(`refreshToken=[^";]*`)

// eventsOf reads a function's events with the demo admin's cookie put in: the writes
// that create first and the deletes last, so that a delete finds what it deletes.
func eventsOf(t *testing.T, fn, cookie string) (names []string, bodies [][]byte) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "events", fn, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no events for %s", fn)
	}
	rank := func(f string) int {
		switch b := filepath.Base(f); {
		case strings.HasPrefix(b, "add-"), strings.HasPrefix(b, "update-"):
			return 0
		case strings.HasPrefix(b, "delete-"), strings.HasPrefix(b, "logout-"):
			return 2
		default:
			return 1
		}
	}
	sort.SliceStable(files, func(i, j int) bool { return rank(files[i]) < rank(files[j]) })
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, strings.TrimSuffix(filepath.Base(f), ".json"))
		bodies = append(bodies, cookieRE.ReplaceAll(b, []byte("refreshToken="+cookie)))
	}
	return names, bodies
}
