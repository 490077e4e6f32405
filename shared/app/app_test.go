package app_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/app"
	"github.com/mediacatalog/service/shared/config"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func newApp(t *testing.T, env map[string]string) *app.App {
	t.Helper()
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	a := app.New(cfg, nil)
	a.Getenv = func(k string) string { return env[k] }
	t.Cleanup(a.Close)
	return a
}

// TestDBMaxConns: DB_MAX_CONNS bounds the pool a function opens; with n connections
// taken, the next request for one waits.
func TestDBMaxConns(t *testing.T) {
	url := testenv.NewDB(t).URL
	tests := []struct {
		env  string
		want int32
	}{
		{"", int32(max(4, runtime.NumCPU()))}, // pgx's default
		{"1", 1},
		{"2", 2},
	}
	for _, tc := range tests {
		t.Run("DB_MAX_CONNS="+tc.env, func(t *testing.T) {
			ctx := context.Background()
			db, err := newApp(t, map[string]string{"DB_ENV": "local", "DATABASE_URL": url, "DB_MAX_CONNS": tc.env}).DB(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got := db.Pool.Config().MaxConns; got != tc.want {
				t.Fatalf("MaxConns = %d, want %d", got, tc.want)
			}
			var held []*pgxpool.Conn
			for range tc.want {
				c, err := db.Pool.Acquire(ctx)
				if err != nil {
					t.Fatal(err)
				}
				held = append(held, c)
			}
			defer func() {
				for _, c := range held {
					c.Release()
				}
			}()
			wait, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			defer cancel()
			if c, err := db.Pool.Acquire(wait); err == nil {
				c.Release()
				t.Errorf("a connection beyond the %d allowed was opened", tc.want)
			} else if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("err %v, want the wait for a free connection to time out", err)
			}
		})
	}
}

// TestDBIAMAuth: DB_IAM_AUTH=true signs a token per connection, verifies TLS and
// keeps to queries that do not pin an RDS Proxy connection; against a server without
// TLS (the test cluster) no connection is made, so the token never goes in the clear.
func TestDBIAMAuth(t *testing.T) {
	url := testenv.NewDB(t).URL
	db, err := newApp(t, map[string]string{
		"DB_ENV": "production", "DATABASE_URL": url, "DB_IAM_AUTH": "true", "DB_MAX_CONNS": "2",
		"AWS_REGION": "eu-central-1", "AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "secret",
	}).DB(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cfg := db.Pool.Config()
	if cfg.BeforeConnect == nil || cfg.ConnConfig.DefaultQueryExecMode != pgx.QueryExecModeCacheDescribe || cfg.MaxConns != 2 {
		t.Errorf("BeforeConnect set %v, query mode %v, MaxConns %d", cfg.BeforeConnect != nil, cfg.ConnConfig.DefaultQueryExecMode, cfg.MaxConns)
	}
	err = db.Pool.Ping(context.Background())
	if err == nil || !strings.Contains(strings.ToLower(err.Error()), "tls") {
		t.Errorf("ping without TLS: %v, want a refusal to go on without TLS", err)
	}
}
