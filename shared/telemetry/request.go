package telemetry

import (
	"context"
	"net/http"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// request is one request's telemetry, in its context: its span, its route, its
// database time and the metrics its work adds; and the response writer that sees its
// status. One allocation per request.
type request struct {
	context.Context
	span      trace.Span
	route     string
	requestID string
	traceID   string
	db        struct {
		mu    sync.Mutex
		time  time.Duration
		count int
	}
	values values
	writer statusWriter
}

type stateKey struct{}

func (st *request) Value(key any) any {
	if _, ok := key.(stateKey); ok {
		return st
	}
	return st.Context.Value(key)
}

func stateOf(ctx context.Context) *request {
	st, _ := ctx.Value(stateKey{}).(*request)
	return st
}

// unmatched is the route of a request no route took (the 404 of an unknown path, a
// refusal before routing).
const unmatched = "unmatched"

// Middleware gives each request its span (a child of the invocation's under Lambda),
// named by its route once Route knows it, and writes its EMF document when it is
// answered. requestID names the request in the document (httpapi.RequestID).
func Middleware(next http.Handler, requestID func(*http.Request) string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		st := &request{route: unmatched}
		method := knownMethod(r.Method)
		ctx, span := tracer.Start(r.Context(), method+" "+unmatched, trace.WithSpanKind(trace.SpanKindServer),
			trace.WithTimestamp(start))
		st.Context, st.span = ctx, span
		st.writer.ResponseWriter = w
		next.ServeHTTP(&st.writer, r.WithContext(st))
		status := st.writer.status
		if status == 0 {
			status = http.StatusOK
		}
		if span.IsRecording() {
			// At the end, in one call: each call grows the span's attributes.
			attrs := []attribute.KeyValue{attribute.String("http.request.method", r.Method),
				attribute.String("url.path", r.URL.Path)}
			if st.route != unmatched {
				attrs = append(attrs, attribute.String("http.route", st.route))
			}
			span.SetAttributes(attrs...)
		}
		setStatus(span, status, nil)
		span.End()
		if metrics == nil {
			return
		}
		st.requestID = requestID(r)
		st.traceID = TraceID(ctx)
		doc := st.emf(method, status, since(start))
		writeMu.Lock()
		_, _ = metrics.Write(doc)
		writeMu.Unlock()
	})
}

// knownMethod is the request's method as a dimension and span name: the client
// chooses it, so one outside HTTP's own is "other" (each value would be a metric).
func knownMethod(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "other"
}

// writeMu keeps documents whole on a writer shared by concurrent requests (the local
// server's).
var writeMu sync.Mutex

// Route names the request's span and metrics by the route's pattern ("GET /tags/id/{id}").
func Route(pattern string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if st := stateOf(r.Context()); st != nil {
			st.route = pattern
			if st.span.IsRecording() {
				st.span.SetName(pattern)
			}
		}
		h.ServeHTTP(w, r)
	})
}

// statusWriter notes the status of the answer.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
