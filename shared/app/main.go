package app

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/mediacatalog/service/shared/config"
	"github.com/mediacatalog/service/shared/lambdahttp"
	"github.com/mediacatalog/service/shared/telemetry"
)

// Main is the whole body of a function's main: it serves one route group, under
// Lambda through the API Gateway adapter, elsewhere on PORT, with the collector's
// target of TuneGC.
//
// Outside Lambda, SIGINT and SIGTERM shut the server down gracefully. Under Lambda no
// signal handler is installed: the runtime freezes and ends the process itself, and
// setting one up (signal.Notify starts the runtime's signal loop) is paid on every
// cold start (BenchmarkColdStart in infra/tests/smoke).
func Main(group Group) {
	TuneGC(os.Getenv)
	ctx, stop := context.Background(), func() {}
	if !lambdahttp.UnderLambda(os.Getenv) {
		ctx, stop = signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	}
	err := Run(ctx, group, os.Getenv)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", group.Name, err)
		os.Exit(1)
	}
}

// Run serves one route group until ctx is done. A group that holds secrets reads them
// first, once, and sees them as environment variables (Group.Secrets).
func Run(ctx context.Context, group Group, getenv func(string) string) error {
	if lambdahttp.UnderLambda(getenv) {
		// First, so that the secrets' read is traced too.
		telemetry.Setup(telemetry.FromEnv(group.Name, getenv))
	}
	if group.Secrets != nil {
		var err error
		if getenv, err = group.Secrets(ctx, getenv); err != nil {
			return err
		}
	}
	cfg, err := config.Load(getenv)
	if err != nil {
		return err
	}
	log := lambdahttp.NewLogger(lambdahttp.LogLevel(getenv, cfg.LogLevel)).With("function", group.Name, "release", cfg.Release)
	a := New(cfg, log)
	a.Getenv = getenv
	defer a.Close()
	h, err := a.Handler(ctx, group)
	if err != nil {
		return err
	}
	return lambdahttp.Start(ctx, h, a.Readiness(group, h), net.JoinHostPort("127.0.0.1", strconv.Itoa(cfg.Port)), getenv, log)
}
