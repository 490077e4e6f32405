package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
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

	"github.com/mediacatalog/service/infra/local/demo"
	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/avatars"
	"github.com/mediacatalog/service/shared/awsconfig"
	"github.com/mediacatalog/service/shared/httpapi"
	"github.com/mediacatalog/service/shared/lambdahttp"
	"github.com/mediacatalog/service/shared/s3store"
)

// startWithPicture runs the local server on a bucket of the test's own and gives demo
// user 3 (the member) a photo-like picture whose renditions weigh about 4 KB (scaled)
// and 37 KB (high). It returns the uploads' service too, to give other users pictures.
func startWithPicture(t testing.TB) (*local, *avatars.Service) {
	t.Helper()
	s3cfg := testenv.S3Config(t)
	l := startLocal(t, map[string]string{"S3_BUCKET": s3cfg.Bucket})
	store, err := s3store.New(awsconfig.Load(s3cfg), s3store.Options{Bucket: s3cfg.Bucket, Endpoint: s3cfg.S3Endpoint})
	if err != nil {
		t.Fatal(err)
	}
	uploads := avatars.New(avatars.Deps{Files: store, Store: l.db.DB, FileService: true})
	givePicture(t, uploads, demo.MemberUserID, photo(t, memberTexture))
	return l, uploads
}

func givePicture(t testing.TB, uploads *avatars.Service, id int64, picture []byte) {
	t.Helper()
	if err := uploads.UpdateUserImage(context.Background(), id, base64.StdEncoding.EncodeToString(picture)); err != nil {
		t.Fatal(err)
	}
}

// texture is the noise of a photo: its amplitude and the side of its blocks. More
// texture, larger renditions.
type texture struct{ amp, block int }

// memberTexture gives renditions of 3,927 bytes (scaled) and 37,557 bytes (high).
var memberTexture = texture{18, 16}

// photo is a 1200x900 JPEG with a gradient and blocks of noise: texture that survives
// the scaling, as a photograph's does.
func photo(t testing.TB, tx texture) []byte {
	const w, h = 1200, 900
	r := rand.New(rand.NewPCG(3, 4))
	noise := make([]int, (w/tx.block+1)*(h/tx.block+1))
	for i := range noise {
		noise[i] = r.IntN(2*tx.amp+1) - tx.amp
	}
	m := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			n := noise[(y/tx.block)*(w/tx.block+1)+x/tx.block]
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
// URL; every other spelling is a 404 cached a minute at most.
func TestAvatarSpellings(t *testing.T) {
	l, _ := startWithPicture(t)
	for _, path := range []string{"/user/avatar/3", "/user/avatar/3/high", "/user/avatar/3/scaled"} {
		resp, body := l.rawGet(t, path)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "image/jpeg" || len(body) == 0 ||
			resp.Header.Get("Cache-Control") != httpapi.CacheAvatar || resp.Header.Get("ETag") == "" {
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
		// Short-lived (the route's 404) or not cached (the mux's): never a picture's.
		if cc := resp.Header.Get("Cache-Control"); cc != httpapi.CacheMissing && cc != httpapi.CachePrivate {
			t.Errorf("%s: a 404 with Cache-Control %q", path, cc)
		}
	}
}

// BenchmarkAvatarServer (make bench) measures the local server's avatar route, the
// picture in the cdn's memory, beside trivial net/http servers that write the same
// bytes from memory, with wrk (-t2 -c32), in one run and interleaved: the scaled
// rendition of a photo (about 4 KB) and its high one (about 37 KB), which the target
// names; scaled renditions of other sizes (the default picture of a user without one,
// a smoother and a rougher photo), which show where the ratio to the bare server
// depends on the size; and a 304 beside a 200. It prints requests per second and the
// ratios; it asserts nothing about them.
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
	l, uploads := startWithPicture(b)
	givePicture(b, uploads, demo.EditorUserID, photo(b, texture{6, 16}))
	rough := l.db.Int(b, `INSERT INTO users (slug, username) VALUES ('rough-photo', 'rough-photo') RETURNING id`)
	givePicture(b, uploads, rough, photo(b, texture{40, 12}))

	// What is loaded: the two renditions of the target first, then the other sizes.
	// The admin (demo user 1) has no picture: the default one.
	loads := []*avatarLoad{
		{name: "scaled", path: "/user/avatar/3/scaled"},
		{name: "high", path: "/user/avatar/3/high"},
		{name: "default-scaled", path: "/user/avatar/1/scaled"},
		{name: "smooth-scaled", path: "/user/avatar/2/scaled"},
		{name: "rough-scaled", path: "/user/avatar/" + strconv.FormatInt(rough, 10) + "/scaled"},
	}
	byPath := map[string]*avatarLoad{}
	for _, ld := range loads {
		resp, body := l.rawGet(b, ld.path) // and the cdn's cache holds it
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("%s: %d", ld.path, resp.StatusCode)
		}
		ld.body, ld.contentType, ld.etag = body, resp.Header.Get("Content-Type"), resp.Header.Get("ETag")
		byPath[ld.path] = ld
	}
	// Two references hold the same bytes in memory and write them with one Write. The
	// static one answers as a static file server would under the same contract: the
	// avatar's caching headers (Cache-Control, ETag, Content-Type, Content-Length; Date
	// from net/http) on the server settings of the local server (lambdahttp.NewServer,
	// whose timeouts set connection deadlines on every request). The bare one is a
	// default http.Server writing Content-Type and Content-Length only. The target is
	// against the static one (docs/cdn.md says why); the bare one is printed beside it.
	static := startTrivial(b, lambdahttp.NewServer, byPath, true)
	bare := startTrivial(b, func(h http.Handler) *http.Server { return &http.Server{Handler: h} }, byPath, false)

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
	// writes is how many write calls net/http makes for an answer of n bytes, header
	// included: what fits its connection's 4,096-byte buffer goes out in one.
	writes := func(n int) int { return 1 + min(1, n/(connBuffer+1)) }
	b.ResetTimer()
	for range b.N {
		for _, ld := range loads {
			m, ratio := interleave(func() result { return run(l.url + ld.path) },
				func() result { return run(static + ld.path) }, func() result { return run(bare + ld.path) })
			sizes := [3]int{responseBytes(b, l.url, ld.path), responseBytes(b, static, ld.path), responseBytes(b, bare, ld.path)}
			b.Logf("%-14s %5d bytes: cdn %6.0f req/s, static reference %6.0f req/s, ratio %.2f (target at least 0.80); "+
				"bare server %6.0f req/s, ratio %.2f; CPU per request %5.1f, %5.1f and %5.1f µs; "+
				"answers of %d, %d and %d bytes in %d, %d and %d writes",
				ld.name, len(ld.body), m[0].rps, m[1].rps, ratio[1], m[2].rps, ratio[2], m[0].cpu, m[1].cpu, m[2].cpu,
				sizes[0], sizes[1], sizes[2], writes(sizes[0]), writes(sizes[1]), writes(sizes[2]))
			b.ReportMetric(m[0].rps, "cdn-"+ld.name+"-req/s")
			b.ReportMetric(m[1].rps, "static-"+ld.name+"-req/s")
			b.ReportMetric(m[2].rps, "bare-"+ld.name+"-req/s")
			b.ReportMetric(ratio[1], "ratio-"+ld.name)
			b.ReportMetric(ratio[2], "ratio-bare-"+ld.name)
		}
		high := byPath["/user/avatar/3/high"]
		path := l.url + high.path
		m, ratio := interleave(func() result { return run(path, "If-None-Match: "+high.etag) }, func() result { return run(path) })
		b.Logf("high, cdn: 304 %6.0f req/s, 200 %6.0f req/s, ratio %.2f (target at least 1.00); CPU per request %5.1f µs and %5.1f µs",
			m[0].rps, m[1].rps, ratio[1], m[0].cpu, m[1].cpu)
		b.ReportMetric(ratio[1], "ratio-304/200")
	}
}

// connBuffer is the size of net/http's buffer for each connection's writes: an answer
// that fits goes out in one write, a longer one in two.
const connBuffer = 4 << 10

// avatarLoad is one picture the benchmark asks for: its path and the cdn's answer.
type avatarLoad struct {
	name, path        string
	body              []byte
	contentType, etag string
}

// startTrivial serves the answers of byPath from memory with Content-Type and
// Content-Length, and with the avatar's Cache-Control and ETag when caching is set, on
// the server newServer makes, and returns its URL.
func startTrivial(b *testing.B, newServer func(http.Handler) *http.Server, byPath map[string]*avatarLoad, caching bool) string {
	ln, err := net.Listen("tcp", "localhost:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := newServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ld, ok := byPath[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		h.Set("Content-Type", ld.contentType)
		h.Set("Content-Length", strconv.Itoa(len(ld.body)))
		if caching {
			h["Cache-Control"] = []string{httpapi.CacheAvatar}
			h["Etag"] = []string{ld.etag}
		}
		_, _ = w.Write(ld.body)
	}))
	go func() { _ = srv.Serve(ln) }()
	b.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String()
}

// responseBytes is the size of the answer to GET path on a kept-alive connection,
// status line and header included, as wrk receives it.
func responseBytes(b *testing.B, base, path string) int {
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	if _, err := fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: localhost\r\n\r\n", path); err != nil {
		b.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	var got []byte
	buf := make([]byte, 64<<10)
	for {
		n, err := conn.Read(buf)
		got = append(got, buf[:n]...)
		if end := bytes.Index(got, []byte("\r\n\r\n")); end >= 0 {
			resp, rerr := http.ReadResponse(bufio.NewReader(bytes.NewReader(got)), nil)
			if rerr == nil && resp.ContentLength >= 0 && len(got) >= end+4+int(resp.ContentLength) {
				return end + 4 + int(resp.ContentLength)
			}
		}
		if err != nil {
			b.Fatalf("GET %s%s: %v after %d bytes", base, path, err, len(got))
		}
	}
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
