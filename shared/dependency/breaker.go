package dependency

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sony/gobreaker/v2"

	"github.com/mediacatalog/service/shared/deadlines"
	"github.com/mediacatalog/service/shared/telemetry"
)

// The breakers' settings, the same for every dependency:
//
//   - Trips: consecutive calls that timed out or could not connect open the breaker.
//     An ordinary error (a unique violation, a missing object, a 4xx) is an answer and
//     counts as a success: the dependency is up.
//   - OpenFor: while open, every call is refused at once; then one call goes through
//     as the probe (half-open) and its outcome closes or reopens the breaker. Short, so
//     that a recovered dependency is used again within a second.
//   - deadlines.ProbeTimeout: the probe's own deadline.
const (
	Trips   = 2
	OpenFor = 500 * time.Millisecond
	// minEvidence is the least time a call must have had for its timeout to count
	// against the dependency: a call left a sliver of the request's budget says nothing.
	minEvidence = 500 * time.Millisecond
)

// Breaker is the circuit breaker of one dependency in one process (a Lambda
// container): sony/gobreaker's two-step breaker with the settings above, whose state
// changes are logged (one JSON line) and counted (StateChanges).
type Breaker struct {
	name string
	cb   *gobreaker.TwoStepCircuitBreaker[struct{}]
}

// NewBreaker returns the breaker of dependency name, logging its state changes to log
// (a JSON logger on stderr when nil).
func NewBreaker(name string, log *slog.Logger) *Breaker {
	if log == nil {
		log = defaultLog
	}
	return &Breaker{name: name, cb: gobreaker.NewTwoStepCircuitBreaker[struct{}](gobreaker.Settings{
		Name:        name,
		MaxRequests: 1,
		Timeout:     OpenFor,
		ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= Trips },
		IsExcluded:  func(err error) bool { return errors.Is(err, errNoEvidence) },
		OnStateChange: func(name string, from, to gobreaker.State) {
			count(name, to)
			log.LogAttrs(context.Background(), level(to), "dependency breaker",
				slog.String("dependency", name), slog.String("from", from.String()), slog.String("to", to.String()))
		},
	})}
}

// clock is the time of the budget's accounts (the tests set their own).
var clock = time.Now

var defaultLog = slog.New(slog.NewJSONHandler(os.Stderr, nil))

func level(to gobreaker.State) slog.Level {
	if to == gobreaker.StateOpen {
		return slog.LevelWarn
	}
	return slog.LevelInfo
}

// Name is the dependency's name.
func (b *Breaker) Name() string { return b.name }

// State is "closed", "half-open" or "open".
func (b *Breaker) State() string { return b.cb.State().String() }

// Unavailable is the error of a call refused because its dependency's breaker is open
// (or half-open with its probe under way).
type Unavailable struct{ Dependency string }

func (e *Unavailable) Error() string {
	return fmt.Sprintf("%s is unavailable (circuit breaker open)", e.Dependency)
}

// errNoEvidence marks an outcome that says nothing of the dependency's health.
var errNoEvidence = errors.New("no evidence")

// NoEvidence, passed to a call's end, counts it neither way: a connection handed out by
// a pool without a round trip, a call cut short by its caller.
var NoEvidence = errNoEvidence

// ErrBudgetSpent is the error of a call begun after its request's budget was spent.
var ErrBudgetSpent = fmt.Errorf("the request's time budget for its dependencies is spent: %w", context.DeadlineExceeded)

// Begin starts one call to the dependency under ctx, with limit its own deadline (0:
// none but the budget's). It returns the context to make the call with, bounded by
// limit, by what is left of the request's budget, and by deadlines.ProbeTimeout for the probe of
// a half-open breaker; and end, which must be called with the call's outcome. A call
// refused (breaker open, budget spent) returns an error and no end, and marks the
// request unavailable.
func (b *Breaker) Begin(ctx context.Context, limit time.Duration) (context.Context, func(error), error) {
	c, err := b.Start(ctx, limit)
	if err != nil {
		return ctx, nil, err
	}
	return c.Context(), c.End, nil
}

// Call is one call begun by Start: Begin's context and end as one value, for the
// callers that make one per database statement (shared/postgres), where Begin's
// closures would be most of a call's allocations. It is the call's context: its
// deadline and cancellation those of ends (the call's own timeout, or the request's
// budget's context, which ends no later than the call's own context, made from one
// with the same cancellation), every value but its own those of the context it was
// started with.
type Call struct {
	ends   context.Context
	values context.Context
	b      *Breaker
	req    *Request
	d      time.Duration
	done   func(error) // gobreaker's end of the call it allowed; nil: see Start
	cancel context.CancelFunc
	ended  atomic.Bool
}

// Start is Begin returning the call as a Call. While the breaker is closed, a call is
// not passed through gobreaker's Allow, which would cost each call a lock, a clock
// read and a closure for an outcome that almost always changes nothing: its outcome is
// reported at its end only when it does change something (a failure, or a success
// after failures), through an Allow made then, and only while the breaker is still
// closed (an outcome of an earlier state is what gobreaker itself drops). A half-open
// or open breaker's call goes through Allow at its start, as the probe or refused.
func (b *Breaker) Start(ctx context.Context, limit time.Duration) (*Call, error) {
	req := Of(ctx)
	now := clock()
	d := limit
	// byBudget: what is left of the request's budget ends the call before any limit of
	// its own, so the call needs no timer of its own: it ends with the request's
	// (Request.bound).
	byBudget := false
	if req != nil {
		left := req.begin(now)
		if left <= 0 {
			req.markDown(b.name)
			return nil, ErrBudgetSpent
		}
		if d <= 0 || left < d {
			d, byBudget = left, true
		}
	}
	state := b.cb.State()
	var done func(error)
	if state != gobreaker.StateClosed {
		var err error
		if done, err = b.cb.Allow(); err != nil {
			telemetry.Add(ctx, telemetry.MetricBreakerRefusals, 1)
			if req != nil {
				req.end(now)
				req.markDown(b.name)
			}
			return nil, &Unavailable{Dependency: b.name}
		}
	}
	if state == gobreaker.StateHalfOpen && (d <= 0 || deadlines.ProbeTimeout < d) {
		d, byBudget = deadlines.ProbeTimeout, false
	}
	c := &Call{ends: ctx, values: ctx, b: b, req: req, d: d, done: done, cancel: noCancel}
	switch {
	case byBudget:
		c.ends = req.bound(ctx, now.Add(d))
	case d > 0:
		c.ends, c.cancel = context.WithTimeout(ctx, d)
	}
	return c, nil
}

type callKey struct{}

// CallOf is the call whose context ctx is, or is made from (nil for one of Nested).
func CallOf(ctx context.Context) *Call {
	c, _ := ctx.Value(callKey{}).(*Call)
	return c
}

// Nested is ctx for work within the call of ctx that is no call of its own (a
// statement's prepare, within its query): CallOf finds no call in it.
func Nested(ctx context.Context) context.Context {
	return context.WithValue(ctx, callKey{}, (*Call)(nil))
}

// Context is the context to make the call with: the call itself.
func (c *Call) Context() context.Context { return c }

func (c *Call) Deadline() (time.Time, bool) { return c.ends.Deadline() }
func (c *Call) Done() <-chan struct{}       { return c.ends.Done() }
func (c *Call) Err() error                  { return c.ends.Err() }

func (c *Call) Value(key any) any {
	switch key {
	case callKey{}:
		return c
	case CancelKey:
		return c.ends.Value(key) // the call's cancellation: context.Cause, and the contexts made from this one
	}
	return c.values.Value(key)
}

// End reports the call's outcome and releases its context.
func (c *Call) End(err error) { c.Report(err); c.cancel() }

// Report reports the call's outcome (once; later reports are ignored) and ends its
// wait in the request's budget, leaving its context to be released by the caller
// (an HTTP response's body is still read with it).
func (c *Call) Report(err error) {
	if !c.ended.CompareAndSwap(false, true) {
		return
	}
	if c.req != nil {
		c.req.end(clock())
	}
	outcome := errNoEvidence
	switch {
	case err == nil:
		outcome = nil
	case errors.Is(err, errNoEvidence):
	case Down(err):
		if !errors.Is(err, context.DeadlineExceeded) || c.d <= 0 || c.d >= minEvidence {
			outcome = err
		}
		if c.req != nil {
			c.req.markDown(c.b.name)
		}
	case errors.Is(err, context.Canceled):
	default:
		outcome = nil // an answer: the dependency is up
	}
	switch {
	case c.done != nil:
		c.done(outcome)
	case outcome == errNoEvidence:
	case outcome == nil && c.b.cb.Counts().ConsecutiveFailures == 0:
		// A success with no failure to forget: the closed breaker's counts would not move.
	case c.b.cb.State() == gobreaker.StateClosed:
		if done, err := c.b.cb.Allow(); err == nil {
			done(outcome)
		}
	}
}

func noCancel() {}

// The counts of state changes, by dependency and new state.
var (
	changesMu sync.Mutex
	changes   = map[string]uint64{}
)

func count(name string, to gobreaker.State) {
	changesMu.Lock()
	changes[name+" "+to.String()]++
	changesMu.Unlock()
}

// StateChanges returns how often each breaker of the process changed state, keyed
// "<dependency> <new state>" ("postgres open", "postgres half-open", "postgres
// closed"): what the metrics read.
func StateChanges() map[string]uint64 {
	changesMu.Lock()
	defer changesMu.Unlock()
	out := make(map[string]uint64, len(changes))
	for k, v := range changes {
		out[k] = v
	}
	return out
}
