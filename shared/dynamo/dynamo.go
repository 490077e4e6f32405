// Package dynamo is the DynamoDB adapter: the client, the two tables' definitions, and
// the stores kept there (OAuth state tokens and the OAuth rate limiter). Both tables
// have a string partition key "pk" and a TTL on "expires_at" (unix seconds); TTL
// deletion is lazy, so the stores check expiry themselves.
package dynamo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/mediacatalog/service/shared/awsconfig"

	"github.com/mediacatalog/service/shared/config"
)

// Attribute names shared by both tables.
const (
	attrKey     = "pk"
	attrExpires = "expires_at"
)

// NewClient returns a DynamoDB client for cfg.AWSRegion. With cfg.DynamoEndpoint set
// (dynalite locally and in tests) it talks to that endpoint, signing with dummy
// credentials unless the environment has AWS credentials.
func NewClient(ctx context.Context, cfg config.Config) (*dynamodb.Client, error) {
	awsCfg := awsconfig.Load(cfg.AWSRegion, cfg.DynamoEndpoint, os.Getenv)
	return dynamodb.NewFromConfig(awsCfg, func(o *dynamodb.Options) {
		if cfg.DynamoEndpoint != "" {
			o.BaseEndpoint = aws.String(cfg.DynamoEndpoint)
		}
	}), nil
}

// EnsureTables creates the OAuth state and rate-limit tables unless they exist
// (on-demand billing, string partition key "pk"), waits until they are active and
// enables TTL on "expires_at". It is for the local stack and the tests: in AWS the SAM
// template declares the tables.
func EnsureTables(ctx context.Context, client *dynamodb.Client, stateTable, rateTable string) error {
	for _, name := range []string{stateTable, rateTable} {
		if err := ensureTable(ctx, client, name); err != nil {
			return fmt.Errorf("dynamo: ensure table %s: %w", name, err)
		}
	}
	return nil
}

func ensureTable(ctx context.Context, client *dynamodb.Client, name string) error {
	_, err := client.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:   aws.String(name),
		BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String(attrKey), AttributeType: types.ScalarAttributeTypeS},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String(attrKey), KeyType: types.KeyTypeHash},
		},
	})
	var inUse *types.ResourceInUseException // it exists, or is being created
	if err != nil && !errors.As(err, &inUse) {
		return fmt.Errorf("create: %w", err)
	}
	waiter := dynamodb.NewTableExistsWaiter(client, func(o *dynamodb.TableExistsWaiterOptions) {
		o.MinDelay = 100 * time.Millisecond
		o.MaxDelay = 2 * time.Second
	})
	if err := waiter.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)}, 2*time.Minute); err != nil {
		return fmt.Errorf("wait until active: %w", err)
	}
	return ensureTTL(ctx, client, name)
}

func ensureTTL(ctx context.Context, client *dynamodb.Client, name string) error {
	desc, err := client.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(name)})
	if err != nil {
		return fmt.Errorf("describe TTL: %w", err)
	}
	if d := desc.TimeToLiveDescription; d != nil && aws.ToString(d.AttributeName) == attrExpires &&
		(d.TimeToLiveStatus == types.TimeToLiveStatusEnabled || d.TimeToLiveStatus == types.TimeToLiveStatusEnabling) {
		return nil
	}
	_, err = client.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName: aws.String(name),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{
			AttributeName: aws.String(attrExpires),
			Enabled:       aws.Bool(true),
		},
	})
	if err != nil && !isUnknownOperation(err) { // dynalite has no UpdateTimeToLive
		return fmt.Errorf("enable TTL: %w", err)
	}
	return nil
}

func isUnknownOperation(err error) bool {
	var apiErr smithy.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode() == "UnknownOperationException"
}
