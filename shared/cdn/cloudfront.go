package cdn

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudfront"
	"github.com/aws/aws-sdk-go-v2/service/cloudfront/types"

	"github.com/mediacatalog/service/shared/awsconfig"
)

// CloudFront invalidates paths of one distribution through the SDK's CloudFront
// client (CreateInvalidation).
type CloudFront struct {
	client       *cloudfront.Client
	distribution string
}

// CloudFrontOptions name the distribution and where CloudFront is.
type CloudFrontOptions struct {
	Distribution string // config's CloudFrontDistID
	Endpoint     string // config's CloudFrontEndpoint: tests point it at a stand-in
}

// NewCloudFront returns an invalidator of o.Distribution. Build it only when the
// distribution id is set.
func NewCloudFront(awsCfg aws.Config, o CloudFrontOptions) (*CloudFront, error) {
	if o.Distribution == "" {
		return nil, errors.New("cdn: CLOUDFRONT_DISTRIBUTION_ID is not set")
	}
	client := cloudfront.NewFromConfig(awsCfg, func(co *cloudfront.Options) {
		co.BaseEndpoint = awsconfig.BaseEndpoint(o.Endpoint)
	})
	return &CloudFront{client: client, distribution: o.Distribution}, nil
}

// Invalidate creates one invalidation of paths.
func (c *CloudFront) Invalidate(ctx context.Context, paths ...string) error {
	var nonce [6]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return fmt.Errorf("cdn: invalidation reference: %w", err)
	}
	// One reference for all the SDK's attempts: a retried request that CloudFront had
	// already taken is answered with that invalidation rather than a second one.
	ref := strconv.FormatInt(time.Now().UnixNano(), 36) + "-" + hex.EncodeToString(nonce[:])
	_, err := c.client.CreateInvalidation(ctx, &cloudfront.CreateInvalidationInput{
		DistributionId: aws.String(c.distribution),
		InvalidationBatch: &types.InvalidationBatch{
			CallerReference: aws.String(ref),
			Paths:           &types.Paths{Quantity: aws.Int32(int32(len(paths))), Items: paths},
		},
	})
	if err != nil {
		return fmt.Errorf("cdn: invalidate %v in distribution %s: %w", paths, c.distribution, err)
	}
	return nil
}
