// Command restore-revocations prepares a database restored to a point in time before
// the service answers from it (make restore-revocations; docs/operations.md): it sets
// the sessions-valid-after mark, so every session issued before the restore is
// refused, then makes again the revocations after the restore point that the audit
// records in the files name (infra/ops/restore), and lists the grants it leaves out.
//
//	DATABASE_URL=<the restored database> go run ./infra/ops/cmd/restore-revocations \
//	    -after 2026-12-02T09:30:00Z audit-*.jsonl
//
// Each file holds log lines: the functions' audit records, or CloudWatch Logs events
// whose message is one; other lines are skipped. "-" reads standard input.
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
	"github.com/mediacatalog/service/infra/ops/restore"
	"github.com/mediacatalog/service/shared/config"
	"github.com/mediacatalog/service/shared/postgres"
)

func main() {
	cmdrun.Main("restore-revocations", func(ctx context.Context) error {
		return run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout)
	})
}

func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, out io.Writer) error {
	fs := flag.NewFlagSet("restore-revocations", flag.ContinueOnError)
	fs.SetOutput(out)
	after := fs.String("after", "", "the restore point, RFC 3339 (2026-12-02T09:30:00Z): the records after it are made again")
	if err := fs.Parse(args); err != nil {
		return err
	}
	t, err := time.Parse(time.RFC3339Nano, *after)
	if err != nil {
		return fmt.Errorf("-after %q: the restore point as RFC 3339, e.g. 2026-12-02T09:30:00Z", *after)
	}
	if fs.NArg() == 0 {
		return errors.New("no audit file: give the exported records (docs/operations.md), or - for standard input")
	}
	var records []restore.Record
	for _, name := range fs.Args() {
		recs, err := readFile(name, stdin)
		if err != nil {
			return err
		}
		records = append(records, recs...)
	}
	fmt.Fprintf(out, "%d audit records read from %d files\n", len(records), fs.NArg())
	cfg, err := config.Load(getenv)
	if err != nil {
		return err
	}
	db, err := postgres.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer db.Close()
	res, err := restore.Apply(ctx, db, records, t, restore.Options{})
	res.Write(out)
	if err != nil {
		return fmt.Errorf("%w (run it again: what was made again is found done)", err)
	}
	return nil
}

func readFile(name string, stdin io.Reader) ([]restore.Record, error) {
	if name == "-" {
		return restore.Read(stdin)
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := restore.Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return recs, nil
}
