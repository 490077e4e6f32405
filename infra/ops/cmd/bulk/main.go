// Command bulk runs an operator's large writes in batches (infra/ops/bulk), each a short
// transaction under the writers' timeouts, against DATABASE_URL:
//
//	go run ./infra/ops/cmd/bulk purge-client -client 2 -confirm 'the client's name'
//	go run ./infra/ops/cmd/bulk update -table contributors -set "last_name = upper(last_name)" -where "client_id = 2"
//
// A stopped run is resumed by running it again. make purge-client CLIENT=<id>
// CONFIRM=<name> runs the first. A purge cannot be undone short of a point-in-time
// restore, so it deletes nothing unless -confirm is the client's name, which a run
// without it prints: a mistyped id names another client, not the one meant.
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
		return errors.New("usage: bulk purge-client -client <id> -confirm <name> | bulk update -table <t> -set <sql> -where <sql>")
	}
	fs := flag.NewFlagSet("bulk "+args[0], flag.ContinueOnError)
	batch := fs.Int("batch", bulk.DefaultBatchSize, "rows per batch (one transaction each)")
	client := fs.Int64("client", 0, "purge-client: the client whose catalog is deleted")
	confirm := fs.String("confirm", "", "purge-client: the client's name, as a run without it prints")
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
		c, err := bulk.DescribeClient(ctx, db.Pool, *client)
		if err != nil {
			return err
		}
		if *confirm != c.Name {
			return fmt.Errorf("purge-client: client %d is %q (%d publishers, %d contributors); to delete its whole catalog, name it: make purge-client CLIENT=%d CONFIRM=<its name>",
				c.ID, c.Name, c.Publishers, c.Contributors, c.ID)
		}
		_, err = bulk.PurgeClient(ctx, db.Pool, *client, opts)
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
