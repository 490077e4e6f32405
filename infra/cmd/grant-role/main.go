// Command grant-role gives a user a role: the way to make the first admin of a new
// deployment, whose users all start with the default role. The user is named by what
// cannot be renamed or squatted: the user id, or the identity of a provider login
// (the provider's own user id, e.g. a GitHub account number). A username can be
// changed by any user editor and taken by any sign-up, so it is not accepted.
//
//	go run ./infra/cmd/grant-role -id 42 -role admin
//	go run ./infra/cmd/grant-role -provider github -subject 1234567 -role admin
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
	var to postgres.GrantTo
	fs.Int64Var(&to.UserID, "id", 0, "the user's id")
	fs.StringVar(&to.Provider, "provider", "", "a provider the user logs in with (google, discord, github), with -subject")
	fs.StringVar(&to.ProviderUserID, "subject", "", "the user's id at that provider")
	role := fs.String("role", "", "name of the role to give them, e.g. admin")
	if err := fs.Parse(args); err != nil {
		return err
	}
	byID, byProvider := to.UserID > 0, to.Provider != "" && to.ProviderUserID != ""
	if *role == "" || byID == byProvider {
		return errors.New("-role and either -id or -provider with -subject are required")
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
	granted, id, username, err := db.GrantRole(ctx, to, *role)
	if err != nil {
		return fmt.Errorf("role %q: %w", *role, err)
	}
	if !granted {
		_, err = fmt.Fprintf(stdout, "user %d (%s) already has the role %s\n", id, username, *role)
		return err
	}
	_, err = fmt.Fprintf(stdout, "user %d (%s) now has the role %s\n", id, username, *role)
	return err
}
