// Package dynamo is the DynamoDB adapter: the stores kept there through the SDK's
// DynamoDB client, the OAuth state tokens and the OAuth rate limiter. Both tables
// have a string partition key "pk" and a TTL on "expires_at" (unix seconds); TTL
// deletion is lazy, so the stores check expiry themselves. The tables themselves are
// declared by the SAM template in AWS and created by infra/local/localservices locally.
package dynamo

// Attribute names shared by both tables.
const (
	// KeyAttribute is the tables' partition key, a string.
	KeyAttribute = "pk"
	// ExpiresAttribute is the tables' TTL attribute, unix seconds.
	ExpiresAttribute = "expires_at"
)
