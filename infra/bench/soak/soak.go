// Package soak is make soak: the local server (infra/local/cmd/local, as make run runs it)
// in a process of its own, on a stack of its own (a PostgreSQL cluster it restarts and
// freezes, dynalite and gofakes3 in memory, a span collector), under a mixed workload
// for a duration: public reads with and without If-None-Match, administrators'
// writes through real sessions, uploads and deletes of pictures, OAuth logins and
// links through the providers' stand-ins. It samples the server's resident memory,
// Go heap, goroutines and open files at the start, every interval and at the end;
// counts the answers by route class and status; and fails when, over the last half
// of the run (after the faults), the resident memory, the goroutines or the open
// files grow beyond their noise (DefaultBounds), or when an answer the workload did
// not expect comes outside the faults' windows.
//
// A Lambda container lives for hours and serves many thousands of requests: nothing
// the request path keeps may grow with the requests served. The soak is how that is
// held to a running process from outside.
package soak

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/mediacatalog/service/shared/auth"
	"github.com/mediacatalog/service/shared/config"
	"github.com/mediacatalog/service/shared/postgres"
)

// Options configure a soak. Zero values take the defaults noted.
type Options struct {
	Duration time.Duration // the workload's (1h)
	// Interval is the time between samples (a minute, or Duration/30 for runs under
	// 30 minutes, at least a second).
	Interval time.Duration
	// Dir holds the soak's stack, the server's log and the results; the stack is made
	// afresh at every run (.soak).
	Dir  string
	Port int // the local server's (0: a free one)
	// Rate is the requests per second of all workers together (150); Readers the
	// public readers among them (4), beside one worker each for roles and
	// permissions, contributors, users and OAuth.
	Rate    int
	Readers int
	// The faults: PostgreSQL frozen (SIGSTOP) at FreezeAt of the run for FreezeFor
	// (0.25, 5s), restarted at RestartAt (0.5) after RestartDown stopped (5s). A
	// negative FreezeFor skips the freeze.
	FreezeAt, RestartAt    float64
	FreezeFor, RestartDown time.Duration
	// Grace follows each fault's end: answers overlapping a window and its grace may
	// show the fault (10s).
	Grace  time.Duration
	Bounds map[string]Bound // DefaultBounds
	// Server is a built local server; empty builds infra/local/cmd/local into Dir.
	Server string
	Out    io.Writer // the progress and the report (os.Stdout)
}

func (o Options) withDefaults() Options {
	if o.Duration <= 0 {
		o.Duration = time.Hour
	}
	if o.Interval <= 0 {
		o.Interval = min(time.Minute, max(time.Second, o.Duration/30))
	}
	if o.Dir == "" {
		o.Dir = ".soak"
	}
	if o.Rate <= 0 {
		o.Rate = 150
	}
	if o.Readers <= 0 {
		o.Readers = 4
	}
	if o.FreezeAt <= 0 {
		o.FreezeAt = 0.25
	}
	if o.RestartAt <= 0 {
		o.RestartAt = 0.5
	}
	if o.FreezeFor == 0 {
		o.FreezeFor = 5 * time.Second
	}
	if o.RestartDown <= 0 {
		o.RestartDown = 5 * time.Second
	}
	if o.Grace <= 0 {
		o.Grace = 10 * time.Second
	}
	if o.Bounds == nil {
		o.Bounds = DefaultBounds
	}
	if o.Out == nil {
		o.Out = os.Stdout
	}
	return o
}

// Report is a soak's outcome.
type Report struct {
	Duration   time.Duration            `json:"-"`
	Seconds    float64                  `json:"duration_s"`
	Rate       int                      `json:"rate"`
	Samples    []Sample                 `json:"samples"`
	Faults     []Fault                  `json:"faults"`
	JudgedFrom time.Duration            `json:"-"`
	JudgedS    float64                  `json:"judged_from_s"`
	Growth     []Growth                 `json:"growth"`
	Counts     map[string]map[int]int64 `json:"counts"`
	Outside    []outcome                `json:"unexpected_outside_faults"`
	Inside     []outcome                `json:"unexpected_during_faults"`
	Failures   []string                 `json:"failures"`
}

// Fault is a fault's window, as offsets from the workload's start.
type Fault struct {
	Name       string        `json:"name"`
	Start, End time.Duration `json:"-"`
	StartS     float64       `json:"start_s"`
	EndS       float64       `json:"end_s"`
}

// Passed reports whether the soak found nothing wrong.
func (r *Report) Passed() bool { return len(r.Failures) == 0 }

// Run runs a soak and reports it on o.Out. An error is a soak that could not run; a
// soak that ran and failed returns its report with Failures.
func Run(ctx context.Context, o Options) (*Report, error) {
	o = o.withDefaults()
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, err
	}
	stackDir := filepath.Join(dir, "stack")
	if err := os.RemoveAll(stackDir); err != nil {
		return nil, err
	}
	// PostgreSQL runs as its own user when the soak runs as root: it must reach the folder.
	if err := os.MkdirAll(stackDir, 0o755); err != nil {
		return nil, err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, err
	}
	bin := o.Server
	if bin == "" {
		fmt.Fprintln(o.Out, "soak: building the local server")
		if bin, err = buildServer(ctx, dir, o.Out); err != nil {
			return nil, err
		}
	}
	st, err := startStack(ctx, stackDir, io.Discard)
	if err != nil {
		return nil, fmt.Errorf("start the soak's stack: %w", err)
	}
	defer st.stop()
	env := st.env()
	srv, err := startServer(ctx, bin, dir, o.Port, env)
	if err != nil {
		return nil, err
	}
	defer srv.stop()
	fmt.Fprintf(o.Out, "soak: local server pid %d at %s (log %s), PostgreSQL at port %d, for %s at %d requests/s\n",
		srv.pid, srv.url, srv.log, st.port, o.Duration, o.Rate)

	sessions, err := adminSessions(ctx, env, o.Readers)
	if err != nil {
		return nil, err
	}
	r := &run{o: o, st: st, srv: srv, rec: newRecorder(),
		probe: probe{pid: srv.pid, debug: srv.debug, http: &http.Client{Timeout: 10 * time.Second}}}
	return r.soak(ctx, sessions)
}

// adminSessions logs the demo admin in n+4 times (a session per worker) with the code
// an OAuth login runs (auth.Sessions.Issue), as make token does, against the server's
// database and with its configuration.
func adminSessions(ctx context.Context, env map[string]string, n int) ([]*http.Cookie, error) {
	cfg, err := config.Load(func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		if k == "DB_ENV" {
			return "local"
		}
		if inherited(k + "=") {
			return os.Getenv(k)
		}
		return ""
	})
	if err != nil {
		return nil, err
	}
	db, err := postgres.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	s, err := auth.NewSessions(db, cfg)
	if err != nil {
		return nil, err
	}
	var out []*http.Cookie
	for range n + 4 {
		t, err := s.Issue(ctx, adminUser)
		if err != nil {
			return nil, fmt.Errorf("log the demo admin in: %w", err)
		}
		out = append(out, &http.Cookie{Name: auth.RefreshCookie, Value: t.Refresh})
	}
	return out, nil
}

// run is one soak under way.
type run struct {
	o     Options
	st    *stack
	srv   *server
	rec   *recorder
	probe probe

	start   time.Time
	mu      sync.Mutex
	samples []Sample
	events  []string // since the last sample
	faults  []Fault
	errs    []error
}

func (r *run) soak(ctx context.Context, sessions []*http.Cookie) (*Report, error) {
	o := r.o
	pace := time.NewTicker(time.Second / time.Duration(o.Rate))
	defer pace.Stop()
	seed := uint64(time.Now().UnixNano())
	newClient := func(cookie *http.Cookie) *client {
		return &client{base: r.srv.url, http: newHTTPClient(), rec: r.rec, pace: pace.C, cookie: cookie}
	}
	reads, err := publicReads(ctx, newClient(nil))
	if err != nil {
		return nil, fmt.Errorf("list the demo catalog: %w", err)
	}
	var workers []worker
	for i := range o.Readers {
		workers = append(workers, &reader{cl: newClient(nil), reads: reads, etags: map[string]string{}, rng: rand.New(rand.NewPCG(seed, uint64(i)))})
	}
	adm := func(i int, name string) admin {
		return admin{cl: newClient(sessions[i]), name: name, rng: rand.New(rand.NewPCG(seed, uint64(100+i)))}
	}
	workers = append(workers,
		&rolesWorker{adm(0, "soak-roles")},
		&contributorsWorker{adm(1, "soak-contributors")},
		&usersWorker{adm(2, "soak-users")},
		&oauthWorker{admin: adm(3, "soak-oauth")})

	r.start = time.Now()
	if err := r.sample(ctx, "start"); err != nil {
		return nil, err
	}
	load, stopLoad := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Go(func() { runWorker(load, w) })
	}
	wg.Go(func() { r.faultsAt(load) })
	end := r.start.Add(o.Duration)
	tick := time.NewTicker(o.Interval)
	var sampleErr error
loop:
	for {
		select {
		case <-tick.C:
			if time.Until(end) < o.Interval/2 {
				break loop // the end sample follows at the end
			}
			if sampleErr = r.sample(ctx, ""); sampleErr != nil {
				break loop
			}
		case <-time.After(time.Until(end)):
			break loop
		case <-r.srv.exited:
			break loop
		case <-ctx.Done():
			break loop
		}
	}
	tick.Stop()
	if sampleErr == nil && r.srv.alive() && ctx.Err() == nil {
		// The end sample, under the workload like every other.
		if left := time.Until(end); left > 0 {
			time.Sleep(left)
		}
		sampleErr = r.sample(ctx, "end")
	}
	stopLoad()
	wg.Wait()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	r.keepProfiles()
	alive := r.srv.alive()
	stopErr := r.srv.stop()
	rep := r.report()
	if sampleErr != nil {
		rep.Failures = append(rep.Failures, "sampling: "+sampleErr.Error())
	}
	if !alive {
		rep.Failures = append(rep.Failures, fmt.Sprintf("the local server ended during the soak: %v", stopErr))
	} else if stopErr != nil {
		rep.Failures = append(rep.Failures, "stopping the local server: "+stopErr.Error())
	}
	for _, err := range r.errs {
		rep.Failures = append(rep.Failures, "faults: "+err.Error())
	}
	r.print(rep)
	if err := writeJSON(filepath.Join(o.Dir, "soak.json"), rep); err != nil {
		fmt.Fprintln(o.Out, "soak: write soak.json:", err)
	}
	return rep, nil
}

// faultsAt freezes PostgreSQL at FreezeAt of the run and restarts it at RestartAt.
func (r *run) faultsAt(ctx context.Context) {
	o := r.o
	type fault struct {
		at   time.Duration
		name string
		do   func() error
	}
	var faults []fault
	if o.FreezeFor > 0 {
		faults = append(faults, fault{time.Duration(o.FreezeAt * float64(o.Duration)), fmt.Sprintf("PostgreSQL frozen %s", o.FreezeFor),
			func() error { return r.st.freezePostgres(ctx, o.FreezeFor) }})
	}
	faults = append(faults, fault{time.Duration(o.RestartAt * float64(o.Duration)), fmt.Sprintf("PostgreSQL restarted (%s down)", o.RestartDown),
		func() error { return r.st.restartPostgres(ctx, o.RestartDown) }})
	for _, f := range faults {
		select {
		case <-time.After(time.Until(r.start.Add(f.at))):
		case <-ctx.Done():
			return
		}
		begin := time.Now()
		err := f.do()
		done := time.Now()
		r.rec.fault(window{Name: f.name, Start: begin, End: done})
		r.mu.Lock()
		r.faults = append(r.faults, Fault{Name: f.name, Start: begin.Sub(r.start), End: done.Sub(r.start),
			StartS: begin.Sub(r.start).Seconds(), EndS: done.Sub(r.start).Seconds()})
		r.events = append(r.events, fmt.Sprintf("%s at %s", f.name, begin.Sub(r.start).Round(time.Second)))
		if err != nil {
			r.errs = append(r.errs, fmt.Errorf("%s: %w", f.name, err))
		}
		r.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// sample reads the server's figures and prints them.
func (r *run) sample(ctx context.Context, label string) error {
	s, err := r.probe.read(ctx)
	if err != nil {
		return err
	}
	s.At, s.Label = time.Since(r.start), label
	s.AtSeconds = s.At.Seconds()
	s.Requests, s.Unexpected = r.rec.answered.Load(), r.rec.surprises.Load()
	s.SpansExported = r.st.traces.batches.Load()
	r.mu.Lock()
	events := strings.Join(r.events, "; ")
	r.events = nil
	prev := Sample{}
	if n := len(r.samples); n > 0 {
		prev = r.samples[n-1]
	}
	r.samples = append(r.samples, s)
	first := len(r.samples) == 1
	r.mu.Unlock()
	if first {
		fmt.Fprintf(r.o.Out, "%8s %9s %6s %8s %9s %9s %9s %9s %10s %6s %10s  %s\n",
			"at", "requests", "req/s", "RSS MiB", "anon MiB", "heap MiB", "live MiB", "objects", "goroutines", "files", "unexpected", "events")
	}
	rate := 0.0
	if d := (s.At - prev.At).Seconds(); d > 0 && !first {
		rate = float64(s.Requests-prev.Requests) / d
	}
	at := s.At.Round(time.Second).String()
	if label != "" {
		at = label
	}
	fmt.Fprintf(r.o.Out, "%8s %9d %6.0f %8.1f %9.1f %9.1f %9.1f %9d %10d %6d %10d  %s\n",
		at, s.Requests, rate, mib(s.RSSBytes), mib(s.AnonBytes), mib(s.HeapInuse), mib(s.HeapLive), s.HeapObjects, s.Goroutines, s.OpenFiles, s.Unexpected, events)
	return nil
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// keepProfiles saves the server's heap profile and goroutine dump beside the results,
// for a growth to be looked into (go tool pprof).
func (r *run) keepProfiles() {
	base := strings.TrimSuffix(r.srv.debug, "/vars") + "/pprof/"
	for name, path := range map[string]string{"heap.pprof": "heap", "goroutines.txt": "goroutine?debug=1"} {
		resp, err := r.probe.http.Get(base + path)
		if err != nil {
			continue
		}
		f, err := os.Create(filepath.Join(r.o.Dir, name))
		if err == nil {
			_, _ = io.Copy(f, resp.Body)
			f.Close()
		}
		resp.Body.Close()
	}
}

// report judges the run: the growth over the judged window, and every unexpected
// answer outside the faults' windows.
func (r *run) report() *Report {
	r.mu.Lock()
	defer r.mu.Unlock()
	j := r.rec.judge(r.o.Grace)
	rep := &Report{Duration: r.o.Duration, Rate: r.o.Rate, Samples: r.samples, Faults: r.faults,
		Counts: j.Counts, Outside: j.Outside, Inside: j.Inside}
	rep.JudgedFrom = r.o.Duration / 2
	for _, f := range r.faults {
		rep.JudgedFrom = max(rep.JudgedFrom, f.End+r.o.Grace)
	}
	rep.Seconds, rep.JudgedS = rep.Duration.Seconds(), rep.JudgedFrom.Seconds()
	g, err := judgeGrowth(r.samples, rep.JudgedFrom, r.o.Bounds)
	if err != nil {
		rep.Failures = append(rep.Failures, err.Error())
	}
	rep.Growth = g
	for _, g := range g {
		if !g.OK {
			rep.Failures = append(rep.Failures, fmt.Sprintf("%s grows over the last half: %s", g.Figure, g))
		}
	}
	if n := len(j.Outside); n > 0 {
		rep.Failures = append(rep.Failures, fmt.Sprintf("%d unexpected answers or failed checks outside the faults' windows", n))
	}
	if j.Overflow > 0 {
		rep.Failures = append(rep.Failures, fmt.Sprintf("%d more unexpected answers than the report keeps", j.Overflow))
	}
	return rep
}
