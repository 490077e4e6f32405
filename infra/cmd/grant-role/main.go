// Command grant-role gives a user a role, by names: the way to make the first admin of
// a new deployment, whose users all start with the default role.
//
//	go run ./infra/cmd/grant-role -user alice -role admin
//
// It reads DATABASE_URL like the server.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/mediacatalog/service/infra/cmdrun"
	"github.com/mediacatalog/service/shared/config"
	"github.com/mediacatalog/service/shared/postgres"
)

func main() {
	cmdrun.Main("grant-role", func(ctx context.Context) error { return run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr) })
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("grant-role", flag.ContinueOnError)
	fs.SetOutput(stderr)
	username := fs.String("user", "", "username of the user")
	role := fs.String("role", "", "name of the role to give them, e.g. admin")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *username == "" || *role == "" {
		return errors.New("-user and -role are required")
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
	granted, err := db.GrantRoleByName(ctx, *username, *role)
	if err != nil {
		return fmt.Errorf("user %q, role %q: %w", *username, *role, err)
	}
	if !granted {
		_, err = fmt.Fprintf(stdout, "%s already has the role %s\n", *username, *role)
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s now has the role %s\n", *username, *role)
	return err
}
