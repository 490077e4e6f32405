// Package dbroles creates the PostgreSQL roles the functions connect as (through RDS
// Proxy, which logs in with each role's password from its secret) and grants each only
// what its functions do:
//
//   - the writer (oauth, admin-*): read and write every table, use the sequences;
//   - the reader (tags, publishers): read only, the catalog (not the accounts);
//   - the cdn role: read users' ids and pictures, and read and write its invalidation
//     ledger (avatar_invalidations), nothing else.
//
// Run it as the owner of the tables (the user that runs the migrations), after the
// migrations; it is idempotent. make migrate grants again after every run (Regrant), so
// the tables a migration creates are granted whichever role ran it (the cdn role's
// grants are per table: a migration that gives cdn a new table adds it to grants).
package dbroles

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/mediacatalog/service/shared/postgres"
)

// accountTables are the accounts and sessions: the reader, whose functions serve the
// public catalog, cannot read them.
var accountTables = []string{"users", "sessions", "oauth_connections", "oauth_unlinks", "user_roles", "roles", "permissions", "role_permissions"}

// Roles names the three roles and, optionally, their passwords (empty: left as is).
type Roles struct {
	Writer, Reader, CDN                         string
	WriterPassword, ReaderPassword, CDNPassword string
}

// Defaults are the template's role names (parameters DbWriterUser, DbReaderUser, DbCdnUser).
var Defaults = Roles{Writer: "catalog_writer", Reader: "catalog_reader", CDN: "catalog_cdn"}

// Apply creates the roles that do not exist and grants their privileges on the
// connected database, in one transaction.
func Apply(ctx context.Context, conn *pgx.Conn, r Roles) error {
	return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		var db string
		if err := tx.QueryRow(ctx, "SELECT current_database()").Scan(&db); err != nil {
			return err
		}
		q := func(name string) string { return pgx.Identifier{name}.Sanitize() }
		w, rd, c := q(r.Writer), q(r.Reader), q(r.CDN)
		var stmts []string
		for _, role := range []struct{ name, password string }{{r.Writer, r.WriterPassword}, {r.Reader, r.ReaderPassword}, {r.CDN, r.CDNPassword}} {
			if role.name == "" {
				return fmt.Errorf("dbroles: a role name is empty")
			}
			var exists bool
			if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)", role.name).Scan(&exists); err != nil {
				return err
			}
			if !exists {
				stmts = append(stmts, "CREATE ROLE "+q(role.name)+" LOGIN")
			}
			if role.password != "" {
				// ALTER ROLE takes no parameters: the password is a quoted literal.
				stmts = append(stmts, "ALTER ROLE "+q(role.name)+" PASSWORD '"+strings.ReplaceAll(role.password, "'", "''")+"'")
			}
			stmts = append(stmts,
				"GRANT CONNECT ON DATABASE "+q(db)+" TO "+q(role.name),
				"GRANT USAGE ON SCHEMA public TO "+q(role.name))
			// The session defaults the pool sends at connect time elsewhere belong to
			// the role behind RDS Proxy: the pool leaves them out of the startup
			// message there (postgres.WithRDSAuth), and the role applies them.
			for _, k := range postgres.SessionDefaultNames() {
				stmts = append(stmts, "ALTER ROLE "+q(role.name)+" SET "+k+" = '"+postgres.SessionDefault(k)+"'")
			}
		}
		stmts = append(stmts, grants(w, rd, c)...)
		for _, s := range stmts {
			if _, err := tx.Exec(ctx, s); err != nil {
				return fmt.Errorf("dbroles: %s: %w", strings.SplitN(s, " PASSWORD ", 2)[0], err)
			}
		}
		return nil
	})
}

// Regrant gives the three roles, when they all exist, their privileges again on every
// table, sequence and column as the schema now stands, in one transaction; it reports
// whether it did. make migrate runs it after the migrations, so a table a migration
// creates is granted whatever role ran it (default privileges apply only to tables
// created by the role that set them). A database without the roles (a local one) is
// left alone.
func Regrant(ctx context.Context, conn *pgx.Conn, r Roles) (bool, error) {
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_roles WHERE rolname IN ($1, $2, $3)", r.Writer, r.Reader, r.CDN).Scan(&n); err != nil {
		return false, err
	}
	if n != 3 {
		return false, nil
	}
	q := func(name string) string { return pgx.Identifier{name}.Sanitize() }
	err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		for _, s := range grants(q(r.Writer), q(r.Reader), q(r.CDN)) {
			if _, err := tx.Exec(ctx, s); err != nil {
				return fmt.Errorf("dbroles: %s: %w", s, err)
			}
		}
		return nil
	})
	return err == nil, err
}

// grants are the privileges of the writer w, the reader rd and the cdn role c (quoted
// identifiers), idempotent.
func grants(w, rd, c string) []string {
	return []string{
		"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO " + w,
		"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO " + w,
		"ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO " + w,
		"ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO " + w,
		"GRANT SELECT ON ALL TABLES IN SCHEMA public TO " + rd,
		"REVOKE ALL ON " + strings.Join(accountTables, ", ") + " FROM " + rd,
		"ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT ON TABLES TO " + rd,
		"GRANT SELECT (id, profile_image) ON users TO " + c,
		"GRANT SELECT, INSERT, UPDATE ON avatar_invalidations TO " + c,
	}
}
