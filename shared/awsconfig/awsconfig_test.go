package awsconfig_test

import (
	"context"
	"errors"
	"testing"

	"github.com/mediacatalog/service/shared/awsconfig"
)

func TestLoad(t *testing.T) {
	tests := []struct {
		name     string
		env      map[string]string
		endpoint string
		wantKey  string
		wantErr  error
	}{
		{"lambda environment", map[string]string{"AWS_ACCESS_KEY_ID": "AKIA", "AWS_SECRET_ACCESS_KEY": "s", "AWS_SESSION_TOKEN": "t"}, "", "AKIA", nil},
		{"environment wins over stand-in", map[string]string{"AWS_ACCESS_KEY_ID": "AKIA", "AWS_SECRET_ACCESS_KEY": "s"}, "http://127.0.0.1:9000", "AKIA", nil},
		{"stand-in without credentials", nil, "http://127.0.0.1:9000", "local", nil},
		{"AWS without credentials", nil, "", "", awsconfig.ErrNoCredentials},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := awsconfig.Load("eu-central-1", tt.endpoint, func(k string) string { return tt.env[k] })
			if cfg.Region != "eu-central-1" {
				t.Errorf("region = %q", cfg.Region)
			}
			creds, err := cfg.Credentials.Retrieve(context.Background())
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if creds.AccessKeyID != tt.wantKey {
				t.Errorf("key = %q, want %q", creds.AccessKeyID, tt.wantKey)
			}
		})
	}
}

func TestEndpoint(t *testing.T) {
	for _, tt := range []struct{ service, region, want string }{
		{"dynamodb", "eu-central-1", "https://dynamodb.eu-central-1.amazonaws.com"},
		{"lambda", "us-east-1", "https://lambda.us-east-1.amazonaws.com"},
		{"dynamodb", "cn-north-1", "https://dynamodb.cn-north-1.amazonaws.com.cn"},
	} {
		if got := awsconfig.Endpoint(tt.service, tt.region); got != tt.want {
			t.Errorf("Endpoint(%q, %q) = %q, want %q", tt.service, tt.region, got, tt.want)
		}
	}
}
