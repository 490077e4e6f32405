package telemetry_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/mediacatalog/service/shared/telemetry"
)

// TestObserveAWS: an observer sees every operation of a client built with AWSOptions,
// with its input, and its output or error, and an RDS token reported with ObservedAWS;
// once stopped it sees nothing, and without one no middleware is added to an
// operation's stack.
func TestObserveAWS(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		if r.Header.Get("X-Amz-Target") == "DynamoDB_20120810.DeleteItem" {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"__type":"com.amazonaws.dynamodb.v20120810#ResourceNotFoundException","message":"no table"}`))
			return
		}
		_, _ = w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	client := dynamodb.NewFromConfig(aws.Config{Region: "eu-central-1", Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", ""),
		APIOptions: telemetry.AWSOptions, RetryMaxAttempts: 1}, func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(srv.URL) })

	var mu sync.Mutex
	var seen []telemetry.AWSCall
	stop := telemetry.ObserveAWS(func(_ context.Context, c telemetry.AWSCall) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, c)
	})
	ctx := context.Background()
	item := map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "k"}}
	if _, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("states"), Item: item}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String("gone"), Key: item}); err == nil {
		t.Fatal("DeleteItem of no table succeeded")
	}
	telemetry.ObservedAWS(ctx, telemetry.AWSCall{Service: "rds-db", Operation: "connect", Input: telemetry.RDSConnect{Endpoint: "proxy:5432", User: "u"}})
	stop()
	if _, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("after"), Item: item}); err != nil {
		t.Fatal(err)
	}
	telemetry.ObservedAWS(ctx, telemetry.AWSCall{Service: "rds-db", Operation: "connect"})

	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 3 {
		t.Fatalf("observed %d calls, want the two operations and the token: %+v", len(seen), seen)
	}
	put, del, tok := seen[0], seen[1], seen[2]
	if in, ok := put.Input.(*dynamodb.PutItemInput); put.Service != "DynamoDB" || put.Operation != "PutItem" || put.Region != "eu-central-1" ||
		!ok || aws.ToString(in.TableName) != "states" || put.Output == nil || put.Err != nil {
		t.Errorf("PutItem observed as %+v", put)
	}
	if in, ok := del.Input.(*dynamodb.DeleteItemInput); del.Operation != "DeleteItem" || !ok || aws.ToString(in.TableName) != "gone" ||
		del.Output != nil || del.Err == nil {
		t.Errorf("the failed DeleteItem observed as %+v", del)
	}
	if tok.Service != "rds-db" || tok.Input.(telemetry.RDSConnect).User != "u" {
		t.Errorf("the token observed as %+v", tok)
	}

	// No observer: the operation's stack has no observing middleware.
	has := func() bool {
		s := middleware.NewStack("op", nil)
		for _, o := range telemetry.AWSOptions {
			if err := o(s); err != nil {
				t.Fatal(err)
			}
		}
		_, ok := s.Initialize.Get("TelemetryObserver")
		return ok
	}
	if has() {
		t.Error("without an observer, an operation still gets the observing middleware")
	}
	stop = telemetry.ObserveAWS(func(context.Context, telemetry.AWSCall) {})
	defer stop()
	if !has() {
		t.Error("with an observer, an operation has no observing middleware")
	}
}
