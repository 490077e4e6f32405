package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/jackc/pgx/v5"

	"github.com/mediacatalog/service/infra/local/demo"
	"github.com/mediacatalog/service/infra/local/localservices"
	"github.com/mediacatalog/service/infra/tests/motoserver"
	"github.com/mediacatalog/service/shared/adminusers"
	"github.com/mediacatalog/service/shared/app"
	"github.com/mediacatalog/service/shared/audit"
	"github.com/mediacatalog/service/shared/auth"
	"github.com/mediacatalog/service/shared/awsconfig"
	"github.com/mediacatalog/service/shared/cdn"
	"github.com/mediacatalog/service/shared/config"
	"github.com/mediacatalog/service/shared/httpapi"
	"github.com/mediacatalog/service/shared/lambdahttp"
	"github.com/mediacatalog/service/shared/postgres"
	"github.com/mediacatalog/service/shared/postgres/migrate"
	"github.com/mediacatalog/service/shared/s3store"
)

// client is the generated catalog's client (the demo catalog is client 1).
const client = 2

// bucket is the rehearsal's images bucket.
const bucket = "media-catalog-images"

// rehearsal is one run's state.
type rehearsal struct {
	o     options
	root  string // kept across runs with -dir: the primary cluster
	run   string // this run's backup, archive, restored clusters, logs
	timed func(name string, fn func() error) error

	archive string // the WAL archive
	base    string // the base backup
	pgBin   string

	primary   *localservices.Service
	restored  *localservices.Service
	db        *postgres.DB // the primary's, then the restored cluster's
	s3url     string
	stopS3    func()
	s3        *s3.Client
	srv       *server
	auditLogs []string // the primary's API's log files: the audit records
	sessions  *auth.Sessions
	jwtSecret string

	w ledger // what the workload did, for the checks
}

func (r *rehearsal) close() {
	if r.srv != nil {
		r.srv.close()
	}
	if r.db != nil {
		r.db.Close()
	}
	for _, s := range []*localservices.Service{r.restored, r.primary} {
		if s != nil {
			_ = s.Stop()
		}
	}
	if r.stopS3 != nil {
		r.stopS3()
	}
}

// noDatabaseURL hides DATABASE_URL from localservices: the rehearsal runs clusters of
// its own.
func noDatabaseURL(k string) string {
	if k == "DATABASE_URL" || strings.HasPrefix(k, "AWS_ENDPOINT_URL") || k == "S3_ENDPOINT" {
		return ""
	}
	return os.Getenv(k)
}

// prepare starts the primary (archiving), migrates it and loads the catalog, starts
// the bucket and the API.
func (r *rehearsal) prepare(ctx context.Context) error {
	r.archive = filepath.Join(r.run, "wal-archive")
	r.base = filepath.Join(r.run, "base-backup")
	if err := localservices.ServerOwned(ctx, r.archive); err != nil {
		return err
	}
	var err error
	if r.pgBin, err = localservices.PostgresBinaries(ctx, localservices.Options{Ephemeral: true}, ""); err != nil {
		return err
	}
	// The bucket starts meanwhile: moto's server takes seconds to import.
	s3ready := make(chan error, 1)
	go func() { s3ready <- r.startS3(ctx) }()
	err = r.timed("start the primary cluster, WAL archiving on, and the bucket (moto's S3, versioned)", func() error {
		opts := localservices.Options{Dir: filepath.Join(r.root, "primary"), Ephemeral: r.o.dir == "", Getenv: noDatabaseURL,
			// archive_command is set by archiveTo (a reload), not here: a setting of the
			// command line would win over it.
			PostgresSettings: append([]string{"archive_mode=on",
				// An acknowledged commit is in the WAL (the test stack's own clusters skip that).
				"synchronous_commit=on"}, serverSizing...)}
		if r.o.dir == "" {
			opts.Dir = r.run
		}
		r.primary, err = localservices.Postgres(ctx, opts)
		return errors.Join(err, <-s3ready)
	})
	if err != nil {
		return err
	}
	err = r.timed("migrate, load the demo data and the catalog (once per -dir)", func() error {
		if r.db, err = postgres.Open(ctx, r.primary.Endpoint); err != nil {
			return err
		}
		// Until the base backup no segment is needed: the catalog's generation writes
		// gigabytes of WAL, which an archive would copy for nothing.
		if err := r.archiveTo(ctx, "true"); err != nil {
			return err
		}
		if err := migrate.Up(ctx, r.primary.Endpoint, nil); err != nil {
			return err
		}
		if r.o.scale > 0 {
			return demo.Benchmark(ctx, r.db, client, r.o.scale, r.o.out)
		}
		return demo.Load(ctx, r.db)
	})
	if err != nil {
		return err
	}
	if err := r.timed("clear an earlier run's workload", func() error { return r.clearEarlierRun(ctx) }); err != nil {
		return err
	}
	// From here every segment goes to the archive: the base backup and the WAL after it
	// are what the recovery replays.
	if err := r.archiveTo(ctx, "test ! -f "+r.archive+"/%f && cp %p "+r.archive+"/%f"); err != nil {
		return err
	}
	cfg, err := config.Load(r.env(r.primary.Endpoint, ""))
	if err != nil {
		return err
	}
	r.jwtSecret = cfg.JWTSecret
	if r.sessions, err = auth.NewSessions(r.db, cfg); err != nil {
		return err
	}
	return r.timed("serve the API on the primary", func() error {
		r.srv, err = r.serve(ctx, r.primary.Endpoint, "primary")
		return err
	})
}

// serverSizing is both clusters' (a recovering cluster needs max_connections at least
// the primary's); small: the rehearsal runs two at once at most.
var serverSizing = []string{"max_connections=200", "shared_buffers=128MB", "max_wal_size=1GB", "checkpoint_timeout=30min"}

// clearEarlierRun removes what an earlier run's workload left in a kept primary: its
// users, any picture reference (the earlier bucket is gone), the probe rows.
func (r *rehearsal) clearEarlierRun(ctx context.Context) error {
	for _, sql := range []string{
		`DELETE FROM users WHERE slug LIKE 'rehearsal-%'`,
		`UPDATE users SET profile_image = NULL WHERE profile_image IS NOT NULL`,
		`UPDATE contributors SET image = NULL WHERE image IS NOT NULL`,
		`DROP TABLE IF EXISTS rehearsal_writes`,
		`CREATE TABLE rehearsal_writes (n bigint PRIMARY KEY, sent_at timestamptz NOT NULL)`,
	} {
		if _, err := r.db.Pool.Exec(ctx, sql); err != nil {
			return fmt.Errorf("%s: %w", sql, err)
		}
	}
	return nil
}

func (r *rehearsal) startS3(ctx context.Context) error {
	var err error
	if r.s3url, r.stopS3, err = motoserver.Run(nil); err != nil {
		return err
	}
	r.s3 = s3store.NewClient(awsconfig.ForEndpoint("us-east-1", r.s3url, noDatabaseURL), r.s3url)
	if _, err := r.s3.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		return err
	}
	_, err = r.s3.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: aws.String(bucket),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}})
	return err
}

// env is the API's environment on the database url, with the cdn at cdnURL.
func (r *rehearsal) env(url, cdnURL string) func(string) string {
	m := map[string]string{"DB_ENV": "local", "DATABASE_URL": url, "AWS_REGION": "us-east-1",
		"AWS_ENDPOINT_URL_S3": r.s3url, "S3_BUCKET": bucket, "FILE_SERVICE": "true",
		"AVATAR_NOTIFIER": "http", "CDN_URL": cdnURL, "LOG_LEVEL": "warn"}
	return func(k string) string { return m[k] }
}

// server is the API served in this process.
type server struct {
	base  string
	close func()
}

// serve serves the admin-users and cdn groups on url's database, logging as the
// functions do (JSON lines, the audit records among them) to a file of the run: what
// CloudWatch Logs keeps in AWS.
func (r *rehearsal) serve(ctx context.Context, url, name string) (*server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	base := "http://" + ln.Addr().String()
	env := r.env(url, base)
	cfg, err := config.Load(env)
	if err != nil {
		ln.Close()
		return nil, err
	}
	logPath := filepath.Join(r.run, "server-"+name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		ln.Close()
		return nil, err
	}
	if name == "primary" {
		r.auditLogs = append(r.auditLogs, logPath)
	}
	a := app.New(cfg, httpapi.Logger(audit.CommandLogger(ctx, f)))
	a.Getenv = env
	h, err := a.Handler(ctx, adminusers.Group, cdn.Group)
	if err != nil {
		ln.Close()
		f.Close()
		return nil, err
	}
	sctx, cancel := context.WithCancel(ctx)
	go func() { _ = lambdahttp.ServeListener(sctx, h, ln, nil) }()
	// The first answer: the server reads its database.
	for deadline := time.Now().Add(30 * time.Second); ; {
		if st, _, err := send(ctx, http.MethodGet, base+"/user/avatar/1", "", ""); err == nil && st == http.StatusOK {
			break
		} else if time.Now().After(deadline) {
			cancel()
			a.Close()
			f.Close()
			return nil, fmt.Errorf("the API on %s does not answer (%d, %v)", name, st, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return &server{base: base, close: func() { cancel(); a.Close(); f.Close() }}, nil
}

var httpc = &http.Client{Timeout: 30 * time.Second}

// send sends a request with the session cookie token ("" for none) and returns the
// status and body.
func send(ctx context.Context, method, url, body, token string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.AddCookie(&http.Cookie{Name: auth.RefreshCookie, Value: token})
	}
	resp, err := httpc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// call sends an admin request that must succeed.
func (r *rehearsal) call(ctx context.Context, token, method, path string, body any) error {
	var text string
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		text = string(b)
	}
	st, out, err := send(ctx, method, r.srv.base+path, text, token)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if st != http.StatusOK {
		return fmt.Errorf("%s %s: %d %s", method, path, st, bytes.TrimSpace(out))
	}
	return nil
}

// objectHash is the SHA-256 of a current object's bytes.
func (r *rehearsal) objectHash(ctx context.Context, key string) ([32]byte, error) {
	out, err := r.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		return [32]byte{}, err
	}
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	return sha256.Sum256(b), err
}

// baseBackup takes the base backup of the primary (pg_basebackup, with the WAL it
// needs to be consistent).
func (r *rehearsal) baseBackup(ctx context.Context) error {
	u, err := pgx.ParseConfig(r.primary.Endpoint)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, filepath.Join(r.pgBin, "pg_basebackup"), "-D", r.base, "-h", u.Host,
		"-p", strconv.Itoa(int(u.Port)), "-U", u.User, "-X", "stream", "-c", "fast", "--no-sync")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("pg_basebackup: %w: %s", err, bytes.TrimSpace(out))
	}
	return nil
}

// archiveTo makes command the primary's archive_command (ALTER SYSTEM, then a reload)
// and closes the current segment, so that the next ones are archived by it.
func (r *rehearsal) archiveTo(ctx context.Context, command string) error {
	for _, sql := range []string{`ALTER SYSTEM SET archive_command = ` + quote(command), `SELECT pg_reload_conf()`, `SELECT pg_switch_wal()`} {
		if _, err := r.db.Pool.Exec(ctx, sql); err != nil {
			return fmt.Errorf("%s: %w", sql, err)
		}
	}
	return nil
}

// quote is a string literal of SQL (ALTER SYSTEM takes no parameter).
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// archiveAll closes the current WAL segment and waits until the archiver has copied
// it: the archive then holds every commit so far.
func (r *rehearsal) archiveAll(ctx context.Context) error {
	var segment string
	if err := r.db.Pool.QueryRow(ctx, `SELECT pg_walfile_name(pg_switch_wal())`).Scan(&segment); err != nil {
		return err
	}
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		var last *string
		if err := r.db.Pool.QueryRow(ctx, `SELECT last_archived_wal FROM pg_stat_archiver`).Scan(&last); err != nil {
			return err
		}
		if last != nil && *last >= segment {
			return nil
		}
	}
	return errors.New("the archiver did not copy the last WAL segment within 2 minutes")
}
