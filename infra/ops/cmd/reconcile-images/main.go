// Command reconcile-images brings the images bucket back in line with the database
// after a point-in-time restore (make reconcile-images; infra/ops/reconcile says how): it
// makes every picture a row names current again, lists the current objects no row
// names, and with -delete removes them. Idempotent and safe to interrupt: run it again.
//
//	DATABASE_URL=... S3_BUCKET=<ImagesBucketName> go run ./infra/ops/cmd/reconcile-images [-delete]
//
// It reads DATABASE_URL, S3_BUCKET, AWS_REGION, the AWS credentials and the S3
// endpoint override (AWS_ENDPOINT_URL_S3) like the functions; the IAM it needs is in
// docs/operations.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/mediacatalog/service/infra/cmdrun"
	"github.com/mediacatalog/service/infra/ops/reconcile"
	"github.com/mediacatalog/service/shared/awsconfig"
	"github.com/mediacatalog/service/shared/config"
	"github.com/mediacatalog/service/shared/postgres"
	"github.com/mediacatalog/service/shared/s3store"
)

func main() {
	cmdrun.Main("reconcile-images", func(ctx context.Context) error { return run(ctx, os.Args[1:], os.Getenv, os.Stdout) })
}

func run(ctx context.Context, args []string, getenv func(string) string, out io.Writer) error {
	fs := flag.NewFlagSet("reconcile-images", flag.ContinueOnError)
	fs.SetOutput(out)
	remove := fs.Bool("delete", false, "remove the current objects no row names (a delete marker each: recoverable for NoncurrentImageDays)")
	page := fs.Int("page", 1000, "versions per listing page and keys per removal request (at most 1000)")
	settle := fs.Duration("settle", time.Minute, "leave alone objects and delete markers younger than this (uploads and deletes in flight)")
	if err := fs.Parse(args); err != nil {
		return err
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
	client := s3store.NewClient(awsconfig.FromEnv(cfg, getenv), cfg.S3Endpoint)
	rep, err := reconcile.Run(ctx, db, client, reconcile.Options{Bucket: cfg.Bucket, Delete: *remove, Page: *page, Settle: *settle, Out: out})
	fmt.Fprintln(out, rep.Summary())
	if err != nil {
		return fmt.Errorf("%w (run it again: it goes on where this one stopped)", err)
	}
	if rep.Unnamed > rep.Removed {
		fmt.Fprintf(out, "%d unnamed objects listed: run again with -delete to remove them\n", rep.Unnamed-rep.Removed)
	}
	return nil
}
