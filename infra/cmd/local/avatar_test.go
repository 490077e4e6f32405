package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mediacatalog/service/infra/demo"
	"github.com/mediacatalog/service/infra/testenv"
	"github.com/mediacatalog/service/shared/avatars"
	"github.com/mediacatalog/service/shared/awsconfig"
	"github.com/mediacatalog/service/shared/lambdahttp"
	"github.com/mediacatalog/service/shared/s3store"
)

// startWithPicture runs the local server on a bucket of the test's own and gives demo
// user 3 (the member) a photo-like picture whose renditions weigh about 4 KB (scaled)
// and 37 KB (high).
func startWithPicture(t testing.TB) *local {
	t.Helper()
	s3cfg := testenv.S3Config(t)
	l := startLocal(t, map[string]string{"S3_BUCKET": s3cfg.Bucket})
	store, err := s3store.New(awsconfig.Load(s3cfg), s3store.Options{Bucket: s3cfg.Bucket, Endpoint: s3cfg.S3Endpoint})
	if err != nil {
		t.Fatal(err)
	}
	uploads := avatars.New(avatars.Deps{Files: store, Store: l.db.DB, FileService: true})
	if err := uploads.UpdateUserImage(context.Background(), demo.MemberUserID, base64.StdEncoding.EncodeToString(photo(t))); err != nil {
		t.Fatal(err)
	}
	return l
}

// photo is a 1200x900 JPEG with a gradient and blocks of noise: texture that survives
// the scaling, as a photograph's does.
func photo(t testing.TB) []byte {
	const w, h, block, amp = 1200, 900, 16, 18
	r := rand.New(rand.NewPCG(3, 4))
	noise := make([]int, (w/block+1)*(h/block+1))
	for i := range noise {
		noise[i] = r.IntN(2*amp+1) - amp
	}
	m := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			n := noise[(y/block)*(w/block+1)+x/block]
			c := func(v int) uint8 { return uint8(min(255, max(0, v+n))) }
			m.SetNRGBA(x, y, color.NRGBA{c(x * 255 / w), c(y * 255 / h), c(160), 255})
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, m, &jpeg.Options{Quality: 92}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// rawGet sends GET path exactly as spelled (the client keeps a valid percent-encoding).
func (l *local) rawGet(t testing.TB, path string, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, l.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := req.URL.EscapedPath(); got != path {
		t.Fatalf("the request's path is %q, not %q", got, path)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// TestAvatarSpellings: through the local server (make run) too, each picture has one
// URL; every other spelling is 404 without caching headers.
func TestAvatarSpellings(t *testing.T) {
	l := startWithPicture(t)
	for _, path := range []string{"/user/avatar/3", "/user/avatar/3/high", "/user/avatar/3/scaled"} {
		resp, body := l.rawGet(t, path)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "image/jpeg" || len(body) == 0 ||
			resp.Header.Get("Cache-Control") != "public, max-age=300, s-maxage=86400" || resp.Header.Get("ETag") == "" {
			t.Errorf("%s: %d %v", path, resp.StatusCode, resp.Header)
		}
	}
	for _, path := range []string{
		"/user/avatar/%33/high", "/user/avatar/3/hig%68", "/user/avatar/%33", "/user/avatar/03",
		"/user/avatar/3/", "/user/avatar/3/HIGH", "/user/avatar/3/Scaled", "/user/avatar/%2B3",
		"/user/avatar/3/high/", "/user/avatar/3/scal%65d", "/user/avatar/003/high",
	} {
		resp, body := l.rawGet(t, path)
		if resp.StatusCode != http.StatusNotFound || !bytes.Contains(body, []byte(`"code":404`)) {
			t.Errorf("%s: %d %s, want 404", path, resp.StatusCode, body)
		}
		if resp.Header.Get("Cache-Control") != "" || resp.Header.Get("ETag") != "" {
			t.Errorf("%s: caching headers on a 404: %v", path, resp.Header)
		}
	}
}

// BenchmarkAvatarServer (make bench) measures the local server's avatar route, the
// picture in the cdn's memory, beside trivial net/http servers that write the same
// bytes from memory, with wrk (-t2 -c32), in one run and interleaved: the scaled
// rendition (about 4 KB), the high one (about 37 KB), and a 304 beside a 200. It
// prints requests per second and the ratios; it asserts nothing about them.
func BenchmarkAvatarServer(b *testing.B) {
	wrk, err := exec.LookPath("wrk")
	if err != nil {
		b.Skip("wrk is not installed (make bench installs it)")
	}
	// The server logs each request as a JSON line on stderr (LOG_LEVEL info, as make
	// run does): keep that cost, send the lines nowhere.
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	stderr := os.Stderr
	os.Stderr = devnull
	b.Cleanup(func() { os.Stderr = stderr; devnull.Close() })
	l := startWithPicture(b)

	bodies := map[string][]byte{}
	etags := map[string]string{}
	for _, res := range []string{"scaled", "high"} {
		resp, body := l.rawGet(b, "/user/avatar/3/"+res)
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("%s: %d", res, resp.StatusCode)
		}
		bodies[res], etags[res] = body, resp.Header.Get("ETag")
	}
	// Two references hold the same bytes in memory and write them with Write. The
	// static one answers as a static file server would under the same contract: the
	// avatar's caching headers (Cache-Control, ETag, Content-Type, Content-Length; Date
	// from net/http) on the server settings of the local server (lambdahttp.NewServer,
	// whose timeouts set connection deadlines on every request). The bare one is a
	// default http.Server writing Content-Type and Content-Length only. The target is
	// against the static one (docs/cdn.md says why); the bare one is printed beside it.
	static := startTrivial(b, lambdahttp.NewServer, bodies, func(h http.Header, res string) {
		h["Cache-Control"] = []string{"public, max-age=300, s-maxage=86400"}
		h["Etag"] = []string{etags[res]}
	})
	bare := startTrivial(b, func(h http.Handler) *http.Server { return &http.Server{Handler: h} }, bodies, nil)

	// The machine may be shared: each figure is the median of rounds, and each round
	// runs the servers back to back, in rotating order, so that all see the same load.
	duration, rounds := os.Getenv("WRK_DURATION"), 5
	if duration == "" {
		duration = "2s"
	}
	if n, err := strconv.Atoi(os.Getenv("WRK_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	// run loads url with wrk and returns its requests per second and this process's
	// CPU time per request (both servers run in this process, one at a time; the CPU
	// figure depends less on what else the machine runs).
	run := func(url string, header ...string) result {
		args := []string{"-t2", "-c32", "-d" + duration}
		for _, h := range header {
			args = append(args, "-H", h)
		}
		before := cpuTime(b)
		out, err := exec.Command(wrk, append(args, url)...).CombinedOutput()
		if err != nil {
			b.Fatalf("wrk %s: %v\n%s", url, err, out)
		}
		cpu := cpuTime(b) - before
		rps := regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`).FindSubmatch(out)
		total := regexp.MustCompile(`(\d+) requests in`).FindSubmatch(out)
		if rps == nil || total == nil {
			b.Fatalf("wrk %s: no figures in\n%s", url, out)
		}
		if bytes.Contains(out, []byte("Non-2xx or 3xx responses")) || bytes.Contains(out, []byte("Socket errors")) {
			b.Fatalf("wrk %s: errors\n%s", url, out)
		}
		var r result
		r.rps, _ = strconv.ParseFloat(string(rps[1]), 64)
		n, _ := strconv.ParseFloat(string(total[1]), 64)
		r.cpu = float64(cpu.Microseconds()) / n
		return r
	}
	// interleave runs each of loads back to back, rounds times, each round starting
	// with the next one, and returns the medians of their figures and of the ratios of
	// the first one's req/s to each one's in the same round (1 for itself).
	interleave := func(loads ...func() result) (meds []result, ratios []float64) {
		all := make([][]result, len(loads))
		for i := range rounds {
			for j := range loads {
				k := (i + j) % len(loads)
				all[k] = append(all[k], loads[k]())
			}
		}
		for k := range loads {
			var rs []float64
			for i := range rounds {
				rs = append(rs, all[0][i].rps/all[k][i].rps)
			}
			meds, ratios = append(meds, medianResult(all[k])), append(ratios, median(rs))
		}
		return meds, ratios
	}
	for _, res := range []string{"scaled", "high"} {
		l.rawGet(b, "/user/avatar/3/"+res) // the cdn's cache holds it
	}
	b.ResetTimer()
	for range b.N {
		for _, res := range []string{"scaled", "high"} {
			path := "/user/avatar/3/" + res
			m, ratio := interleave(func() result { return run(l.url + path) },
				func() result { return run(static + path) }, func() result { return run(bare + path) })
			b.Logf("%-6s %5d bytes: cdn %6.0f req/s, static reference %6.0f req/s, ratio %.2f (target at least 0.80); "+
				"bare server %6.0f req/s, ratio %.2f; CPU per request %5.1f, %5.1f and %5.1f µs",
				res, len(bodies[res]), m[0].rps, m[1].rps, ratio[1], m[2].rps, ratio[2], m[0].cpu, m[1].cpu, m[2].cpu)
			b.ReportMetric(m[0].rps, "cdn-"+res+"-req/s")
			b.ReportMetric(m[1].rps, "static-"+res+"-req/s")
			b.ReportMetric(m[2].rps, "bare-"+res+"-req/s")
			b.ReportMetric(ratio[1], "ratio-"+res)
			b.ReportMetric(ratio[2], "ratio-bare-"+res)
		}
		path := l.url + "/user/avatar/3/high"
		m, ratio := interleave(func() result { return run(path, "If-None-Match: "+etags["high"]) }, func() result { return run(path) })
		b.Logf("high, cdn: 304 %6.0f req/s, 200 %6.0f req/s, ratio %.2f (target at least 1.00); CPU per request %5.1f µs and %5.1f µs",
			m[0].rps, m[1].rps, ratio[1], m[0].cpu, m[1].cpu)
		b.ReportMetric(ratio[1], "ratio-304/200")
	}
}

// startTrivial serves bodies["scaled"] and bodies["high"] (by the path's last
// segment) from memory, with Content-Type, Content-Length and what header adds, on
// the server newServer makes, and returns its URL.
func startTrivial(b *testing.B, newServer func(http.Handler) *http.Server, bodies map[string][]byte, header func(http.Header, string)) string {
	ln, err := net.Listen("tcp", "localhost:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := newServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res := "scaled"
		if strings.HasSuffix(r.URL.Path, "/high") {
			res = "high"
		}
		body := bodies[res]
		h := w.Header()
		h.Set("Content-Type", "image/jpeg")
		h.Set("Content-Length", strconv.Itoa(len(body)))
		if header != nil {
			header(h, res)
		}
		_, _ = w.Write(body)
	}))
	go func() { _ = srv.Serve(ln) }()
	b.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String()
}

// result is one wrk run: requests per second, and this process's CPU time per
// request in microseconds.
type result struct{ rps, cpu float64 }

func medianResult(rs []result) result {
	var rps, cpu []float64
	for _, r := range rs {
		rps, cpu = append(rps, r.rps), append(cpu, r.cpu)
	}
	return result{median(rps), median(cpu)}
}

// cpuTime is the CPU time (user and system) this process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
