// Package app wires the route groups from configuration: the one place that knows
// which clients each group needs. The Lambda functions build one group each; the local
// server builds them all on one mux. Clients are created on first use, once per
// process, and none of them connects until a request needs it.
package app

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/mediacatalog/service/shared/auth"
	"github.com/mediacatalog/service/shared/awsconfig"
	"github.com/mediacatalog/service/shared/config"
	"github.com/mediacatalog/service/shared/deadlines"
	"github.com/mediacatalog/service/shared/dependency"
	"github.com/mediacatalog/service/shared/httpapi"
	"github.com/mediacatalog/service/shared/postgres"
	"github.com/mediacatalog/service/shared/telemetry"
)

// Group is one route group, served by one Lambda function. Build makes its routes
// from the process's shared dependencies. Each group package declares its own Group
// (wire.go), so a function's binary links only its own group and clients.
type Group struct {
	Name  string
	Build func(ctx context.Context, a *App) ([]httpapi.Route, error)
	Env   []string // variables beyond CommonEnv that Build reads
	// Secrets lays the secrets of SECRETS_ARN over the environment before the
	// configuration is read (secrets.Environment): every group sets it, since every
	// function checks the origin secret (ORIGIN_SECRET).
	Secrets func(ctx context.Context, getenv func(string) string) (func(string) string, error)
}

// CommonEnv are the variables every function reads (template.yaml's Globals).
var CommonEnv = []string{"DB_ENV", "API_URL", "FRONTEND_URL", "CORS_ORIGINS", "LOG_LEVEL", "RELEASE", "DATABASE_URL", "DB_MAX_CONNS", "DB_IAM_AUTH",
	"ORIGIN_SECRET", "ORIGIN_SECRET_PREVIOUS"}

// App holds the configuration and the lazily created clients of one process.
type App struct {
	Config config.Config
	Log    *slog.Logger
	// Getenv is the environment the configuration came from (the OAuth providers
	// read their variables through it).
	Getenv func(string) string

	mu       sync.Mutex
	internal []string // mux patterns of the Internal routes built (Routes)
	db       *postgres.DB
	sessions *auth.Sessions
	checks   []check // the readiness checks of what was built (readiness.go)
	closers  []func()
}

// New returns an App; it creates nothing yet.
func New(cfg config.Config, log *slog.Logger) *App {
	if log == nil {
		log = slog.Default()
	}
	return &App{Config: cfg, Log: log, Getenv: func(string) string { return "" }}
}

// Routes builds the routes of the given groups.
func (a *App) Routes(ctx context.Context, gs ...Group) ([]httpapi.Route, error) {
	var all []httpapi.Route
	for _, g := range gs {
		rs, err := g.Build(ctx, a)
		if err != nil {
			return nil, fmt.Errorf("app: build %s: %w", g.Name, err)
		}
		for i := range rs {
			rs[i].Handler = telemetry.Route(rs[i].Pattern, rs[i].Handler)
		}
		all = append(all, rs...)
	}
	a.mu.Lock()
	for _, rt := range all {
		if rt.Internal && !slices.Contains(a.internal, rt.MuxPattern()) {
			a.internal = append(a.internal, rt.MuxPattern())
		}
	}
	a.mu.Unlock()
	return all, nil
}

// Handler builds the given groups on one mux, wrapped in the shared middleware.
func (a *App) Handler(ctx context.Context, gs ...Group) (http.Handler, error) {
	routes, err := a.Routes(ctx, gs...)
	if err != nil {
		return nil, err
	}
	return a.Wrap(httpapi.NewMux(routes), 0), nil
}

// Wrap applies the shared middleware with the configuration's log, origins, origin
// secrets and REQUEST_TIMEOUT, or budget when that is shorter: the local server gives
// each route the time its function's invocation would leave it. The Internal routes
// of the groups built so far (Routes) are exempt from the origin secret.
func (a *App) Wrap(h http.Handler, budget time.Duration) http.Handler {
	timeout := a.Config.RequestTimeout
	if budget > 0 && (timeout <= 0 || budget < timeout) {
		timeout = budget
	}
	a.mu.Lock()
	internal := slices.Clone(a.internal)
	a.mu.Unlock()
	return httpapi.Wrap(h, httpapi.Options{Log: a.Log, CORSOrigins: a.Config.CORSOrigins, RequestTimeout: timeout,
		OriginSecrets: a.Config.OriginSecrets, OriginExempt: internal})
}

// DB returns the process's PostgreSQL pool, created on first use. It connects on the
// first query, not here.
func (a *App) DB(ctx context.Context) (*postgres.DB, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.db == nil {
		db, err := postgres.Open(ctx, a.Config.DatabaseURL, a.dbOptions()...)
		if err != nil {
			return nil, err
		}
		a.db = db
		a.closers = append(a.closers, db.Close)
		a.addCheck(a.postgresCheck())
	}
	return a.db, nil
}

// dbOptions are the pool options of the configuration: DB_MAX_CONNS, and with
// DB_IAM_AUTH the IAM token and verified TLS of RDS Proxy.
func (a *App) dbOptions() []postgres.Option {
	// The statements' spans and metrics first; then each database call's own deadline
	// within the request's budget, and the process's breaker, which wrap the tracer:
	// a frozen database gets an answer in seconds, whatever the function's timeout or
	// REQUEST_TIMEOUT, and at once once it is known to be frozen.
	opts := []postgres.Option{postgres.WithTracer(telemetry.PgxTracer()),
		postgres.WithGuard(dependency.NewBreaker("postgres", a.Log), deadlines.CallTimeout)}
	if a.Config.DBMaxConns > 0 {
		opts = append(opts, postgres.WithMaxConns(int32(min(a.Config.DBMaxConns, math.MaxInt32))))
	}
	if a.Config.DBIAMAuth {
		opts = append(opts, postgres.WithRDSAuth(postgres.RDSAuth{
			Region:      a.Config.AWSRegion,
			Credentials: awsconfig.FromEnv(a.Config, a.Getenv).Credentials,
		}))
	}
	return opts
}

// Sessions returns the session issuer and checker, created on first use.
func (a *App) Sessions(ctx context.Context) (*auth.Sessions, error) {
	db, err := a.DB(ctx)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.sessions == nil {
		s, err := auth.NewSessions(db, a.Config)
		if err != nil {
			return nil, err
		}
		a.sessions = s
		a.addCheck(check{name: "sessions", run: func(ctx context.Context) (string, error) { return "", s.Ready(ctx) }})
	}
	return a.sessions, nil
}

func (a *App) DBAndSessions(ctx context.Context) (*postgres.DB, *auth.Sessions, error) {
	db, err := a.DB(ctx)
	if err != nil {
		return nil, nil, err
	}
	s, err := a.Sessions(ctx)
	return db, s, err
}

// SetDB makes the App use an existing pool (tests and benchmarks).
func (a *App) SetDB(db *postgres.DB) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.db = db
	a.addCheck(a.postgresCheck())
}

// postgresCheck is the readiness check of the pool the App uses when it runs (the
// one SetDB gave it, if any), not of the one it had when the check was added.
func (a *App) postgresCheck() check {
	return check{name: "postgres", run: func(ctx context.Context) (string, error) {
		a.mu.Lock()
		db := a.db
		a.mu.Unlock()
		return "", db.Ready(ctx)
	}}
}

// Close releases what the App created.
func (a *App) Close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i := len(a.closers) - 1; i >= 0; i-- {
		a.closers[i]()
	}
	a.closers = nil
}
