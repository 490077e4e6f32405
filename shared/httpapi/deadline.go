package httpapi

import (
	"context"
	"sync"
	"time"

	"github.com/mediacatalog/service/shared/deadlines"
	"github.com/mediacatalog/service/shared/dependency"
)

// A request's work (queries, AWS calls) ends by the work deadline: under Lambda the
// invocation's deadline minus deadlines.LambdaMargin, elsewhere Options.RequestTimeout
// after it arrived (config.RequestTimeout, a few seconds below the local server's write
// timeout), whichever comes first. What must still run once the outcome is decided
// (removing replaced objects, telling the cdn; see Detached) has deadlines.Grace more.
// Either way the answer is written before the function's timeout or the server's write
// timeout would close the connection on the client.

type graceKey struct{}

// workContext makes st the context of a request's work, whose parent is the request's
// context, and which st.finish ends. It is not cancelled when the client goes away (a
// half-closed connection cancels the request's context in net/http): the request
// finishes within its deadline, so a write is either committed and answered or rolled
// back, never cut in the middle (logRequests logs a client that left as such). It ends
// at the work deadline; its dependency calls together have deadlines.Budget.
func workContext(st *requestState, parent context.Context, timeout time.Duration, now time.Time) {
	var deadline time.Time
	if timeout > 0 {
		deadline = now.Add(timeout)
	}
	if d, ok := parent.Deadline(); ok && (deadline.IsZero() || d.Add(-deadlines.LambdaMargin).Before(deadline)) {
		deadline = d.Add(-deadlines.LambdaMargin)
	}
	st.parent, st.values = parent, context.WithoutCancel(parent)
	st.deps.Reset(deadlines.Budget)
	st.at = deadline
	if !deadline.IsZero() {
		st.grace = deadline.Add(deadlines.Grace)
	}
}

// workDeadline is the ending of a request's work context (requestState): a
// context.WithDeadline of its values, made only when something waits for the end (Done,
// a context derived from it, AfterFunc) or asks once the deadline has passed (Err).
// Until then it is a time, not a timer. Most answers of the avatar route wait for
// nothing (the picture is in memory, the user's reference fresh), and a timer started
// and stopped for each of them was a measurable part of the route's cost
// (BenchmarkWrap, BenchmarkAvatarServer in infra/local/cmd/local; docs/cdn.md). The context
// package makes the timer; this type only decides when.
type workDeadline struct {
	parent context.Context // the request's context
	values context.Context // its values, without its cancellation
	at     time.Time       // zero: none, the work never ends on its own
	grace  time.Time       // at + deadlines.Grace (Detached)

	mu      sync.Mutex
	ctx     context.Context // context.WithDeadline(values, at), once made
	cancel  context.CancelFunc
	ended   bool      // finish was called
	endedAt time.Time // when
}

func (d *workDeadline) Deadline() (time.Time, bool) { return d.at, !d.at.IsZero() }

func (d *workDeadline) Done() <-chan struct{} {
	if d.at.IsZero() {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.made().Done()
}

func (d *workDeadline) Err() error {
	if d.at.IsZero() {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ctx == nil && !d.ended && time.Now().Before(d.at) {
		return nil // nothing has ended: no need of the timer to say so
	}
	return d.made().Err()
}

// cancelValue answers the context package's key of a context's own cancellation
// (dependency.CancelKey) with the cancellation of the context made here, which Done
// returns the channel of: the package then attaches a context derived from this one
// to it as a child, cancelled with it, without a goroutine. Without a deadline there
// is no end to attach to.
func (d *workDeadline) cancelValue(key any) any {
	if d.at.IsZero() {
		return d.values.Value(key)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.made().Value(key)
}

// made returns the context that ends at d.at, making it on first use; made after
// finish, it has ended already, with the error it would have had: DeadlineExceeded if
// the deadline came first, else Canceled. d.mu is held.
func (d *workDeadline) made() context.Context {
	if d.ctx == nil {
		if d.ended && d.endedAt.Before(d.at) {
			d.ctx, d.cancel = context.WithCancel(d.values)
			d.cancel()
		} else {
			d.ctx, d.cancel = context.WithDeadline(d.values, d.at)
		}
	}
	return d.ctx
}

// finish ends the work once the request is answered, as a context's CancelFunc does.
func (d *workDeadline) finish() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ended {
		return
	}
	d.ended, d.endedAt = true, time.Now()
	if d.cancel != nil {
		d.cancel()
	}
}

// Detached returns a context for work that must finish once a request's outcome is
// decided, such as removing objects nobody points at any more: not cancelled with the
// request, and ending at the request's grace deadline (fallback from now when ctx
// carries none, as outside a request), and at most deadlines.Budget from now. The
// request's own budget does not bound it: a request that spent its budget on a stalled
// database still removes what it stored.
func Detached(ctx context.Context, fallback time.Duration) (context.Context, context.CancelFunc) {
	now := time.Now()
	d := now.Add(fallback)
	if g, ok := ctx.Value(graceKey{}).(time.Time); ok {
		d = g
	}
	if limit := now.Add(deadlines.Budget); limit.Before(d) {
		d = limit
	}
	return context.WithDeadline(dependency.WithoutBudget(context.WithoutCancel(ctx)), d)
}
