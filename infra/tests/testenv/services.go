// Package testenv is the test harness shared by every package's tests.
//
// The backing services come from the environment when it names them (make test starts
// one stack for the whole run and exports DATABASE_URL, AWS_ENDPOINT_URL_DYNAMODB and
// AWS_ENDPOINT_URL_S3; the older DYNAMODB_ENDPOINT and S3_ENDPOINT are read as
// aliases). Otherwise each is started on first use, once per test process, on
// throwaway data, and stopped by Main when the tests end:
//
//	func TestMain(m *testing.M) { testenv.Main(m) }
package testenv

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mediacatalog/service/infra/local/localservices"
	"github.com/mediacatalog/service/shared/config"
)

// Main runs the package's tests, stops the services they started, and exits with the
// tests' code. Call it from TestMain.
func Main(m *testing.M) {
	mainRunning.Store(true)
	code := m.Run()
	for _, svc := range []*service{&postgresService, &dynamoService, &s3Service} {
		if err := svc.stop(); err != nil {
			fmt.Fprintf(os.Stderr, "testenv: stop %s: %v\n", svc.env[0], err)
		}
	}
	os.Exit(code)
}

// DatabaseURL is a superuser URL of a PostgreSQL server (its postgres database). Tests
// make databases of their own on it (see NewDB).
func DatabaseURL(t testing.TB) string {
	t.Helper()
	return postgresService.endpoint(t)
}

// DynamoEndpoint is the endpoint of a DynamoDB-compatible server. Tests make tables
// of their own on it.
func DynamoEndpoint(t testing.TB) string {
	t.Helper()
	return dynamoService.endpoint(t)
}

// S3Endpoint is the endpoint of an S3-compatible server, with the S3_BUCKET bucket
// (default media-catalog-images) in it.
func S3Endpoint(t testing.TB) string {
	t.Helper()
	return s3Service.endpoint(t)
}

var (
	mainRunning     atomic.Bool
	postgresService = service{env: []string{"DATABASE_URL"}, start: localservices.Postgres}
	dynamoService   = service{env: config.DynamoEndpointEnv, start: localservices.Dynalite}
	s3Service       = service{env: config.S3EndpointEnv, start: localservices.S3}
)

// service is one backing service, from the environment or started once on demand.
type service struct {
	env   []string // the variables that name it, first set wins
	start func(context.Context, localservices.Options) (*localservices.Service, error)

	once sync.Once
	svc  *localservices.Service
	err  error
}

func (s *service) endpoint(t testing.TB) string {
	t.Helper()
	if v := config.FirstEnv(os.Getenv, s.env); v != "" {
		return v
	}
	if !mainRunning.Load() {
		t.Fatalf("testenv: %s is not set, and the service it names is started only under testenv.Main "+
			"(which stops it): add func TestMain(m *testing.M) { testenv.Main(m) }", s.env[0])
	}
	s.once.Do(func() {
		s.svc, s.err = s.start(context.Background(), localservices.Options{Ephemeral: true, Log: os.Stderr})
	})
	if s.err != nil {
		t.Fatalf("testenv: %v", s.err)
	}
	return s.svc.Endpoint
}

func (s *service) stop() error {
	if s.svc == nil {
		return nil
	}
	return s.svc.Stop()
}
