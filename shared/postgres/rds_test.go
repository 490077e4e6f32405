package postgres_test

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/postgres"
)

// TestRDSAuthConnection: each connection attempt gets an IAM token for its user and
// host as its password and TLS with the host name verified against the RDS roots; no
// fallback without TLS.
func TestRDSAuthConnection(t *testing.T) {
	tests := []struct {
		url      string
		wantErr  string
		wantHost string
	}{
		{"postgres://catalog_reader@proxy.proxy-abc.eu-central-1.rds.amazonaws.com:5432/catalog?sslmode=verify-full", "", "proxy.proxy-abc.eu-central-1.rds.amazonaws.com:5432"},
		// sslmode=prefer would fall back to plain text: the fallback is dropped.
		{"postgres://catalog_writer@db.example:6543/catalog?sslmode=prefer", "", "db.example:6543"},
		{"postgres://db.example/catalog", "database user", ""},
	}
	for _, tc := range tests {
		t.Run(tc.url, func(t *testing.T) {
			cfg, err := pgxpool.ParseConfig(tc.url)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(tc.url, "@") {
				cfg.ConnConfig.User = "" // the environment's user would fill it in
			}
			postgres.WithRDSAuth(postgres.RDSAuth{Region: "eu-central-1", Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", "")})(cfg)
			cc := cfg.ConnConfig.Copy()
			err = cfg.BeforeConnect(context.Background(), cc)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tok, err := url.Parse("https://" + cc.Password)
			if err != nil || tok.Host != tc.wantHost {
				t.Fatalf("token %q is not a presigned URL of %s", cc.Password, tc.wantHost)
			}
			q := tok.Query()
			if q.Get("Action") != "connect" || q.Get("DBUser") != cc.User || !strings.Contains(q.Get("X-Amz-Credential"), "/eu-central-1/rds-db/aws4_request") || q.Get("X-Amz-Signature") == "" {
				t.Errorf("token query %v", q)
			}
			if cc.TLSConfig == nil || cc.TLSConfig.InsecureSkipVerify || cc.TLSConfig.ServerName != cc.Host || cc.TLSConfig.RootCAs != postgres.RDSRoots() {
				t.Errorf("TLS %+v: want verify-full against the RDS roots", cc.TLSConfig)
			}
			if len(cc.Fallbacks) != 0 {
				t.Errorf("%d fallbacks kept", len(cc.Fallbacks))
			}
			if cfg.ConnConfig.DefaultQueryExecMode != pgx.QueryExecModeCacheDescribe {
				t.Errorf("query mode %v", cfg.ConnConfig.DefaultQueryExecMode)
			}
		})
	}
}

// TestRDSRoots: the embedded bundle parses whole and holds the roots RDS Proxy's
// certificates chain to.
func TestRDSRoots(t *testing.T) {
	b, err := os.ReadFile("rds-ca-bundle.pem")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for {
		var block *pem.Block
		block, b = pem.Decode(b)
		if block == nil {
			break
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatalf("certificate %d: %v", len(names), err)
		}
		names = append(names, c.Subject.CommonName)
	}
	all := strings.Join(names, "\n")
	for _, want := range []string{"Amazon Root CA 1", "Amazon Root CA 4", "Starfield Services Root Certificate Authority - G2", "Amazon RDS eu-central-1 Root CA RSA2048 G1"} {
		if !strings.Contains(all, want) {
			t.Errorf("bundle lacks %q", want)
		}
	}
	if len(names) < 100 || postgres.RDSRoots() == nil {
		t.Errorf("%d certificates", len(names))
	}
}

// TestQueriesDoNotPin runs the stores' queries in the mode the functions use behind
// RDS Proxy: they work, and the session holds no prepared statement afterwards.
func TestQueriesDoNotPin(t *testing.T) {
	db := testenv.NewDemoDB(t, postgres.WithMaxConns(1), postgres.WithTransactionPooler())
	ctx := context.Background()
	for range 2 { // the second time from the description cache
		if tags, err := db.Tags(ctx, 1); err != nil || len(tags) == 0 {
			t.Fatalf("tags: %d, %v", len(tags), err)
		}
		if _, err := db.TagByID(ctx, 1); err != nil {
			t.Fatal(err)
		}
		if _, err := db.UserImage(ctx, 1); err != nil {
			t.Fatal(err)
		}
	}
	var n int
	if err := db.Pool.QueryRow(ctx, "SELECT count(*) FROM pg_prepared_statements").Scan(&n); err != nil || n != 0 {
		t.Errorf("%d prepared statements in the session (%v), want none", n, err)
	}
}
