package testenv

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/mediacatalog/service/infra/local/localservices"
	"github.com/mediacatalog/service/shared/awsconfig"
	"github.com/mediacatalog/service/shared/config"
	"github.com/mediacatalog/service/shared/dynamo"
)

// dynamoRegion is the region the tests' DynamoDB clients sign for.
const dynamoRegion = "us-east-1"

// DynamoTables creates an OAuth state table and a rate-limit table of the test's own
// on the test server, deletes them when the test ends, and returns a client of that
// server with the two tables' names.
func DynamoTables(t testing.TB) (client *dynamodb.Client, stateTable, rateTable string) {
	t.Helper()
	cfg := config.Config{AWSRegion: dynamoRegion, DynamoEndpoint: DynamoEndpoint(t)}
	suffix := randomHex(6)
	stateTable, rateTable = "state-"+suffix, "rate-"+suffix
	ctx := context.Background()
	if err := localservices.EnsureTables(ctx, cfg.DynamoEndpoint, cfg.AWSRegion, stateTable, rateTable); err != nil {
		t.Fatalf("create DynamoDB tables: %v", err)
	}
	t.Cleanup(func() {
		if err := localservices.DeleteTables(context.Background(), cfg.DynamoEndpoint, cfg.AWSRegion, stateTable, rateTable); err != nil {
			t.Errorf("delete DynamoDB tables: %v", err)
		}
	})
	return DynamoClient(t, cfg), stateTable, rateTable
}

// DynamoClient is the service's DynamoDB client for cfg, as the functions build it.
func DynamoClient(t testing.TB, cfg config.Config) *dynamodb.Client {
	t.Helper()
	awsCfg := awsconfig.Load(cfg)
	return dynamo.NewClient(awsCfg, cfg.DynamoEndpoint)
}
