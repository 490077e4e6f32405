package postgres_test

import (
	"context"
	"errors"
	"net"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mediacatalog/service/infra/tests/tcpfreeze"
	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/dependency"
	"github.com/mediacatalog/service/shared/postgres"
)

// TestCallDeadline: with a frozen server every kind of call (query, exec, a
// transaction, a batch) ends on its own deadline with a deadline error, though the
// caller's context has none; after the thaw, the pool serves again on new connections.
// The tracer installed before (WithTracer) still sees every query.
func TestCallDeadline(t *testing.T) {
	ctx := context.Background()
	plain := testenv.NewDB(t)
	u, err := url.Parse(plain.URL)
	if err != nil || u.Host == "" {
		t.Skipf("the test database is not reached over TCP (%s): nothing to relay", plain.URL)
	}
	f := tcpfreeze.New(t, u.Host)
	u.Host = f.Addr()
	counter := &postgres.QueryCounter{}
	db, err := postgres.Open(ctx, u.String(), postgres.WithTracer(counter), postgres.WithCallDeadline(300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	calls := []struct {
		name string
		call func() error
	}{
		{"query", func() error { var n int; return db.Pool.QueryRow(ctx, `SELECT 1`).Scan(&n) }},
		{"exec", func() error { _, err := db.Pool.Exec(ctx, `SELECT 1`); return err }},
		{"transaction", func() error {
			return pgx.BeginFunc(ctx, db.Pool, func(tx pgx.Tx) error { _, err := tx.Exec(ctx, `SELECT 1`); return err })
		}},
		{"batch", func() error {
			b := &pgx.Batch{}
			b.Queue(`SELECT 1`)
			b.Queue(`SELECT 2`)
			return db.Pool.SendBatch(ctx, b).Close()
		}},
	}
	for _, c := range calls {
		if err := c.call(); err != nil {
			t.Fatalf("%s before the freeze: %v", c.name, err)
		}
	}
	if counter.Count() == 0 {
		t.Error("the inner tracer saw no query")
	}
	f.Freeze(true)
	for _, c := range calls {
		t.Run("frozen/"+c.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() { done <- c.call() }()
			select {
			case err := <-done:
				if !errors.Is(err, context.DeadlineExceeded) && !isTimeout(err) {
					t.Errorf("error %v, want the call's deadline", err)
				}
			case <-time.After(time.Minute): // a hang, not a timing bound
				t.Fatal("the call never returned")
			}
		})
	}
	f.Freeze(false)
	if err := calls[0].call(); err != nil {
		t.Errorf("after the thaw: %v", err)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// TestGuard: through WithGuard, SQL errors (the server answered) leave the breaker
// closed; calls to a frozen server time out and open it after dependency.Trips of
// them, and a call is then refused before it is sent; after the thaw, the probe closes
// it again. The stall's calls count against the request's budget, not the breaker.
func TestGuard(t *testing.T) {
	ctx := context.Background()
	plain := testenv.NewDB(t)
	u, err := url.Parse(plain.URL)
	if err != nil || u.Host == "" {
		t.Skipf("the test database is not reached over TCP (%s): nothing to relay", plain.URL)
	}
	f := tcpfreeze.New(t, u.Host)
	u.Host = f.Addr()
	b := dependency.NewBreaker("postgres-guard", nil)
	db, err := postgres.Open(ctx, u.String(), postgres.WithGuard(b, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	query := func() error { var n int; return db.Pool.QueryRow(ctx, `SELECT 1`).Scan(&n) }

	for range 2 * dependency.Trips {
		if _, err := db.Pool.Exec(ctx, `SELECT no_such_column FROM users`); err == nil {
			t.Fatal("a bad statement succeeded")
		}
	}
	if err := query(); err != nil {
		t.Fatal(err)
	}
	if b.State() != "closed" {
		t.Fatalf("SQL errors opened the breaker: %s", b.State())
	}
	f.Freeze(true)
	for i := range dependency.Trips {
		if err := query(); !errors.Is(err, context.DeadlineExceeded) && !isTimeout(err) {
			t.Fatalf("frozen call %d: %v, want the call's deadline", i, err)
		}
	}
	if b.State() != "open" {
		t.Fatalf("after %d timeouts the breaker is %s", dependency.Trips, b.State())
	}
	if err := query(); !errors.Is(err, context.Canceled) {
		t.Errorf("a call with the breaker open: %v, want it refused (cancelled before it is sent)", err)
	}
	f.Freeze(false)
	time.Sleep(dependency.OpenFor + 100*time.Millisecond) // the open period, not a measurement
	if err := query(); err != nil {
		t.Errorf("the probe after the thaw: %v", err)
	}
	if b.State() != "closed" {
		t.Errorf("after the probe the breaker is %s", b.State())
	}
}
