package localservices

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// poolerReadyTimeout bounds PgBouncer's start.
const poolerReadyTimeout = 15 * time.Second

// StartPooler starts PgBouncer in transaction mode in front of the PostgreSQL server
// at upstream, logging in to it as role: what RDS Proxy is to the functions in AWS. A
// client's new connection is then a login to the pooler, answered with a database
// connection the pooler keeps open (a warm backend), not a new server process; each
// transaction may run on another one, so the client must keep nothing in its session
// (postgres.WithTransactionPooler). The role's session defaults apply (infra/ops/dbroles).
//
// It needs the pgbouncer program (Debian's package; infra/scripts/tools.sh installs it)
// and runs it as the PostgreSQL system user when this process is root (it refuses
// root). Its configuration lives in a temporary folder, deleted by Stop.
func StartPooler(ctx context.Context, opts Options, upstream, role string) (*Service, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	bin, err := exec.LookPath("pgbouncer")
	if err != nil {
		if _, statErr := os.Stat("/usr/sbin/pgbouncer"); statErr != nil {
			return nil, errors.New("start pooler: pgbouncer not found (apt-get install pgbouncer; infra/scripts/tools.sh scale installs it)")
		}
		bin = "/usr/sbin/pgbouncer"
	}
	up, err := pgx.ParseConfig(upstream)
	if err != nil {
		return nil, fmt.Errorf("start pooler: upstream: %w", err)
	}
	cred, err := postgresCredential(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("start pooler: %w", err)
	}
	dir, err := os.MkdirTemp("", "mediacatalog-pgbouncer-")
	if err != nil {
		return nil, fmt.Errorf("start pooler: %w", err)
	}
	remove := func() error { return os.RemoveAll(dir) }
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return nil, errors.Join(fmt.Errorf("start pooler: %w", err), remove())
		}
	}
	var url string
	p, err := startOnFreePort(ctx, 0, "Address already in use",
		func(port int) (*process, error) {
			ini := filepath.Join(dir, "pgbouncer.ini")
			if err := os.WriteFile(ini, []byte(poolerConfig(up, role, port)), 0o600); err != nil {
				return nil, err
			}
			if cred != nil {
				if err := os.Chown(ini, int(cred.Uid), int(cred.Gid)); err != nil {
					return nil, err
				}
			}
			// SIGTERM is PgBouncer's immediate shutdown (SIGINT waits for the clients).
			return startProcess("pgbouncer", exec.Command(bin, ini), syscall.SIGTERM, cred, nil)
		},
		func(ctx context.Context, p *process, port int) error {
			url = fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", role, port, up.Database)
			return waitReady(ctx, p, poolerReadyTimeout, func(ctx context.Context) error { return ping(ctx, url) })
		})
	if err != nil {
		return nil, errors.Join(fmt.Errorf("start pooler: %w", err), remove())
	}
	opts.logf("pgbouncer: transaction pooling (pid %d) at %s, in front of %s:%d as %s", p.pid(), url, up.Host, up.Port, role)
	return &Service{Name: "pgbouncer", Endpoint: url, Managed: true, proc: p, stop: func() error {
		return errors.Join(p.stop(), remove())
	}}, nil
}

// poolerConfig is PgBouncer's configuration: the upstream database under its own name,
// every client logged in without a password (the pooler listens on loopback only) and
// served as role, in transaction mode, TCP only.
func poolerConfig(up *pgx.ConnConfig, role string, port int) string {
	return strings.Join([]string{
		"[databases]",
		fmt.Sprintf("%s = host=%s port=%d dbname=%s user=%s", up.Database, up.Host, up.Port, up.Database, role),
		"[pgbouncer]",
		"listen_addr = 127.0.0.1",
		fmt.Sprintf("listen_port = %d", port),
		"unix_socket_dir =",
		"auth_type = any",
		"pool_mode = transaction",
		"default_pool_size = 8",
		"max_client_conn = 500",
		"server_reset_query =",
		"",
	}, "\n")
}
