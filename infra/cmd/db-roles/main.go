// Command db-roles creates the database roles the functions connect as and grants
// their privileges (infra/dbroles), on DATABASE_URL as the tables' owner:
//
//	DATABASE_URL=... DB_WRITER_PASSWORD=... DB_READER_PASSWORD=... DB_CDN_PASSWORD=... \
//	  go run ./infra/cmd/db-roles [-writer catalog_writer -reader catalog_reader -cdn catalog_cdn]
//
// The passwords are the ones of the secrets RDS Proxy logs in with (template
// parameters DbWriterSecretArn, DbReaderSecretArn, DbCdnSecretArn); an empty one
// leaves the role's password as it is.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/jackc/pgx/v5"

	"github.com/mediacatalog/service/infra/cmdrun"
	"github.com/mediacatalog/service/infra/dbroles"
)

func main() {
	cmdrun.Main("db-roles", func(ctx context.Context) error { return run(ctx, os.Args[1:], os.Getenv) })
}

func run(ctx context.Context, args []string, getenv func(string) string) error {
	r := dbroles.Defaults
	fs := flag.NewFlagSet("db-roles", flag.ContinueOnError)
	fs.StringVar(&r.Writer, "writer", r.Writer, "role of oauth and admin-* (DbWriterUser)")
	fs.StringVar(&r.Reader, "reader", r.Reader, "read-only role of tags and publishers (DbReaderUser)")
	fs.StringVar(&r.CDN, "cdn", r.CDN, "role of cdn (DbCdnUser)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	url := getenv("DATABASE_URL")
	if url == "" {
		return errors.New("DATABASE_URL is not set")
	}
	r.WriterPassword, r.ReaderPassword, r.CDNPassword = getenv("DB_WRITER_PASSWORD"), getenv("DB_READER_PASSWORD"), getenv("DB_CDN_PASSWORD")
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(context.Background())
	if err := dbroles.Apply(ctx, conn, r); err != nil {
		return err
	}
	fmt.Printf("roles %s (writer), %s (reader), %s (cdn) granted\n", r.Writer, r.Reader, r.CDN)
	return nil
}
