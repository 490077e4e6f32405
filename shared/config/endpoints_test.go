package config_test

import (
	"testing"

	"github.com/mediacatalog/service/shared/config"
)

// The SDK's standard per-service variable wins over the older name, which wins over
// the SDK's global variable.
func TestEndpointVariables(t *testing.T) {
	tests := []struct {
		name               string
		env                map[string]string
		dynamo, s3, cf, lb string
	}{
		{"none: AWS itself", nil, "", "", "", ""},
		{"standard names", map[string]string{"AWS_ENDPOINT_URL_DYNAMODB": "http://d", "AWS_ENDPOINT_URL_S3": "http://s",
			"AWS_ENDPOINT_URL_CLOUDFRONT": "http://c", "AWS_ENDPOINT_URL_LAMBDA": "http://l"}, "http://d", "http://s", "http://c", "http://l"},
		{"aliases", map[string]string{"DYNAMODB_ENDPOINT": "http://d2", "S3_ENDPOINT": "http://s2"}, "http://d2", "http://s2", "", ""},
		{"standard over alias", map[string]string{"AWS_ENDPOINT_URL_DYNAMODB": "http://d", "DYNAMODB_ENDPOINT": "http://d2"}, "http://d", "", "", ""},
		{"global for the rest", map[string]string{"AWS_ENDPOINT_URL": "http://g", "S3_ENDPOINT": "http://s2"}, "http://g", "http://s2", "http://g", "http://g"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := config.Load(func(k string) string { return tt.env[k] })
			if err != nil {
				t.Fatal(err)
			}
			got := [4]string{c.DynamoEndpoint, c.S3Endpoint, c.CloudFrontEndpoint, c.LambdaEndpoint}
			if want := [4]string{tt.dynamo, tt.s3, tt.cf, tt.lb}; got != want {
				t.Errorf("endpoints (dynamodb, s3, cloudfront, lambda) = %q, want %q", got, want)
			}
			if c.AWSEndpointSet() != (tt.env != nil) {
				t.Errorf("AWSEndpointSet() = %v", c.AWSEndpointSet())
			}
		})
	}
}
