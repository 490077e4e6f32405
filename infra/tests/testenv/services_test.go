package testenv

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { Main(m) }

func TestServices(t *testing.T) {
	tests := []struct {
		name     string
		endpoint func(testing.TB) string
		check    func(ctx context.Context, endpoint string) error
	}{
		{"postgres", DatabaseURL, func(ctx context.Context, url string) error {
			conn, err := pgx.Connect(ctx, url)
			if err != nil {
				return err
			}
			defer conn.Close(ctx)
			return conn.Ping(ctx)
		}},
		{"dynamo", DynamoEndpoint, get},
		{"s3 bucket", S3Endpoint, func(ctx context.Context, endpoint string) error {
			bucket := os.Getenv("S3_BUCKET")
			if bucket == "" {
				bucket = "media-catalog-images"
			}
			return get(ctx, endpoint+"/"+bucket)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			first := tt.endpoint(t)
			if err := tt.check(context.Background(), first); err != nil {
				t.Fatalf("%s does not answer: %v", first, err)
			}
			if again := tt.endpoint(t); again != first {
				t.Errorf("second call = %q, want the same service %q", again, first)
			}
		})
	}
}

func TestEnvironmentWins(t *testing.T) {
	tests := []struct {
		env      string
		endpoint func(testing.TB) string
	}{
		{"DATABASE_URL", DatabaseURL},
		{"AWS_ENDPOINT_URL_DYNAMODB", DynamoEndpoint},
		{"AWS_ENDPOINT_URL_S3", S3Endpoint},
	}
	for _, tt := range tests {
		t.Run(tt.env, func(t *testing.T) {
			const want = "http://from-the-environment.invalid"
			t.Setenv(tt.env, want)
			if got := tt.endpoint(t); got != want {
				t.Errorf("endpoint = %q, want %s's %q", got, tt.env, want)
			}
		})
	}
}

func get(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}
