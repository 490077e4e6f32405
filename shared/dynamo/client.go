package dynamo

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/mediacatalog/service/shared/awsconfig"
)

// NewClient returns the SDK's DynamoDB client for awsCfg (awsconfig.Load). With an
// endpoint (config's DynamoEndpoint: dynalite locally and in tests) it talks to that
// endpoint; "" is AWS's. The SDK's standard retryer retries throttling, server errors
// and broken connections.
func NewClient(awsCfg aws.Config, endpoint string) *dynamodb.Client {
	return dynamodb.NewFromConfig(awsCfg, func(o *dynamodb.Options) {
		o.BaseEndpoint = awsconfig.BaseEndpoint(endpoint)
	})
}
