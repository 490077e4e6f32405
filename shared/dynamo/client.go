package dynamo

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/mediacatalog/service/shared/awsconfig"
	"github.com/mediacatalog/service/shared/config"
)

// Client speaks DynamoDB's JSON protocol (version 2012-08-10): one SigV4-signed
// POST per operation, the operation named by the X-Amz-Target header. It carries the
// three item operations the stores use (PutItem, UpdateItem, DeleteItem) and nothing
// else.
//
// It replaces the SDK's dynamodb client in the oauth function: that package's
// initialisation (its generated schemas, endpoint rules and the dynamodbstreams types
// that attributevalue brings) took about 0.8 ms of every cold start, for three calls.
// It keeps what the SDK client gave those calls: retries with jittered backoff for
// throttling, server errors and broken connections (three attempts), and the check of
// the CRC32 that DynamoDB sends with every response.
type Client struct {
	endpoint string
	region   string
	creds    aws.CredentialsProvider
	signer   *v4.Signer
	http     *http.Client
	now      func() time.Time
	backoff  time.Duration // first retry delay; doubles per attempt
}

// maxAttempts is the attempts of one call, the SDK's standard retryer's number.
const maxAttempts = 3

// NewClient returns a client for cfg.AWSRegion. With cfg.DynamoEndpoint set (dynalite
// locally and in tests) it talks to that endpoint, signing with placeholder
// credentials unless the environment has AWS credentials.
func NewClient(cfg config.Config) *Client {
	endpoint := cfg.DynamoEndpoint
	if endpoint == "" {
		endpoint = awsconfig.Endpoint("dynamodb", cfg.AWSRegion)
	}
	return &Client{
		endpoint: strings.TrimRight(endpoint, "/") + "/",
		region:   cfg.AWSRegion,
		creds:    awsconfig.Load(cfg.AWSRegion, cfg.DynamoEndpoint, os.Getenv).Credentials,
		signer:   v4.NewSigner(),
		http:     &http.Client{Timeout: 10 * time.Second},
		now:      time.Now,
		backoff:  25 * time.Millisecond,
	}
}

// APIError is an error DynamoDB answered with.
type APIError struct {
	Status  int    // HTTP status
	Code    string // the exception's name, e.g. ConditionalCheckFailedException
	Message string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("DynamoDB %s (HTTP %d): %s", e.Code, e.Status, e.Message)
}

// retryable reports whether the same request may succeed later.
func (e *APIError) retryable() bool {
	switch e.Code {
	case "ThrottlingException", "ProvisionedThroughputExceededException", "RequestLimitExceeded",
		"InternalServerError", "ServiceUnavailable", "TransactionInProgressException":
		return true
	}
	return e.Status >= 500
}

// isCode reports whether err is DynamoDB's exception code.
func isCode(err error, code string) bool {
	var apiErr *APIError
	return errors.As(err, &apiErr) && apiErr.Code == code
}

// errCorrupt is a response whose body does not match its X-Amz-Crc32.
var errCorrupt = errors.New("response body does not match its CRC32")

// call runs one operation: in is encoded as the request body, the response decoded
// into out. Retryable failures are tried again up to maxAttempts in all, while ctx
// allows.
func (c *Client) call(ctx context.Context, op string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("%s: encode: %w", op, err)
	}
	for attempt := 1; ; attempt++ {
		retry, err := c.attempt(ctx, op, body, out)
		if err == nil || !retry || attempt == maxAttempts {
			if err != nil {
				return fmt.Errorf("%s: %w", op, err)
			}
			return nil
		}
		// Full jitter: a random delay up to backoff·2^(attempt-1).
		delay := time.Duration(rand.Int64N(int64(c.backoff<<(attempt-1)) + 1))
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w (after %v)", op, ctx.Err(), err)
		case <-time.After(delay):
		}
	}
}

// attempt sends the request once and says whether a failure may be retried.
func (c *Client) attempt(ctx context.Context, op string, body []byte, out any) (retry bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return false, err
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "DynamoDB_20120810."+op)
	// The CRC32 is of the body as sent: no transparent decompression.
	req.Header.Set("Accept-Encoding", "identity")
	creds, err := c.creds.Retrieve(ctx)
	if err != nil {
		return false, fmt.Errorf("credentials: %w", err)
	}
	sum := sha256.Sum256(body)
	if err := c.signer.SignHTTP(ctx, creds, req, hex.EncodeToString(sum[:]), "dynamodb", c.region, c.now()); err != nil {
		return false, fmt.Errorf("sign: %w", err)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return ctx.Err() == nil, err // a broken or refused connection
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return ctx.Err() == nil, fmt.Errorf("read response: %w", err)
	}
	if want := resp.Header.Get("X-Amz-Crc32"); want != "" {
		if n, perr := strconv.ParseUint(want, 10, 32); perr != nil || uint32(n) != crc32.ChecksumIEEE(raw) {
			return true, errCorrupt
		}
	}
	if resp.StatusCode != http.StatusOK {
		apiErr := decodeError(resp.StatusCode, raw)
		return apiErr.retryable(), apiErr
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return false, fmt.Errorf("decode response: %w", err)
	}
	return false, nil
}

// decodeError reads DynamoDB's error body: {"__type": "<namespace>#<Code>", "message": ...}.
func decodeError(status int, raw []byte) *APIError {
	var body struct {
		Type     string `json:"__type"`
		Message  string `json:"message"`
		Message2 string `json:"Message"`
	}
	_ = json.Unmarshal(raw, &body)
	e := &APIError{Status: status, Message: body.Message}
	if e.Message == "" {
		e.Message = body.Message2
	}
	// The code is the exception's name, after the namespace.
	if i := strings.LastIndexByte(body.Type, '#'); i >= 0 {
		e.Code = body.Type[i+1:]
	} else {
		e.Code = body.Type
	}
	if e.Code == "" { // not DynamoDB's error shape (a proxy, a load balancer)
		e.Code = http.StatusText(status)
		if e.Message == "" {
			e.Message = strings.TrimSpace(string(raw[:min(len(raw), 200)]))
		}
	}
	return e
}

// value is one attribute value in DynamoDB's JSON form. The stores keep strings and
// numbers only; other types decode as empty.
type value struct {
	S *string `json:"S,omitempty"`
	N *string `json:"N,omitempty"`
}

// item is an item or a key: attribute name to value.
type item map[string]value

func str(s string) value { return value{S: &s} }

func num(n int64) value {
	s := strconv.FormatInt(n, 10)
	return value{N: &s}
}

// str returns the string attribute name ("" when absent or of another type).
func (it item) str(name string) string {
	if v, ok := it[name]; ok && v.S != nil {
		return *v.S
	}
	return ""
}

// num returns the number attribute name as an integer.
func (it item) num(name string) (int64, error) {
	v, ok := it[name]
	if !ok || v.N == nil {
		return 0, fmt.Errorf("attribute %s missing or not a number", name)
	}
	n, err := strconv.ParseInt(*v.N, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("attribute %s: %w", name, err)
	}
	return n, nil
}

// The requests and responses of the three operations, as far as the stores use them.
type (
	putItemInput struct {
		TableName           string
		Item                item
		ConditionExpression string `json:",omitempty"`
	}
	updateItemInput struct {
		TableName                 string
		Key                       item
		UpdateExpression          string
		ExpressionAttributeValues item   `json:",omitempty"`
		ReturnValues              string `json:",omitempty"`
	}
	deleteItemInput struct {
		TableName           string
		Key                 item
		ConditionExpression string `json:",omitempty"`
		ReturnValues        string `json:",omitempty"`
	}
	itemOutput struct {
		Attributes item
	}
)
