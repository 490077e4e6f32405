package httpapi

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/dependency"
	"github.com/mediacatalog/service/shared/telemetry"
)

type loggerKey struct{}

// Options configure the middleware that wraps every route group.
type Options struct {
	Log         *slog.Logger
	CORSOrigins []string // exact origins allowed to call with credentials, and to write
	// RequestTimeout bounds each request's work (config.RequestTimeout); under Lambda
	// the invocation's deadline minus deadlines.LambdaMargin bounds it too. Zero: only Lambda's.
	RequestTimeout time.Duration
	// OriginSecrets are the accepted values of the origin secret (originsecret.go);
	// none: every request is let in. OriginExempt are the mux patterns of the routes
	// that take no origin secret.
	OriginSecrets []string
	OriginExempt  []string
}

// Wrap applies the shared middleware (layers) to h.
func Wrap(h http.Handler, opts Options) http.Handler {
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	for i := len(layers) - 1; i >= 0; i-- {
		h = layers[i].wrap(h, &opts)
	}
	return h
}

// layer is one layer of the shared middleware: its name, as docs/architecture.md
// lists it, and how it wraps the layers inside it.
type layer struct {
	name string
	wrap func(next http.Handler, o *Options) http.Handler
}

// layers is the shared middleware, outermost first, one layer a line: each wraps the
// ones below it, the last wraps the routes. docs/architecture.md lists the same names
// in the same order (TestLayersDocumented).
var layers = []layer{
	{"telemetry", observe},        // the request's span, named by its route, and its EMF document (shared/telemetry)
	{"request", logRequests},      // its work context (deadline.go: deadline, budget, logger with the request id), its request line
	{"private", privateByDefault}, // Cache-Control: private, no-store until the route declares its answer public (cache.go)
	{"origin", checkOrigin},       // the origin secret and the caller's address (originsecret.go)
	{"gzip", compressLayer},       // gzip for a client that accepts it (compress.go)
	{"recover", recoverPanics},    // a panic becomes a 500 Response Model
	{"cors", cors},                // CORS headers, and the answer of a preflight
	{"writes", guardWrites},       // cookie-carrying writes from the frontend only, bodies as JSON only (origin.go)
	{"text", checkText},           // path and query valid UTF-8 without NUL, else 400 (text.go)
}

type requestIDKey struct{}

// WithRequestID gives the requests of ctx an id from their platform: the Lambda entry
// (lambdahttp) puts the invocation's request id there.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestID is the id the platform gave the request (the Lambda request id under
// Lambda), else a random one.
func RequestID(r *http.Request) string { return requestIDOf(r.Context()) }

func requestIDOf(ctx context.Context) string {
	if id, ok := ctx.Value(requestIDKey{}).(string); ok && id != "" {
		return id
	}
	// An id only names the request's lines: it needs to be unique, not unpredictable,
	// so it takes math/rand's per-thread generator, not the system's entropy.
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], rand.Uint64())
	return hex.EncodeToString(b[:])
}

// SourceIP is the caller's address: the connection's peer, which under Lambda the API
// Gateway adapter sets to requestContext.http.sourceIp (an address without a port).
// Client-supplied headers such as X-Forwarded-For are never consulted.
func SourceIP(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

// observe is the telemetry layer. Its response writer notes the status and size of the
// answer for the layers inside too: the request line reads them from it.
func observe(next http.Handler, _ *Options) http.Handler {
	return telemetry.Middleware(next, RequestID)
}

// copyBody copies src into w with a pooled buffer (telemetry.Copy): the ReadFrom of
// the middleware's response writers.
func copyBody(w io.Writer, src io.Reader) (int64, error) { return telemetry.Copy(w, src) }

// logRequests gives each request its work context (workContext: its deadline, its
// logger) and writes its request line once it is answered, with the status and size
// the telemetry layer's writer noted. What a request needs of it (the context's values,
// its logger, its budget) is one allocation, a requestState, and one copy of the request.
func logRequests(next http.Handler, o *Options) http.Handler {
	log, timeout := o.Log, o.RequestTimeout
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		parent := r.Context()
		st := &requestState{}
		st.logger = requestLogger{base: log, ctx: parent}
		sw := telemetry.Recorder(w)
		workContext(st, parent, timeout, start)
		defer st.finish()
		next.ServeHTTP(sw, r.WithContext(st))
		if errors.Is(parent.Err(), context.Canceled) {
			Logger(st).Info("client went away before the answer", "method", r.Method, "path", r.URL.Path)
		}
		if (st.logger.errorsOnly && sw.Status() < http.StatusBadRequest) || !log.Enabled(parent, slog.LevelInfo) {
			return
		}
		// The record is made here, not by Logger.LogAttrs, which would also take the
		// caller's stack for a source the handler is not asked to write.
		// The path, never the query string: it may carry OAuth codes and states.
		rec := slog.NewRecord(time.Now(), slog.LevelInfo, "request", 0)
		rec.AddAttrs(slog.String("request_id", st.logger.requestID()),
			slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Int("status", sw.Status()),
			slog.Int("bytes", sw.Bytes()), slog.Int64("duration_ms", rec.Time.Sub(start).Milliseconds()))
		_ = log.Handler().Handle(parent, rec)
	})
}

// requestState is a request's work context (workContext): its deadline (workDeadline),
// the values of the request's context, not its cancellation (values is
// context.WithoutCancel of it), the request's logger under loggerKey and its grace
// deadline under graceKey; and the request's response writer.
type requestState struct {
	workDeadline
	logger requestLogger
	deps   dependency.Request // the time budget of its dependency calls (deadline.go)
}

func (s *requestState) Value(key any) any {
	switch key.(type) {
	case loggerKey:
		return &s.logger
	case graceKey:
		if !s.grace.IsZero() {
			return s.grace
		}
	case dependency.RequestKey:
		return &s.deps
	}
	if key == dependency.CancelKey {
		// The context package asks for this key when it derives a cancellable context
		// from this one, or one of values over it (the AWS SDK's), to attach the new one
		// as a child of the work context's end (made); a context it could not attach is
		// followed by a goroutine of its own. The request's own cancellation stays hidden.
		return s.cancelValue(key)
	}
	// Every other key straight from the request's context: WithoutCancel's Value
	// would allocate a copy of itself on each lookup, and a request makes dozens.
	return s.parent.Value(key)
}

// requestLogger is a request's logger (Logger) and id, each made on first use: most
// requests log only their request line, which needs no logger of its own, and an image
// of the avatar route logs nothing (LogErrorsOnly), so needs no id.
type requestLogger struct {
	base       *slog.Logger
	ctx        context.Context // the request's, for its id
	errorsOnly bool            // LogErrorsOnly
	client     string          // the caller's address (ClientIP), set by checkOrigin
	idOnce     sync.Once
	id         string
	once       sync.Once
	l          *slog.Logger
}

func (rl *requestLogger) requestID() string {
	rl.idOnce.Do(func() { rl.id = requestIDOf(rl.ctx) })
	return rl.id
}

// LogErrorsOnly asks the middleware to write the request line of r only if its
// status is 400 or more. It is for a route whose successful answers are many, cheap and
// recorded elsewhere: the avatar route, whose every request API Gateway's access log
// records (request id, address, route, status, latency) and most of which CloudFront
// answers without reaching the function. What the handler logs itself is unchanged.
func LogErrorsOnly(r *http.Request) {
	if rl, ok := r.Context().Value(loggerKey{}).(*requestLogger); ok {
		rl.errorsOnly = true
	}
}

func (rl *requestLogger) get() *slog.Logger {
	rl.once.Do(func() { rl.l = rl.base.With("request_id", rl.requestID()) })
	return rl.l
}

func recoverPanics(next http.Handler, _ *Options) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				Logger(r.Context()).Error("panic", "value", v, "stack", string(debug.Stack()))
				Message(w, r, http.StatusInternalServerError, apperr.MsgInternal)
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// CORSMethods and CORSHeaders are what a CORS preflight allows: the one list of
// both. The local server's middleware (cors) sends them; in AWS, API Gateway answers
// preflights from template.yaml's CorsConfiguration, whose AllowMethods and
// AllowHeaders infra/tests/samtemplate's tests hold equal to these.
var (
	CORSMethods = []string{"GET", "POST", "DELETE", "OPTIONS"}
	CORSHeaders = []string{"Content-Type", "Authorization", "X-Requested-With"}
)

// The preflight's and the allowed origin's fixed header values, each one line made
// once and put in the header map as it is (as varyAcceptEncodingOrigin): Header.Set
// would allocate a slice for each on every request.
var (
	corsMethods     = []string{strings.Join(CORSMethods, ", ")}
	corsHeaders     = []string{strings.Join(CORSHeaders, ", ")}
	corsMaxAge      = []string{"600"}
	corsCredentials = []string{"true"}
)

// varyAcceptEncodingOrigin is the Vary value of Compress and cors, one line shared by
// every response as varyAcceptEncoding is (a list in one line means the same as its
// items in several lines).
var (
	varyAcceptEncodingOrigin = []string{"Accept-Encoding, Origin"}
	varyOrigin               = []string{"Origin"}
)

func cors(next http.Handler, o *Options) http.Handler {
	// allowOrigin: each allowed origin's Access-Control-Allow-Origin value.
	allowOrigin := make(map[string][]string, len(o.CORSOrigins))
	for _, origin := range o.CORSOrigins {
		allowOrigin[origin] = []string{origin}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		h := w.Header()
		switch v := h["Vary"]; {
		case len(v) == 0:
			h["Vary"] = varyOrigin
		case len(v) == 1 && v[0] == "Accept-Encoding":
			h["Vary"] = varyAcceptEncodingOrigin // Compress's and this one: one line
		default:
			h.Add("Vary", "Origin")
		}
		allow, allowed := allowOrigin[strings.TrimRight(origin, "/")]
		allowed = allowed && origin != ""
		if allowed {
			if allow[0] != origin { // sent with a trailing slash: echoed as sent
				allow = []string{origin}
			}
			h["Access-Control-Allow-Origin"] = allow
			h["Access-Control-Allow-Credentials"] = corsCredentials
		}
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			if allowed {
				h["Access-Control-Allow-Methods"] = corsMethods
				h["Access-Control-Allow-Headers"] = corsHeaders
				h["Access-Control-Max-Age"] = corsMaxAge
			}
			w.WriteHeader(http.StatusNoContent)
			return
		}
		next.ServeHTTP(w, r)
	})
}
