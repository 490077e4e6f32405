// Package secrets lays the secrets of AWS Secrets Manager over the environment, once,
// when a function starts: the signing secret and the OAuth client credentials reach
// the functions this way, never as environment variables that
// lambda:GetFunctionConfiguration would show.
//
// SECRETS_ARN lists the secrets (comma-separated ARNs) of the function; each is a JSON
// object of variable names and string values ({"JWT_SECRET": "..."}). Each listed
// secret costs one GetSecretValue per cold start, and IAM lets each function read only
// the secrets listed for it. Without SECRETS_ARN (local runs, tests) the environment
// is used as it is.
package secrets

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/mediacatalog/service/shared/awsconfig"
	"github.com/mediacatalog/service/shared/config"
)

// Variables read here.
const (
	// ARNsVariable lists the secrets to read.
	ARNsVariable = "SECRETS_ARN"
	// EndpointVariable overrides Secrets Manager's endpoint (a stand-in in tests):
	// the SDK's standard name; SECRETSMANAGER_ENDPOINT is read as an alias.
	EndpointVariable = "AWS_ENDPOINT_URL_SECRETS_MANAGER"
)

// EndpointEnv are the variables of Secrets Manager's endpoint override, first set wins.
var EndpointEnv = []string{EndpointVariable, "SECRETSMANAGER_ENDPOINT", "AWS_ENDPOINT_URL"}

// fetchTimeout bounds the start-up reads: Lambda's init phase has 10 s in all.
const fetchTimeout = 5 * time.Second

// Environment returns getenv with the values of the secrets SECRETS_ARN lists laid
// over it (a secret's value wins over the environment's), or getenv itself when
// SECRETS_ARN is empty. It fails when a secret cannot be read or is not a JSON object
// of strings; a function that cannot read its secrets must not start.
func Environment(ctx context.Context, getenv func(string) string) (func(string) string, error) {
	var arns []string
	for _, a := range strings.Split(getenv(ARNsVariable), ",") {
		if a = strings.TrimSpace(a); a != "" {
			arns = append(arns, a)
		}
	}
	if len(arns) == 0 {
		return getenv, nil
	}
	region := getenv("AWS_REGION")
	if region == "" {
		region = "us-east-1"
	}
	endpoint := config.FirstEnv(getenv, EndpointEnv)
	client := secretsmanager.NewFromConfig(awsconfig.ForEndpoint(region, endpoint, getenv), func(o *secretsmanager.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	})
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	values := map[string]string{}
	for _, arn := range arns {
		out, err := client.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(arn)})
		if err != nil {
			return nil, fmt.Errorf("secrets: read %s: %w", arn, err)
		}
		var m map[string]string
		if out.SecretString == nil || json.Unmarshal([]byte(*out.SecretString), &m) != nil {
			// The value is never quoted in the error: it is a secret.
			return nil, fmt.Errorf("secrets: %s is not a JSON object of strings", arn)
		}
		for k, v := range m {
			values[k] = v
		}
	}
	return func(name string) string {
		if v, ok := values[name]; ok {
			return v
		}
		return getenv(name)
	}, nil
}
