package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// WithCallDeadline gives each database call (query, exec, batch, copy, prepare; a
// transaction's begin and commit are calls too) a deadline of its own, d after it
// starts, on top of the caller's. PostgreSQL's statement_timeout ends a slow statement
// on the server, but a frozen server or network cannot enforce it, and a call then
// waits as long as its request: under Lambda up to the function's timeout, when Lambda
// kills the request instead of answering. With this deadline pgx gives up on the
// connection (and closes it) after d, and the request answers with a Response Model.
// The service's functions use CallTimeout (shared/app); bulk tools do not set it.
func WithCallDeadline(d time.Duration) Option {
	return func(c *pgxpool.Config) {
		c.ConnConfig.Tracer = &callDeadline{d: d, inner: c.ConnConfig.Tracer}
	}
}

// callDeadline is a pgx tracer whose start hooks return the call's context with the
// deadline (pgx runs the call with the context its tracer returns) and whose end hooks
// release it. It forwards to the tracer installed before it (WithTracer).
type callDeadline struct {
	d     time.Duration
	inner pgx.QueryTracer
}

type cancelKey struct{}

func (t *callDeadline) start(ctx context.Context) context.Context {
	ctx, cancel := context.WithTimeout(ctx, t.d)
	return context.WithValue(ctx, cancelKey{}, cancel)
}

func end(ctx context.Context) {
	if cancel, ok := ctx.Value(cancelKey{}).(context.CancelFunc); ok {
		cancel()
	}
}

func (t *callDeadline) TraceQueryStart(ctx context.Context, c *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	if t.inner != nil {
		ctx = t.inner.TraceQueryStart(ctx, c, data)
	}
	return t.start(ctx)
}

func (t *callDeadline) TraceQueryEnd(ctx context.Context, c *pgx.Conn, data pgx.TraceQueryEndData) {
	end(ctx)
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
	end(ctx)
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
	end(ctx)
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
	end(ctx)
	if pt, ok := t.inner.(pgx.PrepareTracer); ok {
		pt.TracePrepareEnd(ctx, c, data)
	}
}
