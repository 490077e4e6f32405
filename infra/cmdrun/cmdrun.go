// Package cmdrun is the shared body of the infra commands' main: a context that SIGINT
// or SIGTERM cancels, the command's run, and its error on stderr with exit status 1.
package cmdrun

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Main runs run under a context cancelled by SIGINT or SIGTERM and exits with the
// status exitCode gives its error.
func Main(name string, run func(ctx context.Context) error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx)
	stop()
	if code := exitCode(name, err, os.Stderr); code != 0 {
		os.Exit(code)
	}
}

// exitCode writes err, prefixed with the command's name, to w and returns 1; it returns
// 0 for no error and for flag.ErrHelp (the flag set has printed the usage).
func exitCode(name string, err error, w io.Writer) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	fmt.Fprintf(w, "%s: %v\n", name, err)
	return 1
}
