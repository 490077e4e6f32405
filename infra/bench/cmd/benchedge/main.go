// Command benchedge is make bench-edge: the public catalog served through a caching
// proxy that obeys only the origin's headers (nginx, infra/tests/edgecache), in front of the
// local server (infra/local/cmd/local, as make run runs it) on a generated catalog. It
// replays a Zipf workload over every public read route with the frontend's Origin and
// prints the hit ratio beside an ideal cache's, origin requests per 1,000 edge
// requests, the 304s among the edge's revalidations, edge latency, and the share of
// cached reads still served with PostgreSQL stopped (SIGSTOP).
//
// It runs in three phases on one clock: A, the workload; B, once the catalog answers of
// A have passed their s-maxage but are within stale-while-revalidate (a probe per kind,
// then a quarter of the workload again); C, once the answers of A that B did not
// refresh are past stale-while-revalidate too, with PostgreSQL stopped: a sample of
// the URLs that answered 200 in A (each expired one waits out the origin's database
// call), once. So it takes a little over six minutes beside the seeding.
//
// Run under infra/local/cmd/withstack (make bench-edge), which provides PostgreSQL, DynamoDB
// and S3 in the environment.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mediacatalog/service/infra/cmdrun"
	"github.com/mediacatalog/service/infra/local/demo"
	"github.com/mediacatalog/service/infra/tests/edgecache"
	"github.com/mediacatalog/service/shared/config"
	"github.com/mediacatalog/service/shared/postgres"
	"github.com/mediacatalog/service/shared/postgres/migrate"
)

func main() {
	cmdrun.Main("benchedge", func(ctx context.Context) error { return run(ctx, os.Args[1:], os.Getenv, os.Stdout) })
}

// generated is the client of the generated catalog.
const generated = 2

// The phases' offsets from the end of phase A: B within stale-while-revalidate of A's
// catalog answers (s-maxage 240 s, stale-while-revalidate 60 s), C past it.
const (
	phaseB = 242 * time.Second
	phaseC = 302 * time.Second
)

func run(ctx context.Context, args []string, getenv func(string) string, out io.Writer) error {
	fs := flag.NewFlagSet("benchedge", flag.ContinueOnError)
	fs.SetOutput(out)
	scale := fs.Int("scale", 10000, "series of the generated catalog (client 2; a tenth as many publishers and users)")
	dir := fs.String("dir", ".local/bench-edge", "folder of the local server's and the proxy's files")
	port := fs.Int("port", 3600, "port of the local server")
	n := fs.Int("n", 20000, "requests of phase A")
	conc := fs.Int("c", 16, "concurrent requests")
	s := fs.Float64("zipf", 1.1, "Zipf exponent of the URLs' popularity (> 1)")
	noOrigin := fs.Float64("no-origin", 0.1, "share of requests without an Origin (navigations, crawlers)")
	seed := fs.Int64("seed", 1, "seed of the workload")
	stopped := fs.Int("stopped", 240, "cached URLs asked with PostgreSQL stopped (each waits for the origin's database call deadline)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	absDir, err := filepath.Abs(*dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(absDir, 0o755); err != nil {
		return err
	}
	cfg, err := config.Load(func(k string) string {
		if v := getenv(k); v != "" {
			return v
		}
		return map[string]string{"DB_ENV": "local"}[k]
	})
	if err != nil {
		return err
	}
	if cfg.DatabaseURL == "" {
		return errors.New("DATABASE_URL is not set: run under infra/local/cmd/withstack (make bench-edge)")
	}

	// The catalog.
	if err := migrate.Up(ctx, cfg.DatabaseURL, nil); err != nil {
		return err
	}
	db, err := postgres.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := demo.Benchmark(ctx, db, generated, *scale, out); err != nil {
		return err
	}
	cat, err := lookUp(ctx, db.Pool)
	if err != nil {
		return err
	}
	targets := universe(cat)
	fmt.Fprintf(out, "%d URLs over %d public read routes\n", len(targets), len(kinds))

	// The local server, as make run runs it, and the proxy in front of it.
	origin, stopOrigin, err := startLocal(ctx, absDir, *port, out)
	if err != nil {
		return err
	}
	defer stopOrigin()
	addr, err := edgecache.FreeAddr()
	if err != nil {
		return err
	}
	edgeDir := filepath.Join(absDir, "nginx")
	_ = os.RemoveAll(edgeDir)
	proxy, err := edgecache.Start(ctx, edgecache.Config{Dir: edgeDir, Listen: addr, Upstream: strings.TrimPrefix(origin, "http://")})
	if err != nil {
		return err
	}
	defer proxy.Stop()
	fmt.Fprintf(out, "nginx at %s in front of %s\n", proxy.URL, origin)

	b := &bench{edge: proxy.URL, frontend: cfg.FrontendURL, client: edgecache.Client(), conc: *conc}
	// One URL of every kind first, so that each is measured however the draw falls.
	reqs := append(firstOfEachKind(targets), workload(targets, *n, *s, *noOrigin, *seed)...)

	// Phase A.
	logA := logSize(proxy)
	fmt.Fprintf(out, "phase A: %d requests\n", len(reqs))
	resA := b.replay(ctx, reqs)
	endA := time.Now()
	logB := logSize(proxy)

	// Phase B: A's catalog answers stale, within stale-while-revalidate.
	if err := sleepUntil(ctx, endA.Add(phaseB), out, "phase B"); err != nil {
		return err
	}
	probes := probesOf(resA)
	again := workload(targets, *n/4, *s, *noOrigin, *seed+1)
	resB := b.replay(ctx, append(probes, again...))
	logC := logSize(proxy)

	// Phase C: PostgreSQL stopped; A's answers that B did not refresh are past
	// stale-while-revalidate (only stale-if-error lets them out).
	if err := sleepUntil(ctx, endA.Add(phaseC), out, "phase C"); err != nil {
		return err
	}
	cached := sample(cachedURLs(resA), *stopped)
	frozen, err := freezePostgres(ctx, db.Pool)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "phase C: PostgreSQL stopped (SIGSTOP to %d processes); %d cached URLs once each\n", len(frozen), len(cached))
	b.conc = max(b.conc, 48) // each origin request waits out its database call
	resC := b.replay(ctx, cached)
	thaw(frozen)
	edgeLog, err := proxy.Log()
	if err != nil {
		return err
	}

	// Every kind with an ETag answers If-None-Match with 304 at the origin itself.
	direct := conditional(ctx, origin, b.frontend, resA)

	report(out, reportInput{
		a: resA, b: resB, c: resC, logAB: edgeLog[logA:logC], logB: edgeLog[logB:logC], direct: direct,
	})
	return nil
}

// lookUp reads the ids and slugs the URLs name.
func lookUp(ctx context.Context, q *pgxpool.Pool) (catalog, error) {
	c := catalog{clients: []int64{1, generated}, pageSize: 20}
	rows, err := q.Query(ctx, `SELECT id FROM tags WHERE client_id IN (1, $1) ORDER BY id`, int64(generated))
	if err != nil {
		return c, err
	}
	if c.tags, err = pgx.CollectRows(rows, pgx.RowTo[int64]); err != nil {
		return c, err
	}
	rows, err = q.Query(ctx, `SELECT id, slug FROM publishers WHERE client_id IN (1, $1) ORDER BY id`, int64(generated))
	if err != nil {
		return c, err
	}
	for rows.Next() {
		var p struct {
			id   int64
			slug string
		}
		if err := rows.Scan(&p.id, &p.slug); err != nil {
			return c, err
		}
		c.publishers = append(c.publishers, p)
	}
	if err := rows.Err(); err != nil {
		return c, err
	}
	rows, err = q.Query(ctx, `SELECT id FROM users ORDER BY id`)
	if err != nil {
		return c, err
	}
	if c.users, err = pgx.CollectRows(rows, pgx.RowTo[int64]); err != nil {
		return c, err
	}
	c.pubsPages = (len(c.publishers) + c.pageSize - 1) / c.pageSize
	return c, nil
}

// startLocal builds infra/local/cmd/local and runs it on port with the environment's
// services, its log in dir, until the returned function stops it.
func startLocal(ctx context.Context, dir string, port int, out io.Writer) (string, func(), error) {
	bin := filepath.Join(dir, "local")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./infra/local/cmd/local")
	build.Stdout, build.Stderr = out, out
	if err := build.Run(); err != nil {
		return "", nil, fmt.Errorf("build the local server: %w", err)
	}
	logf, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		return "", nil, err
	}
	stack := filepath.Join(dir, "stack")
	if err := os.MkdirAll(stack, 0o755); err != nil {
		return "", nil, err
	}
	cmd := exec.Command(bin, "-dir", stack, "-port", strconv.Itoa(port))
	cmd.Env = append(os.Environ(), "LOG_LEVEL=warn")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return "", nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		<-exited
		logf.Close()
	}
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	deadline := time.Now().Add(3 * time.Minute)
	for {
		resp, err := http.Get(url + "/tags?client=1")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				fmt.Fprintf(out, "local server ready at %s (log: %s)\n", url, logf.Name())
				return url, stop, nil
			}
		}
		if time.Now().After(deadline) {
			stop()
			return "", nil, fmt.Errorf("the local server is not ready after 3 minutes: see %s", logf.Name())
		}
		select {
		case err := <-exited:
			logf.Close()
			return "", nil, fmt.Errorf("the local server ended (%v): see %s", err, logf.Name())
		case <-ctx.Done():
			stop()
			return "", nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// bench sends the workload to the edge.
type bench struct {
	edge, frontend string
	client         *http.Client
	conc           int
}

// result is one answered request.
type result struct {
	request
	at      time.Time
	latency time.Duration
	status  int
	cache   string // the edge's cache status
	etag    string
	err     error
}

func (b *bench) replay(ctx context.Context, reqs []request) []result {
	res := make([]result, len(reqs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range b.conc {
		wg.Go(func() {
			for i := range next {
				res[i] = b.do(ctx, reqs[i])
			}
		})
	}
	for i := range reqs {
		next <- i
	}
	close(next)
	wg.Wait()
	return res
}

func (b *bench) do(ctx context.Context, r request) result {
	res := result{request: r, at: time.Now()}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.edge+r.path, nil)
	if err != nil {
		res.err = err
		return res
	}
	req.Header.Set("Accept-Encoding", "gzip")
	if r.origin {
		req.Header.Set("Origin", b.frontend)
	}
	resp, err := b.client.Do(req)
	if err != nil {
		res.err = err
		res.latency = time.Since(res.at)
		return res
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	res.latency = time.Since(res.at)
	res.status, res.cache, res.etag = resp.StatusCode, resp.Header.Get(edgecache.StatusHeader), resp.Header.Get("ETag")
	return res
}

// probesOf is one request per kind: the most asked URL of it that answered 200 in
// res, so that every kind is revalidated in phase B.
func probesOf(res []result) []request {
	count := map[string]int{}
	byKind := map[string]request{}
	for _, r := range res {
		if r.status == http.StatusOK {
			count[r.path]++
			if best, ok := byKind[r.kind]; !ok || count[r.path] > count[best.path] {
				byKind[r.kind] = r.request
			}
		}
	}
	var out []request
	for _, k := range kinds {
		if r, ok := byKind[k.name]; ok {
			out = append(out, r)
		}
	}
	return out
}

// cachedURLs are the URLs that answered 200 in res from a kind the edge keeps (s-maxage
// above 0), once each, with the Origin they were asked with.
func cachedURLs(res []result) []request {
	seen := map[request]bool{}
	var out []request
	for _, r := range res {
		if r.status == http.StatusOK && kindOf(r.kind).edgeTTL > 0 && !seen[r.request] {
			seen[r.request] = true
			out = append(out, r.request)
		}
	}
	return out
}

// firstOfEachKind is a request, with the Origin, for the first URL of every kind.
func firstOfEachKind(targets []target) []request {
	var out []request
	seen := map[string]bool{}
	for _, t := range targets {
		if !seen[t.kind] {
			seen[t.kind] = true
			out = append(out, request{target: t, origin: true})
		}
	}
	return out
}

// sample is at most n of reqs, evenly spread.
func sample(reqs []request, n int) []request {
	if n <= 0 || len(reqs) <= n {
		return reqs
	}
	out := make([]request, 0, n)
	for i := range n {
		out = append(out, reqs[i*len(reqs)/n])
	}
	return out
}

func sleepUntil(ctx context.Context, at time.Time, out io.Writer, what string) error {
	d := time.Until(at)
	fmt.Fprintf(out, "%s in %s\n", what, d.Round(time.Second))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func logSize(p *edgecache.Proxy) int {
	b, _ := p.Log()
	return len(b)
}

// freezePostgres stops every process of the server q is connected to (SIGSTOP):
// connections stay open, nothing answers.
func freezePostgres(ctx context.Context, q *pgxpool.Pool) ([]int, error) {
	var data string
	if err := q.QueryRow(ctx, "SHOW data_directory").Scan(&data); err != nil {
		return nil, fmt.Errorf("find PostgreSQL's data directory: %w", err)
	}
	pidFile, err := os.ReadFile(filepath.Join(data, "postmaster.pid"))
	if err != nil {
		return nil, err
	}
	master, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(pidFile), "\n", 2)[0]))
	if err != nil {
		return nil, fmt.Errorf("postmaster.pid: %w", err)
	}
	pids := []int{master}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		st, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so read after the last ')'.
		fields := strings.Fields(string(st[bytes.LastIndexByte(st, ')')+1:]))
		if len(fields) > 1 && fields[1] == strconv.Itoa(master) {
			if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(f))); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil && pid == master {
			thaw(pids)
			return nil, err
		}
	}
	return pids, nil
}

func thaw(pids []int) {
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGCONT)
	}
}

// conditional asks the origin itself, for one URL of each kind that answered 200 in
// res, with the ETag it answered: the status of that conditional request by kind.
func conditional(ctx context.Context, origin, frontend string, res []result) map[string]int {
	out := map[string]int{}
	for _, r := range res {
		if _, done := out[r.kind]; done || r.status != http.StatusOK || r.etag == "" {
			continue
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, origin+r.path, nil)
		if err != nil {
			continue
		}
		req.Header.Set("If-None-Match", r.etag)
		req.Header.Set("Accept-Encoding", "gzip")
		req.Header.Set("Origin", frontend)
		resp, err := edgecache.Client().Do(req)
		if err != nil {
			continue
		}
		resp.Body.Close()
		out[r.kind] = resp.StatusCode
	}
	return out
}

type reportInput struct {
	a, b, c     []result
	logAB, logB []byte // the proxy's log lines of phases A and B, and of B alone
	direct      map[string]int
}

// logLine is one line of the proxy's access log (edgecache.LogFields).
type logLine struct {
	uri, cache, upstream string
}

func parseLog(b []byte) []logLine {
	var out []logLine
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) < 6 {
			continue
		}
		out = append(out, logLine{uri: f[1], cache: f[4], upstream: f[5]})
	}
	return out
}

func report(out io.Writer, in reportInput) {
	ab := append(append([]result(nil), in.a...), in.b...)
	var events []event
	hits, errs := 0, 0
	var lat []time.Duration
	for _, r := range ab {
		if r.err != nil {
			errs++
			continue
		}
		events = append(events, event{at: r.at, path: r.path, kind: r.kind, origin: r.origin, status: r.status})
		if hit(r.cache) {
			hits++
		}
		lat = append(lat, r.latency)
	}
	sort.Slice(events, func(i, j int) bool { return events[i].at.Before(events[j].at) })
	ideal, idealStar := idealHits(events, true), idealHits(events, false)
	originReqs := 0
	for _, l := range parseLog(in.logAB) {
		if l.upstream != "-" && l.upstream != "" {
			originReqs++
		}
	}
	reval, notMod := map[string]int{}, map[string]int{}
	for _, l := range parseLog(in.logB) {
		switch l.cache {
		case "REVALIDATED":
			reval[kindOfPath(l.uri)]++
			notMod[kindOfPath(l.uri)]++
		case "EXPIRED":
			reval[kindOfPath(l.uri)]++
		}
	}
	slices.Sort(lat)
	pct := func(p float64) time.Duration {
		if len(lat) == 0 {
			return 0
		}
		return lat[min(len(lat)-1, int(p*float64(len(lat))))]
	}
	total := len(events)
	fmt.Fprintf(out, "\n| figure | value |\n|---|---|\n")
	fmt.Fprintf(out, "| edge requests (phases A and B) | %d (%d transport errors) |\n", total, errs)
	fmt.Fprintf(out, "| hit ratio (HIT, STALE, UPDATING, REVALIDATED) | %.4f |\n", ratio(hits, total))
	fmt.Fprintf(out, "| ideal cache's hit ratio, Origin in the key (Vary: Origin) | %.4f |\n", ratio(ideal, total))
	fmt.Fprintf(out, "| ideal cache's hit ratio, Origin not in the key (`*` for public reads) | %.4f |\n", ratio(idealStar, total))
	fmt.Fprintf(out, "| hits / ideal hits | %.4f |\n", ratio(hits, ideal))
	fmt.Fprintf(out, "| origin requests per 1,000 edge requests | %.1f |\n", 1000*ratio(originReqs, total))
	rv, nm := 0, 0
	for k := range reval {
		rv += reval[k]
		nm += notMod[k]
	}
	fmt.Fprintf(out, "| 304s among the edge's revalidations (phase B) | %d of %d |\n", nm, rv)
	fmt.Fprintf(out, "| edge p50 / p99 | %s / %s |\n", pct(0.50).Round(10*time.Microsecond), pct(0.99).Round(10*time.Microsecond))
	served, stale := 0, 0
	for _, r := range in.c {
		if r.err == nil && r.status == http.StatusOK {
			served++
			if strings.EqualFold(r.cache, "STALE") {
				stale++
			}
		}
	}
	fmt.Fprintf(out, "| cached reads served with PostgreSQL stopped | %d of %d (%.4f; %d of them stale past stale-while-revalidate) |\n",
		served, len(in.c), ratio(served, len(in.c)), stale)
	fmt.Fprintf(out, "\n| route | requests (A+B) | edge revalidations in B | of them 304 | If-None-Match at the origin |\n|---|---|---|---|---|\n")
	perKind := map[string]int{}
	for _, e := range events {
		perKind[e.kind]++
	}
	for _, k := range kinds {
		d := "-"
		if st, ok := in.direct[k.name]; ok {
			d = strconv.Itoa(st)
		}
		fmt.Fprintf(out, "| `%s` | %d | %d | %d | %s |\n", k.name, perKind[k.name], reval[k.name], notMod[k.name], d)
	}
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
