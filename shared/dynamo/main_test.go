package dynamo_test

import (
	"crypto/rand"
	"encoding/base64"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/mediacatalog/service/infra/tests/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// tables creates a state table and a rate-limit table of the test's own on the test
// server, and deletes them when the test ends.
func tables(t *testing.T) (client *dynamodb.Client, stateTable, rateTable string) {
	t.Helper()
	return testenv.DynamoTables(t)
}

// newToken is a state token as the oauth group makes them.
func newToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
