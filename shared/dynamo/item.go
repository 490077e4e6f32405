package dynamo

import (
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The two item shapes of this package (a state: five strings and a number; a counter:
// one number) are written and read with the service client's own attribute value types
// rather than feature/dynamodb/attributevalue: that package links the DynamoDB Streams
// client for its stream record types, whose package initialisation (dynamodbstreams'
// schemas and endpoints, seen with GODEBUG=inittrace=1) is paid on every cold start
// of oauth (BenchmarkColdStart in infra/tests/smoke), for three calls that need only these
// helpers.

// attrS is a string attribute.
func attrS(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

// attrN is a number attribute.
func attrN(v int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
}

// itemS is item's string attribute name: "" when absent, an error when of another type.
func itemS(item map[string]types.AttributeValue, name string) (string, error) {
	switch v := item[name].(type) {
	case nil:
		return "", nil
	case *types.AttributeValueMemberS:
		return v.Value, nil
	default:
		return "", fmt.Errorf("attribute %s is %T, not a string", name, v)
	}
}

// itemN is item's number attribute name as an integer: 0 when absent, an error when of
// another type or not an integer.
func itemN(item map[string]types.AttributeValue, name string) (int64, error) {
	switch v := item[name].(type) {
	case nil:
		return 0, nil
	case *types.AttributeValueMemberN:
		n, err := strconv.ParseInt(v.Value, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("attribute %s: %w", name, err)
		}
		return n, nil
	default:
		return 0, fmt.Errorf("attribute %s is %T, not a number", name, v)
	}
}
