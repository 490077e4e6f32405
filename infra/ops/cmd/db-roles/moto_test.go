package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/jackc/pgx/v5"

	"github.com/mediacatalog/service/infra/tests/motoserver"
	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/awsconfig"
)

// TestRolesFromSecrets: make db-roles reads each role's name and password from the
// proxy's login secrets by ARN (Secrets Manager's wire format, moto's server), creates
// the roles with those passwords, and refuses a secret that is not a login.
func TestRolesFromSecrets(t *testing.T) {
	ctx := context.Background()
	url := motoserver.Start(t)
	env := map[string]string{"AWS_REGION": "eu-central-1", "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "AWS_ENDPOINT_URL": url}
	getenv := func(k string) string { return env[k] }
	sm := secretsmanager.NewFromConfig(awsconfig.ForEndpoint(env["AWS_REGION"], url, getenv), func(o *secretsmanager.Options) { o.BaseEndpoint = aws.String(url) })
	suffix := fmt.Sprintf("_sm_%d", os.Getpid())
	names := []string{"w" + suffix, "r" + suffix, "c" + suffix}
	var arns []string
	for i, n := range names {
		out, err := sm.CreateSecret(ctx, &secretsmanager.CreateSecretInput{
			Name:         aws.String("media-catalog/test/db/" + n),
			SecretString: aws.String(fmt.Sprintf(`{"username": %q, "password": "pw-%d-it's"}`, n, i)),
		})
		if err != nil {
			t.Fatal(err)
		}
		arns = append(arns, *out.ARN)
	}
	bad, err := sm.CreateSecret(ctx, &secretsmanager.CreateSecretInput{Name: aws.String("not-a-login"), SecretString: aws.String(`{"JWT_SECRET": "x"}`)})
	if err != nil {
		t.Fatal(err)
	}

	db := testenv.NewDB(t)
	env["DATABASE_URL"] = db.URL
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), db.URL)
		if err != nil {
			return
		}
		defer c.Close(context.Background())
		for _, n := range names {
			_, _ = c.Exec(context.Background(), "DROP OWNED BY "+n)
			_, _ = c.Exec(context.Background(), "DROP ROLE IF EXISTS "+n)
		}
	})
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"a secret that is not a login", []string{"-writer-secret", *bad.ARN, "-reader-secret", arns[1], "-cdn-secret", arns[2]}, "not a JSON object with username and password"},
		{"a missing secret", []string{"-writer-secret", arns[0] + "x", "-reader-secret", arns[1], "-cdn-secret", arns[2]}, "read "},
		{"one ARN left out", []string{"-writer-secret", arns[0], "-reader-secret", arns[1]}, "ARN is empty"},
		{"the three logins", []string{"-writer-secret", arns[0], "-reader-secret", arns[1], "-cdn-secret", arns[2]}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := run(ctx, tc.args, getenv)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "pw-") {
					t.Errorf("the error shows a password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
		})
	}
	// Each role is the secret's username, and has a password (the secret's: the test
	// server trusts local logins, so a login cannot tell one password from another).
	for _, n := range names {
		var ok bool
		if err := db.Pool.QueryRow(ctx, `SELECT rolpassword IS NOT NULL AND rolcanlogin FROM pg_authid WHERE rolname = $1`, n).Scan(&ok); err != nil || !ok {
			t.Errorf("role %s: login with a password %v (%v)", n, ok, err)
		}
	}
}
