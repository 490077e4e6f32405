package localservices

import (
	"context"
	"net/url"

	"github.com/jackc/pgx/v5"
)

// WithDatabase is the URL of a PostgreSQL server (such as the one Postgres starts) with
// another database named: tests and benchmarks make databases of their own on it.
func WithDatabase(server, name string) string {
	u, err := url.Parse(server)
	if err != nil {
		return server
	}
	u.Path = "/" + name
	return u.String()
}

// AdminExec runs one statement on the server on a connection of its own, outside any
// transaction, as CREATE DATABASE and DROP DATABASE need.
func AdminExec(ctx context.Context, server, sql string) error {
	conn, err := pgx.Connect(ctx, server)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}
