// Package telemetry is the service's observability: OpenTelemetry spans (one per
// Lambda invocation, one per request named by its route, one per dependency call),
// exported to the X-Ray daemon under Lambda or to any span exporter elsewhere; and one
// CloudWatch Embedded Metric Format document per request (metrics.go).
//
// It is wired once: Setup in the process's main, Middleware around the shared
// middleware, Route around each route, and the clients' options at their
// construction (PgxTracer, AWSOptions, Transport). Without Setup every hook is a
// no-op span of the global no-op provider and costs next to nothing.
package telemetry

import (
	"cmp"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/contrib/propagators/aws/xray"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// instrumentation is the name of the service's own tracer.
const instrumentation = "github.com/mediacatalog/service/shared/telemetry"

// Options configure Setup.
type Options struct {
	// Function names the process (the route group, or "local"): the invocation's span.
	Function string
	// FunctionName is the metrics' FunctionName dimension: the Lambda function's own
	// name (AWS_LAMBDA_FUNCTION_NAME), unique to its stack; Function when empty.
	FunctionName string
	// Exporter receives the spans; nil records none.
	Exporter sdktrace.SpanExporter
	// Metrics receives one EMF document per request (os.Stdout under Lambda); nil
	// writes none.
	Metrics io.Writer
	// PerInvocation keeps the ended spans until Flush, which exports them on the
	// caller's goroutine: under Lambda, where a process serves one invocation at a
	// time and is frozen after it, the invocation's spans go out together (one
	// datagram, xray.go) with no hand-over to a batching goroutine. Otherwise a
	// batching processor exports them in the background.
	PerInvocation bool
}

var (
	tracer   trace.Tracer = otel.Tracer(instrumentation)
	function string
	// metricFunction is Options.FunctionName, or Function.
	metricFunction string
	metrics        io.Writer
	provider       *sdktrace.TracerProvider
)

// Setup installs the process's tracer provider and metric writer. Call it once, before
// the clients are built. Spans carry X-Ray trace ids (the X-Ray id generator), so that
// one id names a request in X-Ray, in the logs and in the EMF documents.
func Setup(o Options) {
	function, metrics = o.Function, o.Metrics
	metricFunction = cmp.Or(o.FunctionName, o.Function)
	otel.SetTextMapPropagator(xray.Propagator{})
	if o.Exporter == nil {
		// Nothing recorded: the no-op tracer (a benchmark's set-up after another's).
		provider, tracer = nil, noop.NewTracerProvider().Tracer(instrumentation)
		return
	}
	// Sampled as the caller decided (Lambda's Sampled flag), every local request when
	// there is no caller. A batch is exported when the invocation ends (Flush), before
	// Lambda freezes the process.
	var processor sdktrace.SpanProcessor = sdktrace.NewBatchSpanProcessor(o.Exporter)
	if o.PerInvocation {
		processor = &held{exporter: o.Exporter}
	}
	provider = sdktrace.NewTracerProvider(
		sdktrace.WithIDGenerator(xray.NewIDGenerator()),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.AlwaysSample())),
		sdktrace.WithSpanProcessor(processor),
	)
	otel.SetTracerProvider(provider)
	tracer = provider.Tracer(instrumentation)
}

// FromEnv is Setup's options under Lambda: spans to the X-Ray daemon at
// AWS_XRAY_DAEMON_ADDRESS (set when the function's tracing is active), EMF on stdout.
func FromEnv(fn string, getenv func(string) string) Options {
	o := Options{Function: fn, FunctionName: getenv("AWS_LAMBDA_FUNCTION_NAME"), Metrics: os.Stdout, PerInvocation: true}
	if addr := getenv("AWS_XRAY_DAEMON_ADDRESS"); addr != "" {
		o.Exporter = NewXRayExporter(addr)
	}
	return o
}

// Flush exports the spans ended so far; the Lambda entry calls it before each
// invocation returns.
func Flush(ctx context.Context) {
	if provider != nil {
		_ = provider.ForceFlush(ctx)
	}
}

// Shutdown flushes and stops the provider.
func Shutdown(ctx context.Context) {
	if provider != nil {
		_ = provider.Shutdown(ctx)
	}
}

// Invocation starts the span of one Lambda invocation, continuing the trace of
// traceHeader (_X_AMZN_TRACE_ID: Lambda's segment is its parent), and returns the
// function that ends it with the answer's status and flushes the spans.
func Invocation(ctx context.Context, traceHeader, requestID string) (context.Context, func(status int, err error)) {
	if traceHeader != "" {
		ctx = xray.Propagator{}.Extract(ctx, traceCarrier(traceHeader))
	}
	if !records(trace.SpanContextFromContext(ctx)) {
		// Nothing would be recorded (Middleware): the trace's context is enough.
		return ctx, func(int, error) {}
	}
	ctx, span := tracer.Start(ctx, function, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attribute.String("faas.invocation_id", requestID)))
	return ctx, func(status int, err error) {
		setStatus(span, status, err)
		span.End()
		Flush(ctx)
	}
}

// traceCarrier is a trace header as the X-Ray propagator reads it.
type traceCarrier string

func (c traceCarrier) Get(key string) string {
	if strings.EqualFold(key, "X-Amzn-Trace-Id") {
		return string(c)
	}
	return ""
}
func (traceCarrier) Set(string, string) {}
func (traceCarrier) Keys() []string     { return []string{"X-Amzn-Trace-Id"} }

// Span starts a span of the service's own work (image processing); end it with End.
func Span(ctx context.Context, name string) (context.Context, trace.Span) {
	return tracer.Start(ctx, name)
}

// End ends span, with err as its error status.
func End(span trace.Span, err error) {
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// TraceID is the X-Ray form of the trace id of ctx's span ("1-5759e988-bd862e3fe1be46a994272793"),
// "" when there is none.
func TraceID(ctx context.Context) string {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.HasTraceID() {
		return ""
	}
	return xrayTraceID(sc.TraceID())
}

func xrayTraceID(id trace.TraceID) string {
	h := id.String()
	return "1-" + h[:8] + "-" + h[8:]
}

// setStatus marks a server span with its HTTP status: 5xx and err are errors; 4xx are
// the client's, and stay unset as OpenTelemetry's HTTP conventions ask.
func setStatus(span trace.Span, status int, err error) {
	if status > 0 {
		span.SetAttributes(attribute.Int("http.response.status_code", status))
	}
	switch {
	case err != nil:
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	case status >= 500:
		span.SetStatus(codes.Error, "")
	}
}

// since is time.Since in milliseconds, the unit of the EMF documents.
func since(t time.Time) float64 { return float64(time.Since(t).Microseconds()) / 1000 }

// held is the PerInvocation span processor: ended spans wait in memory (at most
// maxHeld; more are dropped) until ForceFlush exports them.
type held struct {
	exporter sdktrace.SpanExporter
	mu       sync.Mutex
	spans    []sdktrace.ReadOnlySpan
}

const maxHeld = 2048

func (h *held) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

func (h *held) OnEnd(s sdktrace.ReadOnlySpan) {
	if !s.SpanContext().IsSampled() {
		return
	}
	h.mu.Lock()
	if len(h.spans) < maxHeld {
		h.spans = append(h.spans, s)
	}
	h.mu.Unlock()
}

func (h *held) ForceFlush(ctx context.Context) error {
	h.mu.Lock()
	spans := h.spans
	h.spans = nil
	h.mu.Unlock()
	if len(spans) == 0 {
		return nil
	}
	return h.exporter.ExportSpans(ctx, spans)
}

func (h *held) Shutdown(ctx context.Context) error {
	err := h.ForceFlush(ctx)
	return errors.Join(err, h.exporter.Shutdown(ctx))
}
