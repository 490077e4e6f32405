package dynamo_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/mediacatalog/service/infra/testenv"
	"github.com/mediacatalog/service/shared/config"
	"github.com/mediacatalog/service/shared/dynamo"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// tables creates a state table and a rate-limit table of the test's own on the test
// server, and deletes them when the test ends.
func tables(t *testing.T) (client *dynamodb.Client, stateTable, rateTable string) {
	t.Helper()
	ctx := context.Background()
	client, err := dynamo.NewClient(ctx, config.Config{AWSRegion: "us-east-1", DynamoEndpoint: testenv.DynamoEndpoint(t)})
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	suffix := make([]byte, 6)
	_, _ = rand.Read(suffix)
	stateTable = "state-" + hex.EncodeToString(suffix)
	rateTable = "rate-" + hex.EncodeToString(suffix)
	if err := dynamo.EnsureTables(ctx, client, stateTable, rateTable); err != nil {
		t.Fatalf("EnsureTables: %v", err)
	}
	t.Cleanup(func() {
		for _, name := range []string{stateTable, rateTable} {
			if _, err := client.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(name)}); err != nil {
				t.Errorf("delete table %s: %v", name, err)
			}
		}
	})
	return client, stateTable, rateTable
}
