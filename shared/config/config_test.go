package config_test

import (
	"strings"
	"testing"

	"github.com/mediacatalog/service/shared/config"
)

func TestDatabaseSettings(t *testing.T) {
	tests := []struct {
		env      map[string]string
		maxConns int
		iam      bool
		wantErr  string
	}{
		{map[string]string{}, 0, false, ""},
		{map[string]string{"DB_MAX_CONNS": "2"}, 2, false, ""},
		{map[string]string{"DB_MAX_CONNS": "1", "DB_IAM_AUTH": "true"}, 1, true, ""},
		{map[string]string{"DB_MAX_CONNS": "-1"}, 0, false, "DB_MAX_CONNS"},
		{map[string]string{"DB_MAX_CONNS": "two"}, 0, false, "DB_MAX_CONNS"},
		{map[string]string{"DB_IAM_AUTH": "yes please"}, 0, false, "DB_IAM_AUTH"},
	}
	for _, tc := range tests {
		t.Run(strings.TrimPrefix(strings.ReplaceAll(strings.Trim(strings.Join(keys(tc.env), ","), ","), " ", "_"), ","), func(t *testing.T) {
			c, err := config.Load(func(k string) string { return tc.env[k] })
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want one naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.DBMaxConns != tc.maxConns || c.DBIAMAuth != tc.iam {
				t.Errorf("DBMaxConns %d, DBIAMAuth %v; want %d, %v", c.DBMaxConns, c.DBIAMAuth, tc.maxConns, tc.iam)
			}
		})
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	return out
}
