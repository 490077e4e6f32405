// Command token logs a user in for operators and local development: it issues a session
// through auth.Sessions.Issue, the same code as an OAuth login, and prints the
// refreshToken cookie value as its last line of output (the only line on stdout).
//
//	go run ./infra/cmd/token -user admin
//	curl -b "refreshToken=$(go run ./infra/cmd/token -user admin)" localhost:3000/admin-users
//
// It reads DATABASE_URL, DB_ENV and JWT_SECRET like the server, so the token is
// accepted by a server with the same configuration.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/mediacatalog/service/infra/cmdrun"
	"github.com/mediacatalog/service/shared/auth"
	"github.com/mediacatalog/service/shared/config"
	"github.com/mediacatalog/service/shared/postgres"
)

func main() {
	cmdrun.Main("token", func(ctx context.Context) error { return run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr) })
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("token", flag.ContinueOnError)
	fs.SetOutput(stderr)
	username := fs.String("user", "", "username of the user to log in (demo users: admin, editor, member)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *username == "" {
		return errors.New("-user is required")
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
	sessions, err := auth.NewSessions(db, cfg)
	if err != nil {
		return err
	}
	id, err := db.UserIDByUsername(ctx, *username)
	if err != nil {
		return fmt.Errorf("user %q: %w", *username, err)
	}
	t, err := sessions.Issue(ctx, id)
	if err != nil {
		return fmt.Errorf("issue a session for %q: %w", *username, err)
	}
	fmt.Fprintf(stderr, "refreshToken for %s (user %d), valid until %s; send it as the cookie refreshToken=<value>:\n",
		*username, id, t.RefreshExpires.Format("2006-01-02 15:04 MST"))
	_, err = fmt.Fprintln(stdout, t.Refresh)
	return err
}
