// Package faults_test runs the service against sick dependencies: its own PostgreSQL,
// dynalite and S3 stand-in (never the shared ones), stopped, restarted, frozen,
// refused and silenced, and holds what a client sees then to the design: a Response
// Model within the request's deadline, recovery without a restart, no orphan object
// and no row pointing at a missing one.
package faults_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/jackc/pgx/v5"

	"github.com/mediacatalog/service/infra/local/demo"
	"github.com/mediacatalog/service/infra/local/localservices"
	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/app"
	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/config"
	"github.com/mediacatalog/service/shared/deadlines"
	"github.com/mediacatalog/service/shared/httpapi"
	"github.com/mediacatalog/service/shared/lambdahttp"
	"github.com/mediacatalog/service/shared/postgres"
	"github.com/mediacatalog/service/shared/postgres/migrate"
)

// bound is the loose upper bound on an answer under a fault, with the functions' real
// timeouts: the dependency budget, the grace for cleanups, and slack for a busy
// machine (a correctness bound, not a benchmark; far below the functions' timeouts).
const (
	bound  = deadlines.Budget + deadlines.Grace + 3*time.Second
	region = "us-east-1"
)

func noEnv(string) string { return "" }

// rig is the service on a real HTTP server (lambdahttp's, with its write timeout) over
// private backing services, each behind a relay with a fixed address.
type rig struct {
	t       *testing.T // the running (sub)test
	root    *testing.T // the test whose cleanup stops the services
	dir     string
	pg      *localservices.Service
	pgProxy *proxy
	dyn     *localservices.Service
	dynPx   *proxy
	s3svc   *localservices.Service
	s3Px    *proxy
	dbURL   string
	tables  [2]string
	base    string
	client  *http.Client
	cookie  *http.Cookie
	s3c     *s3.Client
	bucket  string
}

func hostPort(t *testing.T, endpoint string) string {
	t.Helper()
	u, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

func newRig(t *testing.T) *rig {
	ctx := context.Background()
	r := &rig{t: t, root: t, tables: [2]string{"fault-state", "fault-rate"}}
	defaults, err := config.Load(noEnv)
	if err != nil {
		t.Fatal(err)
	}
	r.bucket = defaults.Bucket // the bucket localservices.S3 creates
	dir, err := os.MkdirTemp("", "mediacatalog-faults-")
	if err != nil {
		t.Fatal(err)
	}
	// PostgreSQL runs as its own user when the tests run as root: it must reach the folder.
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	r.dir = dir
	t.Cleanup(func() { _ = os.RemoveAll(dir) })

	// A persistent cluster of the test's own (it survives its restart), dynalite and
	// gofakes3 in memory; none of them the run's shared services.
	r.pg = r.startPostgres(ctx)
	r.pgProxy = newProxy(t, hostPort(t, r.pg.Endpoint))
	u, _ := url.Parse(r.pg.Endpoint)
	u.Host = r.pgProxy.Addr()
	r.dbURL = u.String()
	if err := migrate.Up(ctx, r.dbURL, nil); err != nil {
		t.Fatal(err)
	}
	db, err := postgres.Open(ctx, r.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	if err := demo.Load(ctx, db); err != nil {
		t.Fatal(err)
	}
	db.Close()

	r.dyn = r.startDynalite(ctx)
	r.dynPx = newProxy(t, hostPort(t, r.dyn.Endpoint))
	r.s3svc, err = localservices.S3(ctx, localservices.Options{Ephemeral: true, Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.s3svc.Stop() })
	r.s3Px = newProxy(t, hostPort(t, r.s3svc.Endpoint))
	r.s3c = s3.New(s3.Options{
		Region: region, BaseEndpoint: aws.String(r.s3svc.Endpoint), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", ""),
	})

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r.base = "http://" + ln.Addr().String()
	env := map[string]string{
		"DB_ENV":                     "test",
		"JWT_SECRET":                 "fault-test-secret-0123456789abcdefgh",
		"DATABASE_URL":               r.dbURL,
		"DYNAMODB_ENDPOINT":          "http://" + r.dynPx.Addr(),
		"OAUTH_STATE_TABLE":          r.tables[0],
		"RATE_LIMIT_TABLE":           r.tables[1],
		"OAUTH_GOOGLE_CLIENT_ID":     "fault-client",
		"OAUTH_GOOGLE_CLIENT_SECRET": "fault-secret",
		"S3_ENDPOINT":                "http://" + r.s3Px.Addr(),
		"FILE_SERVICE":               "true",
		"AVATAR_NOTIFIER":            "http",
		"CDN_URL":                    r.base,
		"LOG_LEVEL":                  "error",
	}
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	a := app.New(cfg, lambdahttp.NewLogger(cfg.LogLevel))
	a.Getenv = func(k string) string { return env[k] }
	t.Cleanup(a.Close)
	h, err := localHandler(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	sessions, err := a.Sessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r.cookie = testenv.SessionCookie(t, sessions, demo.AdminUserID)
	srvCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- lambdahttp.ServeListener(srvCtx, h, ln, nil) }()
	t.Cleanup(func() { stop(); <-done })
	r.client = &http.Client{
		Timeout:       deadlines.WriteTimeout + 5*time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return r
}

func (r *rig) startPostgres(ctx context.Context) *localservices.Service {
	r.t.Helper()
	pg, err := localservices.Postgres(ctx, localservices.Options{Dir: r.dir, Getenv: noEnv})
	if err != nil {
		r.t.Fatal(err)
	}
	r.root.Cleanup(func() { r.thaw(); _ = pg.Stop() })
	return pg
}

func (r *rig) startDynalite(ctx context.Context) *localservices.Service {
	r.t.Helper()
	d, err := localservices.Dynalite(ctx, localservices.Options{Ephemeral: true, Getenv: noEnv})
	if err != nil {
		r.t.Fatal(err)
	}
	r.root.Cleanup(func() { _ = d.Stop() })
	if err := localservices.EnsureTables(ctx, d.Endpoint, region, r.tables[:]...); err != nil {
		r.t.Fatal(err)
	}
	return d
}

// postgresPIDs are the PostgreSQL server's processes: the postmaster (its pid file's
// first line) and its children. Each backend is a session of its own (setsid), so
// signalling the postmaster's process group would not reach them.
func (r *rig) postgresPIDs() []int {
	b, err := os.ReadFile(filepath.Join(r.dir, "postgres", "postmaster.pid"))
	if err != nil {
		return nil
	}
	master, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
	if err != nil {
		return nil
	}
	pids := []int{master}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		st, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so read after the last ')'.
		rest := string(st[bytes.LastIndexByte(st, ')')+1:])
		fields := strings.Fields(rest)
		if len(fields) > 1 && fields[1] == strconv.Itoa(master) {
			if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(f))); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// freeze stops every PostgreSQL process (SIGSTOP): connections stay open, nothing
// answers. A child that exits between the listing and its signal (a backend closing,
// an autovacuum worker done) has nothing left to freeze.
func (r *rig) freeze() {
	pids := r.postgresPIDs()
	if len(pids) == 0 {
		r.t.Fatal("no PostgreSQL processes to freeze")
	}
	frozen := 0
	for _, pid := range pids {
		switch err := syscall.Kill(pid, syscall.SIGSTOP); {
		case err == nil:
			frozen++
		case errors.Is(err, syscall.ESRCH) && pid != pids[0]:
		default:
			r.t.Fatalf("SIGSTOP %d: %v", pid, err)
		}
	}
	r.t.Logf("froze %d PostgreSQL processes", frozen)
}

// thaw resumes them (SIGCONT).
func (r *rig) thaw() {
	for _, pid := range r.postgresPIDs() {
		_ = syscall.Kill(pid, syscall.SIGCONT)
	}
}

type answer struct {
	status     int
	resp       httpapi.Response
	elapsed    time.Duration
	retryAfter string
}

// call sends one request to the server. A transport error (a closed connection, no
// answer) fails the test: every request gets an answer.
func (r *rig) call(method, path string, body any, auth bool) answer {
	r.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, r.base+path, rd)
	if err != nil {
		r.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if auth {
		req.AddCookie(r.cookie)
	}
	start := time.Now()
	res, err := r.client.Do(req)
	if err != nil {
		r.t.Errorf("%s %s: no answer after %v: %v", method, path, time.Since(start), err)
		return answer{elapsed: time.Since(start)}
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	a := answer{status: res.StatusCode, elapsed: time.Since(start), retryAfter: res.Header.Get("Retry-After")}
	if err != nil {
		r.t.Errorf("%s %s: answer cut after %v: %v", method, path, a.elapsed, err)
	}
	if res.StatusCode >= 400 {
		if err := json.Unmarshal(data, &a.resp); err != nil || a.resp.Code != res.StatusCode {
			r.t.Errorf("%s %s: %d is not a Response Model: %.200q", method, path, res.StatusCode, data)
		}
	}
	return a
}

// expect checks an answer under a fault: status, message, and time within bound.
func (r *rig) expect(what string, a answer, status int, msg string) {
	r.t.Helper()
	r.t.Logf("%s: %d %q after %v", what, a.status, a.resp.Data, a.elapsed.Round(time.Millisecond))
	if a.status != status || (msg != "" && a.resp.Data != msg) {
		r.t.Errorf("%s: %d %q, want %d %q", what, a.status, a.resp.Data, status, msg)
	}
	if a.elapsed > bound {
		r.t.Errorf("%s: answered after %v, beyond the deadline's bound %v", what, a.elapsed, bound)
	}
}

// recovers polls a request until it answers want (the service was not restarted).
func (r *rig) recovers(what, method, path string, body func() any, auth bool, want int) {
	r.t.Helper()
	start := time.Now()
	for tries := 1; ; tries++ {
		var b any
		if body != nil {
			b = body()
		}
		a := r.call(method, path, b, auth)
		if a.status == want {
			r.t.Logf("%s: recovered, %d after %d request(s), %v", what, want, tries, time.Since(start).Round(time.Millisecond))
			return
		}
		if time.Since(start) > 20*time.Second {
			r.t.Fatalf("%s: still %d %q after %d requests", what, a.status, a.resp.Data, tries)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (r *rig) query(sql string, args ...any) string {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, r.dbURL)
	if err != nil {
		r.t.Fatal(err)
	}
	defer conn.Close(ctx)
	var out string
	if err := conn.QueryRow(ctx, sql, args...).Scan(&out); err != nil {
		r.t.Fatalf("%s: %v", sql, err)
	}
	return out
}

// objects lists the bucket's keys under prefix, straight from the S3 stand-in.
func (r *rig) objects(prefix string) []string {
	r.t.Helper()
	out, err := r.s3c.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: aws.String(r.bucket), Prefix: aws.String(prefix)})
	if err != nil {
		r.t.Fatal(err)
	}
	var keys []string
	for _, o := range out.Contents {
		keys = append(keys, aws.ToString(o.Key))
	}
	sort.Strings(keys)
	return keys
}

// imagesConsistent: user id's row points at objects that exist, and no other object of
// the user is left in the bucket.
func (r *rig) imagesConsistent(id int) string {
	r.t.Helper()
	ref := r.query(`SELECT coalesce(profile_image, '') FROM users WHERE id = $1`, id)
	keys := r.objects(fmt.Sprintf("users/%d/", id))
	if ref == "" {
		if len(keys) != 0 {
			r.t.Errorf("user %d has no image, but the bucket holds %v", id, keys)
		}
		return ref
	}
	dir := strings.TrimSuffix(ref, filepath.Ext(ref)) + "/"
	if len(keys) != 2 || !strings.HasPrefix(keys[0], dir) || !strings.HasPrefix(keys[1], dir) {
		r.t.Errorf("user %d points at %s; the bucket holds %v", id, ref, keys)
	}
	return ref
}

var uploadSeq int

// upload is a body for the upload routes: a small PNG, different each time.
func upload() any {
	uploadSeq++
	m := image.NewNRGBA(image.Rect(0, 0, 16, 16))
	for i := range m.Pix {
		m.Pix[i] = byte(uploadSeq*31 + i)
	}
	m.Set(0, 0, color.NRGBA{A: 255})
	var b bytes.Buffer
	_ = png.Encode(&b, m)
	return map[string]string{"image": "data:image/png;base64," + base64.StdEncoding.EncodeToString(b.Bytes())}
}

// TestFaults runs the faults one after another on one service that is never restarted.
func TestFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own PostgreSQL, dynalite and S3")
	}
	r := newRig(t)
	r.expect("healthy GET /tags", r.call("GET", "/tags?client=1", nil, false), 200, "")

	t.Run("client half-closes", func(t *testing.T) {
		r.t = t
		// The request, then the client's side of the connection shut (net/http cancels
		// the request's context on the EOF): the client still reads a whole answer.
		for _, raw := range []string{
			"GET /tags?client=1 HTTP/1.1\r\nHost: api\r\nConnection: close\r\n\r\n",
			"POST /admin-roles/add HTTP/1.1\r\nHost: api\r\nConnection: close\r\nContent-Type: application/json\r\n" +
				"Cookie: " + r.cookie.String() + "\r\nContent-Length: 41\r\n\r\n" + `{"name":"half-closed","description":"d"}` + " ",
		} {
			c, err := net.Dial("tcp", strings.TrimPrefix(r.base, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.WriteString(c, raw); err != nil {
				t.Fatal(err)
			}
			_ = c.(*net.TCPConn).CloseWrite()
			_ = c.SetReadDeadline(time.Now().Add(bound))
			res, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatalf("%.30s: no answer after a half-close: %v", raw, err)
			}
			body, err := io.ReadAll(res.Body)
			c.Close()
			t.Logf("%.30q after a half-close: %d %.60s", raw, res.StatusCode, body)
			if err != nil || res.StatusCode != 200 {
				t.Errorf("%.30s: %d %s (%v), want 200", raw, res.StatusCode, body, err)
			}
		}
		if n := r.query(`SELECT count(*)::text FROM roles WHERE name = 'half-closed'`); n != "1" {
			t.Errorf("the role added by the half-closed client: %s rows, want 1 (it was answered 200)", n)
		}
	})

	t.Run("postgres stopped and restarted", func(t *testing.T) {
		r.t = t
		if err := r.pg.Stop(); err != nil {
			t.Fatal(err)
		}
		r.expect("GET /tags", r.call("GET", "/tags?client=1", nil, false), 503, apperr.MsgUnavailable)
		r.expect("GET /publisher/slug/kodansha", r.call("GET", "/publisher/slug/kodansha", nil, false), 503, apperr.MsgUnavailable)
		r.expect("POST /admin-roles/add", r.call("POST", "/admin-roles/add", map[string]string{"name": "while-down", "description": "d"}, true), 500, "Internal server error")
		r.pg = r.startPostgres(context.Background())
		r.pgProxy.forward(hostPort(t, r.pg.Endpoint))
		r.recovers("GET /tags", "GET", "/tags?client=1", nil, false, 200)
		if n := r.query(`SELECT count(*)::text FROM roles WHERE name = 'while-down'`); n != "0" {
			t.Errorf("the role added while PostgreSQL was down exists (%s rows)", n)
		}
	})

	t.Run("postgres frozen past the deadline", func(t *testing.T) {
		r.t = t
		frozen := true
		defer func() {
			if frozen { // also after a failed freeze: the processes stopped before it
				r.thaw()
			}
		}()
		r.freeze()
		type req struct {
			name, method, path string
			body               any
			auth               bool
			status             int
			msg                string
		}
		// A read a dependency failed is 503; a write keeps the 500 of the OpenAPI document.
		reqs := []req{
			{"GET /tags", "GET", "/tags?client=1", nil, false, 503, apperr.MsgUnavailable},
			{"GET /publishers", "GET", "/publishers?client=1", nil, false, 503, apperr.MsgUnavailable},
			{"POST /admin-roles/add", "POST", "/admin-roles/add", map[string]string{"name": "while-frozen", "description": "d"}, true, 500, apperr.MsgInternal},
			{"POST /admin-users/update-image/2", "POST", "/admin-users/update-image/2", upload(), true, 500, apperr.MsgInternal},
			{"GET /admin-users", "GET", "/admin-users", nil, true, 503, apperr.MsgUnavailable},
		}
		answers := make([]answer, len(reqs))
		var wg sync.WaitGroup
		for i, q := range reqs {
			wg.Go(func() { answers[i] = r.call(q.method, q.path, q.body, q.auth) })
		}
		wg.Wait()
		for i, q := range reqs {
			r.expect(q.name, answers[i], q.status, q.msg)
		}
		r.thaw()
		frozen = false
		r.recovers("GET /tags", "GET", "/tags?client=1", nil, false, 200)
		if n := r.query(`SELECT count(*)::text FROM roles WHERE name = 'while-frozen'`); n != "0" {
			t.Errorf("the role added while PostgreSQL was frozen exists (%s rows), yet the client was told 500", n)
		}
		r.imagesConsistent(2)
		r.expect("POST /admin-roles/add after", r.call("POST", "/admin-roles/add", map[string]string{"name": "after-frozen", "description": "d"}, true), 200, "")
	})

	t.Run("dynamodb stopped and restarted", func(t *testing.T) {
		r.t = t
		r.expect("healthy GET /auth/oauth/google", r.call("GET", "/auth/oauth/google", nil, false), 302, "")
		if err := r.dyn.Stop(); err != nil {
			t.Fatal(err)
		}
		r.expect("GET /auth/oauth/google", r.call("GET", "/auth/oauth/google", nil, false), 503, "Service temporarily unavailable")
		r.dyn = r.startDynalite(context.Background())
		r.dynPx.forward(hostPort(t, r.dyn.Endpoint))
		r.recovers("GET /auth/oauth/google", "GET", "/auth/oauth/google", nil, false, 302)
	})

	t.Run("s3 unreachable", func(t *testing.T) {
		r.t = t
		r.expect("healthy upload", r.call("POST", "/admin-users/update-image/2", upload(), true), 200, "")
		before := r.imagesConsistent(2)
		r.s3Px.refuse()
		r.expect("POST /admin-users/update-image/2", r.call("POST", "/admin-users/update-image/2", upload(), true), 500, "Internal server error")
		r.expect("POST /admin-contributors/update-avatar/1", r.call("POST", "/admin-contributors/update-avatar/1", upload(), true), 500, "An error occurred while updating the contributor avatar")
		r.s3Px.forward(hostPort(t, r.s3svc.Endpoint))
		if got := r.imagesConsistent(2); got != before {
			t.Errorf("the row changed from %s to %s though the upload failed", before, got)
		}
		r.recovers("upload", "POST", "/admin-users/update-image/2", upload, true, 200)
		r.imagesConsistent(2)
	})

	t.Run("s3 hanging", func(t *testing.T) {
		r.t = t
		before := r.imagesConsistent(2)
		r.s3Px.silence()
		r.expect("POST /admin-users/update-image/2", r.call("POST", "/admin-users/update-image/2", upload(), true), 500, "Internal server error")
		r.s3Px.forward(hostPort(t, r.s3svc.Endpoint))
		if got := r.imagesConsistent(2); got != before {
			t.Errorf("the row changed from %s to %s though the upload failed", before, got)
		}
		r.recovers("upload", "POST", "/admin-users/update-image/2", upload, true, 200)
		r.imagesConsistent(2)
	})
}

func TestMain(m *testing.M) { testenv.Main(m) }
