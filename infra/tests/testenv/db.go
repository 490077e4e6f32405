package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/mediacatalog/service/infra/local/localservices"
	"github.com/mediacatalog/service/shared/postgres"
	"github.com/mediacatalog/service/shared/postgres/migrate"
)

var (
	templateOnce sync.Once
	templateName string
	templateErr  error
)

// DB is a fresh, migrated database of the test's own, dropped when the test ends.
type DB struct {
	*postgres.DB
	URL  string
	Name string
}

// NewDB creates a database for the test from a migrated template (migrated once per
// test process), opens a pool on it with the given options, and drops it at cleanup.
func NewDB(t testing.TB, opts ...postgres.Option) *DB {
	t.Helper()
	ctx := context.Background()
	server := DatabaseURL(t)
	templateOnce.Do(func() { templateName, templateErr = migrateTemplate(ctx, server) })
	if templateErr != nil {
		t.Fatalf("testenv: migrate template database: %v", templateErr)
	}
	name := "t_" + randomHex(6)
	if err := localservices.AdminExec(ctx, server, fmt.Sprintf("CREATE DATABASE %s TEMPLATE %s", name, templateName)); err != nil {
		t.Fatalf("testenv: create database: %v", err)
	}
	dbURL := localservices.WithDatabase(server, name)
	db, err := postgres.Open(ctx, dbURL, opts...)
	if err != nil {
		t.Fatalf("testenv: open database: %v", err)
	}
	t.Cleanup(func() {
		db.Close()
		_ = localservices.AdminExec(context.Background(), server, fmt.Sprintf("DROP DATABASE IF EXISTS %s WITH (FORCE)", name))
	})
	return &DB{DB: db, URL: dbURL, Name: name}
}

// NewEmptyDB creates an empty database (no migration applied) for the test and drops
// it at cleanup; it returns its URL. Tests of the migrations start from it.
func NewEmptyDB(t testing.TB) string {
	t.Helper()
	ctx := context.Background()
	server := DatabaseURL(t)
	name := "e_" + randomHex(6)
	if err := localservices.AdminExec(ctx, server, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("testenv: create database: %v", err)
	}
	t.Cleanup(func() {
		_ = localservices.AdminExec(context.Background(), server, fmt.Sprintf("DROP DATABASE IF EXISTS %s WITH (FORCE)", name))
	})
	return localservices.WithDatabase(server, name)
}

func migrateTemplate(ctx context.Context, server string) (string, error) {
	name := fmt.Sprintf("tmpl_%d_%s", os.Getpid(), randomHex(4))
	if err := localservices.AdminExec(ctx, server, "CREATE DATABASE "+name); err != nil {
		return "", err
	}
	if err := migrate.Up(ctx, localservices.WithDatabase(server, name), nil); err != nil {
		return "", err
	}
	// No connection may stay on a template while databases are copied from it.
	return name, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
