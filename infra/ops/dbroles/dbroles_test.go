package dbroles_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mediacatalog/service/infra/local/demo"
	"github.com/mediacatalog/service/infra/local/localservices"
	"github.com/mediacatalog/service/infra/ops/dbroles"
	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/catalog"
	"github.com/mediacatalog/service/shared/postgres"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// applyRoles creates the three roles under names of this test's own (the cluster is
// shared) with dbroles.Apply, times times, and drops them when the test ends.
func applyRoles(t *testing.T, db *testenv.DB, times int) dbroles.Roles {
	t.Helper()
	ctx := context.Background()
	suffix := fmt.Sprintf("_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9)
	roles := dbroles.Roles{Writer: "t_writer" + suffix, Reader: "t_reader" + suffix, CDN: "t_cdn" + suffix,
		WriterPassword: "w-pass'word", ReaderPassword: "r-password", CDNPassword: "c-password"}
	owner, err := pgx.Connect(ctx, db.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close(ctx)
	t.Cleanup(func() {
		for _, r := range []string{roles.Writer, roles.Reader, roles.CDN} {
			id := pgx.Identifier{r}.Sanitize()
			c, err := pgx.Connect(context.Background(), db.URL)
			if err != nil {
				return
			}
			_, _ = c.Exec(context.Background(), "DROP OWNED BY "+id)
			_, _ = c.Exec(context.Background(), "DROP ROLE IF EXISTS "+id)
			c.Close(context.Background())
		}
	})
	for range times {
		if err := dbroles.Apply(ctx, owner, roles); err != nil {
			t.Fatal(err)
		}
	}
	return roles
}

// TestBehindTransactionPooler: the writer behind PgBouncer in transaction mode, as the
// functions are behind RDS Proxy (and make bench-scale measures them): the session
// defaults come from the role, the stores' queries and transactions work in the pool's
// mode, and a client's new connection is served by a database connection that already
// served another client (no new backend).
func TestBehindTransactionPooler(t *testing.T) {
	ctx := context.Background()
	db := testenv.NewDemoDB(t)
	roles := applyRoles(t, db, 1)
	pooler, err := localservices.StartPooler(ctx, localservices.Options{Ephemeral: true}, db.URL, roles.Writer)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := pooler.Stop(); err != nil {
			t.Error(err)
		}
	})
	pdb, err := postgres.Open(ctx, pooler.Endpoint, postgres.WithTransactionPooler(), postgres.WithMaxConns(2))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pdb.Close)

	var user, timeout, planMode string
	if err := pdb.Pool.QueryRow(ctx, `SELECT current_user, current_setting('statement_timeout'), current_setting('plan_cache_mode')`).
		Scan(&user, &timeout, &planMode); err != nil {
		t.Fatal(err)
	}
	if user != roles.Writer || timeout != "5s" || planMode != "force_custom_plan" {
		t.Errorf("user %s, statement_timeout %s, plan_cache_mode %s; want %s, 5s, force_custom_plan from the role",
			user, timeout, planMode, roles.Writer)
	}
	for range 2 { // the second time from the pool's description cache
		if tags, err := pdb.Tags(ctx, 1); err != nil || len(tags) == 0 {
			t.Fatalf("tags: %d, %v", len(tags), err)
		}
		page, err := pdb.Contributors(ctx, catalog.ContributorQuery{Client: 1, Search: "ta", Limit: 5})
		if err != nil || page.Total == 0 {
			t.Fatalf("contributors: %+v, %v", page, err)
		}
	}
	id, err := pdb.AddContributor(ctx, catalog.NewContributor{Client: 1, FirstName: "Pooled", Slug: "pooled"})
	if err != nil {
		t.Fatalf("add contributor (a transaction): %v", err)
	}
	if _, err := pdb.DeleteContributor(ctx, id); err != nil {
		t.Fatalf("delete contributor: %v", err)
	}

	backend := func() int32 {
		t.Helper()
		conn, err := pgx.Connect(ctx, pooler.Endpoint)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		var pid int32
		if err := conn.QueryRow(ctx, "SELECT pg_backend_pid()", pgx.QueryExecModeSimpleProtocol).Scan(&pid); err != nil {
			t.Fatal(err)
		}
		return pid
	}
	pdb.Close() // its connections out of the way: the pooler has idle backends only
	if first, second := backend(), backend(); first != second {
		t.Errorf("two new client connections got backends %d and %d, want one kept warm", first, second)
	}
}

// TestRoles: each role can do what its functions do and nothing more: the reader
// reads, the cdn role reads pictures and keeps its ledger, the writer writes.
func TestRoles(t *testing.T) {
	ctx := context.Background()
	db := testenv.NewDemoDB(t)
	roles := applyRoles(t, db, 2) // twice: idempotent
	as := func(role, password string) *postgres.DB {
		t.Helper()
		pdb, err := postgres.Open(ctx, db.URL, func(c *pgxpool.Config) { c.ConnConfig.User, c.ConnConfig.Password = role, password })
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pdb.Close)
		return pdb
	}
	reader, cdn, writer := as(roles.Reader, roles.ReaderPassword), as(roles.CDN, roles.CDNPassword), as(roles.Writer, roles.WriterPassword)

	// Behind RDS Proxy the pool sends no session defaults (WithRDSAuth drops them): the
	// roles carry them.
	for _, role := range []dbroles.Roles{{Writer: roles.Writer, WriterPassword: roles.WriterPassword}, {Writer: roles.Reader, WriterPassword: roles.ReaderPassword}, {Writer: roles.CDN, WriterPassword: roles.CDNPassword}} {
		pdb, err := postgres.Open(ctx, db.URL, func(c *pgxpool.Config) {
			c.ConnConfig.User, c.ConnConfig.Password = role.Writer, role.WriterPassword
		}, postgres.WithTransactionPooler())
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range postgres.SessionDefaultNames() {
			var got, want string
			if err := pdb.Pool.QueryRow(ctx, "SELECT current_setting($1), $2::text", k, postgres.SessionDefault(k)).Scan(&got, &want); err != nil {
				t.Fatal(err)
			}
			if k == "statement_timeout" {
				want = "5s" // PostgreSQL shows the milliseconds in the largest whole unit
			}
			if got != want {
				t.Errorf("%s: %s = %q without startup parameters, want %q from the role", role.Writer, k, got, want)
			}
		}
		pdb.Close()
	}

	// What the functions do, as their roles.
	if tags, err := reader.Tags(ctx, 1); err != nil || len(tags) == 0 {
		t.Errorf("reader: tags %d, %v", len(tags), err)
	}
	if _, err := reader.Publishers(ctx, catalog.PublisherFilter{Client: 1, Limit: 5}); err != nil {
		t.Errorf("reader: publishers: %v", err)
	}
	if _, err := db.SetUserImage(ctx, demo.MemberUserID, "users/3/abc-def.jpg"); err != nil {
		t.Fatal(err)
	}
	if _, err := cdn.UserImage(ctx, demo.MemberUserID); err != nil {
		t.Errorf("cdn: user image: %v", err)
	}
	if claimed, err := cdn.ClaimAvatarInvalidation(ctx, demo.MemberUserID); err != nil || !claimed {
		t.Errorf("cdn: claim %v, %v", claimed, err)
	}
	if err := cdn.RetryAvatarInvalidation(ctx, demo.MemberUserID); err != nil {
		t.Errorf("cdn: retry: %v", err)
	}

	tests := []struct {
		name    string
		db      *postgres.DB
		sql     string
		allowed bool
	}{
		{"reader reads the catalog", reader, "SELECT count(*) FROM series", true},
		{"reader cannot read accounts", reader, "SELECT count(*) FROM users", false},
		{"reader cannot read sessions", reader, "SELECT count(*) FROM sessions", false},
		{"reader cannot read unlinked provider accounts", reader, "SELECT count(*) FROM oauth_unlinks", false},
		{"reader cannot insert", reader, "INSERT INTO clients (id, name) VALUES (9001, 'x')", false},
		{"reader cannot update", reader, "UPDATE tags SET name = name", false},
		{"reader cannot delete", reader, "DELETE FROM sessions", false},
		{"reader cannot write the ledger", reader, "INSERT INTO avatar_invalidations (user_id, ref) VALUES (9001, '')", false},
		{"cdn reads pictures", cdn, "SELECT id, profile_image FROM users", true},
		{"cdn cannot read other columns", cdn, "SELECT username FROM users", false},
		{"cdn cannot read sessions", cdn, "SELECT count(*) FROM sessions", false},
		{"cdn cannot change users", cdn, "UPDATE users SET profile_image = NULL", false},
		{"cdn cannot delete its ledger", cdn, "DELETE FROM avatar_invalidations", false},
		{"writer writes", writer, "INSERT INTO clients (id, name) VALUES (9002, 'x')", true},
		{"writer uses identities", writer, "INSERT INTO roles (name) VALUES ('t-role')", true},
		{"writer deletes", writer, "DELETE FROM sessions WHERE false", true},
		// Writes whose triggers keep the lists' totals and search texts (migrations
		// 00008, 00015, 00017) in tables and columns of their own.
		{"writer adds a contributor", writer, "INSERT INTO contributors (client_id, first_name, slug) VALUES (1, 'Role Test', 'role-test')", true},
		{"writer renames a contributor", writer, "UPDATE contributors SET first_name = 'Role Tested' WHERE slug = 'role-test'", true},
		{"writer removes a contributor", writer, "DELETE FROM contributors WHERE slug = 'role-test'", true},
		{"writer renames a user", writer, "UPDATE users SET username = username || '_' WHERE id = 3", true},
		{"writer cannot change the schema", writer, "CREATE TABLE t_x (id int)", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.db.Pool.Exec(ctx, tc.sql)
			var pgErr *pgconn.PgError
			denied := errors.As(err, &pgErr) && pgErr.Code == "42501"
			switch {
			case tc.allowed && err != nil:
				t.Errorf("%s: %v", tc.sql, err)
			case !tc.allowed && !denied:
				t.Errorf("%s: %v, want permission denied", tc.sql, err)
			}
		})
	}
}

// TestRegrant: a table that a migration creates as another role than the one that ran
// make db-roles gets no privileges from its default privileges; the grants that make
// migrate runs after the migrations (Regrant) give the writer and the reader theirs.
// Without the roles, Regrant does nothing.
func TestRegrant(t *testing.T) {
	ctx := context.Background()
	db := testenv.NewDB(t)
	owner, err := pgx.Connect(ctx, db.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close(ctx)
	absent := dbroles.Roles{Writer: "no_such_writer", Reader: "no_such_reader", CDN: "no_such_cdn"}
	if did, err := dbroles.Regrant(ctx, owner, absent); err != nil || did {
		t.Fatalf("without the roles: granted %v, %v", did, err)
	}
	roles := applyRoles(t, db, 1)
	migrator := "t_migrator" + roles.Writer[len("t_writer"):]
	for _, s := range []string{
		"CREATE ROLE " + migrator,
		"GRANT CREATE ON SCHEMA public TO " + migrator,
		"SET ROLE " + migrator,
		"CREATE TABLE regrant_probe (id bigint PRIMARY KEY)",
		"RESET ROLE",
	} {
		if _, err := owner.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), db.URL)
		if err == nil {
			_, _ = c.Exec(context.Background(), "DROP TABLE IF EXISTS regrant_probe")
			_, _ = c.Exec(context.Background(), "DROP OWNED BY "+migrator)
			_, _ = c.Exec(context.Background(), "DROP ROLE IF EXISTS "+migrator)
			c.Close(context.Background())
		}
	})
	can := func(role, priv string) bool {
		var ok bool
		if err := owner.QueryRow(ctx, "SELECT has_table_privilege($1, 'regrant_probe', $2)", role, priv).Scan(&ok); err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if can(roles.Writer, "INSERT") {
		t.Fatal("the writer could write a table another role created before the regrant: the test shows nothing")
	}
	// The owner of the new table grants on it (make migrate runs as the tables' owner).
	if _, err := owner.Exec(ctx, "GRANT "+migrator+" TO CURRENT_USER"); err != nil {
		t.Fatal(err)
	}
	if did, err := dbroles.Regrant(ctx, owner, roles); err != nil || !did {
		t.Fatalf("regrant: %v %v", did, err)
	}
	if !can(roles.Writer, "INSERT") || !can(roles.Reader, "SELECT") || can(roles.Reader, "INSERT") || can(roles.CDN, "SELECT") {
		t.Errorf("after the regrant: writer insert %v, reader select %v, reader insert %v, cdn select %v",
			can(roles.Writer, "INSERT"), can(roles.Reader, "SELECT"), can(roles.Reader, "INSERT"), can(roles.CDN, "SELECT"))
	}
}
