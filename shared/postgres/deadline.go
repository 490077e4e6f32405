package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mediacatalog/service/shared/dependency"
)

// WithCallDeadline gives each database call (query, exec, batch, copy, prepare; a
// transaction's begin and commit are calls too) a deadline of its own, d after it
// starts, on top of the caller's. PostgreSQL's statement_timeout ends a slow statement
// on the server, but a frozen server or network cannot enforce it, and a call then
// waits as long as its request: under Lambda up to the function's timeout, when Lambda
// kills the request instead of answering. With this deadline pgx gives up on the
// connection (and closes it) after d, and the request answers with a Response Model.
// Bulk tools do not set it.
func WithCallDeadline(d time.Duration) Option { return WithGuard(nil, d) }

// WithGuard is WithCallDeadline with the calls, and the pool's connection acquisitions,
// going through breaker b (dependency.Breaker.Begin): each call is bounded by what is
// left of its request's budget as well, and once the database is known not to answer,
// a call is refused at once (its context cancelled before it starts). The service's
// functions use it with deadlines.CallTimeout (shared/app).
func WithGuard(b *dependency.Breaker, d time.Duration) Option {
	return func(c *pgxpool.Config) {
		c.ConnConfig.Tracer = &callDeadline{d: d, breaker: b, inner: c.ConnConfig.Tracer}
	}
}

// callDeadline is a pgx tracer whose start hooks return the call's context with the
// deadline (pgx runs the call with the context its tracer returns) and whose end hooks
// release it and report the outcome to the breaker. It forwards to the tracer installed
// before it (WithTracer).
type callDeadline struct {
	d       time.Duration
	breaker *dependency.Breaker // nil: the deadline alone
	inner   pgx.QueryTracer
}

type endKey struct{}

// start begins a call: with a breaker, the call's context is the dependency.Call
// itself, which its end finds again (dependency.CallOf); without one, the deadline's
// cancel goes under endKey. A call the breaker refuses gets a context cancelled
// already, so that pgx fails it before it sends anything.
func (t *callDeadline) start(ctx context.Context) context.Context {
	if t.breaker == nil {
		ctx, cancel := context.WithTimeout(ctx, t.d)
		return context.WithValue(ctx, endKey{}, cancel)
	}
	if dependency.CallOf(ctx) != nil {
		// Within a call already begun (the prepare of a query's statement): that call's
		// deadline and outcome are this one's.
		return dependency.Nested(ctx)
	}
	call, err := t.breaker.Start(ctx, t.d)
	if err != nil {
		refused, cancel := context.WithCancel(ctx)
		cancel()
		return refused
	}
	return call
}

func (t *callDeadline) end(ctx context.Context, err error) {
	if t.breaker == nil {
		if cancel, ok := ctx.Value(endKey{}).(context.CancelFunc); ok {
			cancel()
		}
		return
	}
	if call := dependency.CallOf(ctx); call != nil {
		call.End(err)
	}
}

// TraceAcquireStart makes taking a connection from the pool (and connecting, when the
// pool has none idle) a call of its own: the first thing of every pool call and
// transaction, so a refused one waits for nothing.
func (t *callDeadline) TraceAcquireStart(ctx context.Context, p *pgxpool.Pool, data pgxpool.TraceAcquireStartData) context.Context {
	if at, ok := t.inner.(pgxpool.AcquireTracer); ok {
		ctx = at.TraceAcquireStart(ctx, p, data)
	}
	return t.start(ctx)
}

// TraceAcquireEnd ends it. A connection handed out says nothing of the server's health
// (an idle one is handed out without a round trip); one not got says it is down when
// the error does (dependency.Down).
func (t *callDeadline) TraceAcquireEnd(ctx context.Context, p *pgxpool.Pool, data pgxpool.TraceAcquireEndData) {
	if data.Err == nil {
		t.end(ctx, dependency.NoEvidence)
	} else {
		t.end(ctx, data.Err)
	}
	if at, ok := t.inner.(pgxpool.AcquireTracer); ok {
		at.TraceAcquireEnd(ctx, p, data)
	}
}

func (t *callDeadline) TraceQueryStart(ctx context.Context, c *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	if t.inner != nil {
		ctx = t.inner.TraceQueryStart(ctx, c, data)
	}
	return t.start(ctx)
}

func (t *callDeadline) TraceQueryEnd(ctx context.Context, c *pgx.Conn, data pgx.TraceQueryEndData) {
	t.end(ctx, data.Err)
	if t.inner != nil {
		t.inner.TraceQueryEnd(ctx, c, data)
	}
}

func (t *callDeadline) TraceBatchStart(ctx context.Context, c *pgx.Conn, data pgx.TraceBatchStartData) context.Context {
	if bt, ok := t.inner.(pgx.BatchTracer); ok {
		ctx = bt.TraceBatchStart(ctx, c, data)
	}
	return t.start(ctx)
}

func (t *callDeadline) TraceBatchQuery(ctx context.Context, c *pgx.Conn, data pgx.TraceBatchQueryData) {
	if bt, ok := t.inner.(pgx.BatchTracer); ok {
		bt.TraceBatchQuery(ctx, c, data)
	}
}

func (t *callDeadline) TraceBatchEnd(ctx context.Context, c *pgx.Conn, data pgx.TraceBatchEndData) {
	t.end(ctx, data.Err)
	if bt, ok := t.inner.(pgx.BatchTracer); ok {
		bt.TraceBatchEnd(ctx, c, data)
	}
}

func (t *callDeadline) TraceCopyFromStart(ctx context.Context, c *pgx.Conn, data pgx.TraceCopyFromStartData) context.Context {
	if ct, ok := t.inner.(pgx.CopyFromTracer); ok {
		ctx = ct.TraceCopyFromStart(ctx, c, data)
	}
	return t.start(ctx)
}

func (t *callDeadline) TraceCopyFromEnd(ctx context.Context, c *pgx.Conn, data pgx.TraceCopyFromEndData) {
	t.end(ctx, data.Err)
	if ct, ok := t.inner.(pgx.CopyFromTracer); ok {
		ct.TraceCopyFromEnd(ctx, c, data)
	}
}

func (t *callDeadline) TracePrepareStart(ctx context.Context, c *pgx.Conn, data pgx.TracePrepareStartData) context.Context {
	if pt, ok := t.inner.(pgx.PrepareTracer); ok {
		ctx = pt.TracePrepareStart(ctx, c, data)
	}
	return t.start(ctx)
}

func (t *callDeadline) TracePrepareEnd(ctx context.Context, c *pgx.Conn, data pgx.TracePrepareEndData) {
	t.end(ctx, data.Err)
	if pt, ok := t.inner.(pgx.PrepareTracer); ok {
		pt.TracePrepareEnd(ctx, c, data)
	}
}
