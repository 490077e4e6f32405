package awsconfig_test

import (
	"context"
	"errors"
	"testing"

	"github.com/mediacatalog/service/shared/awsconfig"
	"github.com/mediacatalog/service/shared/config"
)

func TestFromEnv(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		cfg     config.Config
		wantKey string
		wantErr error
	}{
		{"lambda environment", map[string]string{"AWS_ACCESS_KEY_ID": "AKIA", "AWS_SECRET_ACCESS_KEY": "s", "AWS_SESSION_TOKEN": "t"},
			config.Config{AWSRegion: "eu-central-1"}, "AKIA", nil},
		{"environment wins over stand-in", map[string]string{"AWS_ACCESS_KEY_ID": "AKIA", "AWS_SECRET_ACCESS_KEY": "s"},
			config.Config{AWSRegion: "eu-central-1", DynamoEndpoint: "http://127.0.0.1:9000"}, "AKIA", nil},
		{"stand-in without credentials", nil, config.Config{AWSRegion: "eu-central-1", S3Endpoint: "http://127.0.0.1:9000"}, "local", nil},
		{"AWS without credentials", nil, config.Config{AWSRegion: "eu-central-1"}, "", awsconfig.ErrNoCredentials},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := awsconfig.FromEnv(tt.cfg, func(k string) string { return tt.env[k] })
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
