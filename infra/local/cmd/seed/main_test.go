package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/mediacatalog/service/infra/tests/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func TestRun(t *testing.T) {
	db := testenv.NewDB(t)
	env := func(name string) string {
		if name == "DATABASE_URL" {
			return db.URL
		}
		return ""
	}
	ctx := context.Background()
	count := func(sql string) int64 {
		var n int64
		if err := db.Pool.QueryRow(ctx, sql).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	// Twice each: the second run changes nothing.
	for i := range 2 {
		var out bytes.Buffer
		if err := run(ctx, nil, env, &out); err != nil {
			t.Fatalf("run #%d: %v", i+1, err)
		}
		if !strings.Contains(out.String(), "demo data loaded") {
			t.Errorf("output %q", out.String())
		}
		if n := count(`SELECT count(*) FROM series WHERE client_id = 1`); n != 60 {
			t.Errorf("%d demo series", n)
		}
		if n := count(`SELECT count(*) FROM series WHERE client_id <> 1`); n != 0 {
			t.Errorf("%d generated series without -scale", n)
		}
	}
	for i := range 2 {
		var out bytes.Buffer
		if err := run(ctx, []string{"-scale", "120", "-client", "7"}, env, &out); err != nil {
			t.Fatalf("run -scale #%d: %v", i+1, err)
		}
		if !strings.Contains(out.String(), "client 7: 120 series") {
			t.Errorf("output %q", out.String())
		}
		if n := count(`SELECT count(*) FROM series WHERE client_id = 7`); n != 120 {
			t.Errorf("%d generated series", n)
		}
	}

	bad := []struct {
		name string
		args []string
		env  func(string) string
	}{
		{"negative scale", []string{"-scale", "-1"}, env},
		{"client zero", []string{"-scale", "10", "-client", "0"}, env},
		{"generating into the demo client", []string{"-scale", "10", "-client", "1"}, env},
		{"unknown flag", []string{"-bogus"}, env},
		{"no database", nil, func(string) string { return "" }},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			if err := run(ctx, tc.args, tc.env, &bytes.Buffer{}); err == nil {
				t.Error("run succeeded")
			}
		})
	}
}
