package dynamo

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mediacatalog/service/shared/catalog"
)

// RateLimiter counts requests per key in fixed windows, one counter item per key and
// window, shared by every Lambda instance.
type RateLimiter struct {
	client *dynamodb.Client
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
func NewRateLimiter(client *dynamodb.Client, table string, limit int, window time.Duration, opts ...LimiterOption) (*RateLimiter, error) {
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
func (l *RateLimiter) Allow(ctx context.Context, key string) (catalog.RateDecision, error) {
	if key == "" {
		return catalog.RateDecision{}, errors.New("dynamo: rate limit: empty key")
	}
	now := l.now()
	start := now.Unix() - now.Unix()%l.window
	reset := time.Unix(start+l.window, 0)
	out, err := l.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(l.table),
		Key: map[string]types.AttributeValue{
			KeyAttribute: &types.AttributeValueMemberS{Value: key + "#" + strconv.FormatInt(start, 10)},
		},
		// The first request of a window sets the expiry; TTL removes the counter later.
		UpdateExpression: aws.String("ADD hits :one SET expires_at = if_not_exists(expires_at, :exp)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":one": &types.AttributeValueMemberN{Value: "1"},
			":exp": &types.AttributeValueMemberN{Value: strconv.FormatInt(reset.Unix(), 10)},
		},
		ReturnValues: types.ReturnValueUpdatedNew,
	})
	if err != nil {
		return catalog.RateDecision{}, fmt.Errorf("dynamo: rate limit: %w", err)
	}
	hits, err := itemN(out.Attributes, "hits")
	if err != nil {
		return catalog.RateDecision{}, fmt.Errorf("dynamo: rate limit: counter: %w", err)
	}
	if hits < 1 {
		return catalog.RateDecision{}, errors.New("dynamo: rate limit: no counter in the response")
	}
	d := catalog.RateDecision{
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
