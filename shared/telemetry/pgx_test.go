package telemetry

import (
	"context"
	"io"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestStatementHooks: an unrecorded statement in a process that writes no EMF document
// (make run's server) costs the pool's tracer no allocation and leaves its context as
// it is; where documents are written, the statement reaches its request's count.
func TestStatementHooks(t *testing.T) {
	saved := metrics
	t.Cleanup(func() { metrics = saved })
	tracer := PgxTracer()
	for _, tc := range []struct {
		name       string
		writer     io.Writer
		sameCtx    bool // TraceQueryStart hands back the context it was given
		statements int  // the request's count after one statement
	}{
		{"no metric writer", nil, true, 0},
		{"EMF documents written", io.Discard, false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			metrics = tc.writer
			st := &request{Context: context.Background(), route: "GET /tags"}
			var ctx context.Context = st
			statement := func() context.Context {
				c := tracer.TraceQueryStart(ctx, nil, pgx.TraceQueryStartData{SQL: "SELECT 1"})
				tracer.TraceQueryEnd(c, nil, pgx.TraceQueryEndData{})
				return c
			}
			if got := statement() == ctx; got != tc.sameCtx {
				t.Errorf("the statement's context is the request's: %v, want %v", got, tc.sameCtx)
			}
			if st.db.count != tc.statements {
				t.Errorf("statements counted: %d, want %d", st.db.count, tc.statements)
			}
			if tc.writer == nil {
				if n := testing.AllocsPerRun(100, func() { statement() }); n != 0 {
					t.Errorf("an unread statement allocates %.0f times, want none", n)
				}
			}
		})
	}
}

// BenchmarkStatementHooks is the pool's tracer around one unrecorded statement, in a
// process that writes no EMF document and in one that does.
func BenchmarkStatementHooks(b *testing.B) {
	saved := metrics
	b.Cleanup(func() { metrics = saved })
	tracer := PgxTracer()
	for _, bc := range []struct {
		name   string
		writer io.Writer
	}{{"no-metric-writer", nil}, {"emf", io.Discard}} {
		b.Run(bc.name, func(b *testing.B) {
			metrics = bc.writer
			var ctx context.Context = &request{Context: context.Background(), route: "GET /tags"}
			b.ReportAllocs()
			for b.Loop() {
				c := tracer.TraceQueryStart(ctx, nil, pgx.TraceQueryStartData{SQL: "SELECT 1"})
				tracer.TraceQueryEnd(c, nil, pgx.TraceQueryEndData{})
			}
		})
	}
}
