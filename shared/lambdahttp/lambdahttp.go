// Package lambdahttp is the entry point every function shares: the same http.Handler
// runs under Lambda, wrapped by aws-lambda-go-api-proxy's API Gateway v2 adapter, and
// as a plain net/http server everywhere else.
package lambdahttp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/awslabs/aws-lambda-go-api-proxy/core"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/deadlines"
	"github.com/mediacatalog/service/shared/httpapi"
	"github.com/mediacatalog/service/shared/readiness"
	"github.com/mediacatalog/service/shared/telemetry"
)

// UnderLambda reports whether the process runs inside a Lambda execution environment.
func UnderLambda(getenv func(string) string) bool {
	return getenv("AWS_LAMBDA_RUNTIME_API") != ""
}

// MaxResponseBody bounds the body of an answer under Lambda. Lambda refuses a
// synchronous response over 6 MB (the whole event response: the body, Base64-encoded
// when binary, and the headers); API Gateway would then answer its own 502/500 without
// our Response Model, and the function's work would be lost without a trace in our logs.
// Answers are gzipped when the client accepts it (httpapi.Compress), so only a list of
// tens of megabytes of JSON, or any large list to a client without gzip, comes near it:
// such an answer becomes a logged 500 Response Model, and the client pages with limit
// and offset instead.
const MaxResponseBody = 6*1024*1024 - 64*1024

// Handler adapts h to the Lambda handler signature for API Gateway HTTP API (payload
// format 2.0) events. The adapter sends a body that is not valid UTF-8 (a gzipped one)
// Base64-encoded with isBase64Encoded set, as API Gateway expects.
func Handler(h http.Handler) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	serve := Proxy(h)
	return func(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		ctx, end := invocation(ctx)
		resp, err := serve(ctx, req)
		end(resp.StatusCode, err)
		return resp, err
	}
}

// Proxy is Handler without the invocation's span: the event through the adapter, the
// answer held to MaxResponseBody. A readiness probe serves its route probes with it,
// inside its own invocation.
func Proxy(h http.Handler) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	proxy := httpadapter.NewV2(withEventHeaders(withRequestID(h))).ProxyWithContext
	return func(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		resp, err := proxy(context.WithValue(ctx, eventHeadersKey{}, req.Headers), req)
		if err != nil || len(resp.Body) <= MaxResponseBody {
			return resp, err
		}
		slog.Default().Error("response over Lambda's payload limit", "path", req.RawPath,
			"bytes", len(resp.Body), "base64", resp.IsBase64Encoded, "status", resp.StatusCode)
		return tooLarge(ctx, resp)
	}
}

type eventHeadersKey struct{}

// withEventHeaders gives the request each header as API Gateway sent it, one value.
// The adapter splits every header outside its short list of single-value ones at each
// comma, where net/http keeps a line whole: Accept-Encoding "br,gzip" (CloudFront's,
// with both compressions on) would reach gzhttp as "br" alone, and an If-None-Match of
// two tags would reach ServeContent as its first. API Gateway joins a repeated header
// with commas itself, so its value is the whole header, as net/http would read it.
// Cookies are left as the adapter gives them: payload 2.0 sends them apart, each a
// Cookie line of its own.
func withEventHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if sent, ok := r.Context().Value(eventHeadersKey{}).(map[string]string); ok {
			for k, v := range sent {
				// Only a value with a comma was split; its pieces' slice holds it whole.
				if strings.IndexByte(v, ',') >= 0 && !strings.EqualFold(k, "cookie") {
					key := http.CanonicalHeaderKey(k)
					if vs := r.Header[key]; len(vs) > 0 {
						vs[0] = v
						r.Header[key] = vs[:1]
					}
				}
			}
		}
		h.ServeHTTP(w, r)
	})
}

// Readiness answers a readiness probe (package readiness): the function's own checks
// and route probes, within readiness.Timeout.
type Readiness func(ctx context.Context) readiness.Result

// Invocation is a payload the Lambda runtime hands a function: an API Gateway v2
// event, or a readiness probe, which has the field readiness.Field that no API Gateway
// event has (API Gateway builds each event itself, so no request can make one).
type Invocation struct {
	events.APIGatewayV2HTTPRequest
	Readiness *readiness.Request `json:"readinessProbe"`
}

// Entry is a function's Lambda handler: Handler(h) for API Gateway events, ready for a
// readiness probe, whose result is the invocation's answer (and, not ready, an ERROR
// line of the function's log). Without ready (nil) a probe is answered not ready.
func Entry(h http.Handler, ready Readiness) func(context.Context, Invocation) (any, error) {
	serve := Handler(h)
	return func(ctx context.Context, inv Invocation) (any, error) {
		if inv.Readiness == nil {
			return serve(ctx, inv.APIGatewayV2HTTPRequest)
		}
		ctx, end := invocation(ctx)
		res := readiness.Result{Checks: []readiness.Check{}}
		if ready != nil {
			res = ready(ctx)
		}
		status := http.StatusOK
		if !res.Ready {
			status = http.StatusServiceUnavailable
			slog.Default().Error("readiness probe: not ready", "checks", res.Checks)
		}
		end(status, nil)
		return res, nil
	}
}

// invocation starts the invocation's span in the trace Lambda began (its trace header,
// which the runtime client passes in the context and in _X_AMZN_TRACE_ID), and notes
// the trace id for the log lines of this invocation (a Lambda process serves one at a
// time).
func invocation(ctx context.Context) (context.Context, func(int, error)) {
	header, _ := ctx.Value("x-amzn-trace-id").(string)
	if header == "" {
		header = os.Getenv("_X_AMZN_TRACE_ID")
	}
	id := ""
	if lc, ok := lambdacontext.FromContext(ctx); ok {
		id = lc.AwsRequestID
	}
	ctx, end := telemetry.Invocation(ctx, header, id)
	currentTraceID.Store(telemetry.TraceID(ctx))
	return ctx, end
}

// withRequestID gives each request the id of its Lambda invocation (API Gateway's
// request id when the runtime's is missing), which the logs and audit records carry.
// The adapter keeps both in the request's context; this is the one place that reads it.
func withRequestID(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := ""
		if lc, ok := core.GetRuntimeContextFromContextV2(r.Context()); ok && lc != nil {
			id = lc.AwsRequestID
		}
		if gw, ok := core.GetAPIGatewayV2ContextFromContext(r.Context()); id == "" && ok {
			id = gw.RequestID
		}
		if id != "" {
			r = r.WithContext(httpapi.WithRequestID(r.Context(), id))
		}
		h.ServeHTTP(w, r)
	})
}

// tooLarge is the 500 Response Model that replaces the answer over MaxResponseBody,
// written by httpapi's one writer into the adapter's own response writer. It is made
// outside the middleware, so it takes from the answer it replaces what the middleware
// gave that one and a browser needs of this one: its Vary and CORS headers (without
// them the frontend could not read the 500); and it is private, no-store, as every
// 5xx is. Nothing else of the answer is kept: its cookies neither.
func tooLarge(ctx context.Context, replaced events.APIGatewayV2HTTPResponse) (events.APIGatewayV2HTTPResponse, error) {
	w := core.NewProxyResponseWriterV2()
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, "/", nil)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	for k, v := range replaced.Headers {
		if k = http.CanonicalHeaderKey(k); k == "Vary" || strings.HasPrefix(k, "Access-Control-") {
			w.Header().Set(k, v)
		}
	}
	w.Header().Set("Cache-Control", httpapi.CachePrivate)
	httpapi.Message(w, r, http.StatusInternalServerError, apperr.MsgInternal)
	return w.GetProxyResponse()
}

// Invoke runs one raw API Gateway v2 event through the Lambda entry, as the Lambda
// runtime would: JSON in, JSON-decoded response out. Tests and benchmarks use it.
func Invoke(ctx context.Context, h http.Handler, event []byte) (events.APIGatewayV2HTTPResponse, error) {
	var req events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(event, &req); err != nil {
		return events.APIGatewayV2HTTPResponse{}, fmt.Errorf("decode event: %w", err)
	}
	return Handler(h)(ctx, req)
}

// Start serves h until ctx is done: under Lambda through the runtime API (Entry, ready
// answering readiness probes), otherwise on addr with a plain net/http server that
// shuts down gracefully.
func Start(ctx context.Context, h http.Handler, ready Readiness, addr string, getenv func(string) string, log *slog.Logger) error {
	if UnderLambda(getenv) {
		lambda.StartWithOptions(Entry(h, ready), lambda.WithContext(ctx))
		return nil
	}
	return Serve(ctx, h, addr, log)
}

// Serve runs a net/http server on addr until ctx is done.
func Serve(ctx context.Context, h http.Handler, addr string, log *slog.Logger) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", addr, err)
	}
	return ServeListener(ctx, h, ln, log)
}

// NewServer is the net/http server of the local and standalone servers: its timeouts
// bound slow clients, and each request sets the connection's deadlines from them.
// Benchmarks serve their reference handlers with it, so that a comparison is between
// handlers, not server settings.
func NewServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      deadlines.WriteTimeout,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}
}

// ServeListener serves on an existing listener until ctx is done.
func ServeListener(ctx context.Context, h http.Handler, ln net.Listener, log *slog.Logger) error {
	srv := NewServer(h)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	if log != nil {
		log.Info("listening", "addr", ln.Addr().String())
	}
	select {
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	case <-ctx.Done():
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return srv.Shutdown(shutdownCtx)
	}
}

// NewLogger returns the JSON logger the functions use (CloudWatch reads JSON lines).
func NewLogger(level string) *slog.Logger { return newLogger(os.Stderr, level) }

func newLogger(w io.Writer, level string) *slog.Logger {
	opts := slog.HandlerOptions{Level: parseLevel(level)}
	w = &oneWriter{w: w} // two handlers, each with its own lock, write to it
	plain := slog.NewJSONHandler(w, &opts)
	opts.ReplaceAttr = nameAuditLevel
	return slog.New(traceIDs{Handler: plain, audit: slog.NewJSONHandler(w, &opts)})
}

// parseLevel reads slog's level names in any case, and Lambda's TRACE and FATAL.
func parseLevel(level string) slog.Level {
	var l slog.Level
	switch strings.ToUpper(level) {
	case "TRACE":
		return slog.LevelDebug
	case "FATAL":
		return slog.LevelError
	}
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return slog.LevelInfo
	}
	return l
}

// LogLevel is the level of the logs: the stricter of level (LOG_LEVEL) and
// AWS_LAMBDA_LOG_LEVEL, which the function's LoggingConfig.ApplicationLogLevel sets
// and below which Lambda drops the lines anyway. An unknown level counts as INFO.
func LogLevel(getenv func(string) string, level string) string {
	lambda := getenv("AWS_LAMBDA_LOG_LEVEL")
	if lambda != "" && parseLevel(lambda) > parseLevel(level) {
		return lambda
	}
	return level
}

// currentTraceID is the X-Ray trace id of the invocation being served: a Lambda
// process serves one at a time, and most lines are logged without the request's
// context (slog's Info, Error…), so the handler takes it from here.
var currentTraceID atomic.Value

// traceIDs adds trace_id to every line: the trace of the record's context when it has
// one (the request line), else the current invocation's. An audit record goes through
// audit, the same JSON handler with nameAuditLevel; every other line through the
// plain one: a ReplaceAttr is called for each of a line's attributes, the request
// line's among them, and slog writes no level faster than its own.
type traceIDs struct {
	slog.Handler
	audit slog.Handler
}

func (h traceIDs) Handle(ctx context.Context, r slog.Record) error {
	id := telemetry.TraceID(ctx)
	if id == "" {
		id, _ = currentTraceID.Load().(string)
	}
	if id != "" {
		r.AddAttrs(slog.String("trace_id", id))
	}
	if r.Level == httpapi.LevelAudit {
		return h.audit.Handle(ctx, r)
	}
	return h.Handler.Handle(ctx, r)
}

func (h traceIDs) WithAttrs(attrs []slog.Attr) slog.Handler {
	return traceIDs{h.Handler.WithAttrs(attrs), h.audit.WithAttrs(attrs)}
}

func (h traceIDs) WithGroup(name string) slog.Handler {
	return traceIDs{h.Handler.WithGroup(name), h.audit.WithGroup(name)}
}

// oneWriter lets one line be written at a time.
type oneWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (o *oneWriter) Write(b []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.w.Write(b)
}

// nameAuditLevel writes httpapi.LevelAudit as "AUDIT" (slog would write "ERROR+8")
// as a string value: handed back as a slog.Level, the JSON handler would encode it
// with encoding/json.
func nameAuditLevel(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.LevelKey {
		if l, ok := a.Value.Any().(slog.Level); ok {
			name := l.String()
			if l == httpapi.LevelAudit {
				name = "AUDIT"
			}
			a.Value = slog.StringValue(name)
		}
	}
	return a
}
