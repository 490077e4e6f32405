package soak

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mediacatalog/service/infra/local/localservices"
)

// noEnv hides the caller's environment from the stack: the soak starts its own
// services even under make test, whose shared ones it must never restart.
func noEnv(string) string { return "" }

// stack is the soak's own backing services: a persistent PostgreSQL cluster in its
// folder, which it stops, restarts at the same address and freezes, and dynalite and
// gofakes3 in memory.
type stack struct {
	dir  string
	log  io.Writer
	port int // PostgreSQL's, kept across restarts

	mu  sync.Mutex
	pg  *localservices.Service
	dyn *localservices.Service
	s3  *localservices.Service

	traces *traceSink
}

func startStack(ctx context.Context, dir string, log io.Writer) (*stack, error) {
	s := &stack{dir: dir, log: log}
	var err error
	if s.pg, err = localservices.Postgres(ctx, localservices.Options{Dir: dir, Getenv: noEnv, Log: log}); err != nil {
		return nil, err
	}
	u, err := url.Parse(s.pg.Endpoint)
	if err == nil {
		s.port, err = strconv.Atoi(u.Port())
	}
	if err != nil {
		return nil, errors.Join(fmt.Errorf("postgres endpoint %s: %w", s.pg.Endpoint, err), s.stop())
	}
	if err := withoutFsync(ctx, s.pg.Endpoint); err != nil {
		return nil, errors.Join(err, s.stop())
	}
	if s.dyn, err = localservices.Dynalite(ctx, localservices.Options{Ephemeral: true, Getenv: noEnv, Log: log}); err != nil {
		return nil, errors.Join(err, s.stop())
	}
	if s.s3, err = localservices.S3(ctx, localservices.Options{Ephemeral: true, Getenv: noEnv, Log: log}); err != nil {
		return nil, errors.Join(err, s.stop())
	}
	if s.traces, err = startTraceSink(); err != nil {
		return nil, errors.Join(err, s.stop())
	}
	return s, nil
}

// cdnCacheBytes is the cdn's image cache in the soak (CDN_CACHE_BYTES): every upload is
// a picture of its own, served once and cached, so the cache fills with them, about 7
// KB a second at the soak's rate. At its default, 64 MiB, it would still be filling at
// the end of an hour, a growth the judge cannot tell from a leak; 2 MiB is full within
// the first ten minutes, and from then on the soak holds the bound itself (the least
// recently used out).
const cdnCacheBytes = 2 << 20

// withoutFsync makes the cluster write without waiting for the disk, as the tests'
// clusters do (ALTER SYSTEM: the setting stays for the restart, which begins with a
// clean shutdown that writes everything out, so no data is lost). The machine's disk
// is shared: a commit that waits seconds for it exceeds the request's budget, an
// error of the disk, not of the process the soak watches.
func withoutFsync(ctx context.Context, url string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	for _, sql := range []string{"ALTER SYSTEM SET fsync = off", "ALTER SYSTEM SET synchronous_commit = off",
		"ALTER SYSTEM SET full_page_writes = off", "SELECT pg_reload_conf()"} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			return fmt.Errorf("postgres: %s: %w", sql, err)
		}
	}
	return nil
}

// env is the local server's configuration of the stack: its endpoints, the span
// collector, an OAuth rate limit the workload's flows (all from one address) never
// reach, and the cdn's cache bound.
func (s *stack) env() map[string]string {
	return map[string]string{
		"DATABASE_URL":                s.pg.Endpoint,
		"AWS_ENDPOINT_URL_DYNAMODB":   s.dyn.Endpoint,
		"AWS_ENDPOINT_URL_S3":         s.s3.Endpoint,
		"OTEL_EXPORTER_OTLP_ENDPOINT": s.traces.url,
		"OAUTH_RATE_LIMIT":            "1000000",
		"CDN_CACHE_BYTES":             strconv.Itoa(cdnCacheBytes),
	}
}

// restartPostgres stops PostgreSQL (a fast shutdown: sessions end), waits down, and
// starts it again on its data at the same address. It returns when PostgreSQL
// answers again.
func (s *stack) restartPostgres(ctx context.Context, down time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.pg.Stop(); err != nil {
		return fmt.Errorf("stop postgres: %w", err)
	}
	select {
	case <-time.After(down):
	case <-ctx.Done():
	}
	pg, err := localservices.Postgres(context.WithoutCancel(ctx), localservices.Options{Dir: s.dir, Getenv: noEnv, Log: s.log, PostgresPort: s.port})
	if err != nil {
		return fmt.Errorf("restart postgres: %w", err)
	}
	s.pg = pg
	return nil
}

// freezePostgres stops PostgreSQL's processes (SIGSTOP) for d, or until ctx ends.
func (s *stack) freezePostgres(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	thaw, err := s.pg.Freeze()
	if err != nil {
		return err
	}
	defer thaw()
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
	return nil
}

func (s *stack) stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	if s.traces != nil {
		s.traces.close()
	}
	for _, svc := range []*localservices.Service{s.s3, s.dyn, s.pg} {
		if svc != nil {
			errs = append(errs, svc.Stop())
		}
	}
	return errors.Join(errs...)
}

// traceSink is the OTLP/HTTP collector the local server sends its spans to, so that
// the soak runs the request path with its tracing on, as the functions do. It takes
// the batches and answers an empty ExportTraceServiceResponse (an empty protobuf
// message is zero bytes), keeping only their count and size.
type traceSink struct {
	url            string
	srv            *http.Server
	batches, bytes atomic.Int64
}

func startTraceSink() (*traceSink, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	t := &traceSink{url: "http://" + ln.Addr().String()}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		t.batches.Add(1)
		t.bytes.Add(n)
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	})
	t.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = t.srv.Serve(ln) }()
	return t, nil
}

func (t *traceSink) close() { _ = t.srv.Close() }
