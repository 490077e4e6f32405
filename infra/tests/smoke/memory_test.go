package smoke_test

import (
	"fmt"
	"maps"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mediacatalog/service/infra/bench/procstatus"
	"github.com/mediacatalog/service/infra/tests/smoke"
	"github.com/mediacatalog/service/shared/app"
)

// warmEvents picks, of a function's events, those a warm container serves over and
// over: its reads, its image uploads (each replaces the image it stored the time
// before) and oauth's login (a state token written per request). Creations and
// deletions change what the next one finds, so they are left out.
func warmEvents(names []string, bodies [][]byte) (picked [][]byte) {
	for i, n := range names {
		switch {
		case strings.HasPrefix(n, "get-"), strings.HasPrefix(n, "list-"), strings.HasPrefix(n, "update-"),
			strings.HasPrefix(n, "change-"), n == "connections.json", n == "login.json":
			picked = append(picked, bodies[i])
		}
	}
	return picked
}

// gcTrace matches a line of GODEBUG=gctrace=1: the heap at the collection's start,
// at its end, and marked live, and the goal it set for the next.
var gcTrace = regexp.MustCompile(`(\d+)->(\d+)->(\d+) MB, (\d+) MB goal`)

// warmMemory is what one warm process held after its invocations.
type warmMemory struct {
	hwm, rss uint64 // bytes, /proc/<pid>/status: peak and current resident set
	gcs      int    // collections
	maxGoal  int    // the largest heap goal the collector set, MB
	maxLive  int    // the largest heap a collection found live, MB
	statuses map[int]int
}

// statusText is statuses as "200×2000 304×1000", by status.
func (m warmMemory) statusText() string {
	var parts []string
	for _, s := range slices.Sorted(maps.Keys(m.statuses)) {
		parts = append(parts, fmt.Sprintf("%d×%d", s, m.statuses[s]))
	}
	return strings.Join(parts, " ")
}

// serveWarm starts bin against a fresh Runtime API with GODEBUG=gctrace=1, sends it n
// invocations of events in turn, one at a time as Lambda does, fails on an answer of
// 429 or 5xx, and reads the process's memory before stopping it.
func serveWarm(b *testing.B, bin string, env []string, events [][]byte, n int) warmMemory {
	b.Helper()
	api, err := smoke.NewRuntimeAPI()
	if err != nil {
		b.Fatal(err)
	}
	defer api.Close()
	cmd := exec.Command(bin)
	cmd.Env = append(slices.Clone(env), "AWS_LAMBDA_RUNTIME_API="+api.Addr, "GODEBUG=gctrace=1")
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	m := warmMemory{statuses: map[int]int{}}
	for i := range n {
		api.Enqueue(events[i%len(events)])
		r, err := api.Wait(20 * time.Second)
		if err != nil {
			b.Fatalf("%s: invocation %d: %v\n%s", bin, i, err, stderr.String())
		}
		resp, err := r.Decode()
		if err != nil || resp.StatusCode == 429 || resp.StatusCode >= 500 {
			b.Fatalf("%s: invocation %d: %v %d %.300s", bin, i, err, resp.StatusCode, resp.Body)
		}
		m.statuses[resp.StatusCode]++
	}
	sizes, err := procstatus.Sizes(cmd.Process.Pid, "VmHWM", "VmRSS")
	if err != nil {
		b.Fatal(err)
	}
	m.hwm, m.rss = sizes[0], sizes[1]
	m.gcs, m.maxGoal, m.maxLive = parseGCTrace(stderr.String())
	return m
}

// parseGCTrace reads GODEBUG=gctrace=1's lines out of a process's stderr: how many
// collections ran, the largest heap goal they set and the largest heap they found
// live, in MB.
func parseGCTrace(stderr string) (gcs, maxGoal, maxLive int) {
	for line := range strings.Lines(stderr) {
		if g := gcTrace.FindStringSubmatch(line); g != nil {
			live, _ := strconv.Atoi(g[3])
			goal, _ := strconv.Atoi(g[4])
			gcs++
			maxGoal, maxLive = max(maxGoal, goal), max(maxLive, live)
		}
	}
	return gcs, maxGoal, maxLive
}

// BenchmarkWarmMemory serves each function's warm events (warmEvents) to one process,
// b.N invocations one after the other, every one traced (the Runtime API's sampled
// trace header) and logged as under Lambda, at the functions' collector target
// (app.TuneGC) and at the runtime's default (GOGC=100), and reports what the process
// held at the end: its peak resident set (VmHWM, what Lambda's Max Memory Used
// counts), its resident set, and from the collector's trace the largest heap goal it
// set and the largest heap it found live. The functions' memory and GOMEMLIMIT are in
// template.yaml; the smallest limit is 230 MiB.
func BenchmarkWarmMemory(b *testing.B) {
	host, _ := buildAll(b)
	env, cookie := stackEnv(b)
	env = append(env,
		"OAUTH_RATE_LIMIT=1000000000", // login's limiter never refuses
		// login's provider, so that it writes its state token and redirects; the
		// redirect needs no call to the provider.
		"OAUTH_GOOGLE_CLIENT_ID=warm-memory", "OAUTH_GOOGLE_CLIENT_SECRET=warm-memory",
		// The events' origin, so that the uploads pass the writes' check.
		"CORS_ORIGINS=https://mediacatalog.app",
		// Every request line written (to /dev/null), as at the template's default level.
		"LOG_LEVEL=info")
	type result struct {
		fn, gogc string
		n        int
		m        warmMemory
	}
	var results []result
	for _, fn := range functions {
		events := warmEvents(eventsOf(b, fn, cookie))
		if len(events) == 0 {
			b.Fatalf("%s: no warm events", fn)
		}
		// The target is what a function runs with when the environment sets no GOGC.
		for _, gogc := range []string{strconv.Itoa(app.GCPercent), "100"} {
			b.Run(fn+"/gogc="+gogc, func(b *testing.B) {
				caseEnv := env
				if gogc != strconv.Itoa(app.GCPercent) {
					caseEnv = append(slices.Clone(env), "GOGC="+gogc)
				}
				m := serveWarm(b, host[fn], caseEnv, events, b.N)
				b.ReportMetric(float64(m.hwm)/(1<<20), "VmHWM-MiB")
				b.ReportMetric(float64(m.maxGoal), "max-goal-MB")
				b.ReportMetric(float64(m.maxLive), "max-live-MB")
				b.ReportMetric(float64(m.gcs), "GCs")
				results = slices.DeleteFunc(results, func(r result) bool { return r.fn == fn && r.gogc == gogc })
				results = append(results, result{fn, gogc, b.N, m})
			})
		}
	}
	report := []string{fmt.Sprintf("%-20s %-8s %7s %10s %10s %12s %12s %5s  %s",
		"function", "GOGC", "invokes", "VmHWM MiB", "VmRSS MiB", "max goal MB", "max live MB", "GCs", "answers")}
	for _, r := range results {
		report = append(report, fmt.Sprintf("%-20s %-8s %7d %10.1f %10.1f %12d %12d %5d  %s", r.fn, r.gogc, r.n,
			float64(r.m.hwm)/(1<<20), float64(r.m.rss)/(1<<20), r.m.maxGoal, r.m.maxLive, r.m.gcs, r.m.statusText()))
	}
	// Printed rather than logged, as BenchmarkColdStart's table.
	fmt.Println(strings.Join(report, "\n"))
}

func TestWarmMemoryParsing(t *testing.T) {
	t.Run("warmEvents", func(t *testing.T) {
		names := []string{"add-role.json", "connections.json", "delete-user.json", "edit-user.json", "get-user.json",
			"link.json", "list-users.json", "login.json", "logout-user.json", "update-image.json", "change-avatar.json"}
		bodies := make([][]byte, len(names))
		for i, n := range names {
			bodies[i] = []byte(n)
		}
		var got []string
		for _, b := range warmEvents(names, bodies) {
			got = append(got, string(b))
		}
		want := []string{"connections.json", "get-user.json", "list-users.json", "login.json", "update-image.json", "change-avatar.json"}
		if !slices.Equal(got, want) {
			t.Errorf("warmEvents = %v, want %v", got, want)
		}
	})
	for _, tc := range []struct {
		name                  string
		stderr                string
		gcs, maxGoal, maxLive int
	}{
		{"none", "", 0, 0, 0},
		{"a log line only", `{"level":"ERROR","msg":"x"}` + "\n", 0, 0, 0},
		{"two collections", "gc 1 @0.012s 2%: 0.010+1.2+0.003 ms clock, 0.021+0.5/1.0/0.2+0.007 ms cpu, 4->4->1 MB, 16 MB goal, 0 MB stacks, 0 MB globals, 2 P\n" +
			`{"level":"ERROR","msg":"x"}` + "\n" +
			"gc 2 @1.500s 0%: 0.011+2.1+0.004 ms clock, 0.022+0.4/1.1/0.1+0.008 ms cpu, 17->18->3 MB, 24 MB goal, 0 MB stacks, 0 MB globals, 2 P\n",
			2, 24, 3},
	} {
		t.Run("parseGCTrace/"+tc.name, func(t *testing.T) {
			gcs, goal, live := parseGCTrace(tc.stderr)
			if gcs != tc.gcs || goal != tc.maxGoal || live != tc.maxLive {
				t.Errorf("parseGCTrace = %d, %d, %d; want %d, %d, %d", gcs, goal, live, tc.gcs, tc.maxGoal, tc.maxLive)
			}
		})
	}
}
