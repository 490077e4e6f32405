package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mediacatalog/service/infra/tests/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// TestGrantRole: the command finds the user and the role by id, whatever they are
// named (an editor renamed itself "admin"), says who and what by name, and
// records the grant.
func TestGrantRole(t *testing.T) {
	ctx := context.Background()
	db := testenv.NewDemoDB(t)
	// An editor who took the name "admin" after renaming the real admin (user 1).
	db.Exec(t, `UPDATE users SET username = 'admin-old' WHERE id = 1`)
	db.Exec(t, `UPDATE users SET username = 'admin' WHERE id = 2`)
	getenv := func(k string) string { return map[string]string{"DATABASE_URL": db.URL}[k] }
	tests := []struct {
		args    []string
		want    string
		wantErr string
		record  string // a substring of the audit record on stderr
	}{
		{[]string{"-user-id", "3", "-role-id", "1"}, `user 3 "member" now has the role 1 "admin"`, "",
			`"level":"AUDIT","msg":"audit","actor_id":0,"action":"user.grant-role","target":{"kind":"user","id":3},"changes":{"role_id":1,"role":"admin","username":"member","granted":true}`},
		{[]string{"-user-id", "3", "-role-id", "1"}, `user 3 "member" already had the role 1 "admin"`, "", `"granted":false`},
		{[]string{"-user-id", "999", "-role-id", "1"}, "", "User not found", ""},
		{[]string{"-user-id", "3", "-role-id", "999"}, "", "Role not found", ""},
		{[]string{"-user", "admin", "-role", "admin"}, "", "flag provided but not defined: -user", ""},
		{[]string{"-user-id", "3"}, "", "-user-id and -role-id are required", ""},
		{[]string{"-user-id", "-3", "-role-id", "1"}, "", "-user-id and -role-id are required", ""},
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
			if !strings.Contains(stderr.String(), tt.record) || !json.Valid(bytes.TrimSpace(stderr.Bytes())) {
				t.Errorf("stderr %s, want a JSON audit record with %s", stderr.String(), tt.record)
			}
		})
	}
	// -find shows the ids, grants nothing.
	var stdout bytes.Buffer
	if err := run(ctx, []string{"-find", "ADMIN"}, getenv, &stdout, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`users whose name contains "ADMIN" (2):`,
		`  user 2 "admin" registered `, `, roles: 2 "editor"`,
		`  user 1 "admin-old" registered `, `, roles: 1 "admin"`,
		"roles:\n  role 1 \"admin\", 15 permissions, 2 users\n",
	} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("-find output lacks %q:\n%s", want, stdout.String())
		}
	}
	if n := db.Int(t, `SELECT count(*) FROM user_roles WHERE user_id = 3 AND role_id = 1`); n != 1 {
		t.Errorf("member holds admin %d times, want once", n)
	}
	if n := db.Int(t, `SELECT count(*) FROM user_roles WHERE user_id = 2 AND role_id = 1`); n != 0 {
		t.Error("the user named admin got the role")
	}
}
