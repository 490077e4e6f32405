// Package dependency guards the service's calls to what it depends on (PostgreSQL,
// DynamoDB, S3, the OAuth providers, CloudFront, Lambda): one time budget per request
// for all of them together (Request, deadlines.Budget), and a circuit breaker per
// dependency and process (Breaker), so that a stalled dependency costs a request seconds, and a container
// that knows it stalled answers at once. The adapters call Breaker.Begin at the one
// place each dependency is called: the pgx tracer (shared/postgres), the AWS SDK's
// middleware stack (shared/awsconfig), the OAuth HTTP client's transport.
package dependency

import (
	"context"
	"sync"
	"time"
)

// Request is one request's use of its dependencies: the time spent waiting on them,
// and the dependency that was found unavailable, if any. The HTTP middleware holds
// one per request (found under RequestKey); a context without one (start-up, tools,
// Detached cleanups) has no budget but the calls' own deadlines.
type Request struct {
	mu       sync.Mutex
	limit    time.Duration
	spent    time.Duration // waiting, before since
	inflight int
	since    time.Time // the start of the current wait (inflight > 0)
	down     string    // the dependency that failed the request

	// The context that ends at the budget's end, for the calls the budget bounds
	// (bound): made from a call's context, whose Done it shares with the calls that
	// use it, at end.
	budget     context.Context
	budgetOf   <-chan struct{}
	budgetEnd  time.Time
	stopBudget context.CancelFunc
}

// RequestKey is the context key of a request's *Request (the middleware's work
// context answers it without an allocation of its own).
type RequestKey struct{}

// Of returns ctx's Request, or nil.
func Of(ctx context.Context) *Request {
	r, _ := ctx.Value(RequestKey{}).(*Request)
	return r
}

// WithoutBudget is ctx without its Request: for work that must still run once a
// request's outcome is decided (removing objects nobody points at), whose own
// deadline bounds it, and which a spent budget must not stop.
func WithoutBudget(ctx context.Context) context.Context {
	return context.WithValue(ctx, RequestKey{}, (*Request)(nil))
}

// Reset readies r for a new request with the given budget.
func (r *Request) Reset(limit time.Duration) {
	r.mu.Lock()
	r.limit, r.spent, r.inflight, r.since, r.down = limit, 0, 0, time.Time{}, ""
	if r.stopBudget != nil {
		r.stopBudget()
	}
	r.budget, r.budgetOf, r.budgetEnd, r.stopBudget = nil, nil, time.Time{}, nil
	r.mu.Unlock()
}

// remaining is what is left of the budget at now.
func (r *Request) remaining(now time.Time) time.Duration {
	spent := r.spent
	if r.inflight > 0 {
		spent += now.Sub(r.since)
	}
	return r.limit - spent
}

// begin starts a wait at now and returns what is left of the budget.
func (r *Request) begin(now time.Time) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	left := r.remaining(now)
	if left > 0 {
		if r.inflight == 0 {
			r.since = now
		}
		r.inflight++
	}
	return left
}

// end ends a wait begun at begin.
func (r *Request) end(now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.inflight--
	if r.inflight == 0 {
		r.spent += now.Sub(r.since)
	}
}

// markDown records that dependency name failed the request (the first one counts).
func (r *Request) markDown(name string) {
	r.mu.Lock()
	if r.down == "" {
		r.down = name
	}
	r.mu.Unlock()
}

// Unavailable is the dependency that was unavailable to the request (its breaker
// open, a call that timed out or could not connect), or "".
func (r *Request) Unavailable() string {
	if r == nil {
		return ""
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.down
}

// budgetSlack is how much later than the budget context's end a call's end of the
// budget may be and still use it: the request's own work between two calls (a few
// microseconds between a pool's acquire and its query) moves the budget's end that
// much later, and counting it as waiting costs the request at most this much of its
// budget.
const budgetSlack = 10 * time.Millisecond

// bound returns the context that ends at end, the budget's end for a call that what
// is left of the budget bounds, with ctx's cancellation as well. A request's calls
// follow one another (a connection's acquire, then its query), or overlap, and the
// budget's end does not move while a call waits: they end through one
// context.WithDeadline of the request's, made again only when ctx's cancellation
// differs from the one it was made from or the end has moved later by more than
// budgetSlack. A context replaced is not cancelled (an HTTP response's body may still
// be read with it): it ends at its own end, or with the context it was made from. The
// call takes its values from its own context (Call).
func (r *Request) bound(ctx context.Context, end time.Time) context.Context {
	done := ctx.Done()
	r.mu.Lock()
	if r.budget == nil || done != r.budgetOf || end.Before(r.budgetEnd) || end.Sub(r.budgetEnd) > budgetSlack {
		r.budget, r.stopBudget = context.WithDeadline(ctx, end)
		r.budgetOf, r.budgetEnd = done, end
	}
	b := r.budget
	r.mu.Unlock()
	return b
}

// CancelKey is the key under which the context package looks up a context's own
// cancellation (context.Cause, and a context derived from this one, ask for it; Cause
// asks it of a context that has ended). The package does not export it, so a spy
// context that notes what it is asked for finds it once. A context that takes its
// values from one context and its cancellation from another (Call here, the
// request's work context in shared/httpapi) answers this key from the second.
var CancelKey = func() any {
	var spy keySpy
	_ = context.Cause(&spy)
	return spy.key
}()

// keySpy is a context that notes the key it was last asked for.
type keySpy struct {
	context.Context
	key any
}

func (s *keySpy) Value(key any) any { s.key = key; return nil }
func (s *keySpy) Err() error        { return context.Canceled }
