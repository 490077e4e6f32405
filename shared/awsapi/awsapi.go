// Package awsapi sends SigV4-signed HTTP requests to AWS service APIs, with retries.
//
// The functions call four AWS APIs, a few operations each: DynamoDB (three item
// operations), S3 (objects of one bucket), CloudFront (invalidations) and Lambda
// (one invoke). They speak those APIs here, through the SDK's signer and credentials,
// rather than through the SDK's service clients: each service package costs a function
// its generated endpoint rules, schemas and serializers at every cold start (DynamoDB's
// alone took 0.8 ms of package initialisation; S3's and CloudFront's together about
// 0.4 ms, and 0.1 ms more to build the client), for a handful of calls.
//
// What the service clients gave those calls is kept: the standard retry policy
// (three attempts with jittered exponential backoff, on throttling, server errors and
// broken connections) and errors that carry the service's code.
package awsapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/mediacatalog/service/shared/awsconfig"
)

// maxAttempts is the attempts of one call, as the SDK's standard retryer makes them.
const maxAttempts = 3

// maxBody bounds a response body read into memory (the largest stored image is a few
// hundred kilobytes).
const maxBody = 32 << 20

// Client signs and sends requests for one service in one region.
type Client struct {
	service  string
	region   string
	endpoint string
	creds    aws.CredentialsProvider
	signer   *v4.Signer
	http     *http.Client
	backoff  time.Duration // the first retry's largest delay; doubles per attempt
	now      func() time.Time
}

// Option adjusts a Client.
type Option func(*Client)

// WithHTTPClient replaces the HTTP client (one with a 10 s timeout by default).
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.http = hc } }

// WithSignerOptions adjusts the signer (S3 signs paths unescaped).
func WithSignerOptions(fn func(*v4.SignerOptions)) Option {
	return func(c *Client) { c.signer = v4.NewSigner(fn) }
}

// New returns a client of service (the signing name: "dynamodb", "s3", ...) in
// region. endpoint is the base URL: a local stand-in's, or "" for
// awsconfig.Endpoint(service, region). Credentials come from getenv as awsconfig.Load
// reads them.
func New(service, region, endpoint string, getenv func(string) string, opts ...Option) *Client {
	base := endpoint
	if base == "" {
		base = awsconfig.Endpoint(service, region)
	}
	c := &Client{
		service:  service,
		region:   region,
		endpoint: strings.TrimRight(base, "/"),
		creds:    awsconfig.Load(region, endpoint, getenv).Credentials,
		signer:   v4.NewSigner(),
		http:     &http.Client{Timeout: 10 * time.Second},
		backoff:  25 * time.Millisecond,
		now:      time.Now,
	}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Endpoint is the base URL requests go to.
func (c *Client) Endpoint() string { return c.endpoint }

// Request is one call.
type Request struct {
	Method string
	URL    string // absolute
	Header http.Header
	Body   []byte
}

// Response is a call's answer, its body read.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Error is an error answer of the service.
type Error struct {
	Status    int
	Code      string // the service's error code, e.g. NoSuchKey
	Message   string
	Retryable bool
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s (HTTP %d): %s", e.Code, e.Status, e.Message)
}

// IsCode reports whether err is the service's error code.
func IsCode(err error, code string) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}

// Check turns a response into nil or an error. Service packages give their own, to
// read their error format and codes; an error it returns that is an *Error with
// Retryable set is tried again, as is any *Error with a 5xx or 429 status.
type Check func(*Response) error

// Do signs and sends req, reads the answer and checks it; failed attempts are tried
// again up to maxAttempts in all while ctx allows. The body is signed by its SHA-256,
// which the x-amz-content-sha256 header also carries (S3 requires it; the others
// ignore it).
func (c *Client) Do(ctx context.Context, req Request, check Check) (*Response, error) {
	sum := sha256.Sum256(req.Body)
	hash := hex.EncodeToString(sum[:])
	for attempt := 1; ; attempt++ {
		resp, err := c.attempt(ctx, req, hash, check)
		switch {
		case err == nil:
			return resp, nil
		case ctx.Err() != nil && !errors.Is(err, ctx.Err()):
			return resp, fmt.Errorf("%w (after %w)", ctx.Err(), err)
		case ctx.Err() != nil, attempt == maxAttempts, !retryable(err):
			return resp, err
		}
		delay := time.Duration(rand.Int64N(int64(c.backoff<<(attempt-1)) + 1)) // full jitter
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w (after %w)", ctx.Err(), err)
		case <-time.After(delay):
		}
	}
}

func (c *Client) attempt(ctx context.Context, r Request, hash string, check Check) (*Response, error) {
	req, err := http.NewRequestWithContext(ctx, r.Method, r.URL, bytes.NewReader(r.Body))
	if err != nil {
		return nil, err
	}
	for k, vs := range r.Header {
		req.Header[k] = vs
	}
	if len(r.Body) == 0 {
		req.Body, req.GetBody, req.ContentLength = http.NoBody, nil, 0
	}
	// Checksums and lengths are of the body as sent: no transparent decompression.
	req.Header.Set("Accept-Encoding", "identity")
	req.Header.Set("X-Amz-Content-Sha256", hash)
	creds, err := c.creds.Retrieve(ctx)
	if err != nil {
		return nil, fmt.Errorf("credentials: %w", err)
	}
	if err := c.signer.SignHTTP(ctx, creds, req, hash, c.service, c.region, c.now()); err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	hr, err := c.http.Do(req)
	if err != nil {
		return nil, &netError{err}
	}
	defer hr.Body.Close()
	body, err := io.ReadAll(io.LimitReader(hr.Body, maxBody))
	if err != nil {
		return nil, &netError{fmt.Errorf("read response: %w", err)}
	}
	resp := &Response{Status: hr.StatusCode, Header: hr.Header, Body: body}
	if err := check(resp); err != nil {
		return resp, err
	}
	return resp, nil
}

// netError is a request that did not get a whole answer: retried.
type netError struct{ err error }

func (e *netError) Error() string { return e.err.Error() }
func (e *netError) Unwrap() error { return e.err }

func retryable(err error) bool {
	var ne *netError
	if errors.As(err, &ne) {
		return true
	}
	var e *Error
	return errors.As(err, &e) && (e.Retryable || e.Status >= 500 || e.Status == http.StatusTooManyRequests)
}

// Unexpected is the error of an answer in no format the service documents (a proxy's
// or load balancer's page): its status and the start of its body.
func Unexpected(resp *Response) *Error {
	msg := strings.TrimSpace(string(resp.Body[:min(len(resp.Body), 200)]))
	return &Error{Status: resp.Status, Code: http.StatusText(resp.Status), Message: msg}
}
