// Command db-roles creates the database roles the functions connect as and grants
// their privileges (infra/ops/dbroles), on DATABASE_URL as the tables' owner. The roles
// and their passwords are read from the secrets RDS Proxy logs in with, by ARN:
//
//	DATABASE_URL=... AWS_REGION=... AWS_ACCESS_KEY_ID=... AWS_SECRET_ACCESS_KEY=... \
//	  go run ./infra/ops/cmd/db-roles -writer-secret <arn> -reader-secret <arn> -cdn-secret <arn>
//
// (`make db-roles ENV=<env>` takes the ARNs from samconfig.toml.) Without the secret
// flags it creates the roles -writer, -reader and -cdn name (the template's defaults)
// and leaves their passwords as they are (local stacks, tests).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/jackc/pgx/v5"

	"github.com/mediacatalog/service/infra/cmdrun"
	"github.com/mediacatalog/service/infra/ops/dbroles"
	"github.com/mediacatalog/service/shared/awsconfig"
	"github.com/mediacatalog/service/shared/config"
	"github.com/mediacatalog/service/shared/secrets"
)

func main() {
	cmdrun.Main("db-roles", func(ctx context.Context) error { return run(ctx, os.Args[1:], os.Getenv) })
}

func run(ctx context.Context, args []string, getenv func(string) string) error {
	r := dbroles.Defaults
	var arns dbroles.SecretARNs
	fs := flag.NewFlagSet("db-roles", flag.ContinueOnError)
	fs.StringVar(&r.Writer, "writer", r.Writer, "role of oauth and admin-* without secrets (DbWriterUser)")
	fs.StringVar(&r.Reader, "reader", r.Reader, "read-only role of tags and publishers without secrets (DbReaderUser)")
	fs.StringVar(&r.CDN, "cdn", r.CDN, "role of cdn without secrets (DbCdnUser)")
	fs.StringVar(&arns.Writer, "writer-secret", "", "ARN of the writer's login secret (DbWriterSecretArn)")
	fs.StringVar(&arns.Reader, "reader-secret", "", "ARN of the reader's login secret (DbReaderSecretArn)")
	fs.StringVar(&arns.CDN, "cdn-secret", "", "ARN of the cdn's login secret (DbCdnSecretArn)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	url := getenv("DATABASE_URL")
	if url == "" {
		return errors.New("DATABASE_URL is not set")
	}
	if arns != (dbroles.SecretARNs{}) {
		region := getenv("AWS_REGION")
		if region == "" {
			return errors.New("AWS_REGION is not set (the secrets' region)")
		}
		endpoint := config.FirstEnv(getenv, secrets.EndpointEnv)
		sm := secretsmanager.NewFromConfig(awsconfig.ForEndpoint(region, endpoint, getenv), func(o *secretsmanager.Options) {
			if endpoint != "" {
				o.BaseEndpoint = aws.String(endpoint)
			}
		})
		var err error
		if r, err = dbroles.FromSecrets(ctx, sm, arns); err != nil {
			return err
		}
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(context.Background())
	if err := dbroles.Apply(ctx, conn, r); err != nil {
		return err
	}
	fmt.Printf("roles %s (writer), %s (reader), %s (cdn) granted%s\n", r.Writer, r.Reader, r.CDN,
		map[bool]string{true: ", passwords from their secrets", false: ""}[r.WriterPassword != ""])
	return nil
}
