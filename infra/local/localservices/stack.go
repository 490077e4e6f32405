// Package localservices runs the service's backing services on loopback for local runs and
// tests: PostgreSQL (a private cluster from the system's binaries), a DynamoDB-compatible
// server (dynalite, from infra/local/dynalite) and an S3-compatible server (gofakes3, served
// in-process). Each one is started only when the environment does not already name it
// (DATABASE_URL, AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL_S3, or their aliases:
// see config.DynamoEndpointEnv and config.S3EndpointEnv).
//
// Child processes run in their own process group, so a terminal's Ctrl-C reaches only
// the parent, which stops them in order; on Linux they also get a parent-death signal,
// so they end with the parent even when it is killed.
package localservices

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
)

// Options says where and how the services run.
type Options struct {
	// Dir holds the persistent data: Dir/postgres, Dir/dynamo, Dir/s3.db, and the
	// services' logs. Default: <repo>/.local (git-ignored). In ephemeral mode fresh
	// folders are made inside Dir (default: the system's temporary folder) instead.
	Dir string
	// Ephemeral runs everything on throwaway data (fresh PostgreSQL cluster, in-memory
	// dynalite and S3), deleted on Stop. For tests.
	Ephemeral bool
	// Log receives one line per service started or taken from the environment.
	// Default: discarded.
	Log io.Writer
	// Getenv reads the environment. Default: os.Getenv.
	Getenv func(string) string
	// PostgresSettings are server settings ("name=value") PostgreSQL starts with, after
	// the stack's own: the restore rehearsal's WAL archiving and recovery target.
	PostgresSettings []string
	// PostgresPort is the port a cluster started here must listen on (0: 54329 when
	// free, else any; in ephemeral mode any). A restart of a persistent cluster passes
	// the port of its first start, so that its clients keep their address.
	PostgresPort int
}

func (o Options) withDefaults() (Options, error) {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if _, ok := o.Log.(*syncWriter); !ok {
		o.Log = &syncWriter{w: o.Log}
	}
	if o.Dir == "" && !o.Ephemeral {
		root, err := RepoRoot()
		if err != nil {
			return o, err
		}
		o.Dir = filepath.Join(root, ".local")
	}
	if o.Dir != "" {
		abs, err := filepath.Abs(o.Dir)
		if err != nil {
			return o, fmt.Errorf("resolve %s: %w", o.Dir, err)
		}
		o.Dir = abs
	}
	return o, nil
}

func (o Options) logf(format string, args ...any) {
	fmt.Fprintf(o.Log, format+"\n", args...)
}

// dataPath returns where a service keeps its data: Dir/name, with Dir created. In
// ephemeral mode it returns a fresh folder and a function that deletes it.
func (o Options) dataPath(name string) (path string, remove func() error, err error) {
	if o.Ephemeral {
		if o.Dir != "" {
			if err := os.MkdirAll(o.Dir, 0o755); err != nil {
				return "", nil, fmt.Errorf("create %s: %w", o.Dir, err)
			}
		}
		dir, err := os.MkdirTemp(o.Dir, "mediacatalog-"+name+"-")
		if err != nil {
			return "", nil, fmt.Errorf("create temporary folder: %w", err)
		}
		return dir, func() error { return os.RemoveAll(dir) }, nil
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return "", nil, fmt.Errorf("create %s: %w", o.Dir, err)
	}
	return filepath.Join(o.Dir, name), func() error { return nil }, nil
}

// logFile opens Dir/name afresh, to hold this run's output. In ephemeral mode it
// returns nil: a service's output is then kept only in memory, for error messages.
func (o Options) logFile(name string) (*os.File, error) {
	if o.Ephemeral {
		return nil, nil
	}
	f, err := os.OpenFile(filepath.Join(o.Dir, name), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open log: %w", err)
	}
	return f, nil
}

// Service is one backing service, started here or named by the environment.
type Service struct {
	Name     string // "postgres", "dynalite", "s3" or "pgbouncer"
	Endpoint string // what clients connect to: a postgres:// URL or an http:// endpoint
	Managed  bool   // started by this process, as opposed to taken from the environment

	proc     *process // the child process, when there is one
	dataDir  string   // where its data is, when on disk
	stopOnce sync.Once
	stopErr  error
	stop     func() error
}

// Stop stops the service if this process started it and deletes its ephemeral data.
// It is safe to call more than once.
func (s *Service) Stop() error {
	s.stopOnce.Do(func() {
		if s.stop != nil {
			s.stopErr = s.stop()
		}
	})
	return s.stopErr
}

func external(name, endpoint string) *Service {
	return &Service{Name: name, Endpoint: endpoint}
}

// Endpoints are the addresses of the three services.
type Endpoints struct {
	DatabaseURL    string
	DynamoEndpoint string
	S3Endpoint     string
}

// Stack is the three services together.
type Stack struct {
	Endpoints
	services []*Service
}

// Start starts every service the environment does not name, concurrently. On failure
// it stops the ones it had started.
func Start(ctx context.Context, opts Options) (*Stack, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("start stack: %w", err)
	}
	starters := []func(context.Context, Options) (*Service, error){Postgres, Dynalite, S3}
	services := make([]*Service, len(starters))
	errs := make([]error, len(starters))
	var wg sync.WaitGroup
	for i, start := range starters {
		wg.Go(func() { services[i], errs[i] = start(ctx, opts) })
	}
	wg.Wait()
	st := &Stack{}
	for _, svc := range services {
		if svc != nil {
			st.services = append(st.services, svc)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, errors.Join(err, st.Stop())
	}
	st.DatabaseURL = services[0].Endpoint
	st.DynamoEndpoint = services[1].Endpoint
	st.S3Endpoint = services[2].Endpoint
	return st, nil
}

// Stop stops every service the stack started, in reverse order, and waits until
// their processes are gone.
func (s *Stack) Stop() error {
	var errs []error
	for i := len(s.services) - 1; i >= 0; i-- {
		if err := s.services[i].Stop(); err != nil {
			errs = append(errs, fmt.Errorf("stop %s: %w", s.services[i].Name, err))
		}
	}
	return errors.Join(errs...)
}

// syncWriter serialises writes from the services' goroutines.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}
