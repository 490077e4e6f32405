package dynamo

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/mediacatalog/service/shared/awsconfig"
	"github.com/mediacatalog/service/shared/config"
)

// NewClient returns the SDK's DynamoDB client for awsCfg (awsconfig.Load). With
// cfg.DynamoEndpoint set (dynalite locally and in tests) it talks to that endpoint.
// The SDK's standard retryer retries throttling, server errors and broken connections.
func NewClient(awsCfg aws.Config, cfg config.Config) *dynamodb.Client {
	return dynamodb.NewFromConfig(awsCfg, func(o *dynamodb.Options) {
		o.BaseEndpoint = awsconfig.BaseEndpoint(cfg.DynamoEndpoint)
	})
}
