package dynamo_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mediacatalog/service/shared/catalog"
	"github.com/mediacatalog/service/shared/dynamo"
)

// clock is a settable time source.
type clock struct{ now atomic.Int64 }

func newClock(t time.Time) *clock {
	c := &clock{}
	c.set(t)
	return c
}

func (c *clock) set(t time.Time)     { c.now.Store(t.UnixNano()) }
func (c *clock) Now() time.Time      { return time.Unix(0, c.now.Load()) }
func (c *clock) add(d time.Duration) { c.set(c.Now().Add(d)) }

func TestRateLimiterConcurrent(t *testing.T) {
	client, _, rateTable := tables(t)
	const limit, callers = 20, 100
	limiter, err := dynamo.NewRateLimiter(client, rateTable, limit, 15*time.Minute)
	if err != nil {
		t.Fatalf("NewRateLimiter: %v", err)
	}
	ctx := context.Background()

	var (
		wg        sync.WaitGroup
		allowed   atomic.Int32
		remaining = make([]bool, limit) // which Remaining values the admitted calls saw
		mu        sync.Mutex
	)
	for range callers {
		wg.Go(func() {
			d, err := limiter.Allow(ctx, "203.0.113.7")
			if err != nil {
				t.Errorf("Allow: %v", err)
				return
			}
			if !d.Allowed {
				if d.Remaining != 0 || d.RetryAfter <= 0 || d.RetryAfter > 15*time.Minute {
					t.Errorf("refused decision %+v: want Remaining 0 and 0 < RetryAfter <= 15m", d)
				}
				return
			}
			allowed.Add(1)
			mu.Lock()
			remaining[d.Remaining] = true
			mu.Unlock()
		})
	}
	wg.Wait()
	if got := allowed.Load(); got != limit {
		t.Errorf("%d of %d concurrent calls allowed, want exactly %d", got, callers, limit)
	}
	for r, seen := range remaining {
		if !seen {
			t.Errorf("no admitted call saw Remaining %d: the counter skipped or repeated a value", r)
		}
	}

	d, err := limiter.Allow(ctx, "198.51.100.1")
	if err != nil {
		t.Fatalf("Allow other key: %v", err)
	}
	if !d.Allowed || d.Remaining != limit-1 {
		t.Errorf("other key: %+v, want allowed with Remaining %d", d, limit-1)
	}
}

func TestRateLimiterWindows(t *testing.T) {
	client, _, rateTable := tables(t)
	const limit, window = 3, time.Minute
	start := time.Date(2030, 1, 2, 3, 4, 0, 0, time.UTC) // a window boundary
	clk := newClock(start.Add(10 * time.Second))
	limiter, err := dynamo.NewRateLimiter(client, rateTable, limit, window, dynamo.WithClock(clk.Now))
	if err != nil {
		t.Fatalf("NewRateLimiter: %v", err)
	}
	ctx := context.Background()
	firstReset := start.Add(window)

	steps := []struct {
		name    string
		advance time.Duration
		want    catalog.RateDecision
	}{
		{"first", 0, catalog.RateDecision{Allowed: true, Limit: limit, Remaining: 2, Reset: firstReset}},
		{"second", time.Second, catalog.RateDecision{Allowed: true, Limit: limit, Remaining: 1, Reset: firstReset}},
		{"last allowed", time.Second, catalog.RateDecision{Allowed: true, Limit: limit, Remaining: 0, Reset: firstReset}},
		{"over the limit", 8 * time.Second, catalog.RateDecision{Limit: limit, Reset: firstReset, RetryAfter: 40 * time.Second}},
		{"still over", 39 * time.Second, catalog.RateDecision{Limit: limit, Reset: firstReset, RetryAfter: time.Second}},
		{"next window", time.Second, catalog.RateDecision{Allowed: true, Limit: limit, Remaining: 2, Reset: firstReset.Add(window)}},
	}
	for _, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			clk.add(step.advance)
			got, err := limiter.Allow(ctx, "203.0.113.7")
			if err != nil {
				t.Fatalf("Allow: %v", err)
			}
			if !got.Reset.Equal(step.want.Reset) {
				t.Errorf("Reset = %v, want %v", got.Reset, step.want.Reset)
			}
			got.Reset = step.want.Reset
			if got != step.want {
				t.Errorf("Allow at %v = %+v, want %+v", clk.Now(), got, step.want)
			}
		})
	}
}

func TestNewRateLimiterInvalid(t *testing.T) {
	tests := []struct {
		name   string
		limit  int
		window time.Duration
	}{
		{"zero limit", 0, time.Minute},
		{"negative limit", -1, time.Minute},
		{"sub-second window", 20, 500 * time.Millisecond},
		{"zero window", 20, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := dynamo.NewRateLimiter(nil, "rate", tt.limit, tt.window); err == nil {
				t.Errorf("NewRateLimiter(%d, %s) succeeded, want an error", tt.limit, tt.window)
			}
		})
	}
}

func TestRateLimiterEmptyKey(t *testing.T) {
	limiter, err := dynamo.NewRateLimiter(nil, "rate", 20, time.Minute)
	if err != nil {
		t.Fatalf("NewRateLimiter: %v", err)
	}
	if _, err := limiter.Allow(context.Background(), ""); err == nil {
		t.Error("Allow with an empty key succeeded, want an error")
	}
}
