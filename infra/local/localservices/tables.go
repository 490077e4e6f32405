package localservices

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/mediacatalog/service/shared/awsconfig"
	"github.com/mediacatalog/service/shared/config"
	"github.com/mediacatalog/service/shared/dynamo"
)

// EnsureTables creates the given tables at a DynamoDB-compatible endpoint unless they
// exist, in the shape the service's stores expect (on-demand billing, string partition
// key "pk"), waits until they are active and enables TTL on "expires_at". It is for
// the local stack and the tests: in AWS the SAM template declares the tables. It uses
// the same SDK client as the functions (dynamo.NewClient).
func EnsureTables(ctx context.Context, endpoint, region string, tables ...string) error {
	client := dynamoClient(endpoint, region)
	for _, name := range tables {
		if err := ensureTable(ctx, client, name); err != nil {
			return fmt.Errorf("ensure table %s: %w", name, err)
		}
	}
	return nil
}

// DeleteTables removes the given tables (the tests' own, when they end).
func DeleteTables(ctx context.Context, endpoint, region string, tables ...string) error {
	client := dynamoClient(endpoint, region)
	var errs []error
	for _, name := range tables {
		if _, err := client.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(name)}); err != nil {
			errs = append(errs, fmt.Errorf("delete table %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// DescribeTable returns a table's description (tests check the tables' shape).
func DescribeTable(ctx context.Context, endpoint, region, table string) (*types.TableDescription, error) {
	client := dynamoClient(endpoint, region)
	out, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	if err != nil {
		return nil, err
	}
	return out.Table, nil
}

// dynamoClient is the service's own DynamoDB client of endpoint ("" for AWS).
func dynamoClient(endpoint, region string) *dynamodb.Client {
	cfg := config.Config{AWSRegion: region, DynamoEndpoint: endpoint}
	return dynamo.NewClient(awsconfig.Load(cfg), endpoint)
}

func ensureTable(ctx context.Context, client *dynamodb.Client, name string) error {
	_, err := client.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:   aws.String(name),
		BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String(dynamo.KeyAttribute), AttributeType: types.ScalarAttributeTypeS},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String(dynamo.KeyAttribute), KeyType: types.KeyTypeHash},
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
	if d := desc.TimeToLiveDescription; d != nil && aws.ToString(d.AttributeName) == dynamo.ExpiresAttribute &&
		(d.TimeToLiveStatus == types.TimeToLiveStatusEnabled || d.TimeToLiveStatus == types.TimeToLiveStatusEnabling) {
		return nil
	}
	_, err = client.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName: aws.String(name),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{
			AttributeName: aws.String(dynamo.ExpiresAttribute),
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
