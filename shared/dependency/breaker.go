package dependency

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
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
	ctx, report, cancel, err := b.begin(ctx, limit)
	if err != nil {
		return ctx, nil, err
	}
	return ctx, func(err error) { cancel(); report(err) }, nil
}

// begin is Begin with the end in two parts: report, the outcome (and the end of the
// wait), and cancel, the release of the call's context, which an HTTP response's body
// still needs after its round trip.
func (b *Breaker) begin(ctx context.Context, limit time.Duration) (context.Context, func(error), context.CancelFunc, error) {
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
			return ctx, nil, nil, ErrBudgetSpent
		}
		if d <= 0 || left < d {
			d, byBudget = left, true
		}
	}
	probe := b.cb.State() == gobreaker.StateHalfOpen
	done, err := b.cb.Allow()
	if err != nil {
		telemetry.Add(ctx, telemetry.MetricBreakerRefusals, 1)
		if req != nil {
			req.end(now)
			req.markDown(b.name)
		}
		return ctx, nil, nil, &Unavailable{Dependency: b.name}
	}
	if probe && (d <= 0 || deadlines.ProbeTimeout < d) {
		d, byBudget = deadlines.ProbeTimeout, false
	}
	cancel := noCancel
	switch {
	case byBudget:
		ctx = req.bound(ctx, now.Add(d))
	case d > 0:
		ctx, cancel = context.WithTimeout(ctx, d)
	}
	var once sync.Once
	report := func(err error) {
		once.Do(func() {
			if req != nil {
				req.end(clock())
			}
			switch {
			case err == nil || errors.Is(err, errNoEvidence):
				done(err)
			case Down(err):
				if errors.Is(err, context.DeadlineExceeded) && d > 0 && d < minEvidence {
					done(errNoEvidence)
				} else {
					done(err)
				}
				if req != nil {
					req.markDown(b.name)
				}
			case errors.Is(err, context.Canceled):
				done(errNoEvidence)
			default:
				done(nil) // an answer: the dependency is up
			}
		})
	}
	return ctx, report, cancel, nil
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
