// Command local is `make run`: it starts the backing services on loopback (PostgreSQL,
// dynalite, gofakes3), migrates, loads the demo data, and serves every route group on
// one HTTP server until Ctrl-C, then stops everything it started. With DB_ENV=local
// (the default here) it also starts the OAuth stand-in of each provider that has no
// credentials in the environment, so that logging in works at once. The same server
// shows the API reference at /docs (infra/local/apidocs).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mediacatalog/service/infra/cmdrun"
	"github.com/mediacatalog/service/infra/local/apidocs"
	"github.com/mediacatalog/service/infra/local/demo"
	"github.com/mediacatalog/service/infra/local/localservices"
	"github.com/mediacatalog/service/shared/app"
	"github.com/mediacatalog/service/shared/config"
	"github.com/mediacatalog/service/shared/lambdahttp"
	"github.com/mediacatalog/service/shared/postgres/migrate"
	"github.com/mediacatalog/service/shared/routegroups"
)

func main() {
	app.TuneGC(os.Getenv) // the functions' collector target (app.Main sets it under Lambda)
	cmdrun.Main("local", func(ctx context.Context) error { return run(ctx, os.Args[1:], os.Getenv, os.Stderr, nil) })
}

// run serves until ctx ends. ready, when not nil, gets the server's address once
// everything is set up (the server listens already; it answers from then on).
func run(ctx context.Context, args []string, getenv func(string) string, out io.Writer, ready func(url string)) error {
	fs := flag.NewFlagSet("local", flag.ContinueOnError)
	dir := fs.String("dir", ".local", "folder of the services' data (git-ignored)")
	port := fs.Int("port", 3000, "HTTP port of the API (0: a free one)")
	debugAddr := fs.String("debug-addr", "", "loopback address of the process's runtime figures (expvar, pprof) for make soak; empty: none")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *debugAddr != "" {
		if _, err := serveDebug(ctx, *debugAddr, out); err != nil {
			return err
		}
	}
	absDir, err := filepath.Abs(*dir)
	if err != nil {
		return err
	}
	// Listen first: a busy port fails at once, and the stand-ins need the address of
	// the callbacks they accept.
	ln, err := net.Listen("tcp", net.JoinHostPort("localhost", strconv.Itoa(*port)))
	if err != nil {
		return err
	}
	defer ln.Close()
	*port = ln.Addr().(*net.TCPAddr).Port
	url := fmt.Sprintf("http://localhost:%d", *port)

	st, err := localservices.Start(ctx, localservices.Options{Dir: absDir, Log: out, Getenv: getenv})
	if err != nil {
		return fmt.Errorf("start services: %w", err)
	}
	defer func() {
		fmt.Fprintln(out, "stopping services")
		if err := st.Stop(); err != nil {
			fmt.Fprintln(out, "stop:", err)
		}
	}()

	// The service's configuration: the stack's endpoints and the OAuth stand-ins'
	// variables, then what the caller's environment sets, then the local defaults.
	defaults := map[string]string{
		"DB_ENV":                "local",
		"FILE_SERVICE":          "true",
		"AVATAR_NOTIFIER":       "http",
		"S3_BUCKET":             "media-catalog-images",
		"AWS_REGION":            "us-east-1",
		"AWS_ACCESS_KEY_ID":     "local",
		"AWS_SECRET_ACCESS_KEY": "local",
	}
	fixed := map[string]string{
		"PORT":                      strconv.Itoa(*port),
		"DATABASE_URL":              st.DatabaseURL,
		"AWS_ENDPOINT_URL_DYNAMODB": st.DynamoEndpoint,
		"AWS_ENDPOINT_URL_S3":       st.S3Endpoint,
	}
	var logins []string // how to log in with each provider
	if env := getenv("DB_ENV"); env == "" || env == "local" {
		standIns, lines, stop, err := startStandIns(url, getenv)
		if err != nil {
			return err
		}
		defer stop()
		maps.Copy(fixed, standIns)
		logins = lines
	}
	getCfg := func(k string) string {
		if v, ok := fixed[k]; ok {
			return v
		}
		if v := getenv(k); v != "" {
			return v
		}
		return defaults[k]
	}
	// The AWS SDK reads credentials and region from the process environment.
	for _, k := range []string{"AWS_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"} {
		if getenv(k) == "" {
			os.Setenv(k, defaults[k])
		}
	}
	cfg, err := config.Load(getCfg)
	if err != nil {
		return err
	}

	log := lambdahttp.NewLogger(cfg.LogLevel)
	stopTelemetry, err := startTelemetry(ctx, getenv, out)
	if err != nil {
		return err
	}
	defer stopTelemetry()
	if err := migrate.Up(ctx, cfg.DatabaseURL, nil); err != nil {
		return err
	}
	fmt.Fprintln(out, "migrations applied")
	if err := localservices.EnsureTables(ctx, cfg.DynamoEndpoint, cfg.AWSRegion, cfg.StateTable, cfg.RateLimitTable); err != nil {
		return err
	}
	fmt.Fprintf(out, "dynamodb tables %s, %s ready\n", cfg.StateTable, cfg.RateLimitTable)

	a := app.New(cfg, log)
	a.Getenv = getCfg
	defer a.Close()
	db, err := a.DB(ctx)
	if err != nil {
		return err
	}
	if err := demo.Load(ctx, db); err != nil {
		return fmt.Errorf("demo data: %w", err)
	}
	fmt.Fprintln(out, "demo data loaded (client 1; users admin, editor, member)")

	rs, err := functionRoutes(ctx, a)
	if err != nil {
		return err
	}
	dist, err := apidocs.Install(ctx, out)
	if err != nil {
		return err
	}
	docs, err := apidocs.Handler(dist)
	if err != nil {
		return err
	}
	h := routes(rs, docs, a.Wrap)
	// make token and other commands find the running stack here.
	envFile := filepath.Join(absDir, "stack.env")
	if err := writeEnvFile(envFile, cfg); err != nil {
		return err
	}
	defer os.Remove(envFile)

	names := make([]string, 0, 8)
	for _, g := range routegroups.All() {
		names = append(names, g.Name)
	}
	fmt.Fprintf(out, "serving %s\n", strings.Join(names, ", "))
	for _, l := range logins {
		fmt.Fprintln(out, l)
	}
	fmt.Fprintf(out, "API reference: %s%s\n", url, apidocs.Path)
	fmt.Fprintf(out, "ready: %s (Ctrl-C stops everything)\n", url)
	if ready != nil {
		ready(url)
	}
	err = lambdahttp.ServeListener(ctx, h, ln, nil)
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

func writeEnvFile(path string, cfg config.Config) error {
	lines := []string{
		"DB_ENV=local",
		"DATABASE_URL=" + cfg.DatabaseURL,
		"AWS_ENDPOINT_URL_DYNAMODB=" + cfg.DynamoEndpoint,
		"AWS_ENDPOINT_URL_S3=" + cfg.S3Endpoint,
		"S3_BUCKET=" + cfg.Bucket,
		"PORT=" + strconv.Itoa(cfg.Port),
	}
	return os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600)
}
