package dynamo_test

import (
	"testing"

	"github.com/mediacatalog/service/infra/testenv"
	"github.com/mediacatalog/service/shared/dynamo"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// tables creates a state table and a rate-limit table of the test's own on the test
// server, and deletes them when the test ends.
func tables(t *testing.T) (client *dynamo.Client, stateTable, rateTable string) {
	t.Helper()
	return testenv.DynamoTables(t)
}
