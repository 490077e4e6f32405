// Command grant-role gives a user a role, by ids: the way to make the first admin of a
// new deployment, whose users all start with the default role. Ids, not names: an
// admin can rename a user or a role, so a name may not be who the operator meant (the
// second security review made itself a full admin by taking the name "admin"). The
// output names both, for the operator to check.
//
//	go run ./infra/cmd/grant-role -user-id 42 -role-id 1
//
// It reads DATABASE_URL like the server. The grant is an audit record (JSON on
// stderr, actor_id 0: the operator), as the API's writes are.
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
	"github.com/mediacatalog/service/shared/config"
	"github.com/mediacatalog/service/shared/postgres"
)

func main() {
	cmdrun.Main("grant-role", func(ctx context.Context) error { return run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr) })
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("grant-role", flag.ContinueOnError)
	fs.SetOutput(stderr)
	userID := fs.Int64("user-id", 0, "id of the user (GET /admin-users lists them with their ids)")
	roleID := fs.Int64("role-id", 0, "id of the role to give them (GET /admin-roles; the demo's admin role is 1)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *userID <= 0 || *roleID <= 0 {
		return errors.New("-user-id and -role-id are required (positive ids)")
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
	g, err := db.GrantRole(ctx, *userID, *roleID)
	if err != nil {
		return fmt.Errorf("user %d, role %d: %w", *userID, *roleID, err)
	}
	audit.RecordBy(audit.CommandLogger(ctx, stderr), 0, "user.grant-role", "user", *userID,
		slog.Int64("role_id", *roleID), slog.String("role", g.RoleName), slog.String("username", g.Username),
		slog.Bool("granted", g.Granted))
	state := "now has"
	if !g.Granted {
		state = "already had"
	}
	_, err = fmt.Fprintf(stdout, "user %d %q %s the role %d %q\n", *userID, g.Username, state, *roleID, g.RoleName)
	return err
}
