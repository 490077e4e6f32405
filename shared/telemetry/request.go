package telemetry

import (
	"context"
	"io"
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
	db        struct {
		mu    sync.Mutex
		time  time.Duration
		count int
	}
	values values
	writer ResponseWriter
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

// recorded is the request of ctx whose metrics an EMF document will carry: none outside
// a request, nor in a process that writes no document (make run's server), where
// keeping them would be work nobody reads.
func recorded(ctx context.Context) *request {
	if metrics == nil {
		return nil
	}
	return stateOf(ctx)
}

// unmatched is the route of a request no route took (the 404 of an unknown path, a
// refusal before routing).
const unmatched = "unmatched"

// Middleware gives each request its span (a child of the invocation's under Lambda),
// named by its route once Route knows it, and writes its EMF document when it is
// answered. requestID names the request in the document (httpapi.RequestID).
//
// A request whose span would record nothing gets none: with no tracer set up (Setup
// without an exporter), or under a parent the sampler does not sample (Setup's
// ParentBased sampler follows the parent, and an unsampled X-Ray trace records no
// subsegment), the request keeps its parent's span context, so its trace id still
// names it in the logs and the EMF document, and pays for no span.
func Middleware(next http.Handler, requestID func(*http.Request) string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		st := &request{route: unmatched}
		method := knownMethod(r.Method)
		ctx := r.Context()
		span := trace.SpanFromContext(ctx)
		started := records(span.SpanContext())
		if started {
			ctx, span = tracer.Start(ctx, unmatchedName(method), serverSpan...)
		}
		st.Context, st.span = ctx, span
		st.writer.ResponseWriter = w
		next.ServeHTTP(&st.writer, r.WithContext(st))
		status := st.writer.status
		if status == 0 {
			status = http.StatusOK
		}
		if started {
			if span.IsRecording() {
				// At the end, in one call: each call grows the span's attributes.
				attrs := []attribute.KeyValue{attribute.String("http.request.method", r.Method),
					attribute.String("url.path", r.URL.Path)}
				if st.route != unmatched {
					attrs = append(attrs, attribute.String("http.route", st.route))
				}
				span.SetAttributes(attrs...)
				setStatus(span, status, nil)
			}
			span.End()
		}
		if metrics == nil {
			return
		}
		st.requestID = requestID(r)
		buf := emfBuffers.Get().(*[]byte)
		doc := st.emf((*buf)[:0], method, status, since(start), trace.SpanContextFromContext(ctx).TraceID())
		writeMu.Lock()
		_, _ = metrics.Write(doc)
		writeMu.Unlock()
		*buf = doc
		emfBuffers.Put(buf)
	})
}

// serverSpan is the start option of every request's span.
var serverSpan = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer)}

// records reports whether a span started under parent would record: a tracer is set
// up (Setup with an exporter) and the sampler would sample it (ParentBased: a root, or
// a sampled parent).
func records(parent trace.SpanContext) bool {
	return provider != nil && (!parent.IsValid() || parent.IsSampled())
}

// unmatchedName is the name of a request's span until its route names it: "<method>
// unmatched", without building it on every request.
func unmatchedName(method string) string {
	switch method {
	case http.MethodGet:
		return "GET " + unmatched
	case http.MethodHead:
		return "HEAD " + unmatched
	case http.MethodPost:
		return "POST " + unmatched
	case http.MethodDelete:
		return "DELETE " + unmatched
	case http.MethodOptions:
		return "OPTIONS " + unmatched
	}
	return method + " " + unmatched
}

// emfBuffers hold the EMF documents' bytes between requests: a document is written
// before its request returns.
var emfBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

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

// Route names the request's span and metrics by the route's pattern, as its route
// table writes it (method, space, path with its wildcards).
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

// ResponseWriter is Middleware's response writer: it notes the answer's status and
// the size of its body, for the request's span and EMF document and for the layers
// inside that report them too (httpapi's request line), which then need no writer of
// their own (Recorder). http.ResponseController reaches the writer beneath it
// (Unwrap), with its Flush and deadlines; its io.ReaderFrom is Copy.
type ResponseWriter struct {
	http.ResponseWriter
	status int
	bytes  int
}

// Recorder is w when it is a ResponseWriter (inside Middleware), else a new one
// around w.
func Recorder(w http.ResponseWriter) *ResponseWriter {
	if rw, ok := w.(*ResponseWriter); ok {
		return rw
	}
	return &ResponseWriter{ResponseWriter: w}
}

// Status is the answer's status, 0 while none is written.
func (w *ResponseWriter) Status() int { return w.status }

// Bytes is the size of the body written so far.
func (w *ResponseWriter) Bytes() int { return w.bytes }

func (w *ResponseWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *ResponseWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += n
	return n, err
}

// ReadFrom keeps io.ReaderFrom visible (http.ServeContent copies the body with
// io.CopyN, which uses it), through Copy.
func (w *ResponseWriter) ReadFrom(src io.Reader) (int64, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := Copy(w.ResponseWriter, src)
	w.bytes += int(n)
	return n, err
}

func (w *ResponseWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// copiers hold Copy's buffers: larger than a served image, so that one goes out in
// one Write, as a handler writing it from memory would.
var copiers = sync.Pool{New: func() any { return &copier{buf: make([]byte, 64<<10)} }}

// copier is a pooled copy buffer and the writer it copies to.
type copier struct {
	buf []byte
	dst writerOnly
}

// Copy copies src into w with a pooled buffer: the ReadFrom of the service's response
// writers (this one, httpapi's). A writer that hid io.ReaderFrom would have io.Copy
// allocate (and zero) a buffer of up to 32 KB for every response; net/http's own
// ReadFrom, reached through it, writes the header and the first 512 bytes on their own,
// then allocates the same buffer in package net for a source that is not a file or a
// connection.
func Copy(w io.Writer, src io.Reader) (int64, error) {
	c := copiers.Get().(*copier)
	c.dst.Writer = w
	n, err := io.CopyBuffer(&c.dst, src, c.buf)
	c.dst.Writer = nil
	copiers.Put(c)
	return n, err
}

// writerOnly hides every method but Write, so that io.CopyBuffer uses the buffer.
type writerOnly struct{ io.Writer }
