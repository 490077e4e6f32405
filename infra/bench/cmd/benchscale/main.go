// Command benchscale measures every read route of the API and every admin write that
// checks access on a large generated catalog (make bench-scale; the routes and the
// exceptions are in routes.go and routes_test.go). Run under withstack with the stack
// folder of one size:
//
//	go run ./infra/local/cmd/withstack -dir .scale/1000000 -- \
//	    go run ./infra/bench/cmd/benchscale -scale 1000000 -port 3500 -out .scale/after-1000000.json
//
// It migrates, loads the demo data, generates the catalog into client 2 (once: the
// folder keeps it for later runs), serves the whole API in this process on -port (the
// same handler as make run; -url measures a server started elsewhere instead), and sends
// each route's requests one after the other after a warm-up, as the demo full admin,
// writing p50/p95/p99 per route to -out, beside those of a few statements timed alone
// (benchStatements: the work the growing routes cannot skip, and a reference of the
// machine's speed). A write that answers anything but 200 stops the run. Then each
// route again with a new database connection per request (-fresh) through PgBouncer in
// transaction mode, as the functions reach the database through RDS Proxy (-pooler;
// needs pgbouncer, which make bench-scale installs), and with -direct also straight to
// PostgreSQL. With -report it prints the table of result files instead:
//
//	go run ./infra/bench/cmd/benchscale -report .scale/after-10000.json .scale/after-1000000.json
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mediacatalog/service/infra/cmdrun"
	"github.com/mediacatalog/service/infra/local/demo"
	"github.com/mediacatalog/service/infra/local/localservices"
	"github.com/mediacatalog/service/infra/ops/dbroles"
	"github.com/mediacatalog/service/shared/app"
	"github.com/mediacatalog/service/shared/auth"
	"github.com/mediacatalog/service/shared/config"
	"github.com/mediacatalog/service/shared/lambdahttp"
	"github.com/mediacatalog/service/shared/postgres"
	"github.com/mediacatalog/service/shared/postgres/migrate"
	"github.com/mediacatalog/service/shared/routegroups"
)

func main() {
	cmdrun.Main("benchscale", func(ctx context.Context) error { return run(ctx, os.Args[1:], os.Getenv, os.Stdout) })
}

// client is the generated catalog's client.
const client = 2

// Result is one route's figures.
type Result struct {
	Route string `json:"route"`
	Label string `json:"label"` // the route with its deep offset named, same at every size
	// Pass: "warm" (the server's pool kept), "fresh" (a new connection straight to
	// PostgreSQL per request), "pooler" (a new connection through PgBouncer per request)
	// or "statement" (SQL timed alone); "" in older files (told by the label).
	Pass     string  `json:"pass,omitempty"`
	Method   string  `json:"method,omitempty"`
	Requests int     `json:"requests"`
	P50      float64 `json:"p50_ms"`
	P95      float64 `json:"p95_ms"`
	P99      float64 `json:"p99_ms"`
	Bytes    int     `json:"bytes"`
	Status   int     `json:"status"`
}

// Run is the result file of one size.
type Run struct {
	Scale int `json:"scale"`
	// HugePages: the server's shared memory was mapped in huge pages (as on RDS; see
	// make bench-scale). Without them a new backend's first touch of each 4 kB page of
	// the shared buffers is a page fault, which the fresh-connection figures then carry.
	HugePages bool     `json:"huge_pages"`
	Results   []Result `json:"results"`
}

func run(ctx context.Context, args []string, getenv func(string) string, out io.Writer) error {
	fs := flag.NewFlagSet("benchscale", flag.ContinueOnError)
	fs.SetOutput(out)
	scale := fs.Int("scale", 1000000, "series of the generated catalog")
	port := fs.Int("port", 3500, "port of the in-process server")
	url := fs.String("url", "", "measure this server instead of one in this process")
	n := fs.Int("n", 200, "requests per route (after a warm-up of n/10)")
	outFile := fs.String("out", "", "write the results here (JSON)")
	report := fs.Bool("report", false, "print the table of the result files given as arguments")
	match := fs.String("match", "", "only the routes whose path or label contains this text")
	fresh := fs.Int("fresh", 50, "requests per route on a fresh database connection each (0: none; in-process server only)")
	pooled := fs.Bool("pooler", true, "measure the fresh connections through PgBouncer in transaction mode (as RDS Proxy)")
	serverLog := fs.String("server-log", "", "append the in-process server's log (errors and the admin writes' audit records) here rather than to stderr")
	direct := fs.Bool("direct", false, "also measure the fresh connections straight to PostgreSQL (a new backend per request)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *report {
		return printReport(out, fs.Args())
	}
	env := func(k string) string {
		if v := getenv(k); v != "" {
			return v
		}
		// The OAuth routes' rate limit stays on (its DynamoDB call is part of their cost)
		// but high enough for the benchmark's requests from one address.
		return map[string]string{"DB_ENV": "local", "PORT": strconv.Itoa(*port), "AWS_REGION": "us-east-1",
			"OAUTH_RATE_LIMIT": "1000000000"}[k]
	}
	cfg, err := config.Load(env)
	if err != nil {
		return err
	}
	if err := migrate.Up(ctx, cfg.DatabaseURL, nil); err != nil {
		return err
	}
	db, err := postgres.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := demo.Benchmark(ctx, db, client, *scale, out); err != nil {
		return err
	}
	// A checkpoint before the timing: right after a generation, the server's next timed
	// checkpoint writes its gigabytes out while the routes run, and each write's commit
	// then waits on the disk: the admin writes measured the disk, not their queries
	// (docs/performance.md). After a run that generated nothing it has little to write.
	start := time.Now()
	if _, err := db.Pool.Exec(ctx, "CHECKPOINT"); err != nil {
		fmt.Fprintf(out, "checkpoint: %v (the first writes may wait on the disk)\n", err)
	} else {
		fmt.Fprintf(out, "checkpoint in %s\n", time.Since(start).Round(time.Millisecond))
	}

	sessions, err := auth.NewSessions(db, cfg)
	if err != nil {
		return err
	}
	admin, err := sessions.Issue(ctx, demo.AdminUserID)
	if err != nil {
		return err
	}
	// The server logs as a function does (its errors, and an audit record per admin
	// write: part of a write's cost), to a file when asked, so that the progress stays
	// readable.
	logTo := lambdahttp.NewLogger("error")
	if *serverLog != "" {
		f, err := os.OpenFile(*serverLog, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		logTo = slog.New(slog.NewJSONHandler(f, &slog.HandlerOptions{Level: slog.LevelError}))
	}
	base := *url
	var resetPool func() // closes the server's connections: the next request opens one
	if base == "" {
		srv, err := serve(ctx, cfg, env, *port, nil, logTo)
		if err != nil {
			return err
		}
		defer srv.close()
		base, resetPool = srv.base, srv.reset
	}

	shape, err := lookUpCatalog(ctx, db)
	if err != nil {
		return err
	}
	if err := linkAdminConnection(ctx, db); err != nil {
		return err
	}
	httpc := &http.Client{Timeout: 15 * time.Minute}
	w := &writes{db: db, tag: strconv.FormatInt(time.Now().UnixNano(), 36), ids: map[string][]int64{}}
	facts, err := loadAPI()
	if err != nil {
		return err
	}
	routes := benchRoutes(facts, shape, w)
	res := Run{Scale: *scale}
	if res.HugePages, err = sharedMemoryInHugePages(ctx, db); err != nil {
		fmt.Fprintf(out, "huge pages: cannot tell (%v)\n", err)
	} else {
		fmt.Fprintf(out, "huge pages for the shared buffers: %t\n", res.HugePages)
	}
	pass := func(kind, base string, n int, before func()) error {
		// Throwaway rows are made through the server that is measured.
		w.send = func(ctx context.Context, method, path, body string) error {
			_, _, err := send(ctx, httpc, method, base+path, body, admin.Refresh)
			return err
		}
		var selected []benchRoute
		for _, r := range routes {
			if r.matches(*match) {
				selected = append(selected, r)
			}
		}
		start := time.Now()
		for i, r := range selected {
			result, err := measure(ctx, httpc, base, r, admin.Refresh, n, before)
			if err != nil {
				return fmt.Errorf("%s %s (%s): %w", r.verb(), r.path, kind, err)
			}
			result.Pass, result.Method = kind, r.verb()
			result.Route, result.Label = r.verb()+" "+r.path, r.label
			if !strings.HasPrefix(r.label, r.verb()+" ") {
				result.Label = r.verb() + " " + r.label
			}
			fmt.Fprintf(out, "[%s %2d/%d %5.0fs] %-90.90s p50 %7.1f  p95 %7.1f  p99 %7.1f ms  %d B\n", kind, i+1, len(selected),
				time.Since(start).Seconds(), result.Label, result.P50, result.P95, result.P99, result.Bytes)
			res.Results = append(res.Results, result)
		}
		return nil
	}
	if err := pass("warm", base, *n, nil); err != nil {
		return err
	}
	for _, st := range benchStatements(shape) {
		if !strings.Contains(st.label, *match) {
			continue
		}
		result, err := measureStatement(ctx, db, st, *n)
		if err != nil {
			return fmt.Errorf("%s: %w", st.label, err)
		}
		result.Pass = "statement"
		fmt.Fprintf(out, "%-100s p50 %7.1f  p95 %7.1f  p99 %7.1f ms\n", result.Route, result.P50, result.P95, result.P99)
		res.Results = append(res.Results, result)
	}
	if *fresh == 0 || resetPool == nil {
		return writeRun(*outFile, res)
	}
	// The same routes, each request on a new connection: straight to PostgreSQL (-direct:
	// a new backend, cold caches, nothing prepared, its set-up counted in the time), and
	// through PgBouncer in transaction mode, as the functions reach the database through
	// RDS Proxy (a new client connection to the pooler, served by a warm backend). Each
	// pass starts with the connection set-up alone, the floor of its figures.
	setUp := func(kind, url string) error {
		r, err := connectionSetUp(ctx, url, *fresh)
		if err != nil {
			return fmt.Errorf("connection set-up (%s): %w", kind, err)
		}
		r.Route, r.Label, r.Pass = "(connection set-up: connect, SELECT 1)", "(connection set-up: connect, SELECT 1)", kind
		fmt.Fprintf(out, "[%s] %-90s p50 %7.1f  p95 %7.1f  p99 %7.1f ms\n", kind, r.Route, r.P50, r.P95, r.P99)
		res.Results = append(res.Results, r)
		return nil
	}
	if *direct {
		if err := setUp("fresh", cfg.DatabaseURL); err != nil {
			return err
		}
		if err := pass("fresh", base, *fresh, resetPool); err != nil {
			return err
		}
	}
	if *pooled {
		pooler, err := startPooler(ctx, cfg.DatabaseURL)
		if err != nil {
			return err
		}
		defer pooler.Stop()
		pdb, err := postgres.Open(ctx, pooler.Endpoint, postgres.WithTransactionPooler())
		if err != nil {
			return err
		}
		srv, err := serve(ctx, cfg, env, *port+1, pdb, logTo)
		if err != nil {
			return err
		}
		defer srv.close()
		if err := setUp("pooler", pooler.Endpoint); err != nil {
			return err
		}
		if err := pass("pooler", srv.base, *fresh, srv.reset); err != nil {
			return err
		}
	}
	return writeRun(*outFile, res)
}

// server is the whole API served in this process, the handler of make run.
type server struct {
	base  string // http://host:port
	reset func() // closes the pool's connections: the next request opens one
	close func()
}

// serve starts the API on port, on db when not nil (else the configuration's pool).
func serve(ctx context.Context, cfg config.Config, env func(string) string, port int, db *postgres.DB, log *slog.Logger) (*server, error) {
	a := app.New(cfg, log)
	a.Getenv = env
	if db != nil {
		a.SetDB(db)
	}
	h, err := a.Handler(ctx, routegroups.All()...)
	if err != nil {
		a.Close()
		return nil, err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("localhost", strconv.Itoa(port)))
	if err != nil {
		a.Close()
		return nil, err
	}
	sctx, cancel := context.WithCancel(ctx)
	go func() { _ = lambdahttp.ServeListener(sctx, h, ln, nil) }()
	served, err := a.DB(ctx)
	if err != nil {
		cancel()
		a.Close()
		return nil, err
	}
	closeAll := func() {
		cancel()
		a.Close()
		if db != nil {
			db.Close()
		}
	}
	return &server{base: "http://" + ln.Addr().String(), reset: served.Pool.Reset, close: closeAll}, nil
}

// startPooler puts PgBouncer in transaction mode in front of the database, logging in
// as the functions' writer role (created by dbroles, which also gives it the session
// defaults that behind a proxy come from the role).
func startPooler(ctx context.Context, dbURL string) (*localservices.Service, error) {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	if err := dbroles.Apply(ctx, conn, dbroles.Defaults); err != nil {
		return nil, err
	}
	return localservices.StartPooler(ctx, localservices.Options{Ephemeral: true}, dbURL, dbroles.Defaults.Writer)
}

// writeRun writes the results to file (nothing when file is "").
func writeRun(file string, res Run) error {
	if file == "" {
		return nil
	}
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(file, b, 0o644)
}

// benchStatement is one SQL statement to time on a warm connection, beside the routes.
type benchStatement struct {
	label string
	sql   string
	args  []any
}

// benchStatements are the least work of the routes that still grow with the catalog,
// timed alone, and a reference: the index entries an exact total or offset has to pass
// (the large publisher's links, half of the client's contributors and of its
// publishers), with no pattern tested and no row read, so that a route's figure can be set against the
// work it cannot skip; and a fixed amount of work for the server, the same at every size,
// whose growth (about 1×) shows that both sizes ran on an equally fast machine.
func benchStatements(c catalogShape) []benchStatement {
	return []benchStatement{
		{"(statement: count the large publisher's links, no pattern tested: what search=Blue's total walks)",
			`SELECT count(*) FROM series_publishers WHERE publisher_id = $1 AND client_id = $2`, []any{c.big, int64(client)}},
		{"(statement: skip half of the client's contributors, no row read: what the contributors' middle page walks)",
			`SELECT id FROM contributors WHERE client_id = $1 ORDER BY client_id, first_name, last_name, id OFFSET $2 LIMIT 1`,
			[]any{int64(client), c.contributors / 2}},
		{"(statement: skip half of the client's publishers, no row read: what the publishers' middle page walks)",
			`SELECT id FROM publishers WHERE client_id = $1 ORDER BY client_id, id OFFSET $2 LIMIT 1`, []any{int64(client), c.publishers / 2}},
		{"(reference statement: count(*) over generate_series(1, 50000), the same work at every size)",
			`SELECT count(*) FROM generate_series(1, 50000)`, nil},
	}
}

// measureStatement times n runs of st on db after a warm-up of n/10.
func measureStatement(ctx context.Context, db *postgres.DB, st benchStatement, n int) (Result, error) {
	r := Result{Route: st.label, Label: st.label, Requests: n}
	var err error
	r.P50, r.P95, r.P99, err = timeRuns(n, func() (time.Duration, error) {
		start := time.Now()
		rows, err := db.Pool.Query(ctx, st.sql, st.args...)
		if err != nil {
			return 0, err
		}
		for rows.Next() {
		}
		rows.Close()
		return time.Since(start), rows.Err()
	})
	return r, err
}

// measure sends route r's requests to the server at base one after the other, a
// warm-up of n/10 and n timed, with before (when not nil) ahead of each, untimed. A
// write's rows are prepared before and removed after, and its requests padded to a
// multiple of its cycle, untimed, so that the data ends as it began. Any status but 200
// fails the run: an error is not a figure.
func measure(ctx context.Context, c *http.Client, base string, r benchRoute, token string, n int, before func()) (Result, error) {
	var res Result
	total := max(1, n/10) + n
	if r.prepare != nil {
		if err := r.prepare(ctx, total); err != nil {
			return res, fmt.Errorf("prepare: %w", err)
		}
	}
	i := 0
	request := func() (string, string) {
		path, body := r.path, ""
		if r.target != nil {
			path = r.target(i)
		}
		if r.body != nil {
			body = r.body(i)
		}
		i++
		return path, body
	}
	once := func() (time.Duration, error) {
		if before != nil {
			before()
		}
		path, body := request()
		d, size, err := send(ctx, c, r.verb(), base+path, body, token)
		res.Bytes = size
		return d, err
	}
	var err error
	res.Requests, res.Status = n, http.StatusOK
	res.P50, res.P95, res.P99, err = timeRuns(n, once)
	for err == nil && r.cycle > 1 && i%r.cycle != 0 {
		path, body := request()
		_, _, err = send(ctx, c, r.verb(), base+path, body, token)
	}
	if r.cleanup != nil {
		if cerr := r.cleanup(ctx); cerr != nil && err == nil {
			err = fmt.Errorf("clean up: %w", cerr)
		}
	}
	return res, err
}

// send makes one request as the holder of token and returns its duration (until the
// body is read) and the body's size; a status other than 200 is an error.
func send(ctx context.Context, c *http.Client, method, url, body, token string) (time.Duration, int, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, 0, err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.AddCookie(&http.Cookie{Name: "refreshToken", Value: token})
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return 0, 0, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	d := time.Since(start)
	if err != nil {
		return 0, 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, 0, fmt.Errorf("%s %s: status %d: %.200s", method, url, resp.StatusCode, b)
	}
	return d, len(b), nil
}

// timeRuns runs once n/10 times to warm up, then n times, and returns the p50, p95 and
// p99 in milliseconds of the durations it reports.
func timeRuns(n int, once func() (time.Duration, error)) (p50, p95, p99 float64, err error) {
	for range max(1, n/10) {
		if _, err := once(); err != nil {
			return 0, 0, 0, err
		}
	}
	ms := make([]float64, 0, n)
	for range n {
		d, err := once()
		if err != nil {
			return 0, 0, 0, err
		}
		ms = append(ms, float64(d.Microseconds())/1000)
	}
	p50, p95, p99 = percentiles(ms)
	return p50, p95, p99, nil
}

// percentiles returns the p50, p95 and p99 of ms (sorted in place).
func percentiles(ms []float64) (p50, p95, p99 float64) {
	slices.Sort(ms)
	pct := func(p float64) float64 { return ms[min(len(ms)-1, int(p*float64(len(ms))))] }
	return pct(0.50), pct(0.95), pct(0.99)
}

// connectionSetUp times n new connections to the database, each opened, asked SELECT 1
// and closed: the part of a fresh-connection request that is the server starting a
// backend (a fork) and its first exchange with the client, whatever the catalog's size.
func connectionSetUp(ctx context.Context, url string, n int) (Result, error) {
	r := Result{Route: "(connection set-up: connect, SELECT 1)", Requests: n}
	r.Label = r.Route
	ms := make([]float64, 0, n)
	for range n {
		start := time.Now()
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			return r, err
		}
		_, err = conn.Exec(ctx, "SELECT 1")
		ms = append(ms, float64(time.Since(start).Microseconds())/1000)
		conn.Close(ctx)
		if err != nil {
			return r, err
		}
	}
	r.P50, r.P95, r.P99 = percentiles(ms)
	return r, nil
}

// sharedMemoryInHugePages reports whether the server's shared memory is mapped in huge
// pages: a hugetlb mapping (KernelPageSize 2048 kB) in the postmaster's smaps. Linux,
// with the server on this machine and a session allowed to read data_directory.
func sharedMemoryInHugePages(ctx context.Context, db *postgres.DB) (bool, error) {
	var dir string
	if err := db.Pool.QueryRow(ctx, "SHOW data_directory").Scan(&dir); err != nil {
		return false, err
	}
	pidFile, err := os.ReadFile(filepath.Join(dir, "postmaster.pid"))
	if err != nil {
		return false, err
	}
	pid, _, _ := strings.Cut(string(pidFile), "\n")
	smaps, err := os.ReadFile(filepath.Join("/proc", strings.TrimSpace(pid), "smaps"))
	if err != nil {
		return false, err
	}
	return hugePageMapping.Match(smaps), nil
}

var hugePageMapping = regexp.MustCompile(`(?m)^KernelPageSize:\s+2048 kB$`)
