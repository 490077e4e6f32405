// Command bulk runs an operator's large writes in batches (infra/ops/bulk), each a short
// transaction under the writers' timeouts, against DATABASE_URL:
//
//	go run ./infra/ops/cmd/bulk purge-client -client 2
//	go run ./infra/ops/cmd/bulk update -table contributors -set "last_name = upper(last_name)" -where "client_id = 2"
//
// A stopped run is resumed by running it again. make purge-client CLIENT=<id> runs the
// first.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/mediacatalog/service/infra/cmdrun"
	"github.com/mediacatalog/service/infra/ops/bulk"
	"github.com/mediacatalog/service/shared/postgres"
)

func main() {
	cmdrun.Main("bulk", func(ctx context.Context) error { return run(ctx, os.Args[1:], os.Getenv, os.Stdout) })
}

func run(ctx context.Context, args []string, getenv func(string) string, out io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: bulk purge-client -client <id> | bulk update -table <t> -set <sql> -where <sql>")
	}
	fs := flag.NewFlagSet("bulk "+args[0], flag.ContinueOnError)
	batch := fs.Int("batch", bulk.DefaultBatchSize, "rows per batch (one transaction each)")
	client := fs.Int64("client", 0, "purge-client: the client whose catalog is deleted")
	table := fs.String("table", "", "update: the table")
	set := fs.String("set", "", "update: the SET list, in SQL")
	where := fs.String("where", "", "update: the rows to change, in SQL")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	url := getenv("DATABASE_URL")
	if url == "" {
		return errors.New("DATABASE_URL is not set")
	}
	db, err := postgres.Open(ctx, url)
	if err != nil {
		return err
	}
	defer db.Close()
	opts := bulk.Options{BatchSize: *batch, Progress: out}
	switch args[0] {
	case "purge-client":
		if *client <= 0 {
			return errors.New("purge-client: -client must be a client id")
		}
		_, err := bulk.PurgeClient(ctx, db.Pool, *client, opts)
		return err
	case "update":
		if *table == "" || *set == "" || *where == "" {
			return errors.New("update: -table, -set and -where are required")
		}
		_, err := bulk.Update(ctx, db.Pool, *table, *set, *where, opts)
		return err
	default:
		return fmt.Errorf("unknown job %q: purge-client or update", args[0])
	}
}
