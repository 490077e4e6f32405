package postgres

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	_ "embed"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/rds/auth"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mediacatalog/service/shared/telemetry"
)

// rdsCABundle holds the roots a connection to AWS may chain to: Amazon's (RDS Proxy's
// ACM certificates) and the RDS CA bundle (an instance or cluster reached directly).
//
//go:embed rds-ca-bundle.pem
var rdsCABundle []byte

var (
	rdsRootsOnce sync.Once
	rdsRoots     *x509.CertPool
)

// RDSRoots is the certificate pool of the embedded bundle, parsed on first use (only
// a connection needs it, never a cold start).
func RDSRoots() *x509.CertPool {
	rdsRootsOnce.Do(func() {
		rdsRoots = x509.NewCertPool()
		rdsRoots.AppendCertsFromPEM(rdsCABundle)
	})
	return rdsRoots
}

// RDSAuth is how the functions reach PostgreSQL in AWS: through RDS Proxy, as the
// database user of DATABASE_URL, with an IAM authentication token as the password
// (no password in the environment), over TLS verified against RDSRoots with the host
// name checked (sslmode=verify-full whatever DATABASE_URL says).
type RDSAuth struct {
	Region      string
	Credentials aws.CredentialsProvider
	// Roots overrides RDSRoots (tests point it at their own CA).
	Roots *x509.CertPool
}

// WithRDSAuth returns the Option that sets a pool up for RDS Proxy: what
// WithTransactionPooler sets, and a BeforeConnect that signs a fresh token for each new
// connection (tokens live 15 minutes, connections longer; signing is local, no AWS
// call) and sets the TLS configuration. It drops pgx's fallbacks, so a token never
// travels in the clear.
func WithRDSAuth(a RDSAuth) Option {
	return func(c *pgxpool.Config) {
		WithTransactionPooler()(c)
		prev := c.BeforeConnect
		c.BeforeConnect = func(ctx context.Context, cc *pgx.ConnConfig) error {
			if prev != nil {
				if err := prev(ctx, cc); err != nil {
					return err
				}
			}
			return a.prepare(ctx, cc)
		}
	}
}

// WithTransactionPooler returns the Option for a pool whose server hands each
// transaction to any of its database connections (RDS Proxy; PgBouncer in transaction
// mode, as make bench-scale runs it): nothing may live in the session.
//
// Queries use pgx's QueryExecModeCacheDescribe: the extended protocol with the unnamed
// prepared statement, statement descriptions cached per connection. pgx's default
// (QueryExecModeCacheStatement) prepares named statements, which RDS Proxy treats as
// session state and answers by pinning the client connection to one database
// connection for its whole life (and a transaction pooler would send to a connection
// that never saw them); unnamed statements live within one request and leave the
// connection free to multiplex. The cost of the mode: a cached description can go
// stale if a migration changes a column's type under a live connection (pgx drops the
// cache entry on the error it causes); the migrations are additive, so they do not.
//
// The session defaults come from the database role (infra/ops/dbroles sets them with ALTER
// ROLE ... SET): parameters the client sets on its session are state the proxy would
// pin the connection for, and a pooler passes on none.
func WithTransactionPooler() Option {
	return func(c *pgxpool.Config) {
		c.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeCacheDescribe
		for k := range defaultParams {
			if c.ConnConfig.RuntimeParams[k] == defaultParams[k] {
				delete(c.ConnConfig.RuntimeParams, k)
			}
		}
	}
}

// prepare sets one connection attempt's password (a token) and TLS.
func (a RDSAuth) prepare(ctx context.Context, cc *pgx.ConnConfig) error {
	if cc.User == "" {
		return errors.New("postgres: IAM authentication needs the database user in DATABASE_URL")
	}
	if a.Credentials == nil || a.Region == "" {
		return errors.New("postgres: IAM authentication needs AWS credentials and a region")
	}
	endpoint := net.JoinHostPort(cc.Host, strconv.Itoa(int(cc.Port)))
	token, err := auth.BuildAuthToken(ctx, endpoint, a.Region, cc.User, a.Credentials)
	if err != nil {
		return fmt.Errorf("postgres: IAM authentication token: %w", err)
	}
	// What the proxy authorizes (rds-db:connect as this user), for the IAM tests.
	telemetry.ObservedAWS(ctx, telemetry.AWSCall{Service: "rds-db", Operation: "connect", Region: a.Region,
		Input: telemetry.RDSConnect{Endpoint: endpoint, User: cc.User}})
	roots := a.Roots
	if roots == nil {
		roots = RDSRoots()
	}
	cc.Password = token
	cc.TLSConfig = &tls.Config{ServerName: cc.Host, RootCAs: roots, MinVersion: tls.VersionTLS12}
	cc.Fallbacks = nil
	return nil
}
