package httpapi

import (
	"context"
	"errors"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/mediacatalog/service/shared/dependency"
)

type testKey struct{}

// newWork is a request's work context as logRequests makes it, with the work deadline
// in from now (0: none; negative: passed already).
func newWork(in time.Duration) *requestState {
	st := &requestState{}
	parent := context.WithValue(context.Background(), testKey{}, "value")
	workContext(st, parent, max(in, 0), time.Now())
	if in < 0 {
		st.at = time.Now().Add(in) // already passed
	}
	return st
}

// waitDone waits for ctx to end, failing after a minute (a bound for a broken build,
// not a measurement).
func waitDone(t *testing.T, ctx context.Context) {
	t.Helper()
	select {
	case <-ctx.Done():
	case <-time.After(time.Minute):
		t.Fatal("the context did not end")
	}
}

// TestWorkDeadline: a request's work context behaves as context.WithDeadline of the
// request's values, whether or not anything waited on it before it ended (its timer is
// made on first use): Err, Done, a derived context and AfterFunc all see the same end,
// Canceled when the request finished first, DeadlineExceeded when the deadline did.
func TestWorkDeadline(t *testing.T) {
	const long = time.Hour
	tests := []struct {
		name    string
		in      time.Duration // the deadline from now; negative: passed already
		armed   bool          // something waited (Done) before the end
		derived bool          // a context.WithCancel child, made before the end
		finish  bool          // the request finishes (before the deadline when it is long)
		sleep   bool          // wait for a short deadline to pass
		want    error
	}{
		{"finished, nothing waited", long, false, false, true, false, context.Canceled},
		{"finished, something waited", long, true, false, true, false, context.Canceled},
		{"finished, a derived context", long, false, true, true, false, context.Canceled},
		{"running, nothing waited", long, false, false, false, false, nil},
		{"running, something waited", long, true, false, false, false, nil},
		{"deadline passed, nothing waited", -time.Millisecond, false, false, false, false, context.DeadlineExceeded},
		{"deadline passed, then finished", -time.Millisecond, false, false, true, false, context.DeadlineExceeded},
		{"deadline reached while waited on", 20 * time.Millisecond, true, false, false, true, context.DeadlineExceeded},
		{"deadline reached with a derived context", 20 * time.Millisecond, false, true, false, true, context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := newWork(tt.in)
			if d, ok := st.Deadline(); !ok || d != st.at {
				t.Fatalf("Deadline() = %v, %v", d, ok)
			}
			if st.Value(testKey{}) != "value" {
				t.Fatal("the request's values are lost")
			}
			if tt.armed {
				_ = st.Done()
			}
			var child context.Context
			var after chan struct{}
			if tt.derived {
				var cancel context.CancelFunc
				child, cancel = context.WithCancel(st)
				defer cancel()
				after = make(chan struct{})
				context.AfterFunc(st, func() { close(after) })
			}
			if tt.sleep {
				waitDone(t, st)
			}
			if tt.finish {
				st.finish()
			}
			if err := st.Err(); !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("Err() = %v, want %v", err, tt.want)
			}
			if tt.want == nil {
				select {
				case <-st.Done():
					t.Fatal("Done is closed while Err is nil")
				default:
				}
				return
			}
			waitDone(t, st)
			if st.Err() != tt.want {
				t.Fatalf("Err() after Done = %v, want %v", st.Err(), tt.want)
			}
			if child != nil {
				waitDone(t, child)
				if !errors.Is(child.Err(), tt.want) {
					t.Fatalf("the derived context ended with %v, want %v", child.Err(), tt.want)
				}
				<-after
			}
		})
	}
}

// TestWorkWithoutDeadline: without a deadline the work never ends, as before any
// REQUEST_TIMEOUT or Lambda deadline: Done is nil and Err nil, finished or not.
func TestWorkWithoutDeadline(t *testing.T) {
	st := newWork(0)
	if _, ok := st.Deadline(); ok {
		t.Fatal("a deadline where none was set")
	}
	st.finish()
	if st.Done() != nil || st.Err() != nil {
		t.Fatalf("Done %v, Err %v", st.Done(), st.Err())
	}
}

// TestWorkDeadlineConcurrent: Done, Err, AfterFunc and finish from many goroutines.
// Under the race detector, which make test runs this package with a second time
// (RACE_PKGS), it checks the locking too.
func TestWorkDeadlineConcurrent(t *testing.T) {
	for range 50 {
		st := newWork(time.Hour)
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() {
				switch i % 3 {
				case 0:
					_ = st.Done()
				case 1:
					_ = st.Err()
				default:
					stop := context.AfterFunc(st, func() {})
					defer stop()
				}
			})
		}
		wg.Go(st.finish)
		wg.Wait()
		waitDone(t, st)
		if st.Err() != context.Canceled {
			t.Fatalf("Err() = %v", st.Err())
		}
	}
}

// TestWorkOutlivesTheClient: a request's work context and what derives from it are not
// ended by the request's own cancellation (a client that went away): Err and
// context.Cause stay nil, while every value of the request's context is still seen.
func TestWorkOutlivesTheClient(t *testing.T) {
	parent, cancel := context.WithCancelCause(context.WithValue(context.Background(), testKey{}, "value"))
	st := &requestState{}
	workContext(st, parent, time.Hour, time.Now())
	defer st.finish()
	child, stop := context.WithCancel(st)
	defer stop()
	cancel(errors.New("client went away"))
	for name, ctx := range map[string]context.Context{"work": st, "derived": child} {
		if ctx.Err() != nil || context.Cause(ctx) != nil {
			t.Errorf("%s: Err %v, Cause %v after the client left; want nil, nil", name, ctx.Err(), context.Cause(ctx))
		}
		if ctx.Value(testKey{}) != "value" {
			t.Errorf("%s: the request's value is lost", name)
		}
	}
	if dependency.CancelKey == nil {
		t.Error("the context package's cancellation key was not found")
	}
	// Then the work's own deadline ends both, with its own cause, not the client's.
	short := &requestState{}
	workContext(short, parent, 20*time.Millisecond, time.Now())
	defer short.finish()
	child, stop = context.WithCancel(short)
	defer stop()
	waitDone(t, child)
	if got := context.Cause(child); !errors.Is(got, context.DeadlineExceeded) {
		t.Errorf("derived context's cause %v once the work deadline passed, want %v", got, context.DeadlineExceeded)
	}
}

// TestNoGoroutinePerCall makes a request's dependency calls as the adapters make them
// (the pgx tracer with the request's context itself, the AWS SDK's middleware with a
// context of its own values over it) and counts the goroutines the runtime creates. A
// context derived from the work context that the context package cannot attach to it
// as a child is followed by a goroutine of its own until one of them ends.
func TestNoGoroutinePerCall(t *testing.T) {
	b := dependency.NewBreaker("test", nil)
	sample := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	created := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	tests := []struct {
		name string
		call func(work context.Context) context.Context // the context the call begins with
	}{
		{"the request's context", func(work context.Context) context.Context { return work }},
		{"a context of values over it", func(work context.Context) context.Context {
			return context.WithValue(context.WithValue(work, testKey{}, "sdk"), errorsOnlyKey{}, 1)
		}},
		{"a cancellable context over it", func(work context.Context) context.Context {
			ctx, cancel := context.WithCancel(work)
			t.Cleanup(cancel)
			return ctx
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			const requests = 100
			before := created()
			for range requests {
				st := newWork(time.Minute)
				for range 2 {
					ctx, end, err := b.Begin(tc.call(st), time.Hour)
					if err != nil {
						t.Fatal(err)
					}
					stop := context.AfterFunc(ctx, func() {}) // as pgx watches a call
					stop()
					end(nil)
				}
				st.finish()
			}
			if n := created() - before; n > requests/10 {
				t.Errorf("%d requests of two calls created %d goroutines; want none per request", requests, n)
			}
		})
	}
}

type errorsOnlyKey struct{}
