package httpapi

import (
	"context"
	"time"
)

// A request's time budget. Its work (queries, AWS calls) ends by the work deadline:
// under Lambda the invocation's deadline minus LambdaMargin, elsewhere
// Options.RequestTimeout after it arrived (config.RequestTimeout, a few seconds below
// the local server's write timeout), whichever comes first. What must still run once
// the outcome is decided (removing replaced objects, telling the cdn; see Detached) has
// Grace more. Either way the answer is written before the function's timeout or the
// server's write timeout would close the connection on the client.
const (
	LambdaMargin = time.Second
	Grace        = LambdaMargin / 2
)

type graceKey struct{}

// workContext returns the context of a request's work, whose parent is the request's
// context, and the function that ends it. It is not cancelled when the client goes
// away (a half-closed connection cancels the request's context in net/http): the
// request finishes within its deadline, so a write is either committed and answered or
// rolled back, never cut in the middle (logRequests logs a client that left as such).
// It ends at the work deadline; st, the request's state, becomes its values' parent.
func workContext(st *requestState, parent context.Context, timeout time.Duration, now time.Time) (context.Context, context.CancelFunc) {
	var deadline time.Time
	if timeout > 0 {
		deadline = now.Add(timeout)
	}
	if d, ok := invocationDeadline(parent); ok && (deadline.IsZero() || d.Add(-LambdaMargin).Before(deadline)) {
		deadline = d.Add(-LambdaMargin)
	}
	st.values = context.WithoutCancel(parent)
	if deadline.IsZero() {
		return st, func() {}
	}
	st.grace = deadline.Add(Grace)
	return context.WithDeadline(st, deadline)
}

type invocationKey struct{}

// WithInvocationDeadline gives the requests of ctx the deadline of the invocation
// that serves them, as Lambda's context carries one: the local server gives each
// request its function's. The middleware reads it and the context's own deadline
// alike; a value costs less than a context with a timer, and nothing before the
// middleware, which detaches the request's work from its context, would be cancelled
// by it.
func WithInvocationDeadline(ctx context.Context, d time.Time) context.Context {
	return context.WithValue(ctx, invocationKey{}, d)
}

// invocationDeadline is the earlier of ctx's deadline and its WithInvocationDeadline.
func invocationDeadline(ctx context.Context) (time.Time, bool) {
	d, ok := ctx.Deadline()
	if v, set := ctx.Value(invocationKey{}).(time.Time); set && (!ok || v.Before(d)) {
		d, ok = v, true
	}
	return d, ok
}

// Detached returns a context for work that must finish once a request's outcome is
// decided, such as removing objects nobody points at any more: not cancelled with the
// request, and ending at the request's grace deadline (fallback from now when ctx
// carries none, as outside a request).
func Detached(ctx context.Context, fallback time.Duration) (context.Context, context.CancelFunc) {
	d := time.Now().Add(fallback)
	if g, ok := ctx.Value(graceKey{}).(time.Time); ok {
		d = g
	}
	return context.WithDeadline(context.WithoutCancel(ctx), d)
}
