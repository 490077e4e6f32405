package httpapi

import (
	"context"
	"errors"
	"net/http"
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

// withDeadline runs the request with its work deadline. The handler's context is not
// cancelled when the client goes away (a half-closed connection cancels it in
// net/http): the request finishes within its deadline, so a write is either committed
// and answered or rolled back, never cut in the middle; a client that left is logged
// as such.
func withDeadline(timeout time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		parent := r.Context()
		var deadline time.Time
		if timeout > 0 {
			deadline = time.Now().Add(timeout)
		}
		if d, ok := invocationDeadline(parent); ok && (deadline.IsZero() || d.Add(-LambdaMargin).Before(deadline)) {
			deadline = d.Add(-LambdaMargin)
		}
		ctx := context.WithoutCancel(parent)
		if !deadline.IsZero() {
			var cancel context.CancelFunc
			ctx, cancel = context.WithDeadline(context.WithValue(ctx, graceKey{}, deadline.Add(Grace)), deadline)
			defer cancel()
		}
		next.ServeHTTP(w, r.WithContext(ctx))
		if errors.Is(parent.Err(), context.Canceled) {
			Logger(ctx).Info("client went away before the answer", "method", r.Method, "path", r.URL.Path)
		}
	})
}

type invocationKey struct{}

// WithInvocationDeadline gives the requests of ctx the deadline of the invocation
// that serves them, as Lambda's context carries one: the local server gives each
// request its function's. withDeadline reads it and the context's own deadline alike;
// a value costs less than a context with a timer, and nothing before withDeadline,
// which detaches the request's work from its context, would be cancelled by it.
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
