package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mediacatalog/service/infra/tests/testenv"
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
		{[]string{"-user-id", "1"}, "", auth.PermDeleteRoles},
		{[]string{"-user-id", "2"}, "", auth.PermEditUsers},
		{[]string{"-user-id", "999"}, "User not found", ""},
		{[]string{"-user", "admin"}, "flag provided but not defined: -user", ""},
		{nil, "-user-id is required", ""},
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
			// The session is on the record, without the token.
			want := fmt.Sprintf(`"actor_id":0,"action":"user.token","target":{"kind":"user","id":%s},"changes":{"username":%q,"session_id":%q}`,
				tt.args[1], p.Username, p.SessionID)
			if !strings.Contains(stderr.String(), want) || strings.Contains(stderr.String(), lines[0]) {
				t.Errorf("stderr %s, want an audit record with %s and no token", stderr.String(), want)
			}
		})
	}
}
