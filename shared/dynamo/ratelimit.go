package dynamo

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Decision is the outcome of one rate-limited request.
type Decision struct {
	Allowed    bool
	Limit      int
	Remaining  int           // requests left in the window after this one
	Reset      time.Time     // end of the current window
	RetryAfter time.Duration // until Reset when refused; zero when allowed
}

// RateLimiter counts requests per key in fixed windows, one counter item per key and
// window, shared by every Lambda instance.
type RateLimiter struct {
	client *Client
	table  string
	limit  int
	window int64 // seconds
	now    func() time.Time
}

// LimiterOption adjusts a RateLimiter.
type LimiterOption func(*RateLimiter)

// WithClock replaces time.Now (tests step through windows with it).
func WithClock(now func() time.Time) LimiterOption {
	return func(l *RateLimiter) { l.now = now }
}

// NewRateLimiter admits limit requests per key in each window (whole seconds, at
// least one), windows aligned to the Unix epoch.
func NewRateLimiter(client *Client, table string, limit int, window time.Duration, opts ...LimiterOption) (*RateLimiter, error) {
	if limit < 1 {
		return nil, fmt.Errorf("dynamo: rate limit %d: must be at least 1", limit)
	}
	if window < time.Second {
		return nil, fmt.Errorf("dynamo: rate window %s: must be at least 1s", window)
	}
	l := &RateLimiter{client: client, table: table, limit: limit, window: int64(window / time.Second), now: time.Now}
	for _, o := range opts {
		o(l)
	}
	return l, nil
}

// Allow counts one request for key and says whether it is within the limit. It makes
// exactly one atomic UpdateItem. Errors are returned as they are: the caller decides to
// fail closed.
func (l *RateLimiter) Allow(ctx context.Context, key string) (Decision, error) {
	if key == "" {
		return Decision{}, errors.New("dynamo: rate limit: empty key")
	}
	now := l.now()
	start := now.Unix() - now.Unix()%l.window
	reset := time.Unix(start+l.window, 0)
	var out itemOutput
	err := l.client.call(ctx, "UpdateItem", updateItemInput{
		TableName: l.table,
		Key:       item{KeyAttribute: str(key + "#" + strconv.FormatInt(start, 10))},
		// The first request of a window sets the expiry; TTL removes the counter later.
		UpdateExpression: "ADD hits :one SET expires_at = if_not_exists(expires_at, :exp)",
		ExpressionAttributeValues: item{
			":one": num(1),
			":exp": num(reset.Unix()),
		},
		ReturnValues: "UPDATED_NEW",
	}, &out)
	if err != nil {
		return Decision{}, fmt.Errorf("dynamo: rate limit: %w", err)
	}
	hits, err := out.Attributes.num("hits")
	if err != nil {
		return Decision{}, fmt.Errorf("dynamo: rate limit: counter: %w", err)
	}
	if hits < 1 {
		return Decision{}, errors.New("dynamo: rate limit: no counter in the response")
	}
	d := Decision{
		Allowed:   hits <= int64(l.limit),
		Limit:     l.limit,
		Remaining: max(l.limit-int(hits), 0),
		Reset:     reset,
	}
	if !d.Allowed {
		d.RetryAfter = reset.Sub(now)
	}
	return d, nil
}
