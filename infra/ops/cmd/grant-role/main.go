// Command grant-role gives a user a role, by ids: the way to make the first admin of a
// new deployment, whose users all start with the default role. Ids, not names: an
// admin can rename a user or a role, so a name may not be who the operator meant (an
// editor who renames itself "admin" would otherwise be made a full admin). The
// output names both, for the operator to check.
//
//	go run ./infra/ops/cmd/grant-role -user-id 42 -role-id 1
//	go run ./infra/ops/cmd/grant-role -find alice    # the ids: users whose name contains alice, and the roles
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
	"strings"

	"github.com/mediacatalog/service/infra/cmdrun"
	"github.com/mediacatalog/service/shared/audit"
	"github.com/mediacatalog/service/shared/catalog"
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
	find := fs.String("find", "", "grant nothing: list the users whose username contains this text, and every role, with their ids")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *find == "" && (*userID <= 0 || *roleID <= 0) {
		return errors.New("-user-id and -role-id are required (positive ids; -find <name> lists the ids)")
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
	if *find != "" {
		return list(ctx, db, *find, stdout)
	}
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

// findLimit bounds the users -find lists.
const findLimit = 50

// list writes the users whose username contains text (at most findLimit, by name),
// each with the id, registration time and roles, then every role with its id: what
// the operator needs to choose the ids, when no admin can read them through the API.
func list(ctx context.Context, db *postgres.DB, text string, w io.Writer) error {
	page, err := db.Users(ctx, catalog.UserQuery{Search: text, Limit: findLimit})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "users whose name contains %q (%d):\n", text, page.Total)
	for _, u := range page.Users {
		roles := make([]string, len(u.Roles))
		for i, r := range u.Roles {
			roles[i] = fmt.Sprintf("%d %q", r.ID, r.Name)
		}
		fmt.Fprintf(w, "  user %d %q registered %s, roles: %s\n", u.ID, u.Username,
			u.Registered.UTC().Format("2006-01-02 15:04 MST"), strings.Join(roles, ", "))
	}
	if page.Total > int64(len(page.Users)) {
		fmt.Fprintf(w, "  ... and %d more: narrow the text\n", page.Total-int64(len(page.Users)))
	}
	roles, err := db.Roles(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "roles:")
	for _, r := range roles {
		fmt.Fprintf(w, "  role %d %q, %d permissions, %d users\n", r.ID, r.Name, r.PermissionCount, r.UserCount)
	}
	return nil
}
