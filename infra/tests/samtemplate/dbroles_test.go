package samtemplate_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestDbRolesNeedsItsEnvironment: make db-roles sets each role's password on
// DATABASE_URL from ENV's login secrets. Run on production's database with ENV left at
// its default (staging), it would set staging's passwords there, and production's proxy,
// which logs in with production's secrets, would fail every new connection. So ENV must
// be named, and the three ARNs must be secret ARNs (an unfilled samconfig.toml's
// placeholders are refused), before anything runs. A stand-in GO records what make runs.
func TestDbRolesNeedsItsEnvironment(t *testing.T) {
	filled := filledSamconfig(t)
	writer := paramsOf(t, "create")["DbWriterSecretArn"]
	for _, c := range []struct {
		name      string
		args      []string
		refused   string // in make's output when refused
		wantWords string // in the db-roles command when it runs
	}{
		{"no ENV", []string{"SAMCONFIG=" + filled}, "name it (make db-roles ENV=<env>)", ""},
		{"placeholders", []string{"ENV=prod", "SAMCONFIG=" + repoFile("samconfig.toml")}, "'<full' is no secret ARN", ""},
		{"ENV named", []string{"ENV=prod", "SAMCONFIG=" + filled}, "", "-writer-secret " + writer},
		{"ARNs given", []string{"ENV=prod", "SAMCONFIG=" + repoFile("samconfig.toml"),
			"DB_WRITER_SECRET_ARN=arn:aws:secretsmanager:eu-central-1:123456789012:secret:w-AbCdEf",
			"DB_READER_SECRET_ARN=arn:aws:secretsmanager:eu-central-1:123456789012:secret:r-AbCdEf",
			"DB_CDN_SECRET_ARN=arn:aws:secretsmanager:eu-central-1:123456789012:secret:c-AbCdEf"},
			"", "-cdn-secret arn:aws:secretsmanager:eu-central-1:123456789012:secret:c-AbCdEf"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			calls := filepath.Join(dir, "go.log")
			fakeGo := filepath.Join(dir, "go")
			if err := os.WriteFile(fakeGo, []byte("#!/bin/sh\necho \"$@\" >> "+calls+"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("make", append([]string{"--no-print-directory", "db-roles", "GO=" + fakeGo}, c.args...)...)
			cmd.Dir = filepath.Dir(repoFile("Makefile"))
			cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
				return strings.HasPrefix(kv, "ENV=") || strings.HasPrefix(kv, "DB_") || strings.HasPrefix(kv, "MAKEFLAGS=")
			})
			cmd.Env = append(cmd.Env, "DATABASE_URL=postgres://owner@media-catalog-prod.abc123.eu-central-1.rds.amazonaws.com:5432/mediacatalog")
			out, err := cmd.CombinedOutput()
			ran, _ := os.ReadFile(calls)
			switch {
			case c.refused != "":
				if err == nil || !strings.Contains(string(out), c.refused) || len(ran) != 0 {
					t.Errorf("make db-roles %v: %v, ran %q\n%s\nwant it refused saying %q, nothing run", c.args, err, ran, out, c.refused)
				}
			case err != nil || !strings.Contains(string(ran), "run ./infra/ops/cmd/db-roles ") || !strings.Contains(string(ran), c.wantWords):
				t.Errorf("make db-roles %v: %v, ran %q\n%s\nwant db-roles run with %q", c.args, err, ran, out, c.wantWords)
			}
		})
	}
}
