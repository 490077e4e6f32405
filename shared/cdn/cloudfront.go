package cdn

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"time"

	"github.com/mediacatalog/service/shared/awsapi"
	"github.com/mediacatalog/service/shared/config"
)

// cloudFrontEndpoint is CloudFront's API: one global endpoint, signed for us-east-1.
const cloudFrontEndpoint = "https://cloudfront.amazonaws.com"

// CloudFront invalidates paths of one distribution, through CloudFront's REST-XML API
// (CreateInvalidation) as signed requests (see awsapi for why not the SDK's client).
type CloudFront struct {
	api          *awsapi.Client
	distribution string
}

// NewCloudFront returns an invalidator of cfg.CloudFrontDistID. endpoint overrides
// CloudFront's (tests point it at a stand-in); "" is CloudFront itself. Build it only
// when the distribution id is set.
func NewCloudFront(cfg config.Config, endpoint string) (*CloudFront, error) {
	if cfg.CloudFrontDistID == "" {
		return nil, errors.New("cdn: CLOUDFRONT_DISTRIBUTION_ID is not set")
	}
	if endpoint == "" {
		endpoint = cloudFrontEndpoint
	}
	return &CloudFront{api: awsapi.New("cloudfront", "us-east-1", endpoint, os.Getenv), distribution: cfg.CloudFrontDistID}, nil
}

// invalidationBatch is CreateInvalidation's request document.
type invalidationBatch struct {
	XMLName         xml.Name `xml:"http://cloudfront.amazonaws.com/doc/2020-05-31/ InvalidationBatch"`
	Quantity        int      `xml:"Paths>Quantity"`
	Paths           []string `xml:"Paths>Items>Path"`
	CallerReference string   `xml:"CallerReference"`
}

// Invalidate creates one invalidation of paths.
func (c *CloudFront) Invalidate(ctx context.Context, paths ...string) error {
	var nonce [6]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return fmt.Errorf("cdn: invalidation reference: %w", err)
	}
	// One reference for all attempts: a retried request that CloudFront had already
	// taken is answered with that invalidation rather than a second one.
	ref := strconv.FormatInt(time.Now().UnixNano(), 36) + "-" + hex.EncodeToString(nonce[:])
	body, err := xml.Marshal(invalidationBatch{Quantity: len(paths), Paths: paths, CallerReference: ref})
	if err != nil {
		return fmt.Errorf("cdn: invalidation request: %w", err)
	}
	_, err = c.api.Do(ctx, awsapi.Request{
		Method: http.MethodPost,
		URL:    c.api.Endpoint() + "/2020-05-31/distribution/" + url.PathEscape(c.distribution) + "/invalidation",
		Header: http.Header{"Content-Type": {"application/xml"}},
		Body:   append([]byte(xml.Header), body...),
	}, checkCloudFront)
	if err != nil {
		return fmt.Errorf("cdn: invalidate %v in distribution %s: %w", paths, c.distribution, err)
	}
	return nil
}

// checkCloudFront reads CloudFront's error answers:
// <ErrorResponse><Error><Type/><Code/><Message/></Error></ErrorResponse>.
func checkCloudFront(resp *awsapi.Response) error {
	if resp.Status >= 200 && resp.Status < 300 {
		return nil
	}
	var e struct {
		Code    string `xml:"Error>Code"`
		Message string `xml:"Error>Message"`
	}
	if err := xml.Unmarshal(resp.Body, &e); err != nil || e.Code == "" {
		return awsapi.Unexpected(resp)
	}
	retry := e.Code == "Throttling" || e.Code == "ServiceUnavailable"
	return &awsapi.Error{Status: resp.Status, Code: e.Code, Message: e.Message, Retryable: retry}
}
