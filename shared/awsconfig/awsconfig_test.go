package awsconfig_test

import (
	"context"
	"testing"

	"github.com/mediacatalog/service/shared/awsconfig"
	"github.com/mediacatalog/service/shared/config"
)

func TestLoad(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		cfg     config.Config
		wantKey string // "" when the credentials must come from the SDK's chain
	}{
		{"lambda environment", map[string]string{"AWS_ACCESS_KEY_ID": "AKIA", "AWS_SECRET_ACCESS_KEY": "s", "AWS_SESSION_TOKEN": "t"},
			config.Config{AWSRegion: "eu-central-1"}, "AKIA"},
		{"environment wins over stand-in", map[string]string{"AWS_ACCESS_KEY_ID": "AKIA", "AWS_SECRET_ACCESS_KEY": "s"},
			config.Config{AWSRegion: "eu-central-1", DynamoEndpoint: "http://127.0.0.1:9000"}, "AKIA"},
		{"stand-in without credentials", nil, config.Config{AWSRegion: "eu-central-1", S3Endpoint: "http://127.0.0.1:9000"}, "local"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"} {
				t.Setenv(k, tt.env[k])
			}
			t.Setenv("AWS_CONFIG_FILE", t.TempDir()+"/none")
			t.Setenv("AWS_SHARED_CREDENTIALS_FILE", t.TempDir()+"/none")
			cfg, err := awsconfig.Load(context.Background(), tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Region != "eu-central-1" {
				t.Errorf("region = %q", cfg.Region)
			}
			creds, err := cfg.Credentials.Retrieve(context.Background())
			if err != nil {
				t.Fatalf("credentials: %v", err)
			}
			if creds.AccessKeyID != tt.wantKey {
				t.Errorf("key = %q, want %q", creds.AccessKeyID, tt.wantKey)
			}
		})
	}
}
