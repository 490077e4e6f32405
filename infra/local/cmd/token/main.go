// Command token logs a user in for operators and local development: it issues a session
// through auth.Sessions.Issue, the same code as an OAuth login, and prints the
// refreshToken cookie value as its last line of output (the only line on stdout). The
// user is given by id (names can be changed by admins; ids cannot); stderr names them.
//
//	go run ./infra/local/cmd/token -user-id 1
//	curl -b "refreshToken=$(go run ./infra/local/cmd/token -user-id 1)" localhost:3000/admin-users
//
// It reads DATABASE_URL, DB_ENV and JWT_SECRET like the server, so the token is
// accepted by a server with the same configuration. The new session is an audit record
// (JSON on stderr, actor_id 0: the operator; the session id, never the token).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/mediacatalog/service/infra/cmdrun"
	"github.com/mediacatalog/service/shared/audit"
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
	userID := fs.Int64("user-id", 0, "id of the user to log in (demo users: 1 admin, 2 editor, 3 member)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *userID <= 0 {
		return errors.New("-user-id is required (a positive id)")
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
	name, err := db.UserName(ctx, *userID)
	if err != nil {
		return fmt.Errorf("user %d: %w", *userID, err)
	}
	t, err := sessions.Issue(ctx, *userID)
	if err != nil {
		return fmt.Errorf("issue a session for user %d: %w", *userID, err)
	}
	audit.RecordBy(audit.CommandLogger(ctx, stderr), 0, "user.token", "user", *userID,
		slog.String("username", name), slog.String("session_id", t.SessionID))
	fmt.Fprintf(stderr, "refreshToken for user %d %q, valid until %s; send it as the cookie refreshToken=<value>:\n",
		*userID, name, t.RefreshExpires.Format("2006-01-02 15:04 MST"))
	_, err = fmt.Fprintln(stdout, t.Refresh)
	return err
}
