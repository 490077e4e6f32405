package telemetry

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/exaring/otelpgx"
	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// StatementPackage is the package whose functions send the service's statements: a
// statement's span is named by the function that sent it ("postgres.DB.Tags"), and
// carries its file and line, never its arguments.
const StatementPackage = "github.com/mediacatalog/service/shared/postgres."

// PgxTracer is the pgx tracer of the service's pool: otelpgx's spans (the statement's
// text as db.query.text, its error, its rows), named by the store function that sent
// the statement; and each statement's time and count added to its request's metrics.
func PgxTracer() pgx.QueryTracer {
	return &pgxTracer{inner: otelpgx.NewTracer(
		otelpgx.WithSpanNameCtxFunc(func(ctx context.Context, _ string) string {
			if c, ok := ctx.Value(callKey{}).(*call); ok && c.name != "" {
				return c.name
			}
			return "statement"
		}),
		otelpgx.WithQuerySpanNamePrefix(), // "query …", "prepare …", "batch query …"
		otelpgx.WithDisableConnectionDetailsInAttributes(),
	)}
}

type pgxTracer struct{ inner *otelpgx.Tracer }

type callKey struct{}

// call is one statement: when it started and which function sent it.
type call struct {
	start      time.Time
	name, file string
	line       int
}

// begin starts a statement's call, and reports whether its span is recorded: otelpgx
// is called for a recorded one only. Unsampled, it would still box a start time into
// the context and look up the attribute set of a metric nobody reads (the service sets
// no meter provider), on every statement. A process that writes no EMF document
// (make run's server) reads no statement's time: an unrecorded statement there takes
// none, and leaves its context as it is.
func (t *pgxTracer) begin(ctx context.Context) (context.Context, bool) {
	traced := trace.SpanFromContext(ctx).IsRecording()
	if !traced && metrics == nil {
		return ctx, false
	}
	c := &call{start: time.Now()}
	if traced {
		c.name, c.file, c.line = caller()
	}
	return context.WithValue(ctx, callKey{}, c), traced
}

// traced reports whether the statement of ctx has a recorded span: its own, when
// otelpgx made one at its start, or none (the request's span unsampled).
func traced(ctx context.Context) bool { return trace.SpanFromContext(ctx).IsRecording() }

// finish adds the call's time to its request's, and statements to its count, for its
// EMF document (none without a metric writer).
func (t *pgxTracer) finish(ctx context.Context, statements int) {
	st := recorded(ctx)
	if st == nil {
		return
	}
	var d time.Duration
	if c, ok := ctx.Value(callKey{}).(*call); ok && !c.start.IsZero() {
		d = time.Since(c.start)
	}
	st.db.mu.Lock()
	st.db.time += d
	st.db.count += statements
	st.db.mu.Unlock()
}

// located adds the sender's file and line to the statement's span.
func located(ctx context.Context) {
	c, ok := ctx.Value(callKey{}).(*call)
	if !ok || c.file == "" {
		return
	}
	trace.SpanFromContext(ctx).SetAttributes(attribute.String("code.file.path", c.file),
		attribute.Int("code.line.number", c.line))
}

func (t *pgxTracer) TraceQueryStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	ctx, traced := t.begin(ctx)
	if traced {
		ctx = t.inner.TraceQueryStart(ctx, conn, data)
		located(ctx)
	}
	return ctx
}

func (t *pgxTracer) TraceQueryEnd(ctx context.Context, conn *pgx.Conn, data pgx.TraceQueryEndData) {
	if traced(ctx) {
		t.inner.TraceQueryEnd(ctx, conn, data)
	}
	t.finish(ctx, 1)
}

func (t *pgxTracer) TraceBatchStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceBatchStartData) context.Context {
	ctx, traced := t.begin(ctx)
	if traced {
		ctx = t.inner.TraceBatchStart(ctx, conn, data)
		located(ctx)
	}
	return ctx
}

func (t *pgxTracer) TraceBatchQuery(ctx context.Context, conn *pgx.Conn, data pgx.TraceBatchQueryData) {
	if traced(ctx) {
		t.inner.TraceBatchQuery(ctx, conn, data)
	}
	if st := recorded(ctx); st != nil {
		st.db.mu.Lock()
		st.db.count++
		st.db.mu.Unlock()
	}
}

func (t *pgxTracer) TraceBatchEnd(ctx context.Context, conn *pgx.Conn, data pgx.TraceBatchEndData) {
	if traced(ctx) {
		t.inner.TraceBatchEnd(ctx, conn, data)
	}
	t.finish(ctx, 0) // its statements counted one by one
}

func (t *pgxTracer) TraceCopyFromStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceCopyFromStartData) context.Context {
	ctx, traced := t.begin(ctx)
	if traced {
		ctx = t.inner.TraceCopyFromStart(ctx, conn, data)
		located(ctx)
	}
	return ctx
}

func (t *pgxTracer) TraceCopyFromEnd(ctx context.Context, conn *pgx.Conn, data pgx.TraceCopyFromEndData) {
	if traced(ctx) {
		t.inner.TraceCopyFromEnd(ctx, conn, data)
	}
	t.finish(ctx, 1)
}

// A prepare (describe) is part of its statement's time; its span is otelpgx's.
func (t *pgxTracer) TracePrepareStart(ctx context.Context, conn *pgx.Conn, data pgx.TracePrepareStartData) context.Context {
	if !traced(ctx) {
		return ctx
	}
	return t.inner.TracePrepareStart(ctx, conn, data)
}

func (t *pgxTracer) TracePrepareEnd(ctx context.Context, conn *pgx.Conn, data pgx.TracePrepareEndData) {
	if traced(ctx) {
		t.inner.TracePrepareEnd(ctx, conn, data)
	}
}

// caller is the innermost function of StatementPackage on the stack, with its file and
// line: the store function that sent the statement (past the package's transaction
// helper, so that a transaction's begin and commit are named by their store function).
// What each return address stands for is worked out once (frames) and kept: working
// it out cost more than the rest of a statement's span.
func caller() (name, file string, line int) {
	var pcs [maxDepth]uintptr
	// The stack is walked as far as the slice it fills: the store function is most
	// often within the first frames (shortDepth), and only a deeper call walks again.
	for _, depth := range []int{shortDepth, maxDepth} {
		n := runtime.Callers(3, pcs[:depth])
		for _, pc := range pcs[:n] {
			f := frameOf(pc)
			if f.name != "" {
				return f.name, f.file, f.line
			}
		}
		if n < depth {
			break
		}
	}
	return "", "", 0
}

// shortDepth covers a pool's statement: the tracers, pgx's Conn and the pool's, then
// the store function. maxDepth bounds the walk from the tracer to the store function
// (pgx's own frames between them are fewer than ten; a transaction's helper adds a few).
const (
	shortDepth = 8
	maxDepth   = 24
)

// frame is what a return address stands for: a store function's name, file and line,
// or nothing.
type frame struct {
	name, file string
	line       int
}

// frames caches frameOf; the code's return addresses are a finite set.
var frames sync.Map // uintptr -> frame

func frameOf(pc uintptr) frame {
	if f, ok := frames.Load(pc); ok {
		return f.(frame)
	}
	var found frame
	fs := runtime.CallersFrames([]uintptr{pc})
	for {
		f, more := fs.Next()
		if rest, ok := strings.CutPrefix(f.Function, StatementPackage); ok && !strings.HasPrefix(rest, "(*callDeadline)") &&
			!strings.HasPrefix(rest, "(*DB).inTx") {
			// "postgres.DB.Tags": X-Ray names take no parentheses or stars.
			found = frame{"postgres." + strings.NewReplacer("(*", "", ")", "").Replace(rest), trimPath(f.File), f.Line}
			break
		}
		if !more {
			break
		}
	}
	frames.Store(pc, found)
	return found
}

// trimPath is file from the module's root ("shared/postgres/tags.go").
func trimPath(file string) string {
	if i := strings.Index(file, "shared/"); i >= 0 {
		return file[i:]
	}
	return file
}
