// Command seed loads the demo data into DATABASE_URL and, with -scale N, also
// generates a synthetic catalog of N series for benchmarks into its own client:
//
//	go run ./infra/local/cmd/seed                    # demo data only
//	go run ./infra/local/cmd/seed -scale 100000      # and a large catalog in client 2
//
// It migrates nothing: run the migrations first (make migrate). Both steps are
// idempotent, so running it again changes nothing.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/mediacatalog/service/infra/cmdrun"
	"github.com/mediacatalog/service/infra/local/demo"
	"github.com/mediacatalog/service/shared/config"
	"github.com/mediacatalog/service/shared/postgres"
)

func main() {
	cmdrun.Main("seed", func(ctx context.Context) error { return run(ctx, os.Args[1:], os.Getenv, os.Stdout) })
}

func run(ctx context.Context, args []string, getenv func(string) string, out io.Writer) error {
	flags := flag.NewFlagSet("seed", flag.ContinueOnError)
	flags.SetOutput(out)
	scale := flags.Int("scale", 0, "also generate a synthetic catalog of this many series (0: none)")
	client := flags.Int64("client", 2, "client of the generated catalog (the demo catalog is client 1)")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if *scale < 0 || *client <= 0 {
		return errors.New("-scale must not be negative and -client must be positive")
	}
	if *scale > 0 && *client == demo.Client {
		return fmt.Errorf("-client %d is the demo catalog; generate into a client of its own", demo.Client)
	}
	cfg, err := config.Load(getenv)
	if err != nil {
		return err
	}
	db, err := postgres.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer db.Close()

	start := time.Now()
	if err := demo.Load(ctx, db); err != nil {
		return err
	}
	fmt.Fprintf(out, "demo data loaded in %s\n", time.Since(start).Round(time.Millisecond))
	if *scale == 0 {
		return nil
	}
	start = time.Now()
	if err := demo.Generate(ctx, db, *client, *scale, demo.Progress(out)); err != nil {
		return err
	}
	c := demo.CountsFor(*scale)
	fmt.Fprintf(out, "client %d: %d series, %d publishers, %d contributors, %d tags and %d users generated in %s\n",
		*client, c.Series, c.Publishers, c.Contributors, c.Tags, c.Users, time.Since(start).Round(time.Millisecond))
	return nil
}
