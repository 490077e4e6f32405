package dbroles

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
)

// SecretARNs are the Secrets Manager secrets RDS Proxy logs in with, one per role
// (template parameters DbWriterSecretArn, DbReaderSecretArn, DbCdnSecretArn).
type SecretARNs struct{ Writer, Reader, CDN string }

// SecretReader is the Secrets Manager call FromSecrets makes.
type SecretReader interface {
	GetSecretValue(context.Context, *secretsmanager.GetSecretValueInput, ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error)
}

// FromSecrets reads each role's login, {"username", "password"} as RDS Proxy reads it,
// by ARN: the role is the secret's username (the proxy logs in as exactly that), with
// its password. Nobody copies a password by hand.
func FromSecrets(ctx context.Context, sm SecretReader, arns SecretARNs) (Roles, error) {
	var r Roles
	for _, s := range []struct {
		arn            string
		name, password *string
	}{{arns.Writer, &r.Writer, &r.WriterPassword}, {arns.Reader, &r.Reader, &r.ReaderPassword}, {arns.CDN, &r.CDN, &r.CDNPassword}} {
		if s.arn == "" {
			return Roles{}, fmt.Errorf("dbroles: a login secret's ARN is empty")
		}
		out, err := sm.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(s.arn)})
		if err != nil {
			return Roles{}, fmt.Errorf("dbroles: read %s: %w", s.arn, err)
		}
		var login struct{ Username, Password string }
		if out.SecretString == nil || json.Unmarshal([]byte(*out.SecretString), &login) != nil || login.Username == "" || login.Password == "" {
			// Never quoted: the value is a secret.
			return Roles{}, fmt.Errorf("dbroles: %s is not a JSON object with username and password", s.arn)
		}
		*s.name, *s.password = login.Username, login.Password
	}
	return r, nil
}
