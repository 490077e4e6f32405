package localservices

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/mediacatalog/service/shared/config"
)

const dynaliteReadyTimeout = time.Minute

// Dynalite returns the DynamoDB endpoint the environment names
// (config.DynamoEndpointEnv: AWS_ENDPOINT_URL_DYNAMODB, DYNAMODB_ENDPOINT, ...) when it
// names one. Otherwise it installs infra/local/dynalite's locked dependencies if needed (npm
// ci) and starts dynalite on a free loopback port: persistent in Dir/dynamo, or in
// memory when ephemeral.
func Dynalite(ctx context.Context, opts Options) (*Service, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("start dynalite: %w", err)
	}
	if endpoint := config.FirstEnv(opts.Getenv, config.DynamoEndpointEnv); endpoint != "" {
		opts.logf("dynalite: using the DynamoDB endpoint %s from the environment", endpoint)
		return external("dynalite", endpoint), nil
	}
	svc, err := startDynalite(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("start dynalite: %w", err)
	}
	return svc, nil
}

func startDynalite(ctx context.Context, opts Options) (*Service, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	pkg := filepath.Join(root, "infra", "local", "dynalite")
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, errors.New("node not found on PATH: install Node.js 20 or newer, or set AWS_ENDPOINT_URL_DYNAMODB")
	}
	if err := installDynalite(ctx, opts, pkg); err != nil {
		return nil, err
	}
	base := []string{
		filepath.Join(pkg, "node_modules", "dynalite", "cli.js"),
		"--host", "127.0.0.1",
		// Tables become ACTIVE at once instead of after half a second.
		"--createTableMs", "0", "--deleteTableMs", "0", "--updateTableMs", "0",
	}
	where := "in memory"
	if !opts.Ephemeral {
		path, _, err := opts.dataPath("dynamo")
		if err != nil {
			return nil, err
		}
		base = append(base, "--path", path)
		where = "data in " + path
	}
	log, err := opts.logFile("dynalite.log")
	if err != nil {
		return nil, err
	}
	closeLog := func() error {
		if log == nil {
			return nil
		}
		return log.Close()
	}
	var endpoint string
	p, err := startOnFreePort(ctx, 0, "EADDRINUSE",
		func(port int) (*process, error) {
			args := append(base[:len(base):len(base)], "--port", strconv.Itoa(port))
			return startProcess("dynalite", exec.Command(node, args...), syscall.SIGTERM, nil, fileOrNil(log))
		},
		func(ctx context.Context, p *process, port int) error {
			endpoint = fmt.Sprintf("http://127.0.0.1:%d", port)
			return waitReady(ctx, p, dynaliteReadyTimeout, func(ctx context.Context) error { return httpOK(ctx, endpoint) })
		})
	if err != nil {
		return nil, errors.Join(err, closeLog())
	}
	if log != nil {
		where += ", log in " + log.Name()
	}
	opts.logf("dynalite: DynamoDB (pid %d) at %s, %s", p.pid(), endpoint, where)
	return &Service{Name: "dynalite", Endpoint: endpoint, Managed: true, proc: p, stop: func() error {
		return errors.Join(p.stop(), closeLog())
	}}, nil
}

// installDynalite installs infra/local/dynalite's locked dependencies when needed.
func installDynalite(ctx context.Context, opts Options, pkg string) error {
	if err := NPMInstall(ctx, opts.Log, pkg, filepath.Join("dynalite", "cli.js")); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return errors.New("npm not found on PATH: install Node.js 20 or newer with npm, or set AWS_ENDPOINT_URL_DYNAMODB")
		}
		return err
	}
	return nil
}

// NPMInstall runs npm ci in the npm package folder pkg when its node_modules is
// missing, incomplete (no node_modules/entry) or older than package-lock.json, and
// says so on log. Concurrent processes (test packages) install once. npm ci installs
// exactly the lockfile's versions; a .npmrc in pkg applies (such as ignore-scripts).
func NPMInstall(ctx context.Context, log io.Writer, pkg, entry string) error {
	if npmInstalled(pkg, entry) {
		return nil
	}
	h := fnv.New64a()
	h.Write([]byte(pkg))
	unlock, err := lockFile(ctx, filepath.Join(os.TempDir(), fmt.Sprintf("mediacatalog-npm-%x.lock", h.Sum64())))
	if err != nil {
		return err
	}
	defer unlock()
	if npmInstalled(pkg, entry) {
		return nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return fmt.Errorf("install %s: npm: %w", pkg, err)
	}
	if log != nil {
		fmt.Fprintf(log, "%s: installing %s (npm ci)\n", filepath.Base(pkg), filepath.Join(pkg, "node_modules"))
	}
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = pkg
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("npm ci in %s: %w\n%s", pkg, err, lastLines(out, 20))
	}
	if !npmInstalled(pkg, entry) {
		return fmt.Errorf("npm ci in %s did not install %s", pkg, entry)
	}
	return nil
}

// npmInstalled reports whether npm ci completed (it writes node_modules/.package-lock.json
// last) after the lockfile last changed.
func npmInstalled(pkg, entry string) bool {
	if !isFile(filepath.Join(pkg, "node_modules", entry)) {
		return false
	}
	installed, err := os.Stat(filepath.Join(pkg, "node_modules", ".package-lock.json"))
	if err != nil {
		return false
	}
	lock, err := os.Stat(filepath.Join(pkg, "package-lock.json"))
	return err == nil && !installed.ModTime().Before(lock.ModTime())
}

func isFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

func httpOK(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}
