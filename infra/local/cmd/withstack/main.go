// Command withstack starts the local backing services (PostgreSQL, dynalite, S3), runs
// a command with their addresses in its environment, stops them, and exits with the
// command's code:
//
//	go run ./infra/local/cmd/withstack [-dir .local] [-ephemeral] -- cmd args...
//
// It exports DATABASE_URL, the AWS SDK's standard endpoint variables
// AWS_ENDPOINT_URL_DYNAMODB and AWS_ENDPOINT_URL_S3, and S3_BUCKET (and placeholder AWS
// credentials and region when unset), and creates the DynamoDB tables and the bucket.
// Services already named by the environment are used as they are.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/mediacatalog/service/infra/local/localservices"
	"github.com/mediacatalog/service/shared/config"
)

func main() {
	err := run(context.Background(), os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	var exit exitCode
	switch {
	case err == nil:
	case errors.As(err, &exit):
		os.Exit(int(exit))
	default:
		fmt.Fprintln(os.Stderr, "withstack:", err)
		os.Exit(1)
	}
}

// exitCode is the command's exit status, passed on as withstack's own.
type exitCode int

func (c exitCode) Error() string { return fmt.Sprintf("exit status %d", int(c)) }

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("withstack", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", "", "folder for the services' data (default <repo>/.local)")
	ephemeral := fs.Bool("ephemeral", false, "throwaway data, deleted at the end (for tests)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: withstack [-dir DIR] [-ephemeral] -- command [args...]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return exitCode(2)
	}
	command := fs.Args()
	if len(command) == 0 {
		fs.Usage()
		return exitCode(2)
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// SIGINT and SIGTERM cancel the start; once the command runs they go to it, and the
	// stack stops when it exits.
	var child atomic.Pointer[os.Process]
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(signals)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case sig := <-signals:
				if p := child.Load(); p != nil {
					_ = p.Signal(sig)
				} else {
					cancel()
				}
			}
		}
	}()

	st, err := localservices.Start(ctx, localservices.Options{Dir: *dir, Ephemeral: *ephemeral, Log: stderr, Getenv: getenv})
	if err != nil {
		return err
	}
	defer func() {
		if err := st.Stop(); err != nil {
			fmt.Fprintln(stderr, "withstack:", err)
		}
	}()

	env, cfg, err := childEnv(st.Endpoints)
	if err != nil {
		return err
	}
	if err := prepare(ctx, cfg); err != nil {
		return err
	}

	cmd := exec.Command(command[0], command[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	cmd.Env = envList(env)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("run %s: %w", command[0], err)
	}
	child.Store(cmd.Process)
	err = cmd.Wait()
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		if status, ok := exitErr.Sys().(syscall.WaitStatus); ok && status.Signaled() {
			return exitCode(128 + int(status.Signal()))
		}
		return exitCode(exitErr.ExitCode())
	}
	return err
}

// childEnv is this process's environment with the services' addresses, the bucket, and
// placeholder AWS settings where none are set; cfg is the service's configuration read from it.
func childEnv(ep localservices.Endpoints) (env map[string]string, cfg config.Config, err error) {
	env = make(map[string]string)
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	env["DATABASE_URL"] = ep.DatabaseURL
	env["AWS_ENDPOINT_URL_DYNAMODB"] = ep.DynamoEndpoint
	env["AWS_ENDPOINT_URL_S3"] = ep.S3Endpoint
	for k, v := range map[string]string{
		"AWS_ACCESS_KEY_ID":     "local",
		"AWS_SECRET_ACCESS_KEY": "local",
		"AWS_REGION":            "us-east-1",
	} {
		if env[k] == "" {
			env[k] = v
		}
	}
	cfg, err = config.Load(func(k string) string { return env[k] })
	if err != nil {
		return nil, config.Config{}, err
	}
	env["S3_BUCKET"] = cfg.Bucket
	return env, cfg, nil
}

func envList(env map[string]string) []string {
	list := make([]string, 0, len(env))
	for k, v := range env {
		list = append(list, k+"="+v)
	}
	return list
}

// prepare creates the DynamoDB tables and the bucket the service expects.
func prepare(ctx context.Context, cfg config.Config) error {
	if err := localservices.EnsureTables(ctx, cfg.DynamoEndpoint, cfg.AWSRegion, cfg.StateTable, cfg.RateLimitTable); err != nil {
		return err
	}
	return localservices.EnsureBucket(ctx, cfg.S3Endpoint, cfg.AWSRegion, cfg.Bucket)
}
