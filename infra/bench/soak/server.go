package soak

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mediacatalog/service/infra/local/localservices"
)

// server is the local server (infra/local/cmd/local, as make run runs it) in a process of
// its own, so that its memory, goroutines and files are its own to read.
type server struct {
	url    string // the API: http://localhost:<port>
	debug  string // its expvar variables (-debug-addr)
	pid    int
	log    string // its output
	cmd    *exec.Cmd
	exited chan struct{}
	err    error // its exit, once exited is closed
}

// buildServer compiles infra/local/cmd/local into dir.
func buildServer(ctx context.Context, dir string, out io.Writer) (string, error) {
	root, err := localservices.RepoRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "local")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./infra/local/cmd/local")
	build.Dir = root
	build.Stdout, build.Stderr = out, out
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("build the local server: %w", err)
	}
	return bin, nil
}

// serviceEnv are the variables of the caller's environment the local server does not
// inherit: the service's configuration comes from the soak's stack alone.
var serviceEnv = []string{"DATABASE_URL", "DYNAMODB_ENDPOINT", "S3_ENDPOINT", "SECRETSMANAGER_ENDPOINT",
	"SECRETS_ARN", "DB_ENV", "ORIGIN_SECRET", "ORIGIN_SECRET_PREVIOUS", "CORS_ORIGINS", "PORT"}

func inherited(kv string) bool {
	k, _, _ := strings.Cut(kv, "=")
	for _, p := range []string{"OAUTH_", "AWS_ENDPOINT_URL", "OTEL_"} {
		if strings.HasPrefix(k, p) {
			return false
		}
	}
	for _, e := range serviceEnv {
		if k == e {
			return false
		}
	}
	return true
}

// startServer runs bin on port (0: a free one) with its stack folder in dir and env
// over the caller's environment less serviceEnv, its output in dir/server.log, and
// returns once it says it is ready.
func startServer(ctx context.Context, bin, dir string, port int, env map[string]string) (*server, error) {
	logPath := filepath.Join(dir, "server.log")
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	stackDir := filepath.Join(dir, "server")
	if err := os.MkdirAll(stackDir, 0o755); err != nil {
		logf.Close()
		return nil, err
	}
	cmd := exec.Command(bin, "-dir", stackDir, "-port", strconv.Itoa(port), "-debug-addr", "127.0.0.1:0")
	for _, kv := range os.Environ() {
		if inherited(kv) {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	// The server ends with the soak, however the soak ends.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	pr, pw, err := os.Pipe()
	if err != nil {
		logf.Close()
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		logf.Close()
		return nil, fmt.Errorf("start the local server: %w", err)
	}
	pw.Close()
	s := &server{pid: cmd.Process.Pid, log: logPath, cmd: cmd, exited: make(chan struct{})}
	lines := make(chan string, 16)
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		defer logf.Close()
		r := bufio.NewReaderSize(pr, 64<<10)
		for {
			line, err := r.ReadString('\n')
			if line != "" {
				_, _ = logf.WriteString(line)
				if strings.HasPrefix(line, "ready: ") || strings.HasPrefix(line, "debug: ") {
					select {
					case lines <- line:
					default:
					}
				}
			}
			if err != nil {
				return
			}
		}
	}()
	go func() {
		s.err = cmd.Wait()
		<-copied
		close(s.exited)
	}()
	timeout := time.After(3 * time.Minute)
	for s.url == "" {
		select {
		case line := <-lines:
			f := strings.Fields(line)
			switch {
			case len(f) > 1 && f[0] == "debug:":
				s.debug = f[1]
			case len(f) > 1 && f[0] == "ready:":
				s.url = f[1]
			}
		case <-s.exited:
			return nil, fmt.Errorf("the local server ended before it was ready (%v): see %s", s.err, logPath)
		case <-timeout:
			s.stop()
			return nil, fmt.Errorf("the local server is not ready after 3 minutes: see %s", logPath)
		case <-ctx.Done():
			s.stop()
			return nil, ctx.Err()
		}
	}
	if s.debug == "" {
		s.stop()
		return nil, fmt.Errorf("the local server printed no debug address: see %s", logPath)
	}
	return s, nil
}

// alive reports whether the server still runs.
func (s *server) alive() bool {
	select {
	case <-s.exited:
		return false
	default:
		return true
	}
}

// stop ends the server as Ctrl-C would (SIGTERM: cmdrun cancels its context) and
// waits for it, killing it after a minute.
func (s *server) stop() error {
	if !s.alive() {
		return s.exitErr()
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(time.Minute):
		_ = s.cmd.Process.Kill()
		<-s.exited
		return errors.New("the local server did not stop within a minute of SIGTERM and was killed")
	}
	return s.exitErr()
}

func (s *server) exitErr() error {
	if s.err != nil {
		return fmt.Errorf("the local server: %w (see %s)", s.err, s.log)
	}
	return nil
}
