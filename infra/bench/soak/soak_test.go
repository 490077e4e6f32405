package soak

import (
	"context"
	"math"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mediacatalog/service/infra/local/localservices"
	"github.com/mediacatalog/service/shared/httpapi"
)

// TestShortSoak is make soak in under two minutes: a minute of the workload, with
// PostgreSQL frozen 2 s at 15 s and restarted (2 s down) at 30 s, sampled every 2 s,
// judged from the restart's end on. It fails on an unexpected answer outside the
// faults' windows, and on growth beyond DefaultBounds over the judged samples.
func TestShortSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("a minute of load; not with -short")
	}
	// Not t.TempDir: PostgreSQL runs as its own user when the tests run as root, and
	// must reach the folder.
	dir, err := os.MkdirTemp("", "mediacatalog-soak-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	rep, err := Run(context.Background(), Options{
		Duration:    time.Minute,
		Interval:    2 * time.Second,
		Dir:         dir,
		FreezeFor:   2 * time.Second,
		RestartDown: 2 * time.Second,
		Grace:       5 * time.Second,
		Out:         t.Output(),
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Failures {
		t.Error(f)
	}
	if len(rep.Faults) != 2 {
		t.Errorf("faults %+v, want the freeze and the restart", rep.Faults)
	}
	for _, class := range Classes {
		ok := rep.Counts[class][200] + rep.Counts[class][302]
		if ok == 0 {
			t.Errorf("no successful answer of class %s: %v", class, rep.Counts[class])
		}
	}
	if rep.Counts[ClassPublic][304] == 0 || rep.Counts[ClassAvatar][304] == 0 {
		t.Errorf("no 304 among the public reads and avatars: %v %v", rep.Counts[ClassPublic], rep.Counts[ClassAvatar])
	}
	if last := rep.Samples[len(rep.Samples)-1]; last.SpansExported == 0 {
		t.Error("the server exported no spans: the soak runs without its tracing")
	}
}

// TestJudgeGrowth: the line through the judged samples against the bounds.
func TestJudgeGrowth(t *testing.T) {
	const mb = 1 << 20
	series := func(n int, rss func(i int) float64, gr func(i int) int) []Sample {
		var out []Sample
		for i := range n {
			out = append(out, Sample{At: time.Duration(i) * time.Minute, RSSBytes: uint64(rss(i)), Goroutines: gr(i), OpenFiles: 40})
		}
		return out
	}
	flat := func(int) float64 { return 60 * mb }
	tests := []struct {
		name    string
		samples []Sample
		from    time.Duration
		failing []string // the figures that grow
		err     bool
	}{
		{"flat", series(60, flat, func(int) int { return 50 }), 30 * time.Minute, nil, false},
		{"noise within the bounds", series(60, func(i int) float64 { return 60*mb + float64(i%3)*4*mb },
			func(i int) int { return 50 + (i*7)%11 }), 30 * time.Minute, nil, false},
		{"a step before the window", series(60, func(i int) float64 { return 60*mb + float64(min(i, 30)/30)*40*mb },
			func(int) int { return 50 }), 31 * time.Minute, nil, false},
		{"shrinking", series(60, func(i int) float64 { return 100*mb - float64(i)*mb }, func(i int) int { return 80 - i }), 30 * time.Minute, nil, false},
		{"RSS leaks 1 MiB a minute", series(60, func(i int) float64 { return 60*mb + float64(i)*mb }, func(int) int { return 50 }),
			30 * time.Minute, []string{FigureRSS}, false},
		{"a goroutine a minute", series(60, flat, func(i int) int { return 50 + i }), 30 * time.Minute, []string{FigureGoroutines}, false},
		{"too few samples", series(60, flat, func(int) int { return 50 }), 56 * time.Minute, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gs, err := judgeGrowth(tt.samples, tt.from, DefaultBounds)
			if (err != nil) != tt.err {
				t.Fatalf("err %v, want error %v", err, tt.err)
			}
			var failing []string
			for _, g := range gs {
				if !g.OK {
					failing = append(failing, g.Figure)
				}
			}
			if !slices.Equal(failing, tt.failing) {
				t.Errorf("growing %v, want %v: %v", failing, tt.failing, gs)
			}
		})
	}
	if s := slopeOf([]float64{0, 1, 2, 3}, []float64{1, 3, 5, 7}); math.Abs(s-2) > 1e-9 {
		t.Errorf("slope %v, want 2", s)
	}
}

// TestFaultWindows: an unexpected answer is the fault's when it overlaps a window
// (extended by the grace) and is what a fault causes; any other fails the soak.
func TestFaultWindows(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	tests := []struct {
		name   string
		o      outcome
		inside bool
	}{
		{"503 during the fault", outcome{Class: ClassPublic, Status: 503, Start: at(12), End: at(13)}, true},
		{"500 started before it, answered during it", outcome{Class: ClassAdminWrite, Status: 500, Start: at(8), End: at(11)}, true},
		{"no answer within the grace", outcome{Class: ClassUpload, Status: 0, Start: at(24), End: at(24.5)}, true},
		{"a failed check during it", outcome{Class: ClassAvatar, Status: -1, Start: at(15), End: at(15)}, true},
		{"an OAuth error redirect during it", outcome{Class: ClassOAuth, Status: 302, Start: at(15), End: at(15)}, true},
		{"503 after the grace", outcome{Class: ClassPublic, Status: 503, Start: at(26), End: at(26.1)}, false},
		{"500 before the fault", outcome{Class: ClassAdminWrite, Status: 500, Start: at(5), End: at(9.9)}, false},
		{"a 404 during the fault is no fault's doing", outcome{Class: ClassAdminRead, Status: 404, Start: at(12), End: at(12)}, false},
		{"a 302 of another class", outcome{Class: ClassPublic, Status: 302, Start: at(12), End: at(12)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRecorder()
			r.fault(window{Name: "frozen", Start: at(10), End: at(20)})
			r.answer(tt.o.Class, tt.o.Status, &tt.o)
			j := r.judge(5 * time.Second)
			if got := len(j.Inside) == 1; got != tt.inside || len(j.Inside)+len(j.Outside) != 1 {
				t.Errorf("inside %d, outside %d; want inside %v", len(j.Inside), len(j.Outside), tt.inside)
			}
		})
	}
}

// TestOnlyTheLocalServerLinksDebug: the runtime figures the soak reads (expvar,
// net/http/pprof) are the local server's; no Lambda function links them.
func TestOnlyTheLocalServerLinksDebug(t *testing.T) {
	root, err := localservices.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	deps := func(pkgs ...string) []string {
		cmd := exec.Command("go", append([]string{"list", "-deps"}, pkgs...)...)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -deps %v: %v", pkgs, err)
		}
		return strings.Fields(string(out))
	}
	debug := []string{"expvar", "net/http/pprof"}
	for _, p := range debug {
		if !slices.Contains(deps("./infra/local/cmd/local"), p) {
			t.Errorf("the local server does not link %s: the soak cannot read it", p)
		}
		if slices.Contains(deps("./functions/..."), p) {
			t.Errorf("a Lambda function links %s", p)
		}
	}
}

// TestCallRoute: the report names a call by the route the tables give its request,
// a missing parameter's or an unknown id's answer included; by its method and path
// when no route has it.
func TestCallRoute(t *testing.T) {
	for _, tc := range []struct{ method, path, want string }{
		{http.MethodGet, "/tags", "GET /tags"},
		{http.MethodGet, "/publisher/publications/2?client=1&limit=5", "GET /publisher/publications/{id}"},
		{http.MethodGet, "/auth/oauth/google/callback?state=s&code=c", "GET /auth/oauth/{provider}/callback"},
		{http.MethodDelete, "/admin-roles/delete/7", "DELETE /admin-roles/delete/{id}"},
		{http.MethodPost, "/no/such?x=1", "POST /no/such"},
	} {
		if got := (call{method: tc.method, path: tc.path}).route(); got != tc.want {
			t.Errorf("%s %s: %q, want %q", tc.method, tc.path, got, tc.want)
		}
	}
}

// TestDemoReads: the public reads cover every route of the tables with a Cache
// policy with a 200, each read reaches such a route, and the avatars are their own
// class.
func TestDemoReads(t *testing.T) {
	reads, err := demoReads([]struct{ ID int64 }{{1}, {2}}, []struct {
		ID   int64
		Slug string
	}{{1, "kodansha"}, {2, "shueisha"}})
	if err != nil {
		t.Fatal(err)
	}
	ok := map[string]int{}
	for _, r := range reads {
		rt, found := api().router.Route(http.MethodGet, r.path)
		if !found || rt.Cache == "" {
			t.Errorf("%s reaches no public read", r.path)
			continue
		}
		if avatar := rt.Cache == httpapi.CacheAvatar; avatar != (r.class == ClassAvatar) {
			t.Errorf("%s: class %s", r.path, r.class)
		}
		if r.want == http.StatusOK {
			ok[rt.Pattern]++
		}
	}
	for _, g := range api().groups {
		for _, rt := range g.Routes {
			if rt.Cache != "" && ok[rt.Pattern] == 0 {
				t.Errorf("%s: no read answered 200", rt.Pattern)
			}
		}
	}
}
