package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/mediacatalog/service/infra/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func TestGrantRole(t *testing.T) {
	ctx := context.Background()
	db := testenv.NewDemoDB(t)
	getenv := func(k string) string { return map[string]string{"DATABASE_URL": db.URL}[k] }
	tests := []struct {
		args    []string
		want    string
		wantErr string
	}{
		{[]string{"-user", "member", "-role", "admin"}, "member now has the role admin", ""},
		{[]string{"-user", "member", "-role", "admin"}, "member already has the role admin", ""},
		{[]string{"-user", "ghost", "-role", "admin"}, "", "User not found"},
		{[]string{"-user", "member", "-role", "overlord"}, "", "Role not found"},
		{[]string{"-user", "member"}, "", "-user and -role are required"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(ctx, tt.args, getenv, &stdout, &stderr)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || strings.TrimSpace(stdout.String()) != tt.want {
				t.Fatalf("output %q, error %v; want %q", stdout.String(), err, tt.want)
			}
		})
	}
	var n int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM user_roles WHERE user_id = 3 AND role_id = 1`).Scan(&n); err != nil || n != 1 {
		t.Errorf("member holds admin %d times (%v), want once", n, err)
	}
}
