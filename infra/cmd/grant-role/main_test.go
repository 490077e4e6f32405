package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/mediacatalog/service/infra/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// TestGrantRole: the user is named by id or by a provider identity, never by a
// username (which an editor can rename and a sign-up can take).
func TestGrantRole(t *testing.T) {
	ctx := context.Background()
	db := testenv.NewDemoDB(t)
	if _, err := db.Pool.Exec(ctx, `
		INSERT INTO oauth_connections (user_id, provider, provider_user_id, provider_username) VALUES (2, 'github', '1234567', 'ed');
		INSERT INTO users (slug, username) VALUES ('squatter', 'first-admin')`); err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string { return map[string]string{"DATABASE_URL": db.URL}[k] }
	tests := []struct {
		args    []string
		want    string
		wantErr string
	}{
		{[]string{"-id", "3", "-role", "admin"}, "user 3 (member) now has the role admin", ""},
		{[]string{"-id", "3", "-role", "admin"}, "user 3 (member) already has the role admin", ""},
		{[]string{"-provider", "github", "-subject", "1234567", "-role", "admin"}, "user 2 (editor) now has the role admin", ""},
		{[]string{"-provider", "google", "-subject", "1234567", "-role", "admin"}, "", "User not found"},
		{[]string{"-id", "999", "-role", "admin"}, "", "User not found"},
		{[]string{"-id", "3", "-role", "overlord"}, "", "Role not found"},
		{[]string{"-user", "first-admin", "-role", "admin"}, "", "flag provided but not defined: -user"},
		{[]string{"-id", "3", "-provider", "github", "-subject", "1", "-role", "admin"}, "", "either -id or -provider"},
		{[]string{"-role", "admin"}, "", "either -id or -provider"},
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
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM user_roles WHERE role_id = 1 AND user_id IN (2, 3)`).Scan(&n); err != nil || n != 2 {
		t.Errorf("admin granted %d times (%v), want to users 2 and 3", n, err)
	}
}
