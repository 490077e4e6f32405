package localservices

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// modulePath identifies the repository's go.mod.
const modulePath = "github.com/mediacatalog/service"

// RepoRoot returns the repository's top folder: the nearest folder, from the working
// directory up, whose go.mod declares the service's module.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find repository: %w", err)
	}
	for {
		if isModuleRoot(filepath.Join(dir, "go.mod")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("find repository: no go.mod of %s above the working directory", modulePath)
		}
		dir = parent
	}
}

func isModuleRoot(gomod string) bool {
	f, err := os.Open(gomod)
	if err != nil {
		return false
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(s.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`) == modulePath
		}
	}
	return false
}

// freePort returns preferred if it can be bound on 127.0.0.1, else a port the kernel
// picks. Pass 0 for no preference.
func freePort(preferred int) (int, error) {
	if preferred != 0 {
		if l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", preferred)); err == nil {
			_ = l.Close()
			return preferred, nil
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// lockFile takes an exclusive lock on path (created if missing), for work that
// concurrent test processes must not do twice at once (npm ci, apt-get). It waits
// until the lock is free or ctx ends.
func lockFile(ctx context.Context, path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open lock %s: %w", path, err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
				_ = f.Close()
			}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			_ = f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			_ = f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// waitReady calls ready every 100ms until it succeeds, the process exits, ctx ends or
// the timeout passes; the last error from ready explains a failure.
func waitReady(ctx context.Context, p *process, timeout time.Duration, ready func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		attempt, cancelAttempt := context.WithTimeout(ctx, 2*time.Second)
		err := ready(attempt)
		cancelAttempt()
		if err == nil {
			return nil
		}
		if p.exited() {
			return p.exitError()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready: %w (last check: %v)", p.name, ctx.Err(), err)
		case <-p.done:
			return p.exitError()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// startAttempts bounds the retries of startOnFreePort.
const startAttempts = 3

// startOnFreePort starts a server on a free loopback port (preferred first, if free)
// and waits until it is ready. The port was free when checked but may be taken before
// the server binds it; when the server's output then contains inUse, it retries on
// another port.
func startOnFreePort(
	ctx context.Context,
	preferred int,
	inUse string,
	start func(port int) (*process, error),
	ready func(ctx context.Context, p *process, port int) error,
) (*process, error) {
	for attempt := 1; ; attempt++ {
		port, err := freePort(preferred)
		if err != nil {
			return nil, err
		}
		p, err := start(port)
		if err != nil {
			return nil, err
		}
		err = ready(ctx, p, port)
		if err == nil {
			return p, nil
		}
		stopErr := p.stop()
		if attempt < startAttempts && strings.Contains(p.out.String(), inUse) {
			preferred = 0
			continue
		}
		return nil, errors.Join(err, stopErr)
	}
}
