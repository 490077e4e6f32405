// Package awsconfig loads the AWS SDK configuration every client of the service is
// built from: the SDK's shared configuration (config.LoadDefaultConfig: the
// environment's credentials as Lambda provides them, profiles, the standard endpoint
// variables AWS_ENDPOINT_URL_<SERVICE>) in the region of the service's configuration.
// Against a local stand-in (an endpoint override) without credentials in the
// environment it uses placeholder ones, which the stand-ins do not check, rather than
// letting the SDK look for instance credentials that a developer's machine has not.
package awsconfig

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdkconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/mediacatalog/service/shared/config"
)

// Load returns the SDK configuration for cfg. It reads files and the environment
// only; nothing connects before a client makes its first call.
func Load(ctx context.Context, cfg config.Config) (aws.Config, error) {
	opts := []func(*sdkconfig.LoadOptions) error{sdkconfig.WithRegion(cfg.AWSRegion)}
	if cfg.AWSEndpointSet() && !credentialsInEnv(os.Getenv) {
		opts = append(opts, sdkconfig.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("local", "local", "")))
	}
	awsCfg, err := sdkconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("awsconfig: %w", err)
	}
	return awsCfg, nil
}

// credentialsInEnv reports whether the environment names credentials: keys, or a
// profile of the shared files.
func credentialsInEnv(getenv func(string) string) bool {
	return getenv("AWS_ACCESS_KEY_ID") != "" || getenv("AWS_PROFILE") != ""
}

// BaseEndpoint is the client option's value for an endpoint override: nil for AWS
// itself (the SDK resolves the endpoint of the region and partition).
func BaseEndpoint(endpoint string) *string {
	if endpoint == "" {
		return nil
	}
	return aws.String(endpoint)
}
