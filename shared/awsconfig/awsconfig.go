// Package awsconfig builds the AWS SDK configuration every client of the service uses:
// the region, and credentials from the environment, as Lambda (and sam local) provide
// them. It deliberately does not link the SDK's full shared-config chain (profiles,
// SSO, STS, IMDS): that would add megabytes to each function and time to its cold
// start, and Lambda never needs it. Against a local stand-in (an endpoint override)
// without credentials in the environment it uses placeholder ones, which the
// stand-ins do not check.
package awsconfig

import (
	"context"
	"errors"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// ErrNoCredentials is returned on the first AWS call when the environment holds none.
var ErrNoCredentials = errors.New("awsconfig: no AWS credentials in the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)")

// Load returns the configuration for a client in region. endpoint is the client's
// endpoint override ("" for AWS itself); getenv reads the process environment.
func Load(region, endpoint string, getenv func(string) string) aws.Config {
	cfg := aws.Config{Region: region}
	id, secret, token := getenv("AWS_ACCESS_KEY_ID"), getenv("AWS_SECRET_ACCESS_KEY"), getenv("AWS_SESSION_TOKEN")
	switch {
	case id != "" && secret != "":
		cfg.Credentials = aws.NewCredentialsCache(credentials.NewStaticCredentialsProvider(id, secret, token))
	case endpoint != "":
		cfg.Credentials = credentials.NewStaticCredentialsProvider("local", "local", "")
	default:
		cfg.Credentials = aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{}, ErrNoCredentials
		})
	}
	return cfg
}

// Endpoint is the regional HTTPS endpoint of an AWS service, for the clients that
// speak a service's API as signed HTTP requests instead of through the SDK's service
// package: https://<service>.<region>.amazonaws.com (amazonaws.com.cn in China).
func Endpoint(service, region string) string {
	domain := "amazonaws.com"
	if strings.HasPrefix(region, "cn-") {
		domain = "amazonaws.com.cn"
	}
	return "https://" + service + "." + region + "." + domain
}
