// Package s3store is the S3 adapter: the bucket that holds profile images and
// contributor avatars, reached through its REST API. Locally and in tests S3_ENDPOINT
// names an S3-compatible server (gofakes3), addressed path-style.
package s3store

import (
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"

	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/mediacatalog/service/shared/awsapi"
	"github.com/mediacatalog/service/shared/awsconfig"
	"github.com/mediacatalog/service/shared/config"
)

// ErrNotFound is returned by Get for a key that holds no object.
var ErrNotFound = errors.New("no such object")

// maxDeleteBatch is the most keys one DeleteObjects request takes.
const maxDeleteBatch = 1000

// Store is one bucket, reached through S3's REST API as signed requests (see awsapi
// for why not the SDK's client).
type Store struct {
	api  *awsapi.Client
	base string // the bucket's URL: keys follow after a slash
}

// Object is a stored object's content and metadata.
type Object struct {
	Data        []byte
	ContentType string
	ETag        string // as S3 reports it, quotes included
}

// New returns a Store for cfg.Bucket. It does not connect: the first request does.
// In AWS the bucket is addressed virtual-hosted style
// (https://<bucket>.s3.<region>.amazonaws.com). When cfg.S3Endpoint is set the store
// talks to that endpoint path-style, and signs with placeholder credentials unless the
// environment provides real ones (local S3-compatible servers do not check them).
func New(cfg config.Config) (*Store, error) {
	if cfg.Bucket == "" {
		return nil, errors.New("s3store: S3_BUCKET is not set")
	}
	// S3 signs the path as sent, without escaping it a second time.
	api := awsapi.New("s3", cfg.AWSRegion, cfg.S3Endpoint, os.Getenv,
		awsapi.WithSignerOptions(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true }))
	base := api.Endpoint() + "/" + cfg.Bucket
	if cfg.S3Endpoint == "" && !strings.Contains(cfg.Bucket, ".") { // a dotted name breaks the TLS wildcard
		base = strings.Replace(awsconfig.Endpoint("s3", cfg.AWSRegion), "https://", "https://"+cfg.Bucket+".", 1)
	}
	return &Store{api: api, base: base}, nil
}

// objectURL is the URL of key: each byte outside S3's unreserved set percent-encoded,
// slashes kept.
func (s *Store) objectURL(key string) string {
	var b strings.Builder
	b.WriteString(s.base)
	b.WriteByte('/')
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(key); i++ {
		switch c := key[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			c == '-', c == '_', c == '.', c == '~', c == '/':
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	return b.String()
}

// Put stores data under key with the given content type, replacing any object there.
// S3 checks the body against the SHA-256 the request is signed with.
func (s *Store) Put(ctx context.Context, key string, data []byte, contentType string) error {
	_, err := s.api.Do(ctx, awsapi.Request{
		Method: http.MethodPut,
		URL:    s.objectURL(key),
		Header: http.Header{"Content-Type": {contentType}},
		Body:   data,
	}, check)
	if err != nil {
		return fmt.Errorf("s3store: put %s: %w", key, err)
	}
	return nil
}

// Get returns the object under key; ErrNotFound when there is none.
func (s *Store) Get(ctx context.Context, key string) (Object, error) {
	resp, err := s.api.Do(ctx, awsapi.Request{Method: http.MethodGet, URL: s.objectURL(key)}, check)
	if err != nil {
		if awsapi.IsCode(err, "NoSuchKey") || awsapi.IsCode(err, "NotFound") {
			return Object{}, fmt.Errorf("s3store: get %s: %w", key, ErrNotFound)
		}
		return Object{}, fmt.Errorf("s3store: get %s: %w", key, err)
	}
	return Object{Data: resp.Body, ContentType: resp.Header.Get("Content-Type"), ETag: resp.Header.Get("ETag")}, nil
}

// Delete removes the objects under keys, in batches of up to 1000 keys per request.
// Keys without an object are no error. It reports every key S3 failed to delete.
func (s *Store) Delete(ctx context.Context, keys ...string) error {
	for len(keys) > 0 {
		n := min(len(keys), maxDeleteBatch)
		batch := keys[:n]
		keys = keys[n:]
		req := deleteRequest{Xmlns: xmlns, Quiet: true, Objects: make([]objectID, len(batch))}
		for i, k := range batch {
			req.Objects[i].Key = k
		}
		body, err := xml.Marshal(req)
		if err != nil {
			return fmt.Errorf("s3store: delete: encode: %w", err)
		}
		sum := md5.Sum(body) // DeleteObjects requires Content-MD5
		resp, err := s.api.Do(ctx, awsapi.Request{
			Method: http.MethodPost,
			URL:    s.base + "/?delete=",
			Header: http.Header{
				"Content-Type": {"application/xml"},
				"Content-Md5":  {base64.StdEncoding.EncodeToString(sum[:])},
			},
			Body: body,
		}, check)
		if err != nil {
			return fmt.Errorf("s3store: delete %s: %w", strings.Join(batch, ", "), err)
		}
		var out struct {
			Errors []struct{ Key, Code, Message string } `xml:"Error"`
		}
		if err := xml.Unmarshal(resp.Body, &out); err != nil {
			return fmt.Errorf("s3store: delete %s: decode the answer: %w", strings.Join(batch, ", "), err)
		}
		if len(out.Errors) > 0 {
			errs := make([]error, len(out.Errors))
			for i, e := range out.Errors {
				errs[i] = fmt.Errorf("s3store: delete %s: %s: %s", e.Key, e.Code, e.Message)
			}
			return errors.Join(errs...)
		}
	}
	return nil
}

// List returns the keys under prefix, in lexical order.
func (s *Store) List(ctx context.Context, prefix string) ([]string, error) {
	var keys []string
	q := url.Values{"list-type": {"2"}, "prefix": {prefix}}
	for {
		resp, err := s.api.Do(ctx, awsapi.Request{Method: http.MethodGet, URL: s.base + "/?" + q.Encode()}, check)
		if err != nil {
			return nil, fmt.Errorf("s3store: list %s: %w", prefix, err)
		}
		var page struct {
			Contents  []struct{ Key string }
			Truncated bool   `xml:"IsTruncated"`
			Next      string `xml:"NextContinuationToken"`
		}
		if err := xml.Unmarshal(resp.Body, &page); err != nil {
			return nil, fmt.Errorf("s3store: list %s: decode the answer: %w", prefix, err)
		}
		for _, c := range page.Contents {
			keys = append(keys, c.Key)
		}
		if !page.Truncated || page.Next == "" {
			return keys, nil
		}
		q.Set("continuation-token", page.Next)
	}
}

// xmlns is the namespace of S3's XML documents.
const xmlns = "http://s3.amazonaws.com/doc/2006-03-01/"

type (
	deleteRequest struct {
		XMLName xml.Name   `xml:"Delete"`
		Xmlns   string     `xml:"xmlns,attr"`
		Quiet   bool       `xml:"Quiet"`
		Objects []objectID `xml:"Object"`
	}
	objectID struct {
		Key string `xml:"Key"`
	}
)

// retryCodes are S3's error codes that another attempt may get past (beyond 5xx).
var retryCodes = map[string]bool{"SlowDown": true, "RequestTimeout": true, "InternalError": true}

// check reads S3's error answers: <Error><Code>…</Code><Message>…</Message></Error>.
// A 404 without S3's error document (some S3-compatible servers) is NotFound.
func check(resp *awsapi.Response) error {
	if resp.Status >= 200 && resp.Status < 300 {
		return nil
	}
	var e struct{ Code, Message string }
	if err := xml.Unmarshal(resp.Body, &e); err != nil || e.Code == "" {
		if resp.Status == http.StatusNotFound {
			return &awsapi.Error{Status: resp.Status, Code: "NotFound", Message: "not found"}
		}
		return awsapi.Unexpected(resp)
	}
	return &awsapi.Error{Status: resp.Status, Code: e.Code, Message: e.Message, Retryable: retryCodes[e.Code]}
}
