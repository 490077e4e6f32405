// Command soak is make soak: the local server under a mixed workload for a duration,
// with PostgreSQL frozen and restarted on the way, its memory, goroutines and open
// files sampled from outside, and a verdict on their growth over the last half and on
// every answer (infra/bench/soak).
//
//	go run ./infra/bench/cmd/soak -duration 1h -dir .soak -port 3700
//
// It exits 1 when the soak fails (growth beyond the bounds, an unexpected answer
// outside the faults' windows), after printing the report.
package main

import (
	"context"
	"errors"
	"flag"
	"os"
	"time"

	"github.com/mediacatalog/service/infra/bench/soak"
	"github.com/mediacatalog/service/infra/cmdrun"
)

func main() {
	cmdrun.Main("soak", func(ctx context.Context) error { return run(ctx, os.Args[1:]) })
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("soak", flag.ContinueOnError)
	var o soak.Options
	fs.DurationVar(&o.Duration, "duration", time.Hour, "how long the workload runs")
	fs.DurationVar(&o.Interval, "interval", 0, "time between samples (0: a minute, or duration/30 under 30 minutes)")
	fs.StringVar(&o.Dir, "dir", ".soak", "folder of the soak's stack (made afresh), the server's log and the results")
	fs.IntVar(&o.Port, "port", 3700, "port of the local server (0: a free one)")
	fs.IntVar(&o.Rate, "rate", 150, "requests per second, all workers together")
	fs.IntVar(&o.Readers, "readers", 4, "public readers beside the roles, contributors, users and OAuth workers")
	if err := fs.Parse(args); err != nil {
		return err
	}
	rep, err := soak.Run(ctx, o)
	if err != nil {
		return err
	}
	if !rep.Passed() {
		return errors.New("failed (the report above says why)")
	}
	return nil
}
