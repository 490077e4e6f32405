package postgres

import (
	"context"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
)

// QueryCounter is a pgx tracer that counts the queries sent: the tests use it to hold
// each request to its budget of database round trips.
type QueryCounter struct{ n atomic.Int64 }

// TraceQueryStart counts one query.
func (c *QueryCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.n.Add(1)
	return ctx
}

// TraceQueryEnd does nothing.
func (c *QueryCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// Reset sets the count to zero and returns what it was.
func (c *QueryCounter) Reset() int64 { return c.n.Swap(0) }

// Count is the number of queries since the last Reset.
func (c *QueryCounter) Count() int64 { return c.n.Load() }
