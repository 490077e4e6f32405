// Package dependency guards the service's calls to what it depends on (PostgreSQL,
// DynamoDB, S3, the OAuth providers, CloudFront, Lambda): one time budget per request
// for all of them together (Request), and a circuit breaker per dependency and process
// (Breaker), so that a stalled dependency costs a request seconds, and a container
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
