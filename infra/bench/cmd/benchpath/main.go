// Command benchpath is make bench-path: the request path's cost against bare servers
// under wrk. It runs make run's server (infra/local/cmd/local) twice, untraced and with every
// span exported to an OTLP/HTTP sink that answers 200, on the stack withstack started,
// and beside them a bare net/http + pgx handler of GET /tags (the same statement on a
// pool postgres.Open makes as the service's, so the same session defaults, query mode
// and pool size; the same encoding, the same answer headers) and a trivial server
// holding the cdn's answer for demo user 3's photo (the same bytes and headers), each
// on lambdahttp.NewServer's settings. Each round runs every pair back to back, `wrk
// -t2 -c32` for -duration each, the order of the two alternating from round to round,
// and the command prints each pair's ratio per round and its min/median/max: for the
// tags read the bare handler's req/s over the service's (its cost as a multiple of
// the bare one's, lower is better), for the avatar the service's over the trivial
// server's (higher is better); and beside it each side's CPU per request, the server
// process's own, and their ratio. A round's ratio moves with the machine's other load,
// so the summary gives each median an interval that holds the true median at 95% or
// more whatever the rounds' spread (benchstat's, stats.go), and says of each goal whether the
// interval meets it, misses it, or holds it (within noise). With -profile it also
// writes CPU profiles of the tags read's servers and the scaled avatar's under load.
//
// With -before COMMIT it also builds make run's server at that commit, in a git
// worktree of its own, and runs it there with today's servers' environment (so on
// withstack's stack, when that commit's make run takes its stack from the
// environment); each round then adds three pairs of that server against today's
// untraced one, the tags read and the demo's default avatar, scaled and high: the
// earlier commit's req/s over today's, today's cost as a multiple of the earlier
// one's, with the goal of at most 1 (both must answer the same bytes, or the command
// stops); and a fourth, the bare handler over that server, with the untraced read's
// goal. -before-env adds variables to that server's environment alone, so that
// -before HEAD -before-env GOGC=100 sets one setting against today's in the same
// rounds.
package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mediacatalog/service/infra/cmdrun"
	"github.com/mediacatalog/service/infra/local/demo"
	"github.com/mediacatalog/service/shared/app"
	"github.com/mediacatalog/service/shared/avatars"
	"github.com/mediacatalog/service/shared/awsconfig"
	"github.com/mediacatalog/service/shared/config"
	"github.com/mediacatalog/service/shared/lambdahttp"
	"github.com/mediacatalog/service/shared/postgres"
	"github.com/mediacatalog/service/shared/s3store"
)

func main() {
	// The references collect at the service's target (app.TuneGC), as the bare handler's
	// pool is made as the service's: the ratios are the layers' work and garbage alone.
	app.TuneGC(os.Getenv)
	cmdrun.Main("benchpath", func(ctx context.Context) error { return run(ctx, os.Args[1:]) })
}

// pair is one comparison: the service's URL and the reference's, and which way the
// ratio is taken.
type pair struct {
	name, service, reference string
	costRatio                bool    // reference req/s over the service's (else service over reference)
	goal                     float64 // the ratio's goal: at most this (a cost ratio), at least (else)
	pid                      int     // the service's process
	refPID                   int     // the reference's process; 0: this one
}

// gcClock reads the CPU time a process's garbage collector has spent: a make run
// server's from its debug server (gc_cpu_seconds), this process's from the runtime.
// A server whose debug variables lack the figure (an earlier commit's) reads NaN.
type gcClock map[int]string // a server's pid: its debug variables' URL

func (c gcClock) of(pid int) (float64, error) {
	if pid != 0 && c[pid] == "" {
		return math.NaN(), nil
	}
	if pid == 0 {
		s := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}}
		metrics.Read(s)
		return s[0].Value.Float64(), nil
	}
	resp, err := http.Get(c[pid])
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var vars struct {
		GC *float64 `json:"gc_cpu_seconds"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&vars); err != nil {
		return 0, fmt.Errorf("%s: %w", c[pid], err)
	}
	if vars.GC == nil {
		return math.NaN(), nil
	}
	return *vars.GC, nil
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("benchpath", flag.ContinueOnError)
	port := fs.Int("port", 3000, "the service's port (make run's)")
	refPort := fs.Int("reference-port", 3001, "the references' port: the bare tags handler and the trivial avatar server")
	tracedPort := fs.Int("traced-port", 3002, "the traced service's port")
	rounds := fs.Int("rounds", 9, "rounds of every pair (six or more give the median an interval of at least 95%, nine or more one inside the extremes)")
	duration := fs.Duration("duration", 4*time.Second, "wrk's duration for one side of a pair")
	connections := fs.Int("c", 32, "wrk's connections")
	before := fs.String("before", "", "an earlier commit: its make run server against today's (the tags read and the default avatar) and against the bare handler, in rounds of their own pairs; empty: none")
	beforePort := fs.Int("before-port", 3003, "the earlier commit's server's port (-before)")
	beforeEnv := fs.String("before-env", "", "KEY=VALUE pairs, space-separated, added to the earlier commit's server's environment alone (-before)")
	profile := fs.String("profile", "", "folder for CPU profiles under load of the tags read (the untraced service, the traced one, the bare handler) and the scaled avatar (the service, the trivial server), taken after the rounds; empty: none")
	if err := fs.Parse(args); err != nil {
		return err
	}
	extraEnv, err := envPairs(*beforeEnv)
	if err != nil {
		return fmt.Errorf("-before-env: %w", err)
	}
	if len(extraEnv) > 0 && *before == "" {
		return errors.New("-before-env needs -before")
	}
	wrk, err := exec.LookPath("wrk")
	if err != nil {
		return errors.New("wrk is not installed (bash infra/scripts/tools.sh bench installs it)")
	}
	dbURL := os.Getenv("DATABASE_URL")
	if dbURL == "" {
		return errors.New("DATABASE_URL is not set: run it through withstack (make bench-path)")
	}
	dir, err := os.MkdirTemp("", "benchpath-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	var earlier *beforeServer
	if *before != "" {
		// Built before the servers start, and its worktree removed after they stop.
		earlier, err = buildBefore(ctx, dir, *before)
		if earlier != nil {
			defer earlier.remove()
		}
		if err != nil {
			return err
		}
	}
	bin := filepath.Join(dir, "local")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./infra/local/cmd/local")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("build the local server: %w", err)
	}

	sink, err := serve(ctx, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	}))
	if err != nil {
		return err
	}
	// The servers are stopped (and waited for) before the command returns.
	ctx, cancel := context.WithCancel(ctx)
	var servers sync.WaitGroup
	defer servers.Wait()
	defer cancel()
	// Each server's debug variables give its collector's CPU time (gcClock); its
	// profiles too, with -profile.
	debugArgs := []string{"-debug-addr", "127.0.0.1:0"}
	untracedServer, err := startLocal(ctx, &servers, bin, "", filepath.Join(dir, "untraced"), *port, nil, debugArgs...)
	if err != nil {
		return err
	}
	tracedServer, err := startLocal(ctx, &servers, bin, "", filepath.Join(dir, "traced"), *tracedPort, []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://" + sink}, debugArgs...)
	if err != nil {
		return err
	}
	untraced, traced := untracedServer.url, tracedServer.url
	gc := gcClock{untracedServer.pid: untracedServer.debug, tracedServer.pid: tracedServer.debug}

	// The service's pool as postgres.Open makes it (the session defaults, among them
	// plan_cache_mode, which has PostgreSQL plan every execution; pgx's query mode; the
	// pool's size), without the service's tracer and guard: what differs is the
	// service's own work, not the database's.
	db, err := postgres.Open(ctx, dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := givePicture(ctx, dbURL); err != nil {
		return err
	}
	tagsHeader, err := answerHeader(untraced + "/tags?client=1")
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /tags", bareTags(db, tagsHeader))
	if err := trivialAvatars(mux, untraced); err != nil {
		return err
	}
	ref, err := serve(ctx, net.JoinHostPort("127.0.0.1", strconv.Itoa(*refPort)), mux)
	if err != nil {
		return err
	}
	bare, trivial := ref, ref
	pairs := []pair{
		{"GET /tags?client=1, untraced: bare / service", untraced + "/tags?client=1", "http://" + bare + "/tags?client=1", true, 1.05, untracedServer.pid, 0},
		{"GET /tags?client=1, every span exported: bare / service", traced + "/tags?client=1", "http://" + bare + "/tags?client=1", true, 1.15, tracedServer.pid, 0},
		{"cdn cached avatar, scaled: service / trivial", untraced + "/user/avatar/3/scaled", "http://" + trivial + "/user/avatar/3/scaled", false, 0.85, untracedServer.pid, 0},
		{"cdn cached avatar, high: service / trivial", untraced + "/user/avatar/3/high", "http://" + trivial + "/user/avatar/3/high", false, 0.85, untracedServer.pid, 0},
	}
	if earlier != nil {
		// The same environment as today's servers: a make run server that takes its
		// stack from the environment (DATABASE_URL and the AWS endpoints) serves from
		// withstack's, today's database; one that does not starts its own.
		var args []string
		if earlier.debug {
			args = debugArgs
		}
		s, err := startLocal(ctx, &servers, earlier.bin, earlier.tree, filepath.Join(dir, "before"), *beforePort, extraEnv, args...)
		if err != nil {
			return fmt.Errorf("the server of %s: %w", *before, err)
		}
		gc[s.pid] = s.debug
		// The demo's editor has no photo: both answer the default picture.
		for _, path := range []string{"/tags?client=1", "/user/avatar/2/scaled", "/user/avatar/2/high"} {
			if err := sameBody(untraced+path, s.url+path); err != nil {
				return fmt.Errorf("%s against today's: %w", *before, err)
			}
		}
		short := *before
		if len(short) > 12 {
			short = short[:12]
		}
		if len(extraEnv) > 0 {
			short += " " + strings.Join(extraEnv, " ")
		}
		pairs = append(pairs,
			pair{"GET /tags?client=1: " + short + " / today", untraced + "/tags?client=1", s.url + "/tags?client=1", true, 1, untracedServer.pid, s.pid},
			pair{"cdn default avatar, scaled: " + short + " / today", untraced + "/user/avatar/2/scaled", s.url + "/user/avatar/2/scaled", true, 1, untracedServer.pid, s.pid},
			pair{"cdn default avatar, high: " + short + " / today", untraced + "/user/avatar/2/high", s.url + "/user/avatar/2/high", true, 1, untracedServer.pid, s.pid})
		// And the earlier server against the bare handler, as today's is: the same goal.
		pairs = append(pairs, pair{"GET /tags?client=1, untraced: bare / " + short, s.url + "/tags?client=1",
			"http://" + bare + "/tags?client=1", true, 1.05, s.pid, 0})
	}
	for _, p := range pairs { // warm-up: pools connected, statements prepared, images cached
		for _, u := range []string{p.service, p.reference} {
			if _, err := load(ctx, wrk, u, time.Second, *connections); err != nil {
				return err
			}
		}
	}
	fmt.Printf("wrk -t2 -c%d -d%s per side, %d rounds, sides alternating\n", *connections, *duration, *rounds)
	ratios := make([][]float64, len(pairs))
	cpuRatios := make([][]float64, len(pairs))
	gcTimes := make([][2][]float64, len(pairs)) // each round's collector µs per request: service, reference
	for round := range *rounds {
		for i, p := range pairs {
			type sideOf struct {
				url string
				pid int // 0: this process (the bare references)
			}
			sides := []sideOf{{p.service, p.pid}, {p.reference, p.refPID}}
			if round%2 == 1 {
				slices.Reverse(sides)
			}
			rps, cpu, gcs := map[string]float64{}, map[string]float64{}, map[string]float64{}
			for _, side := range sides {
				before, err := cpuOf(side.pid)
				if err != nil {
					return err
				}
				gcBefore, err := gc.of(side.pid)
				if err != nil {
					return err
				}
				v, err := load(ctx, wrk, side.url, *duration, *connections)
				if err != nil {
					return err
				}
				after, err := cpuOf(side.pid)
				if err != nil {
					return err
				}
				gcAfter, err := gc.of(side.pid)
				if err != nil {
					return err
				}
				n := v * duration.Seconds()
				rps[side.url] = v
				cpu[side.url] = float64((after - before).Microseconds()) / n
				gcs[side.url] = (gcAfter - gcBefore) * 1e6 / n
			}
			r := rps[p.service] / rps[p.reference]
			if p.costRatio {
				r = 1 / r
			}
			ratios[i] = append(ratios[i], r)
			cpuRatios[i] = append(cpuRatios[i], cpu[p.service]/cpu[p.reference])
			gcTimes[i][0], gcTimes[i][1] = append(gcTimes[i][0], gcs[p.service]), append(gcTimes[i][1], gcs[p.reference])
			fmt.Printf("round %d  %-58s service %8.0f req/s %5.1f CPU µs/req (GC %4.1f)  reference %8.0f req/s %5.1f CPU µs/req (GC %4.1f)  ratio %.3f\n",
				round+1, p.name, rps[p.service], cpu[p.service], gcs[p.service], rps[p.reference], cpu[p.reference], gcs[p.reference], r)
		}
	}
	fmt.Println()
	if *rounds > 0 { // none with -rounds 0 (profiles only)
		summarize(pairs, ratios, cpuRatios, gcTimes)
	}
	if *profile != "" {
		debug := map[string]string{pairs[0].service: untracedServer.debug, pairs[1].service: tracedServer.debug,
			pairs[2].service: untracedServer.debug}
		refs := []reference{{"the bare handler", "bare.pprof", pairs[0].reference}, {"the trivial avatar server, scaled", "trivial.pprof", pairs[2].reference}}
		return profiles(ctx, *profile, wrk, debug, pairs[:3], refs, *duration, *connections)
	}
	return nil
}

// middle is the median of xs, NaN if one is (a server that does not give the figure).
func middle(xs []float64) float64 {
	if slices.ContainsFunc(xs, math.IsNaN) {
		return math.NaN()
	}
	return medianOf(xs).Center
}

// summarize prints each pair's ratios over the rounds: min, median, max, the median's
// interval (medianOf) and what it says of the goal; the CPU ratio's min, median, max;
// and the median of each side's collector µs per request.
func summarize(pairs []pair, ratios, cpuRatios [][]float64, gcTimes [][2][]float64) {
	first := medianOf(ratios[0]) // every pair has as many rounds
	for _, w := range first.Warnings {
		fmt.Printf("%v: an interval's open side is infinite\n", w)
	}
	fmt.Printf("%-58s %6s %6s %6s  %-16s  %-7s %-13s  %s\n", "ratio", "min", "median", "max",
		fmt.Sprintf("%.1f%% interval", 100*first.Confidence), "goal", "verdict", "CPU per request, service / reference: min median max  GC µs/req: service, reference")
	for i, p := range pairs {
		rs, cs := slices.Sorted(slices.Values(ratios[i])), slices.Sorted(slices.Values(cpuRatios[i]))
		m := medianOf(rs)
		goal := "≥ " + strconv.FormatFloat(p.goal, 'f', 2, 64)
		if p.costRatio {
			goal = "≤ " + strconv.FormatFloat(p.goal, 'f', 2, 64)
		}
		fmt.Printf("%-58s %6.3f %6.3f %6.3f  %-16s  %-7s %-13s  %.3f %.3f %.3f  %.2f, %.2f\n", p.name, rs[0], m.Center, rs[len(rs)-1],
			fmt.Sprintf("[%.3f, %.3f]", m.Lo, m.Hi), goal, verdict(m.Lo, m.Hi, p.goal, p.costRatio), cs[0], medianOf(cs).Center, cs[len(cs)-1],
			middle(gcTimes[i][0]), middle(gcTimes[i][1]))
	}
}

// reference is a reference server profiled in this process: its name, its profile's
// file and the URL loaded.
type reference struct{ name, file, url string }

// profiles writes CPU profiles of one more run of each pair of ps (the tags read's and
// the scaled avatar's), after the rounds so that profiling slows none of them: each
// service's through its debug server (/debug/pprof/profile, of the URL debug gives),
// then each of refs from this process, each under wrk for d.
func profiles(ctx context.Context, dir, wrk string, debug map[string]string, ps []pair, refs []reference, d time.Duration, connections int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	seconds := max(1, int(d.Seconds())-1) // inside wrk's run, past its first connections
	fmt.Printf("\nprofiles under wrk for %s (symbolized: pprof needs no binary; a service's of %ds):\n", d, seconds)
	for i, p := range ps {
		profile := filepath.Join(dir, fmt.Sprintf("service-%d.pprof", i+1))
		var got error
		var fetch sync.WaitGroup
		fetch.Go(func() {
			// The profile takes seconds to answer; a debug server that stalls beyond that
			// and a margin fails the command instead of holding it.
			fetchCtx, cancel := context.WithTimeout(ctx, time.Duration(seconds)*time.Second+30*time.Second)
			defer cancel()
			got = download(fetchCtx, strings.TrimSuffix(debug[p.service], "/debug/vars")+"/debug/pprof/profile?seconds="+strconv.Itoa(seconds), profile)
		})
		rate, err := load(ctx, wrk, p.service, d, connections)
		if err != nil {
			return err
		}
		fetch.Wait()
		if got != nil {
			return got
		}
		fmt.Printf("  %-58s %8.0f req/s  go tool pprof -top %s\n", p.name, rate, profile)
	}
	for _, ref := range refs {
		if err := profileHere(ctx, filepath.Join(dir, ref.file), ref, wrk, d, connections); err != nil {
			return err
		}
	}
	return nil
}

// profileHere writes the CPU profile of this process while wrk loads ref for d.
func profileHere(ctx context.Context, path string, ref reference, wrk string, d time.Duration, connections int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return err
	}
	rate, err := load(ctx, wrk, ref.url, d, connections)
	pprof.StopCPUProfile()
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return err
	}
	fmt.Printf("  %-58s %8.0f req/s  go tool pprof -top %s\n", ref.name, rate, path)
	return nil
}

// download writes what url answers to path.
func download(ctx context.Context, url, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// startLocal starts make run's server on port with the extra environment and returns
// its URL once it is ready. Its output (the request lines of a load test) goes to a file
// in dir, as a function's goes to its log: what writing them costs is the service's,
// while reading a pipe of them would be this command's, on the same cores.
// local is a running local server: its URL, its debug server's (-debug-addr), its process.
type local struct {
	url, debug string
	pid        int
}

// startLocal starts the make run server bin in the working folder workDir ("": this
// command's), with its data in dir, and returns once it says it is ready.
func startLocal(ctx context.Context, servers *sync.WaitGroup, bin, workDir, dir string, port int, env []string, args ...string) (local, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return local{}, err
	}
	logPath := filepath.Join(dir, "server.log")
	out, err := os.Create(logPath)
	if err != nil {
		return local{}, err
	}
	defer out.Close() // the server holds its own descriptor
	cmd := exec.CommandContext(ctx, bin, append([]string{"-dir", dir, "-port", strconv.Itoa(port)}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Dir = workDir // a make run server finds its repository (the stack's npm packages) from there
	cmd.Stderr = out
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 20 * time.Second
	if err := cmd.Start(); err != nil {
		return local{}, err
	}
	exited := make(chan struct{})
	servers.Go(func() { _ = cmd.Wait(); close(exited) })
	var debug string
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		said, err := os.ReadFile(logPath)
		if err != nil {
			return local{}, err
		}
		for line := range strings.Lines(string(said)) {
			line = strings.TrimSpace(line)
			if u, ok := strings.CutPrefix(line, "debug: "); ok {
				debug, _, _ = strings.Cut(u, " ")
			}
			if u, ok := strings.CutPrefix(line, "ready: "); ok {
				u, _, _ = strings.Cut(u, " ")
				return local{url: u, debug: debug, pid: cmd.Process.Pid}, nil
			}
		}
		select {
		case <-exited:
			return local{}, fmt.Errorf("the local server on port %d ended before it was ready:\n%s", port, said)
		case <-ctx.Done():
			return local{}, ctx.Err()
		case <-tick.C:
		}
	}
}

// cpuOf is the CPU time (user and system) process pid has used, or this process's for
// pid 0: /proc's utime and stime, in the kernel's clock ticks (USER_HZ, 100 on Linux).
func cpuOf(pid int) (time.Duration, error) {
	if pid == 0 {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			return 0, err
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// The fields after the command's name, which may hold spaces, in parentheses.
	_, rest, ok := strings.Cut(string(stat), ") ")
	fields := strings.Fields(rest)
	if !ok || len(fields) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %q", pid, stat)
	}
	var ticks int64
	for _, f := range fields[11:13] { // utime, stime: the stat's fields 14 and 15
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * (time.Second / userHZ), nil
}

// userHZ is the unit of /proc's CPU times.
const userHZ = 100

// serve runs h on addr with the service's server settings and returns the address.
func serve(ctx context.Context, addr string, h http.Handler) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", err
	}
	srv := lambdahttp.NewServer(h)
	go func() { _ = srv.Serve(ln) }()
	context.AfterFunc(ctx, func() { _ = srv.Close() })
	return ln.Addr().String(), nil
}

// bareTags is GET /tags?client=N as a bare handler would write it: the store's own
// read (postgres.DB.Tags: its statement and its scan) on a pool without the service's
// tracer and guard, the list encoded, with header the service's answer headers as they
// are (the same bytes on the wire; computing them is the service's work). What differs
// from the service is its layers alone.
func bareTags(db *postgres.DB, header http.Header) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		client, err := strconv.ParseInt(r.URL.Query().Get("client"), 10, 64)
		if err != nil {
			http.Error(w, "client", http.StatusBadRequest)
			return
		}
		list, err := db.Tags(r.Context(), client)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		h := w.Header()
		for k, v := range header {
			h[k] = v
		}
		_ = json.NewEncoder(w).Encode(list)
	})
}

// givePicture stores demo user 3's photo as the avatar route's benchmark does (the
// same generated picture: 3,927 bytes scaled, 37,557 high), through the upload service.
func givePicture(ctx context.Context, dbURL string) error {
	cfg, err := config.Load(func(k string) string {
		if v := os.Getenv(k); v != "" {
			return v
		}
		return map[string]string{"DB_ENV": "local", "S3_BUCKET": "media-catalog-images"}[k]
	})
	if err != nil {
		return err
	}
	db, err := postgres.Open(ctx, dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	store, err := s3store.New(awsconfig.Load(cfg), s3store.Options{Bucket: cfg.Bucket, Endpoint: cfg.S3Endpoint})
	if err != nil {
		return err
	}
	picture, err := demo.Photo()
	if err != nil {
		return err
	}
	uploads := avatars.New(avatars.Deps{Files: store, Store: db, FileService: true})
	return uploads.UpdateUserImage(ctx, demo.MemberUserID, base64.StdEncoding.EncodeToString(picture))
}

// answerHeader is the header of the service's answer at url as wrk asks for it (no
// Accept-Encoding), without what net/http adds to every answer (Date, Content-Length).
func answerHeader(url string) (http.Header, error) {
	header, _, err := answerOf(url)
	if err != nil {
		return nil, err
	}
	header.Del("Date")
	header.Del("Content-Length")
	return header, nil
}

// answerOf is the service's 200 answer at url, its header and body, as wrk asks for
// it: no Accept-Encoding, so none compressed.
func answerOf(url string) (http.Header, []byte, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Accept-Encoding", "identity") // net/http's client would ask for gzip
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, nil, err
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Encoding") != "" {
		return nil, nil, fmt.Errorf("%s: %d, Content-Encoding %q", url, resp.StatusCode, resp.Header.Get("Content-Encoding"))
	}
	return resp.Header, body, nil
}

// trivialAvatars adds to mux the service's answers for user 3's avatar, scaled and
// high: the same bytes and the same headers (net/http adds Date and Content-Length as
// it does for the service).
func trivialAvatars(mux *http.ServeMux, service string) error {
	for _, res := range []string{"scaled", "high"} {
		path := "/user/avatar/3/" + res
		resp, err := http.Get(service + path)
		if err != nil {
			return err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: %d %v", path, resp.StatusCode, err)
		}
		header := resp.Header.Clone()
		header.Del("Date")
		header.Del("Content-Length")
		mux.HandleFunc("GET "+path, func(w http.ResponseWriter, r *http.Request) {
			h := w.Header()
			for k, v := range header {
				h[k] = v
			}
			_, _ = w.Write(body)
		})
	}
	return nil
}

var requestsPerSec = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)

// load runs wrk against url and returns its req/s; non-2xx answers fail it.
func load(ctx context.Context, wrk, url string, d time.Duration, connections int) (float64, error) {
	out, err := exec.CommandContext(ctx, wrk, "-t2", "-c"+strconv.Itoa(connections), "-d"+d.String(), url).CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("wrk %s: %w\n%s", url, err, out)
	}
	if strings.Contains(string(out), "Non-2xx") {
		return 0, fmt.Errorf("wrk %s: answers that are not 2xx\n%s", url, out)
	}
	m := requestsPerSec.FindSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("wrk %s: no Requests/sec in\n%s", url, out)
	}
	return strconv.ParseFloat(string(m[1]), 64)
}

// beforeServer is make run's server built at an earlier commit (-before) and the
// worktree it was built in, where it runs.
type beforeServer struct {
	bin, tree string
	debug     bool // its server takes -debug-addr
}

// buildBefore checks out commit in a worktree under dir and builds its make run
// server there: infra/local/cmd/local, or infra/cmd/local before infra/ was sorted
// by who uses it. A non-nil result has a worktree to remove, whatever the error.
func buildBefore(ctx context.Context, dir, commit string) (*beforeServer, error) {
	b := &beforeServer{bin: filepath.Join(dir, "before-local"), tree: filepath.Join(dir, "before-tree")}
	add := exec.CommandContext(ctx, "git", "worktree", "add", "--detach", b.tree, commit)
	if out, err := add.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("git worktree add %s: %w\n%s", commit, err, out)
	}
	for _, pkg := range []string{"infra/local/cmd/local", "infra/cmd/local"} {
		if _, err := os.Stat(filepath.Join(b.tree, pkg, "main.go")); err != nil {
			continue
		}
		build := exec.CommandContext(ctx, "go", "build", "-o", b.bin, "./"+pkg)
		build.Dir, build.Stdout, build.Stderr = b.tree, os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return b, fmt.Errorf("build the server of %s: %w", commit, err)
		}
		src, err := os.ReadFile(filepath.Join(b.tree, pkg, "main.go"))
		b.debug = err == nil && bytes.Contains(src, []byte(`"debug-addr"`))
		return b, nil
	}
	return b, fmt.Errorf("%s has no make run server (infra/local/cmd/local, infra/cmd/local)", commit)
}

// remove deletes the worktree and git's record of it.
func (b *beforeServer) remove() {
	if out, err := exec.Command("git", "worktree", "remove", "--force", b.tree).CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "git worktree remove %s: %v\n%s", b.tree, err, out)
	}
}

// sameBody fails unless a and b answer 200 with the same body (answerOf), so that a
// pair of them compares the same answer.
func sameBody(a, b string) error {
	_, bodyA, err := answerOf(a)
	if err != nil {
		return err
	}
	_, bodyB, err := answerOf(b)
	if err != nil {
		return err
	}
	if !bytes.Equal(bodyA, bodyB) {
		return fmt.Errorf("%s and %s answer other bodies (%d and %d bytes)", a, b, len(bodyA), len(bodyB))
	}
	return nil
}

// envPairs splits -before-env's space-separated KEY=VALUE pairs, each as exec.Cmd's Env
// takes it.
func envPairs(s string) ([]string, error) {
	pairs := strings.Fields(s)
	for _, kv := range pairs {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return nil, fmt.Errorf("%q is not KEY=VALUE", kv)
		}
	}
	return pairs, nil
}
