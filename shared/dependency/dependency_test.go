package dependency

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/mediacatalog/service/shared/deadlines"
	"github.com/mediacatalog/service/shared/telemetry"
)

type sqlState string

func (s sqlState) Error() string    { return "pg: " + string(s) }
func (s sqlState) SQLState() string { return string(s) }

func TestDown(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"none", nil, false},
		{"a deadline", fmt.Errorf("query: %w", context.DeadlineExceeded), true},
		{"refused", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, true},
		{"reset", fmt.Errorf("read: %w", syscall.ECONNRESET), true},
		{"closed mid-answer", fmt.Errorf("receive message: %w", io.ErrUnexpectedEOF), true},
		{"the SDK sent nothing", fmt.Errorf("operation error S3: PutObject: %w", &smithyhttp.RequestSendError{Err: errors.New("http: server closed idle connection")}), true},
		{"connection failure class", sqlState("08006"), true},
		{"server shutting down", sqlState("57P01"), true},
		{"a unique violation", sqlState("23505"), false},
		{"a statement timeout is an answer", sqlState("57014"), false},
		{"an ordinary error", errors.New("no such key"), false},
		{"cancelled by the caller", context.Canceled, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Down(tt.err); got != tt.want {
				t.Errorf("Down(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

// call makes one call through b with the given outcome and reports whether it was let
// through.
func call(b *Breaker, ctx context.Context, outcome error) bool {
	_, end, err := b.Begin(ctx, time.Hour)
	if err != nil {
		return false
	}
	end(outcome)
	return true
}

// TestBreakerOpens: only consecutive timeouts and connection failures open a breaker;
// an open one refuses at once with Unavailable, marks the request, and counts the change.
func TestBreakerOpens(t *testing.T) {
	timeout := fmt.Errorf("call: %w", context.DeadlineExceeded)
	refused := &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}
	ordinary := errors.New("not found")
	tests := []struct {
		name     string
		outcomes []error
		open     bool
	}{
		{"ordinary errors", []error{ordinary, ordinary, ordinary, ordinary, ordinary}, false},
		{"unique violations", []error{sqlState("23505"), sqlState("23505"), sqlState("23505")}, false},
		{"timeouts", []error{timeout, timeout}, true},
		{"connection failures", []error{refused, refused}, true},
		{"a timeout, then a connection failure", []error{timeout, refused}, true},
		{"not consecutive", []error{timeout, nil, timeout, ordinary, timeout}, false},
		{"no evidence between", []error{timeout, NoEvidence, context.Canceled, timeout}, true},
		{"one timeout", []error{timeout}, false},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := fmt.Sprintf("test-%d", i)
			b := NewBreaker(name, nil)
			for _, o := range tt.outcomes {
				if !call(b, context.Background(), o) {
					t.Fatalf("a call was refused while %s", b.State())
				}
			}
			if got := b.State() == "open"; got != tt.open {
				t.Fatalf("state %s after %v", b.State(), tt.outcomes)
			}
			if got := StateChanges()[name+" open"]; got != map[bool]uint64{true: 1}[tt.open] {
				t.Errorf("counted %d openings", got)
			}
			if !tt.open {
				return
			}
			req := &Request{}
			req.Reset(deadlines.Budget)
			ctx := context.WithValue(context.Background(), RequestKey{}, req)
			_, _, err := b.Begin(ctx, time.Hour)
			var u *Unavailable
			if !errors.As(err, &u) || u.Dependency != name {
				t.Errorf("an open breaker's call: %v, want Unavailable", err)
			}
			if req.Unavailable() != name {
				t.Errorf("the request is marked %q, want %q", req.Unavailable(), name)
			}
		})
	}
}

// TestHalfOpen: after OpenFor one call, the probe, goes through with deadlines.ProbeTimeout as its
// deadline while the others are refused; its outcome closes or reopens the breaker.
func TestHalfOpen(t *testing.T) {
	timeout := context.DeadlineExceeded
	for _, tt := range []struct {
		name  string
		probe error
		want  string
	}{
		{"the probe answers", nil, "closed"},
		{"the probe answers with an error", errors.New("not found"), "closed"},
		{"the probe times out", timeout, "open"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := NewBreaker("half-open "+tt.name, nil)
			call(b, context.Background(), timeout)
			call(b, context.Background(), timeout)
			time.Sleep(OpenFor + 50*time.Millisecond) // the open period, not a measurement
			if b.State() != "half-open" {
				t.Fatalf("state %s after OpenFor", b.State())
			}
			ctx, end, err := b.Begin(context.Background(), time.Hour)
			if err != nil {
				t.Fatalf("the probe was refused: %v", err)
			}
			if d, ok := ctx.Deadline(); !ok || time.Until(d) > deadlines.ProbeTimeout {
				t.Errorf("the probe's deadline: %v, want within deadlines.ProbeTimeout", d)
			}
			if _, _, err := b.Begin(context.Background(), time.Hour); err == nil {
				t.Error("a second call went through beside the probe")
			}
			end(tt.probe)
			if b.State() != tt.want {
				t.Errorf("state %s after the probe, want %s", b.State(), tt.want)
			}
		})
	}
}

// TestEarlierStateOutcome: a call begun while the breaker was closed reports its
// outcome only if the breaker is still closed when it ends (a closed breaker's calls
// pass no Allow at their start): one that ends once the breaker is half-open neither
// takes the probe's place nor decides it, and one that ends while it is open is not
// counted.
func TestEarlierStateOutcome(t *testing.T) {
	timeout := context.DeadlineExceeded
	for _, outcome := range []error{nil, timeout} {
		t.Run(fmt.Sprint(outcome), func(t *testing.T) {
			b := NewBreaker(fmt.Sprint("earlier ", outcome), nil)
			_, earlier, err := b.Begin(context.Background(), time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			call(b, context.Background(), timeout)
			call(b, context.Background(), timeout)
			if b.State() != "open" {
				t.Fatalf("state %s after two timeouts", b.State())
			}
			time.Sleep(OpenFor + 50*time.Millisecond) // the open period, not a measurement
			earlier(outcome)
			if b.State() != "half-open" {
				t.Fatalf("state %s after an earlier call's outcome, want half-open", b.State())
			}
			if !call(b, context.Background(), nil) {
				t.Fatal("the probe was refused: the earlier call took its place")
			}
			if b.State() != "closed" {
				t.Errorf("state %s after the probe answered", b.State())
			}
		})
	}
}

// TestBudget: a request's calls share its budget: each call's deadline is at most what
// is left; concurrent waits count once; a call begun once it is spent is refused, and
// marks the request. The clock is the test's.
func TestBudget(t *testing.T) {
	base := time.Now()
	at := base
	clock = func() time.Time { return at }
	t.Cleanup(func() { clock = time.Now })
	b := NewBreaker("budget", nil)
	req := &Request{}
	req.Reset(4 * time.Second)
	ctx := context.WithValue(context.Background(), RequestKey{}, req)

	// Two concurrent calls of 3 s: 3 s spent, not 6.
	_, endA, err := b.Begin(ctx, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	_, endB, err := b.Begin(ctx, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	at = base.Add(3 * time.Second)
	endA(nil)
	endB(nil)
	callCtx, end, err := b.Begin(ctx, time.Hour)
	if err != nil {
		t.Fatalf("1 s of the budget is left, yet: %v", err)
	}
	if d, ok := callCtx.Deadline(); !ok || d.After(at.Add(time.Second)) {
		t.Errorf("the call's deadline %v is beyond what is left of the budget", d)
	}
	if req.Unavailable() != "" {
		t.Errorf("marked %q after answers", req.Unavailable())
	}
	at = base.Add(4 * time.Second)
	end(nil)
	if _, _, err := b.Begin(ctx, time.Hour); !errors.Is(err, ErrBudgetSpent) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a call after the budget: %v, want ErrBudgetSpent", err)
	}
	if req.Unavailable() != "budget" {
		t.Errorf("the request is marked %q, want budget", req.Unavailable())
	}
	if b.State() != "closed" {
		t.Errorf("a spent budget changed the breaker: %s", b.State())
	}
	// Without a budget (a detached cleanup), the call's own limit alone.
	if _, end, err := b.Begin(WithoutBudget(ctx), time.Hour); err != nil {
		t.Errorf("a call without the budget: %v", err)
	} else {
		end(nil)
	}
}

type valueKey struct{}

// TestBudgetBoundCalls: calls that what is left of the budget bounds, one after the
// other, end through one deadline of the request's (no timer of their own), keep their
// own values, and end with DeadlineExceeded, the cause included, when the budget does;
// a call whose own limit comes first, or the probe of a half-open breaker, has its own
// deadline; a call with only a sliver of the budget that times out leaves the breaker
// as it was, while one that times out on its own limit counts against it.
func TestBudgetBoundCalls(t *testing.T) {
	b := NewBreaker("bound", nil)
	req := &Request{}
	req.Reset(300 * time.Millisecond)
	work, stop := context.WithCancel(context.WithValue(context.Background(), RequestKey{}, req))
	defer stop()

	first, endFirst, err := b.Begin(context.WithValue(work, valueKey{}, "acquire"), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	endFirst(NoEvidence)
	second, endSecond, err := b.Begin(context.WithValue(work, valueKey{}, "query"), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if first.Done() != second.Done() {
		t.Error("two calls in a row that the budget bounds have deadlines of their own")
	}
	if got := second.Value(valueKey{}); got != "query" {
		t.Errorf("the call's value %v, want its own", got)
	}
	d1, _ := first.Deadline()
	d2, _ := second.Deadline()
	if d2.Before(d1) || d2.Sub(d1) > budgetSlack {
		t.Errorf("the second call ends at %v, the first at %v", d2, d1)
	}
	// A call whose own limit ends first has a deadline of its own.
	own, endOwn, err := b.Begin(work, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if own.Done() == second.Done() {
		t.Error("a call with a limit shorter than the budget ends with the budget")
	}
	<-own.Done()
	endOwn(own.Err())
	// The budget's end: DeadlineExceeded, through context.Cause too, and a child of the
	// call's context (as pgx and net/http make) ends with it.
	child, cancelChild := context.WithCancel(second)
	defer cancelChild()
	select {
	case <-child.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the budget's end did not end the call")
	}
	if !errors.Is(second.Err(), context.DeadlineExceeded) || !errors.Is(context.Cause(second), context.DeadlineExceeded) || !errors.Is(context.Cause(child), context.DeadlineExceeded) {
		t.Errorf("ended with %v, cause %v, the child's cause %v", second.Err(), context.Cause(second), context.Cause(child))
	}
	endSecond(second.Err())
	if b.State() != "closed" {
		t.Errorf("a timeout on the call's own limit and one at the budget's end (a sliver left) opened the breaker: %s", b.State())
	}
	// Without a request's budget the call's own limit counts: two timeouts open it.
	for range Trips {
		_, end, err := b.Begin(context.Background(), minEvidence)
		if err != nil {
			t.Fatal(err)
		}
		end(context.DeadlineExceeded)
	}
	if b.State() != "open" {
		t.Errorf("two timeouts on the calls' own limits left the breaker %s", b.State())
	}
}

// TestTransport: an HTTP dependency that does not answer opens its breaker and is then
// refused at once; HTTP error statuses are answers.
func TestTransport(t *testing.T) {
	hang := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hang" {
			select {
			case <-hang:
			case <-r.Context().Done():
			}
			return
		}
		http.Error(w, "no", http.StatusNotFound)
	}))
	t.Cleanup(func() { close(hang); srv.Close() })
	b := NewBreaker("http", nil)
	client := &http.Client{Transport: &Transport{Breaker: b}}
	get := func(path string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+path, nil)
		res, err := client.Do(req)
		if err == nil {
			_, _ = io.ReadAll(res.Body)
			res.Body.Close()
		}
		return err
	}
	for range 5 {
		if err := get("/missing"); err != nil {
			t.Fatal(err)
		}
	}
	if b.State() != "closed" {
		t.Fatalf("404s opened the breaker: %s", b.State())
	}
	for range Trips {
		if err := get("/hang"); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("a hung request: %v", err)
		}
	}
	var u *Unavailable
	if err := get("/missing"); !errors.As(err, &u) {
		t.Errorf("with the breaker %s: %v, want Unavailable", b.State(), err)
	}
}

// TestRefusalMetric: a call an open breaker refuses is counted in its request's metric
// document (telemetry's BreakerRefusals), beside the breaker's logged state changes.
func TestRefusalMetric(t *testing.T) {
	var out bytes.Buffer
	telemetry.Setup(telemetry.Options{Function: "test", Metrics: &out})
	t.Cleanup(func() { telemetry.Setup(telemetry.Options{}) })
	b := NewBreaker("refusal-metric", nil)
	timeout := fmt.Errorf("call: %w", context.DeadlineExceeded)
	for range 2 {
		call(b, context.Background(), timeout)
	}
	h := telemetry.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, _, err := b.Begin(r.Context(), time.Hour); err == nil {
			t.Error("the open breaker let a call through")
		}
	}), func(*http.Request) string { return "req-1" })
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/tags", nil))
	if !strings.Contains(out.String(), `"`+telemetry.MetricBreakerRefusals+`":1`) {
		t.Errorf("the request's metrics %s lack one breaker refusal", out.String())
	}
}

// BenchmarkRequestCalls is a database read's dependency calls under a request's
// budget, as the pgx tracer makes them (Breaker.Start): the pool's acquire, then the query, each
// watched for its end as pgx watches a call's context (context.AfterFunc).
func BenchmarkRequestCalls(b *testing.B) {
	br := NewBreaker("bench", nil)
	req := &Request{}
	b.ReportAllocs()
	for b.Loop() {
		req.Reset(deadlines.Budget)
		work, stop := context.WithCancel(context.WithValue(context.Background(), RequestKey{}, req))
		for range 2 {
			call, err := br.Start(work, deadlines.CallTimeout)
			if err != nil {
				b.Fatal(err)
			}
			unwatch := context.AfterFunc(call, func() {})
			unwatch()
			call.End(nil)
		}
		stop()
	}
}
