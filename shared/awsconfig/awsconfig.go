// Package awsconfig builds the AWS SDK configuration every client of the service is
// made from: the region of the service's configuration, and credentials from the
// environment, as Lambda (and sam local) provide them. The service clients add the
// SDK's standard retryer and endpoint resolution.
//
// It does not call the SDK's config.LoadDefaultConfig: the shared-config chain it
// links (profiles, SSO, STS, instance metadata) is a large share of every function's
// binary and cold start (TestSmoke in infra/tests/smoke checks each function's linux/arm64
// bootstrap against its size budget; figures in docs/performance.md), and Lambda
// never needs it. The standard endpoint
// variables that chain would read (AWS_ENDPOINT_URL_<SERVICE>, AWS_ENDPOINT_URL) are
// read by package config instead. Against such an endpoint override without
// credentials in the environment, placeholder ones are used, which the local
// stand-ins do not check. Every operation of the clients made from one configuration
// goes through its service's circuit breaker and the request's dependency budget
// (guard.go, shared/dependency).
package awsconfig

import (
	"context"
	"errors"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/smithy-go/middleware"

	"github.com/mediacatalog/service/shared/config"
	"github.com/mediacatalog/service/shared/telemetry"
)

// ErrNoCredentials is returned on the first AWS call when the environment holds none.
var ErrNoCredentials = errors.New("awsconfig: no AWS credentials in the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)")

// Load returns the SDK configuration for cfg, with credentials from the process
// environment. It reads the environment only; nothing connects before a client makes
// its first call.
func Load(cfg config.Config) aws.Config {
	return FromEnv(cfg, os.Getenv)
}

// FromEnv is Load with the environment read through getenv.
func FromEnv(cfg config.Config, getenv func(string) string) aws.Config {
	return build(cfg.AWSRegion, cfg.AWSEndpointSet(), getenv)
}

// ForEndpoint is the configuration of one client that is built before the service's
// configuration exists (the secrets read at start-up): region, and that client's
// endpoint override ("" for AWS itself).
func ForEndpoint(region, endpoint string, getenv func(string) string) aws.Config {
	return build(region, endpoint != "", getenv)
}

func build(region string, overridden bool, getenv func(string) string) aws.Config {
	// The breaker first, then each operation's span and metric (telemetry).
	awsCfg := aws.Config{Region: region, APIOptions: append([]func(*middleware.Stack) error{guard()}, telemetry.AWSOptions...)}
	id, secret, token := getenv("AWS_ACCESS_KEY_ID"), getenv("AWS_SECRET_ACCESS_KEY"), getenv("AWS_SESSION_TOKEN")
	switch {
	case id != "" && secret != "":
		awsCfg.Credentials = aws.NewCredentialsCache(credentials.NewStaticCredentialsProvider(id, secret, token))
	case overridden:
		awsCfg.Credentials = credentials.NewStaticCredentialsProvider("local", "local", "")
	default:
		awsCfg.Credentials = aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{}, ErrNoCredentials
		})
	}
	return awsCfg
}

// BaseEndpoint is the client option's value for an endpoint override: nil for AWS
// itself (the SDK resolves the endpoint of the region and partition).
func BaseEndpoint(endpoint string) *string {
	if endpoint == "" {
		return nil
	}
	return aws.String(endpoint)
}
