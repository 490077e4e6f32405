package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mediacatalog/service/infra/testenv"
	"github.com/mediacatalog/service/shared/auth"
	"github.com/mediacatalog/service/shared/config"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func TestToken(t *testing.T) {
	ctx := context.Background()
	db := testenv.NewDemoDB(t)
	env := map[string]string{"DATABASE_URL": db.URL, "DB_ENV": "local"}
	getenv := func(k string) string { return env[k] }
	cfg, err := config.Load(getenv)
	if err != nil {
		t.Fatal(err)
	}
	server := testenv.NewSessions(t, db, cfg)

	tests := []struct {
		args    []string
		wantErr string
		perm    string // a permission the user has
	}{
		{[]string{"-user", "admin"}, "", auth.PermDeleteRoles},
		{[]string{"-user", "Editor"}, "", auth.PermEditUsers},
		{[]string{"-user", "nobody"}, "User not found", ""},
		{nil, "-user is required", ""},
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
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
			if len(lines) != 1 {
				t.Fatalf("stdout %q, want one line", stdout.String())
			}
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.AddCookie(&http.Cookie{Name: auth.RefreshCookie, Value: lines[len(lines)-1]})
			p, err := server.Authenticate(r)
			if err != nil {
				t.Fatalf("the server refuses the printed token: %v", err)
			}
			if !p.Has(tt.perm) {
				t.Errorf("principal %+v lacks %s", p, tt.perm)
			}
		})
	}
}
