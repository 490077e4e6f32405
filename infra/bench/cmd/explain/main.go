// Command explain runs every statement of the API's routes and admin writes once (the
// reads twice: the plans of the second, warm run count) against DATABASE_URL through
// the service's own store (shared/postgres), with PostgreSQL's auto_explain logging the
// plan of each statement, the statements that triggers run included, with its actual
// rows, buffers and time. Each step is marked in the log by a statement
// `SELECT 'STEP <name>'`, so the server log reads as: step, then its statements' plans.
// docs/queries.md is the summary of one run at 1M series:
//
//	go run ./infra/local/cmd/withstack -dir .scale/1000000 -- go run ./infra/bench/cmd/explain
//	# then read .scale/1000000/postgres.log
//
// It writes to the database (a role, a user, a contributor... added, edited, deleted):
// run it on a copy. The session needs a superuser (auto_explain is loaded per session).
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mediacatalog/service/infra/cmdrun"
	"github.com/mediacatalog/service/shared/catalog"
	"github.com/mediacatalog/service/shared/postgres"
)

func main() {
	cmdrun.Main("explain", func(ctx context.Context) error { return run(ctx, os.Getenv("DATABASE_URL")) })
}

// explained loads auto_explain in each session of the pool, logging every plan.
func explained(c *pgxpool.Config) {
	for k, v := range map[string]string{
		"session_preload_libraries":             "auto_explain",
		"auto_explain.log_min_duration":         "0",
		"auto_explain.log_analyze":              "on",
		"auto_explain.log_buffers":              "on",
		"auto_explain.log_timing":               "on",
		"auto_explain.log_nested_statements":    "on",
		"auto_explain.log_triggers":             "on",
		"statement_timeout":                     "60s",
		"auto_explain.log_parameter_max_length": "200",
	} {
		c.ConnConfig.RuntimeParams[k] = v
	}
	c.MaxConns = 1 // one session: the steps' statements are logged in order
}

func run(ctx context.Context, url string) error {
	db, err := postgres.Open(ctx, url, explained)
	if err != nil {
		return err
	}
	defer db.Close()
	var f fixture
	if err := f.load(ctx, db); err != nil {
		return err
	}
	fmt.Printf("fixture: %+v\n", f)
	for _, s := range f.steps() {
		for i := range s.runs {
			if _, err := db.Pool.Exec(ctx, fmt.Sprintf(`SELECT 'STEP %s #%d'`, s.name, i+1)); err != nil {
				return err
			}
			start := time.Now()
			err := s.do(ctx, db)
			fmt.Printf("%-50s #%d %8s %v\n", s.name, i+1, time.Since(start).Round(time.Microsecond), err)
		}
	}
	return nil
}

// fixture is the ids the steps act on, found in the generated catalog.
type fixture struct {
	Client, Publisher, Tag, Contributor, User, Victim, Role, Session int64
	PublisherSlug, SessionID, UserSessionID                          string
}

func (f *fixture) load(ctx context.Context, db *postgres.DB) error {
	q := func(sql string, dst any) error { return db.Pool.QueryRow(ctx, sql).Scan(dst) }
	steps := []struct {
		sql string
		dst any
	}{
		{`SELECT client_id FROM series GROUP BY client_id ORDER BY count(*) DESC LIMIT 1`, &f.Client},
		{`SELECT id FROM publishers ORDER BY series_count DESC LIMIT 1`, &f.Publisher},
		{`SELECT slug FROM publishers ORDER BY series_count DESC LIMIT 1`, &f.PublisherSlug},
		{`SELECT tag_id FROM series_tags GROUP BY tag_id ORDER BY count(*) DESC LIMIT 1`, &f.Tag},
		{`SELECT max(id) FROM contributors`, &f.Contributor},
		{`SELECT max(id) - 1 FROM users`, &f.User},
		{`SELECT max(id) FROM users`, &f.Victim},
	}
	for _, s := range steps {
		if err := q(s.sql, s.dst); err != nil {
			return fmt.Errorf("fixture %q: %w", s.sql, err)
		}
	}
	// A role held by 1,000 users, for the deletion that moves its holders.
	if err := db.Pool.QueryRow(ctx, `INSERT INTO roles (name) VALUES ('explain-' || clock_timestamp()) RETURNING id`).Scan(&f.Role); err != nil {
		return err
	}
	if _, err := db.Pool.Exec(ctx, `INSERT INTO user_roles SELECT id, $1 FROM users ORDER BY id DESC LIMIT 1000`, f.Role); err != nil {
		return err
	}
	// A session of f.User, the one its links are made by.
	var err error
	if f.UserSessionID, err = db.CreateSession(ctx, f.User, time.Now().Add(time.Hour)); err != nil {
		return err
	}
	sid, err := db.CreateSession(ctx, 1, time.Now().Add(time.Hour))
	f.SessionID = sid
	return err
}

type step struct {
	name string
	runs int
	do   func(context.Context, *postgres.DB) error
}

func (f fixture) steps() []step {
	read := func(name string, do func(context.Context, *postgres.DB) error) step { return step{name, 2, do} }
	write := func(name string, do func(context.Context, *postgres.DB) error) step { return step{name, 1, do} }
	ignore := func(_ any, err error) error { return err }
	last := "Explained"
	return []step{
		read("auth: SessionUser", func(ctx context.Context, db *postgres.DB) error { return ignore(db.SessionUser(ctx, 1, f.SessionID)) }),
		read("GET /tags", func(ctx context.Context, db *postgres.DB) error { return ignore(db.Tags(ctx, f.Client)) }),
		read("GET /tags/id/{id}", func(ctx context.Context, db *postgres.DB) error { return ignore(db.TagByID(ctx, f.Tag)) }),
		read("GET /publishers", func(ctx context.Context, db *postgres.DB) error {
			return ignore(db.Publishers(ctx, catalog.PublisherFilter{Client: f.Client, Order: "name-asc", Limit: 20}))
		}),
		read("GET /publishers search", func(ctx context.Context, db *postgres.DB) error {
			return ignore(db.Publishers(ctx, catalog.PublisherFilter{Client: f.Client, Search: "ko", Order: "name-asc", Limit: 20}))
		}),
		read("GET /publisher/slug/{slug}", func(ctx context.Context, db *postgres.DB) error {
			return ignore(db.PublisherBySlug(ctx, f.PublisherSlug))
		}),
		read("GET /publisher/random", func(ctx context.Context, db *postgres.DB) error { return ignore(db.RandomPublisherSlug(ctx, f.Client)) }),
		read("GET /publisher/publications/{id}", func(ctx context.Context, db *postgres.DB) error {
			return ignore(db.PublisherPublications(ctx, catalog.PublicationFilter{Publisher: f.Publisher, Client: f.Client, Order: "name-asc", Limit: 20}))
		}),
		read("GET /publisher/publications/{id} search", func(ctx context.Context, db *postgres.DB) error {
			return ignore(db.PublisherPublications(ctx, catalog.PublicationFilter{Publisher: f.Publisher, Client: f.Client, Search: "a", Order: "name-asc", Limit: 20}))
		}),
		read("GET /admin-contributors", func(ctx context.Context, db *postgres.DB) error {
			return ignore(db.Contributors(ctx, catalog.ContributorQuery{Client: f.Client, Limit: 20}))
		}),
		read("GET /admin-contributors search", func(ctx context.Context, db *postgres.DB) error {
			return ignore(db.Contributors(ctx, catalog.ContributorQuery{Client: f.Client, Search: "ta", Limit: 20}))
		}),
		read("GET /admin-contributors/id/{id}", func(ctx context.Context, db *postgres.DB) error {
			return ignore(db.Contributor(ctx, f.Contributor, catalog.LockRequest{}))
		}),
		read("GET /admin-users", func(ctx context.Context, db *postgres.DB) error {
			return ignore(db.Users(ctx, catalog.UserQuery{Limit: 20}))
		}),
		read("GET /admin-users search", func(ctx context.Context, db *postgres.DB) error {
			return ignore(db.Users(ctx, catalog.UserQuery{Search: "reader", Limit: 20}))
		}),
		read("GET /admin-users role filter", func(ctx context.Context, db *postgres.DB) error {
			return ignore(db.Users(ctx, catalog.UserQuery{Role: 2, Limit: 20}))
		}),
		read("GET /admin-users/id/{id}", func(ctx context.Context, db *postgres.DB) error {
			return ignore(db.User(ctx, f.User, catalog.LockRequest{}))
		}),
		read("GET /admin-roles", func(ctx context.Context, db *postgres.DB) error { return ignore(db.Roles(ctx)) }),
		read("GET /admin-roles/id/{id}", func(ctx context.Context, db *postgres.DB) error { return ignore(db.Role(ctx, 3)) }),
		read("GET /admin-permissions", func(ctx context.Context, db *postgres.DB) error { return ignore(db.Permissions(ctx)) }),
		read("GET /admin-permissions/id/{id}", func(ctx context.Context, db *postgres.DB) error { return ignore(db.Permission(ctx, 1)) }),
		read("GET /auth/oauth/connections", func(ctx context.Context, db *postgres.DB) error { return ignore(db.Connections(ctx, f.User)) }),
		read("GET /user/avatar/{id}", func(ctx context.Context, db *postgres.DB) error { return ignore(db.UserImage(ctx, f.User)) }),

		write("OAuth sign-up", func(ctx context.Context, db *postgres.DB) error {
			return ignore(db.OAuthLogin(ctx, catalog.ProviderAccount{Provider: "github", ProviderUserID: "explain-" + time.Now().Format("150405.000"),
				Username: "Reader", UsernameBase: "reader"}))
		}),
		write("OAuth login (linked)", func(ctx context.Context, db *postgres.DB) error {
			return ignore(db.OAuthLogin(ctx, catalog.ProviderAccount{Provider: "github", ProviderUserID: "explain-linked", Username: "Reader", UsernameBase: "reader"}))
		}),
		write("GET /auth/oauth/link callback", func(ctx context.Context, db *postgres.DB) error {
			return db.LinkProvider(ctx, f.User, f.UserSessionID, catalog.ProviderAccount{Provider: "discord", ProviderUserID: "explain-" + time.Now().Format("150405.000"), Username: "x"})
		}),
		write("DELETE /auth/oauth/unlink/{provider}", func(ctx context.Context, db *postgres.DB) error {
			return db.UnlinkProvider(ctx, f.User, f.UserSessionID, "discord")
		}),
		write("POST /admin-roles/add", func(ctx context.Context, db *postgres.DB) error {
			return ignore(db.AddRole(ctx, catalog.NewRole{Name: "explain-added-" + time.Now().Format("150405.000")}))
		}),
		write("POST /admin-roles/edit/{id}", func(ctx context.Context, db *postgres.DB) error {
			return ignore(db.EditRole(ctx, f.Role, 1, catalog.RoleEdit{Name: "explain-renamed-" + time.Now().Format("150405.000"), AddedPermissions: []int64{1}}))
		}),
		write("POST /admin-roles/edit/{id} remove", func(ctx context.Context, db *postgres.DB) error {
			return ignore(db.EditRole(ctx, f.Role, 1, catalog.RoleEdit{Name: "explain-renamed2-" + time.Now().Format("150405.000"), RemovedPermissions: []int64{1}}))
		}),
		write("POST /admin-users/edit/{id}", func(ctx context.Context, db *postgres.DB) error {
			return ignore(db.EditUser(ctx, f.User, 1, catalog.UserEdit{Username: "explain-" + time.Now().Format("150405.000"), AddedRoles: []int64{2}}))
		}),
		write("POST /admin-users/logout/{id}", func(ctx context.Context, db *postgres.DB) error { return ignore(db.LogoutUser(ctx, f.User, 1)) }),
		write("POST /admin-users/update-image/{id}", func(ctx context.Context, db *postgres.DB) error {
			return ignore(db.SetUserImage(ctx, f.User, "user/explain"))
		}),
		write("DELETE /admin-users/delete-image/{id}", func(ctx context.Context, db *postgres.DB) error { return ignore(db.ClearUserImage(ctx, f.User)) }),
		write("DELETE /admin-users/delete/{id}", func(ctx context.Context, db *postgres.DB) error { return db.DeleteUser(ctx, f.Victim, 1) }),
		write("DELETE /admin-roles/delete/{id}", func(ctx context.Context, db *postgres.DB) error { return ignore(db.DeleteRole(ctx, f.Role, 1)) }),
		write("POST /admin-permissions/add", func(ctx context.Context, db *postgres.DB) error {
			return ignore(db.AddPermission(ctx, catalog.PermissionInput{Name: "explain-" + time.Now().Format("150405.000"), Description: "d"}))
		}),
		write("POST /admin-permissions/edit/{id}", func(ctx context.Context, db *postgres.DB) error {
			return ignore(db.EditPermission(ctx, 1, catalog.PermissionInput{Name: "view-users", Description: last}))
		}),
		write("DELETE /admin-permissions/delete/{id}", func(ctx context.Context, db *postgres.DB) error {
			var id int64
			if err := db.Pool.QueryRow(ctx, `SELECT max(id) FROM permissions WHERE key IS NULL`).Scan(&id); err != nil {
				return err
			}
			return db.DeletePermission(ctx, id)
		}),
		write("POST /admin-contributors/add", func(ctx context.Context, db *postgres.DB) error {
			return ignore(db.AddContributor(ctx, catalog.NewContributor{Client: f.Client, FirstName: "Explain", Slug: "explain"}))
		}),
		write("POST /admin-contributors/edit/{id}", func(ctx context.Context, db *postgres.DB) error {
			return db.EditContributor(ctx, f.Contributor, 1, catalog.ContributorEdit{FirstName: "Explained", Public: true, Links: []string{"https://example.com"}})
		}),
		write("POST /admin-contributors/update-avatar/{id}", func(ctx context.Context, db *postgres.DB) error {
			return ignore(db.SetContributorImage(ctx, f.Contributor, "contributor/explain"))
		}),
		write("DELETE /admin-contributors/delete/{id}", func(ctx context.Context, db *postgres.DB) error {
			return ignore(db.DeleteContributor(ctx, f.Contributor))
		}),
		write("make grant-role", func(ctx context.Context, db *postgres.DB) error { return ignore(db.GrantRole(ctx, f.User, 2)) }),
	}
}
