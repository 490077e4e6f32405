package smoke_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mediacatalog/service/infra/local/localservices"
	"github.com/mediacatalog/service/infra/tests/smoke"
	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/auth"
	"github.com/mediacatalog/service/shared/config"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// functions are the route groups' functions. functions/deploy-hook, CodeDeploy's
// PreTraffic hook, is no route group and not among them: TestDeployHookProbes sends
// each function the hook's probe instead.
var functions = []string{"oauth", "tags", "cdn", "admin-users", "admin-roles", "admin-permissions", "admin-contributors", "publishers"}

// maxBinaryBytes is the size budget of one stripped linux/arm64 bootstrap: 20 MB.
const maxBinaryBytes = 20_000_000

var lambdaFlags = []string{"-tags", "lambda.norpc", "-trimpath", "-ldflags=-s -w"}

// build compiles pkg for linux/goarch into dir and returns the binary's path.
func build(dir, name, pkg, goarch string) (string, error) {
	out := filepath.Join(dir, goarch, name)
	args := append([]string{"build"}, lambdaFlags...)
	args = append(args, "-o", out, pkg)
	cmd := exec.Command("go", args...)
	cmd.Dir = testenv.RepoRoot()
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+goarch, "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s for %s: %v\n%s", pkg, goarch, err, b)
	}
	return out, nil
}

// buildAll builds every function and the hello-world yardstick, for the host and for
// Lambda's arm64, in parallel.
func buildAll(t testing.TB) (host, arm map[string]string) {
	t.Helper()
	dir := t.TempDir()
	host, arm = map[string]string{}, map[string]string{}
	pkgs := map[string]string{"hello": "./infra/tests/smoke/testdata/hello"}
	for _, f := range functions {
		pkgs[f] = "./functions/" + f
	}
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.NumCPU())
	for name, pkg := range pkgs {
		for _, arch := range []string{runtime.GOARCH, "arm64"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				p, err := build(dir, name, pkg, arch)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, err)
					return
				}
				if arch == runtime.GOARCH {
					host[name] = p
				}
				if arch == "arm64" {
					arm[name] = p
				}
			}()
		}
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return host, arm
}

// stackEnv is the environment every function gets: a demo database, dynalite, gofakes3,
// and as Lambda's active tracing gives it, the X-Ray daemon's address (a UDP socket
// that drops what it receives).
func stackEnv(t testing.TB) (env []string, cookie string) {
	t.Helper()
	ctx := context.Background()
	daemon, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { daemon.Close() })
	go func() {
		buf := make([]byte, 64<<10)
		for {
			if _, _, err := daemon.ReadFrom(buf); err != nil {
				return
			}
		}
	}()
	db := testenv.NewDemoDB(t)
	vars := map[string]string{
		"DB_ENV":                    "local",
		"DATABASE_URL":              db.URL,
		"AWS_ENDPOINT_URL_DYNAMODB": testenv.DynamoEndpoint(t),
		"AWS_ENDPOINT_URL_S3":       testenv.S3Endpoint(t),
		"S3_BUCKET":                 "smoke-images",
		"OAUTH_STATE_TABLE":         "smoke-state",
		"RATE_LIMIT_TABLE":          "smoke-rate",
		"FILE_SERVICE":              "true",
		"AWS_REGION":                "eu-central-1",
		"AWS_ACCESS_KEY_ID":         "smoke",
		"AWS_SECRET_ACCESS_KEY":     "smoke",
		"AWS_LAMBDA_FUNCTION_NAME":  "smoke",
		"AWS_XRAY_DAEMON_ADDRESS":   daemon.LocalAddr().String(),
		"LOG_LEVEL":                 "error",
		"PATH":                      os.Getenv("PATH"),
		"HOME":                      os.Getenv("HOME"),
	}
	cfg, err := config.Load(func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	if err := localservices.EnsureTables(ctx, cfg.DynamoEndpoint, cfg.AWSRegion, cfg.StateTable, cfg.RateLimitTable); err != nil {
		t.Fatal(err)
	}
	if err := localservices.EnsureBucket(ctx, cfg.S3Endpoint, cfg.AWSRegion, cfg.Bucket); err != nil {
		t.Fatal(err)
	}
	sessions, err := auth.NewSessions(db.DB, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var adminID int64
	if err := db.Pool.QueryRow(ctx, `SELECT id FROM users WHERE username = 'admin'`).Scan(&adminID); err != nil {
		t.Fatalf("demo admin: %v", err)
	}
	tok, err := sessions.Issue(ctx, adminID)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	return env, tok.Refresh
}

var cookieRE = regexp.MustCompile(`refreshToken=[^";]*`)

// eventsOf reads a function's events, with the demo admin's real cookie put in.
func eventsOf(t testing.TB, fn, cookie string) (names []string, bodies [][]byte) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "events", fn, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no events for %s", fn)
	}
	// Writes that create come first and deletes last, so that a delete finds what it
	// deletes (deleting an absent image is a 500 by the OpenAPI document).
	rank := func(f string) int {
		switch b := filepath.Base(f); {
		case strings.HasPrefix(b, "add-"), strings.HasPrefix(b, "update-"):
			return 0
		case strings.HasPrefix(b, "delete-"), strings.HasPrefix(b, "logout-"):
			return 2
		default:
			return 1
		}
	}
	sort.Slice(files, func(i, j int) bool {
		if ri, rj := rank(files[i]), rank(files[j]); ri != rj {
			return ri < rj
		}
		return files[i] < files[j]
	})
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b = cookieRE.ReplaceAll(b, []byte("refreshToken="+cookie))
		names = append(names, filepath.Base(f))
		bodies = append(bodies, b)
	}
	return names, bodies
}

// run starts a binary against a fresh Runtime API, feeds it the events, and returns
// the results and the time from process start to the first response.
// coldTimes are one process's times from its start: to its first request for an
// invocation (the end of its init) and to its first answer.
type coldTimes struct{ init, first time.Duration }

func run(t testing.TB, bin string, env []string, events [][]byte) ([]smoke.Result, coldTimes) {
	t.Helper()
	api, err := smoke.NewRuntimeAPI()
	if err != nil {
		t.Fatal(err)
	}
	defer api.Close()
	for _, e := range events {
		api.Enqueue(e)
	}
	cmd := exec.Command(bin)
	cmd.Env = append(append([]string{}, env...), "AWS_LAMBDA_RUNTIME_API="+api.Addr)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	var results []smoke.Result
	var first coldTimes
	for i := range events {
		r, err := api.Wait(20 * time.Second)
		if err != nil {
			t.Fatalf("%s: event %d: %v\nstderr:\n%s", filepath.Base(bin), i, err, stderr.String())
		}
		if i == 0 {
			first = coldTimes{init: r.Asked.Sub(start), first: r.At.Sub(start)}
		}
		results = append(results, r)
	}
	return results, first
}

// TestSmoke runs every bootstrap binary under AWS's Runtime Interface Emulator with
// each of its events, and holds each linux/arm64 binary to its size budget. Its times
// (the first invocation's, which includes the process's start) are of one run, beside
// whatever else the test run does; BenchmarkColdStart measures them.
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds nine binaries")
	}
	rie, err := buildEmulator(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	host, arm := buildAll(t)
	env, cookie := stackEnv(t)
	report := []string{fmt.Sprintf("%-20s %12s %22s", "function", "arm64 bytes", "first response (1 run)")}
	_, hello := emulate(t, rie, host["hello"], env, [][]byte{coldEvent(t, "tags")})
	for _, fn := range functions {
		t.Run(fn, func(t *testing.T) {
			st, err := os.Stat(arm[fn])
			if err != nil {
				t.Fatal(err)
			}
			if st.Size() > maxBinaryBytes {
				t.Errorf("linux/arm64 bootstrap is %d bytes, over the %d budget", st.Size(), maxBinaryBytes)
			}
			names, events := eventsOf(t, fn, cookie)
			names = append([]string{"cold " + coldEvents[fn].file}, names...)
			events = append([][]byte{coldEvent(t, fn)}, events...)
			results, first := emulate(t, rie, host[fn], env, events)
			if resp := results[0]; resp.StatusCode < 400 || resp.StatusCode >= 500 {
				t.Errorf("cold event: want a 4xx decided without backing services, got %+v", resp)
			}
			for i, resp := range results[1:] {
				i++
				if resp.StatusCode < 200 || resp.StatusCode >= 500 {
					t.Errorf("%s: status %d: %.300s", names[i], resp.StatusCode, resp.Body)
				}
			}
			report = append(report, fmt.Sprintf("%-20s %12d %19.1f ms", fn, st.Size(), ms(first)))
		})
	}
	report = append(report, fmt.Sprintf("%-20s %12s %19.1f ms", "hello (yardstick)", "", ms(hello)))
	t.Log("\n" + strings.Join(report, "\n"))
}

// coldEvents are, per function, a request its code answers without any backing
// service (a 4xx decided from the request alone). The time to their response is the
// function's init plus one request, comparable with the hello-world yardstick. Every
// oauth route passes the rate limiter, which asks DynamoDB first, so oauth's is a
// request no route takes (the router answers it); BenchmarkColdStart also measures
// oauth's first limited request, with its DynamoDB round trip.
var coldEvents = map[string]struct {
	file   string
	mutate func(map[string]any)
}{
	"oauth":              {"oauth/login.json", setMethod("POST")},
	"tags":               {"tags/get-tags.json", dropQuery},
	"cdn":                {"cdn/get-avatar-res.json", setPath("/user/avatar/1/bogus")},
	"admin-users":        {"admin-users/list-users.json", dropCookies},
	"admin-roles":        {"admin-roles/list-roles.json", dropCookies},
	"admin-permissions":  {"admin-permissions/list-permissions.json", dropCookies},
	"admin-contributors": {"admin-contributors/list-contributors.json", dropCookies},
	"publishers":         {"publishers/get-publishers.json", dropQuery},
}

// oauthLimited is oauth's first request through the rate limiter: an unsupported
// provider, answered 400 after one DynamoDB UpdateItem.
var oauthLimited = struct {
	file   string
	mutate func(map[string]any)
}{"oauth/login.json", setPath("/auth/oauth/unknown")}

func dropQuery(ev map[string]any) {
	ev["rawQueryString"] = ""
	delete(ev, "queryStringParameters")
}

func dropCookies(ev map[string]any) { delete(ev, "cookies") }

func setMethod(method string) func(map[string]any) {
	return func(ev map[string]any) {
		if rc, ok := ev["requestContext"].(map[string]any); ok {
			if h, ok := rc["http"].(map[string]any); ok {
				h["method"] = method
			}
		}
		ev["routeKey"] = "$default"
	}
}

func setPath(path string) func(map[string]any) {
	return func(ev map[string]any) {
		ev["rawPath"] = path
		if rc, ok := ev["requestContext"].(map[string]any); ok {
			if h, ok := rc["http"].(map[string]any); ok {
				h["path"] = path
			}
		}
	}
}

func coldEvent(t testing.TB, fn string) []byte {
	t.Helper()
	c := coldEvents[fn]
	return mutatedEvent(t, c.file, c.mutate)
}

func mutatedEvent(t testing.TB, file string, mutate func(map[string]any)) []byte {
	t.Helper()
	var ev map[string]any
	if err := json.Unmarshal(mustEvent(t, file), &ev); err != nil {
		t.Fatal(err)
	}
	mutate(ev)
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustEvent(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "events", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// maxColdStartOverHello is the cold-start target: a function's time from process start
// to first response exceeds the hello world's by at most this much (medians of
// interleaved pairs). On Lambda the hello world's init is about 40 ms, so this is at
// most a quarter more.
const maxColdStartOverHello = 10 * time.Millisecond

// BenchmarkColdStart reports, per function, how much longer than the hello-world
// yardstick (built the same way) it takes from process start to the first response
// (its cold event: init plus one request that needs no backing service), and the
// stripped linux/arm64 binary size, each against its target. Each iteration runs the
// yardstick and the function once, in alternating order, so both see the same
// machine; the figure is the median of the pairs' differences. oauth-limited is
// oauth's first request through its rate limiter: the same, plus one DynamoDB round
// trip (to dynalite here).
func BenchmarkColdStart(b *testing.B) {
	host, arm := buildAll(b)
	env, _ := stackEnv(b)
	env = append(env, "OAUTH_RATE_LIMIT=1000000000") // every run takes the same path
	helloEvent := coldEvent(b, "tags")
	type benchCase struct {
		name, bin string
		event     []byte
		info      bool // a figure for information, not held to the target
	}
	var cases []benchCase
	for _, fn := range functions {
		cases = append(cases, benchCase{fn, fn, coldEvent(b, fn), false})
	}
	// oauth-limited is oauth's init plus a round trip to dynalite (a Node.js stand-in,
	// a few milliseconds a call here, not DynamoDB's latency): shown for information,
	// the target is held by oauth's own line.
	cases = append(cases, benchCase{"oauth-limited", "oauth", mutatedEvent(b, oauthLimited.file, oauthLimited.mutate), true})
	lines := map[string]string{} // by case; the last run of each (b.Run runs N=1 first)
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var over, overInit, hello []time.Duration
			for i := range b.N {
				var h, d coldTimes
				if i%2 == 0 {
					_, h = run(b, host["hello"], env, [][]byte{helloEvent})
					_, d = run(b, host[c.bin], env, [][]byte{c.event})
				} else {
					_, d = run(b, host[c.bin], env, [][]byte{c.event})
					_, h = run(b, host["hello"], env, [][]byte{helloEvent})
				}
				over = append(over, d.first-h.first)
				overInit = append(overInit, d.init-h.init)
				hello = append(hello, h.first)
			}
			st, err := os.Stat(arm[c.bin])
			if err != nil {
				b.Fatal(err)
			}
			lo, m, hi := medianCI(over)
			b.ReportMetric(ms(m), "ms-over-hello")
			b.ReportMetric(ms(median(hello)), "ms-hello")
			b.ReportMetric(float64(st.Size())/1e6, "MB-arm64")
			target := fmt.Sprintf("(≤ %d) %-4s", maxColdStartOverHello/time.Millisecond, verdict(m <= maxColdStartOverHello))
			if c.info {
				target = "(info)    "
			}
			lines[c.name] = fmt.Sprintf("%-20s %6.2f ms [%5.2f, %5.2f] %s %6.2f ms %8.2f ms %8.2f MB (≤ %d) %s",
				c.name, ms(m), ms(lo), ms(hi), target, ms(median(overInit)),
				ms(median(hello)), float64(st.Size())/1e6, maxBinaryBytes/1_000_000, verdict(st.Size() <= maxBinaryBytes))
		})
	}
	report := []string{
		"first response - hello: median of the pairs' differences, [95 % confidence interval of that median];",
		"of which init: the same, to the process's first request for an invocation",
		fmt.Sprintf("%-20s %35s %16s %11s %26s", "function", "first response - hello", "of which init", "hello", "linux/arm64 stripped"),
	}
	for _, c := range cases {
		if l, ok := lines[c.name]; ok { // absent when -bench filtered the case out
			report = append(report, l)
		}
	}
	// Printed rather than logged: a benchmark with sub-benchmarks shows its log only
	// with -v.
	fmt.Println(strings.Join(report, "\n"))
}

func verdict(ok bool) string {
	if ok {
		return "ok"
	}
	return "OVER"
}

func median(ds []time.Duration) time.Duration {
	_, m, _ := medianCI(ds)
	return m
}

// medianCI returns the median of ds and a distribution-free 95 % confidence interval
// for it: the order statistics n/2 ± 1.96·√n/2 (the normal approximation of the
// binomial count of values below the true median). With the 300 pairs of a bench run
// they are the values at positions 133 and 167 of the sorted 0..299.
func medianCI(ds []time.Duration) (lo, m, hi time.Duration) {
	s := slices.Clone(ds)
	slices.Sort(s)
	n := len(s)
	half := 1.96 * math.Sqrt(float64(n)) / 2
	loI := max(0, int(math.Floor(float64(n)/2-half)))
	hiI := min(n-1, int(math.Ceil(float64(n)/2+half)))
	return s[loI], s[n/2], s[hiI]
}

func TestMedianCI(t *testing.T) {
	seq := func(n int) []time.Duration {
		ds := make([]time.Duration, n)
		for i := range ds {
			ds[n-1-i] = time.Duration(i) * time.Millisecond // reversed: medianCI sorts
		}
		return ds
	}
	for _, tc := range []struct {
		name      string
		ds        []time.Duration
		lo, m, hi time.Duration
	}{
		{"one", seq(1), 0, 0, 0},
		{"two", seq(2), 0, time.Millisecond, time.Millisecond},
		{"bench run", seq(300), 133 * time.Millisecond, 150 * time.Millisecond, 167 * time.Millisecond},
		{"ties", []time.Duration{5, 5, 5, 5, 5}, 5, 5, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lo, m, hi := medianCI(tc.ds)
			if lo != tc.lo || m != tc.m || hi != tc.hi {
				t.Errorf("medianCI = %v, %v, %v; want %v, %v, %v", lo, m, hi, tc.lo, tc.m, tc.hi)
			}
		})
	}
}
