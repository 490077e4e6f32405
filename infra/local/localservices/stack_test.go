package localservices

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// noEnv hides the caller's environment, so the tests start every service themselves
// even when make test has exported a shared stack.
func noEnv(string) string { return "" }

func TestEnvironmentWins(t *testing.T) {
	env := map[string]string{
		"DATABASE_URL":              "postgres://u@db.example:5432/x",
		"AWS_ENDPOINT_URL_DYNAMODB": "http://dynamo.example:8000",
		"S3_ENDPOINT":               "http://s3.example:9000", // the older name, an alias
	}
	st, err := Start(context.Background(), Options{Ephemeral: true, Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer st.Stop()
	tests := []struct {
		name string
		got  string
		env  string
	}{
		{"postgres", st.DatabaseURL, "DATABASE_URL"},
		{"dynalite", st.DynamoEndpoint, "AWS_ENDPOINT_URL_DYNAMODB"},
		{"s3", st.S3Endpoint, "S3_ENDPOINT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != env[tt.env] {
				t.Errorf("endpoint = %q, want %s's %q", tt.got, tt.env, env[tt.env])
			}
		})
	}
	for _, svc := range st.services {
		if svc.Managed || svc.proc != nil {
			t.Errorf("%s was started, want it taken from the environment", svc.Name)
		}
	}
}

func TestEphemeral(t *testing.T) {
	ctx := context.Background()
	var log strings.Builder
	st, err := Start(ctx, Options{Ephemeral: true, Getenv: noEnv, Log: &log})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Logf("Start printed:\n%s", log.String())
	pg, dyn := st.services[0], st.services[1]
	checkServices(t, st)
	if err := st.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	checkStopped(t, st)
	if _, err := os.Stat(pg.dataDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ephemeral data %s left after Stop (stat: %v)", pg.dataDir, err)
	}
	for _, svc := range []*Service{pg, dyn} {
		if !strings.Contains(log.String(), svc.Endpoint) {
			t.Errorf("log does not say where %s is: %q", svc.Name, log.String())
		}
	}
}

// checkServices checks that each service answers and that the bucket exists.
func checkServices(t *testing.T, st *Stack) {
	t.Helper()
	ctx := context.Background()
	if err := ping(ctx, st.DatabaseURL); err != nil {
		t.Errorf("postgres: %v", err)
	}
	if err := httpOK(ctx, st.DynamoEndpoint); err != nil {
		t.Errorf("dynalite: %v", err)
	}
	if err := httpOK(ctx, st.S3Endpoint+"/media-catalog-images"); err != nil {
		t.Errorf("s3 bucket: %v", err)
	}
	if !strings.HasPrefix(st.DatabaseURL, "postgres://postgres@127.0.0.1:") {
		t.Errorf("DatabaseURL = %q, want a loopback superuser URL", st.DatabaseURL)
	}
}

// checkStopped checks that no process of the stack's is left and nothing listens.
func checkStopped(t *testing.T, st *Stack) {
	t.Helper()
	for _, svc := range st.services {
		if svc.proc != nil {
			if err := syscall.Kill(-svc.proc.pid(), 0); !errors.Is(err, syscall.ESRCH) {
				t.Errorf("%s: process group %d still exists after Stop (kill 0: %v)", svc.Name, svc.proc.pid(), err)
			}
		}
		if strings.HasPrefix(svc.Endpoint, "http") {
			if err := httpOK(context.Background(), svc.Endpoint); err == nil {
				t.Errorf("%s still answers at %s after Stop", svc.Name, svc.Endpoint)
			}
		}
	}
}

// persistentDir returns a data folder that the postgres user can reach when the tests
// run as root (t.TempDir's folders are private to their owner).
func persistentDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "stack-test-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

func TestPersistentDataSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	opts := Options{Dir: persistentDir(t), Getenv: noEnv}

	st, err := Start(ctx, opts)
	if err != nil {
		t.Fatalf("first Start: %v", err)
	}
	checkServices(t, st)
	write(t, st)
	if err := st.Stop(); err != nil {
		t.Fatalf("first Stop: %v", err)
	}
	checkStopped(t, st)

	st, err = Start(ctx, opts)
	if err != nil {
		t.Fatalf("second Start: %v", err)
	}
	read(t, st)
	// A killed run: the postmaster and dynalite die without cleaning up.
	for _, svc := range st.services {
		if svc.proc != nil {
			_ = syscall.Kill(-svc.proc.pid(), syscall.SIGKILL)
			<-svc.proc.done
		}
	}
	if err := st.Stop(); err != nil {
		t.Fatalf("Stop after kill: %v", err)
	}
	if _, err := os.Stat(filepath.Join(opts.Dir, "postgres", "postmaster.pid")); err != nil {
		t.Fatalf("the killed postmaster left no lock file to test with: %v", err)
	}

	st, err = Start(ctx, opts)
	if err != nil {
		t.Fatalf("Start after a killed run: %v", err)
	}
	defer st.Stop()
	read(t, st)
}

// write stores a row, a table and an object; read finds them again.
func write(t *testing.T, st *Stack) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, st.DatabaseURL)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE TABLE kept (v text); INSERT INTO kept VALUES ('pg')"); err != nil {
		t.Fatalf("postgres write: %v", err)
	}
	dynamoCall(t, st.DynamoEndpoint, "CreateTable",
		`{"TableName":"kept","BillingMode":"PAY_PER_REQUEST","AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}],"KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}]}`)
	req, _ := http.NewRequest(http.MethodPut, st.S3Endpoint+"/media-catalog-images/kept.txt", strings.NewReader("s3"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("s3 write: %v %v", err, resp)
	}
	resp.Body.Close()
}

func read(t *testing.T, st *Stack) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, st.DatabaseURL)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(ctx)
	var v string
	if err := conn.QueryRow(ctx, "SELECT v FROM kept").Scan(&v); err != nil || v != "pg" {
		t.Errorf("postgres read: %q, %v", v, err)
	}
	if out := dynamoCall(t, st.DynamoEndpoint, "ListTables", `{}`); !strings.Contains(out, `"kept"`) {
		t.Errorf("dynalite lost its table: ListTables = %s", out)
	}
	resp, err := http.Get(st.S3Endpoint + "/media-catalog-images/kept.txt")
	if err != nil {
		t.Fatalf("s3 read: %v", err)
	}
	defer resp.Body.Close()
	if body, _ := io.ReadAll(resp.Body); resp.StatusCode != http.StatusOK || string(body) != "s3" {
		t.Errorf("s3 read: %s %q", resp.Status, body)
	}
}

// dynamoCall sends one DynamoDB JSON request (dynalite checks the form of the
// signature, not its value).
func dynamoCall(t *testing.T, endpoint, op, body string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "DynamoDB_20120810."+op)
	req.Header.Set("X-Amz-Date", time.Now().UTC().Format("20060102T150405Z"))
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=local/20200101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("dynamo %s: %v", op, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("dynamo %s: %s %s", op, resp.Status, out)
	}
	return string(out)
}

func TestSecondStackOnSameDirFails(t *testing.T) {
	ctx := context.Background()
	opts := Options{Dir: persistentDir(t), Getenv: noEnv}
	st, err := Postgres(ctx, opts)
	if err != nil {
		t.Fatalf("Postgres: %v", err)
	}
	defer st.Stop()
	second, err := Postgres(ctx, opts)
	if err == nil {
		second.Stop()
		t.Fatal("a second server on the same data folder started, want an error")
	}
	if !strings.Contains(err.Error(), "already runs") {
		t.Errorf("error = %v, want it to name the running server", err)
	}
}

// The helper process starts services and waits to be killed; its children must die
// with it.
func TestChildrenDieWithKilledParent(t *testing.T) {
	if os.Getenv("STACK_TEST_HELPER") == "1" {
		st, err := Start(context.Background(), Options{Ephemeral: true, Getenv: noEnv})
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		for _, svc := range st.services {
			if svc.proc != nil {
				fmt.Printf("pid %d dir %q\n", svc.proc.pid(), svc.dataDir)
			}
		}
		fmt.Println("ready")
		time.Sleep(time.Minute)
		os.Exit(0)
	}

	cmd := exec.Command(os.Args[0], "-test.run=^TestChildrenDieWithKilledParent$")
	cmd.Env = append(os.Environ(), "STACK_TEST_HELPER=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pids []int
	scanner := bufio.NewScanner(out)
	for scanner.Scan() {
		line := scanner.Text()
		if line == "ready" {
			break
		}
		var pid int
		var dir string
		if _, err := fmt.Sscanf(line, "pid %d dir %q", &pid, &dir); err == nil {
			pids = append(pids, pid)
			if dir != "" {
				t.Cleanup(func() { _ = os.RemoveAll(dir) }) // a killed parent cannot delete it
			}
			continue
		}
		t.Logf("helper: %s", line)
	}
	if len(pids) != 2 {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("helper started %d child processes (%v), want 2", len(pids), pids)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()

	deadline := time.Now().Add(20 * time.Second)
	for _, pid := range pids {
		for syscall.Kill(-pid, 0) == nil {
			if time.Now().After(deadline) {
				_ = syscall.Kill(-pid, syscall.SIGKILL)
				t.Fatalf("process group %d outlived its killed parent", pid)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// From a fresh clone (no node_modules), Dynalite installs the locked packages and runs
// dynalite with on-disk storage, which needs classic-level's prebuilt binding.
func TestDynaliteInstallsDependencies(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	clone := t.TempDir()
	pkg := filepath.Join(clone, "infra", "local", "dynalite")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"package.json", "package-lock.json"} {
		b, err := os.ReadFile(filepath.Join(root, "infra", "local", "dynalite", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(pkg, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(clone, "go.mod"), []byte("module "+modulePath+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(clone)

	var log strings.Builder
	svc, err := Dynalite(context.Background(), Options{Dir: filepath.Join(clone, ".local"), Getenv: noEnv, Log: &log})
	if err != nil {
		t.Fatalf("Dynalite: %v", err)
	}
	defer svc.Stop()
	if !strings.Contains(log.String(), "npm ci") {
		t.Errorf("log = %q, want it to say npm ci ran", log.String())
	}
	dynamoCall(t, svc.Endpoint, "ListTables", `{}`)
	if _, err := os.Stat(filepath.Join(clone, ".local", "dynamo", "CURRENT")); err != nil {
		t.Errorf("no LevelDB store in .local/dynamo: %v", err)
	}
}

func TestCheckPostmasterPID(t *testing.T) {
	self := strconv.Itoa(os.Getpid()) // alive, and not a postgres server
	tests := []struct {
		name     string
		content  string // "" for no lock file
		wantLock bool   // the lock file is still there afterwards
	}{
		{"no lock", "", false},
		{"garbage", "not a pid\n", false},
		{"pid reused by another program", self + "\n/data\n", false},
		{"process gone", "2147483646\n/data\n", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			lock := filepath.Join(dir, "postmaster.pid")
			if tt.content != "" {
				if err := os.WriteFile(lock, []byte(tt.content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if err := checkPostmasterPID(dir); err != nil {
				t.Fatalf("checkPostmasterPID: %v", err)
			}
			_, err := os.Stat(lock)
			if got := err == nil; got != tt.wantLock {
				t.Errorf("lock file present = %v, want %v", got, tt.wantLock)
			}
		})
	}
}

func TestCompareVersions(t *testing.T) {
	tests := []struct {
		a, b string
		want int // sign
	}{
		{"15", "16", -1},
		{"9.6", "15", -1},
		{"16", "16", 0},
		{"17", "9.6", 1},
	}
	for _, tt := range tests {
		t.Run(tt.a+" vs "+tt.b, func(t *testing.T) {
			got := compareVersions(tt.a, tt.b)
			if (got < 0) != (tt.want < 0) || (got > 0) != (tt.want > 0) {
				t.Errorf("compareVersions(%q, %q) = %d, want sign %d", tt.a, tt.b, got, tt.want)
			}
		})
	}
}

// TestPostgresPortAndFreeze: a persistent cluster restarted with PostgresPort comes
// back at the same address with its data; a port taken by another is refused, not
// swapped for another; a frozen cluster holds its clients without an answer until it
// is thawed.
func TestPostgresPortAndFreeze(t *testing.T) {
	ctx := context.Background()
	dir := persistentDir(t)
	pg, err := Postgres(ctx, Options{Dir: dir, Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, pg.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "CREATE TABLE kept (v text); INSERT INTO kept VALUES ('pg')"); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)

	thaw, err := pg.Freeze()
	if err != nil {
		t.Fatal(err)
	}
	frozenCtx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	_, err = pgx.Connect(frozenCtx, pg.Endpoint)
	cancel()
	thaw()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("connect to a frozen cluster: %v, want the deadline to pass", err)
	}
	if err := ping(ctx, pg.Endpoint); err != nil {
		t.Errorf("after thaw: %v", err)
	}

	u, err := url.Parse(pg.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatalf("port of %s: %v", pg.Endpoint, err)
	}
	old := pg.Endpoint
	if err := pg.Stop(); err != nil {
		t.Fatal(err)
	}
	pg, err = Postgres(ctx, Options{Dir: dir, Getenv: noEnv, PostgresPort: port})
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Stop()
	if pg.Endpoint != old {
		t.Errorf("restarted at %s, want %s", pg.Endpoint, old)
	}
	conn, err = pgx.Connect(ctx, pg.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var v string
	if err := conn.QueryRow(ctx, "SELECT v FROM kept").Scan(&v); err != nil || v != "pg" {
		t.Errorf("after the restart: %q, %v", v, err)
	}

	// The port is taken now (by the running cluster): a second cluster must not take
	// another.
	if other, err := Postgres(ctx, Options{Dir: persistentDir(t), Getenv: noEnv, PostgresPort: port}); err == nil {
		other.Stop()
		t.Errorf("a second cluster on the taken port %d started at %s", port, other.Endpoint)
	} else if !strings.Contains(err.Error(), "taken") {
		t.Errorf("a second cluster on the taken port: %v, want the port named taken", err)
	}
}
