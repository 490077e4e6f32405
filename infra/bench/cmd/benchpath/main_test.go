package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestDatabaseOf(t *testing.T) {
	for _, tc := range []struct {
		name, log, want string
	}{
		{"a make run server's log", "s3: S3 (gofakes3, in this process) at http://127.0.0.1:44629, bucket media-catalog-images\n" +
			"postgres: PostgreSQL 15 (pid 919) at postgres://postgres@127.0.0.1:54329/postgres?sslmode=disable, data in /tmp/x/postgres, log in /tmp/x/postgres.log\n" +
			"ready: http://localhost:3801 (Ctrl-C stops everything)\n",
			"postgres://postgres@127.0.0.1:54329/postgres?sslmode=disable"},
		{"the address at the line's end", "postgres at postgresql://app@[::1]:5432/catalog\n", "postgresql://app@[::1]:5432/catalog"},
		{"the first of two", "at postgres://a@h:1/d, then postgres://b@h:2/d\n", "postgres://a@h:1/d"},
		{"none", "ready: http://localhost:3801\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "server.log")
			if err := os.WriteFile(path, []byte(tc.log), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := databaseOf(path)
			if tc.want == "" {
				if err == nil {
					t.Fatalf("databaseOf = %q, want an error", got)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("databaseOf = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
