// Command benchscale measures the paged lists on a large generated catalog (make
// bench-scale). Run under withstack with the stack folder of one size:
//
//	go run ./infra/cmd/withstack -dir .scale/1000000 -- \
//	    go run ./infra/cmd/benchscale -scale 1000000 -port 3500 -out .scale/after-1000000.json
//
// It migrates, loads the demo data, generates the catalog into client 2 (once: the
// folder keeps it for later runs), serves the whole API in this process on -port (the
// same handler as make run; -url measures a server started elsewhere instead), and sends
// each route's requests one after the other after a warm-up, writing p50/p95/p99 per
// route to -out, beside those of a few statements timed alone (benchStatements: the
// work the growing routes cannot skip, and a reference of the machine's speed). Then
// each route again with a new database connection per request
// (-fresh): straight to PostgreSQL, and through PgBouncer in transaction mode as the
// functions reach the database through RDS Proxy (-pooler; needs pgbouncer, which
// make bench-scale installs). With -report it prints the table of result files instead:
//
//	go run ./infra/cmd/benchscale -report .scale/after-10000.json .scale/after-1000000.json
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
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
	"github.com/mediacatalog/service/infra/dbroles"
	"github.com/mediacatalog/service/infra/demo"
	"github.com/mediacatalog/service/infra/localservices"
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
	Route    string  `json:"route"`
	Label    string  `json:"label"` // the route with its deep offset named, same at every size
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
	pooled := fs.Bool("pooler", true, "also measure the fresh connections through PgBouncer in transaction mode (as RDS Proxy)")
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
		return map[string]string{"DB_ENV": "local", "PORT": strconv.Itoa(*port), "AWS_REGION": "us-east-1"}[k]
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
	if err := demo.Load(ctx, db); err != nil {
		return err
	}
	start := time.Now()
	if err := demo.Generate(ctx, db, client, *scale, demo.Progress(out)); err != nil {
		return err
	}
	fmt.Fprintf(out, "catalog of %d series ready in %s\n", *scale, time.Since(start).Round(time.Millisecond))

	sessions, err := auth.NewSessions(db, cfg)
	if err != nil {
		return err
	}
	admin, err := sessions.Issue(ctx, demo.AdminUserID)
	if err != nil {
		return err
	}
	base := *url
	var resetPool func() // closes the server's connections: the next request opens one
	if base == "" {
		srv, err := serve(ctx, cfg, env, *port, nil)
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
	routes := benchRoutes(shape)
	httpc := &http.Client{Timeout: 15 * time.Minute}
	res := Run{Scale: *scale}
	if res.HugePages, err = sharedMemoryInHugePages(ctx, db); err != nil {
		fmt.Fprintf(out, "huge pages: cannot tell (%v)\n", err)
	} else {
		fmt.Fprintf(out, "huge pages for the shared buffers: %t\n", res.HugePages)
	}
	for _, r := range routes {
		if !r.matches(*match) {
			continue
		}
		result, err := measure(ctx, httpc, base+r.path, admin.Refresh, *n, nil)
		if err != nil {
			return fmt.Errorf("%s: %w", r.path, err)
		}
		result.Route, result.Label = r.path, r.label
		fmt.Fprintf(out, "%-100s p50 %7.1f  p95 %7.1f  p99 %7.1f ms  %d B  %d\n", r.path, result.P50, result.P95, result.P99, result.Bytes, result.Status)
		res.Results = append(res.Results, result)
	}
	for _, st := range benchStatements(shape) {
		if !strings.Contains(st.label, *match) {
			continue
		}
		result, err := measureStatement(ctx, db, st, *n)
		if err != nil {
			return fmt.Errorf("%s: %w", st.label, err)
		}
		fmt.Fprintf(out, "%-100s p50 %7.1f  p95 %7.1f  p99 %7.1f ms\n", result.Route, result.P50, result.P95, result.P99)
		res.Results = append(res.Results, result)
	}
	if *fresh == 0 || resetPool == nil {
		return writeRun(*outFile, res)
	}
	// The same routes, each request on a new connection: first straight to PostgreSQL (a
	// new backend: cold caches, nothing prepared, its set-up counted in the time), then
	// through PgBouncer in transaction mode, as the functions reach the database through
	// RDS Proxy (a new client connection to the pooler, served by a warm backend). Each
	// pass starts with the connection set-up alone, the floor of its figures.
	fresh1, err := freshPass(ctx, out, httpc, routes, *match, *fresh, admin.Refresh, "fresh connection", cfg.DatabaseURL, base, resetPool)
	if err != nil {
		return err
	}
	res.Results = append(res.Results, fresh1...)
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
		srv, err := serve(ctx, cfg, env, *port+1, pdb)
		if err != nil {
			return err
		}
		defer srv.close()
		fresh2, err := freshPass(ctx, out, httpc, routes, *match, *fresh, admin.Refresh, "fresh connection, pooler", pooler.Endpoint, srv.base, srv.reset)
		if err != nil {
			return err
		}
		res.Results = append(res.Results, fresh2...)
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
func serve(ctx context.Context, cfg config.Config, env func(string) string, port int, db *postgres.DB) (*server, error) {
	a := app.New(cfg, lambdahttp.NewLogger("error"))
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

// freshPass measures the connection set-up to setupURL, then each route with the
// server's pool reset before every request; kind names the pass in the labels.
func freshPass(ctx context.Context, out io.Writer, c *http.Client, routes []benchRoute, match string, n int, token, kind, setupURL, base string, reset func()) ([]Result, error) {
	setUp, err := connectionSetUp(ctx, setupURL, n)
	if err != nil {
		return nil, fmt.Errorf("connection set-up (%s): %w", kind, err)
	}
	setUp.Route = fmt.Sprintf("(connection set-up: connect, SELECT 1; %s)", kind)
	setUp.Label = setUp.Route
	fmt.Fprintf(out, "%-100s p50 %7.1f  p95 %7.1f  p99 %7.1f ms\n", setUp.Route, setUp.P50, setUp.P95, setUp.P99)
	results := []Result{setUp}
	for _, r := range routes {
		if !r.matches(match) {
			continue
		}
		result, err := measure(ctx, c, base+r.path, token, n, reset)
		if err != nil {
			return nil, fmt.Errorf("%s (%s): %w", r.path, kind, err)
		}
		result.Route, result.Label = r.path+" ("+kind+")", r.label+" ("+kind+")"
		fmt.Fprintf(out, "%-100s p50 %7.1f  p95 %7.1f  p99 %7.1f ms  %d B  %d\n", result.Route, result.P50, result.P95, result.P99, result.Bytes, result.Status)
		results = append(results, result)
	}
	return results, nil
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

// catalogShape is the generated client's shape: its large publisher (the first generated)
// with the number of its links, and the number of publishers, contributors and users.
type catalogShape struct{ big, links, publishers, contributors, users int64 }

func lookUpCatalog(ctx context.Context, db *postgres.DB) (catalogShape, error) {
	var c catalogShape
	err := db.Pool.QueryRow(ctx, `SELECT p.id,
		(SELECT count(*) FROM series_publishers WHERE publisher_id = p.id),
		(SELECT count(*) FROM publishers WHERE client_id = $2),
		(SELECT count(*) FROM contributors WHERE client_id = $2),
		(SELECT count(*) FROM users)
		FROM publishers p WHERE p.slug = $1`,
		demo.GeneratedPublisherSlug(client, 1), client).Scan(&c.big, &c.links, &c.publishers, &c.contributors, &c.users)
	if err != nil {
		return c, fmt.Errorf("look up the catalog: %w", err)
	}
	return c, nil
}

// benchRoutes are the issue's routes on the generated client: the large publisher's
// publications in every order, with a search that matches an eighth of them and one that
// matches nothing, and deep; the publishers list and its deep pages; the admin lists and
// their deep pages.
func benchRoutes(c catalogShape) []benchRoute {
	// The last page, and the page across the middle: the deepest walk from either end.
	last := func(total int64) int64 { return max(0, total-20) }
	middle := func(total int64) int64 { return max(0, total/2-10) }
	plain := func(path string) benchRoute { return benchRoute{path, path} }
	deep := func(path, where string, offset int64) benchRoute {
		return benchRoute{fmt.Sprintf("%s&offset=%d", path, offset), path + "&offset=<" + where + ">"}
	}
	pubs := fmt.Sprintf("/publisher/publications/%d?client=%d&limit=20", c.big, client)
	routes := []benchRoute{}
	for _, o := range []string{"name-asc", "name-desc", "added-asc", "added-desc"} {
		routes = append(routes, plain(pubs+"&order="+o))
	}
	publishersPage := fmt.Sprintf("/publishers?client=%d&limit=20", client)
	contributorsDesc := fmt.Sprintf("/admin-contributors?client=%d&limit=20&order=name-desc", client)
	usersRegistered := "/admin-users?limit=20&order=registered-desc"
	routes = append(routes,
		plain(pubs+"&search=Blue"),
		plain(pubs+"&search=Blue&order=added-desc"),
		plain(pubs+"&search=zzqx"),
		deep(pubs, "last page", last(c.links)),
		deep(pubs, "middle page", middle(c.links)),
		plain(publishersPage),
		plain(publishersPage+"&order=name-asc"),
		plain(publishersPage+"&search=publisher"),
		plain(publishersPage+"&search=zzqx"),
		deep(publishersPage, "last page", last(c.publishers)),
		deep(publishersPage, "middle page", middle(c.publishers)),
		plain(fmt.Sprintf("/publisher/random?client=%d", client)),
		plain(fmt.Sprintf("/admin-contributors?client=%d&limit=20", client)),
		plain(fmt.Sprintf("/admin-contributors?client=%d&limit=20&search=ta", client)),
		plain(fmt.Sprintf("/admin-contributors?client=%d&limit=20&search=kobayashi", client)),
		deep(contributorsDesc, "last page", last(c.contributors)),
		deep(contributorsDesc, "middle page", middle(c.contributors)),
		plain("/admin-users?limit=20"),
		plain("/admin-users?limit=20&search=otaku"),
		plain(fmt.Sprintf("/admin-users?limit=20&role=%d", demo.MemberRoleID)),
		deep(usersRegistered, "last page", last(c.users)),
		deep(usersRegistered, "middle page", middle(c.users)),
		plain("/publishers?client=1"),
	)
	return routes
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

// benchRoute is a route to measure and its label, which names it the same way at every
// size: a deep page's offset, which differs from size to size, becomes <last page> or
// <middle page>.
type benchRoute struct{ path, label string }

// matches reports whether the route's path or label contains text.
func (r benchRoute) matches(text string) bool {
	return strings.Contains(r.path, text) || strings.Contains(r.label, text)
}

// measure times n sequential requests to url after a warm-up of n/10; before, when not
// nil, runs ahead of each (untimed).
func measure(ctx context.Context, c *http.Client, url, token string, n int, before func()) (Result, error) {
	var r Result
	once := func() (time.Duration, error) {
		if before != nil {
			before()
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return 0, err
		}
		req.AddCookie(&http.Cookie{Name: "refreshToken", Value: token})
		start := time.Now()
		resp, err := c.Do(req)
		if err != nil {
			return 0, err
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		d := time.Since(start)
		if err != nil {
			return 0, err
		}
		if resp.StatusCode != http.StatusOK {
			return 0, fmt.Errorf("status %d: %.200s", resp.StatusCode, b)
		}
		r.Bytes, r.Status = len(b), resp.StatusCode
		return d, nil
	}
	var err error
	r.Requests = n
	r.P50, r.P95, r.P99, err = timeRuns(n, once)
	return r, err
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
// backend (a fork) and the first round trip, whatever the catalog's size.
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

// printReport prints a Markdown table: per route, p50/p95/p99 of each file and the growth
// of p95 from the first file to the last.
func printReport(out io.Writer, files []string) error {
	var runs []Run
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		var r Run
		if err := json.Unmarshal(b, &r); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		runs = append(runs, r)
	}
	if len(runs) == 0 {
		return errors.New("no result files")
	}
	fmt.Fprint(out, "| route |")
	for _, r := range runs {
		pages := ""
		if r.HugePages {
			pages = ", huge pages"
		}
		fmt.Fprintf(out, " p50/p95/p99 ms at %d%s |", r.Scale, pages)
	}
	fmt.Fprintln(out, " p95 growth |")
	fmt.Fprint(out, "|---|")
	for range runs {
		fmt.Fprint(out, "---|")
	}
	fmt.Fprintln(out, "---|")
	key := func(x Result) string {
		if x.Label != "" {
			return x.Label
		}
		return x.Route
	}
	for _, first := range runs[0].Results {
		fmt.Fprintf(out, "| `%s` |", key(first))
		var lastP95 float64
		for _, r := range runs {
			i := slices.IndexFunc(r.Results, func(x Result) bool { return key(x) == key(first) })
			if i < 0 {
				fmt.Fprint(out, " - |")
				continue
			}
			x := r.Results[i]
			fmt.Fprintf(out, " %.1f / %.1f / %.1f |", x.P50, x.P95, x.P99)
			lastP95 = x.P95
		}
		fmt.Fprintf(out, " %.1f× |\n", lastP95/first.P95)
	}
	return nil
}
