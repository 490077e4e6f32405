package testenv

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mediacatalog/service/infra/local/localservices"
)

// The tables the stack creates have the shape the template declares and the stores
// expect, and creating them again changes nothing.
func TestDynamoTables(t *testing.T) {
	_, stateTable, rateTable := DynamoTables(t)
	ctx := context.Background()
	endpoint := DynamoEndpoint(t)
	if err := localservices.EnsureTables(ctx, endpoint, dynamoRegion, stateTable, rateTable); err != nil {
		t.Fatalf("EnsureTables again: %v", err)
	}
	for _, name := range []string{stateTable, rateTable} {
		t.Run(name, func(t *testing.T) {
			tbl, err := localservices.DescribeTable(ctx, endpoint, dynamoRegion, name)
			if err != nil {
				t.Fatalf("DescribeTable: %v", err)
			}
			if tbl.TableStatus != types.TableStatusActive {
				t.Errorf("status = %s, want ACTIVE", tbl.TableStatus)
			}
			if tbl.BillingModeSummary == nil || tbl.BillingModeSummary.BillingMode != types.BillingModePayPerRequest {
				t.Errorf("billing mode = %+v, want PAY_PER_REQUEST", tbl.BillingModeSummary)
			}
			if len(tbl.KeySchema) != 1 || aws.ToString(tbl.KeySchema[0].AttributeName) != "pk" || tbl.KeySchema[0].KeyType != types.KeyTypeHash {
				t.Errorf("key schema = %+v, want partition key pk", tbl.KeySchema)
			}
			if len(tbl.AttributeDefinitions) != 1 || tbl.AttributeDefinitions[0].AttributeType != types.ScalarAttributeTypeS {
				t.Errorf("attribute definitions = %+v, want pk of type S", tbl.AttributeDefinitions)
			}
		})
	}
}
