package images

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/jpeg"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/disintegration/imaging"
)

// The benchmark workload: a 12-megapixel photo-like JPEG at quality 90, made
// into both renditions and encoded. It is generated, not committed.
const (
	benchW, benchH = 4000, 3000
	benchQuality   = 90
)

// Peak RSS is measured in child processes: the test binary re-executes
// itself with childModeEnv set. Linux carries the high-water RSS of the
// process that starts a child (Go starts children with vfork) into the
// child's rusage, so a child of this big benchmark process would report this
// process's peak. Hence a small launcher in between: the benchmark starts
// the launcher, the launcher starts the measured command and prints its
// maximum resident set; the launcher's own few megabytes are the floor.
const (
	childModeEnv = "IMAGES_BENCH_CHILD" // "launch", "process", "naive" or "straight"
	childNextEnv = "IMAGES_BENCH_NEXT"  // for "launch": the mode of the command it starts, if it is this binary
	childFileEnv = "IMAGES_BENCH_FILE"  // for the pipelines: the JPEG to read
)

func TestMain(m *testing.M) {
	switch mode := os.Getenv(childModeEnv); mode {
	case "":
	case "launch":
		os.Exit(launch(os.Getenv(childNextEnv), os.Args[1:]))
	default:
		os.Exit(runChild(mode, os.Getenv(childFileEnv)))
	}
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

// launch runs argv with childModeEnv set to next (or unset) and prints its
// maximum resident set, in bytes, as "maxrss=N".
func launch(next string, argv []string) int {
	if len(argv) == 0 {
		fmt.Fprintln(os.Stderr, "launch: no command")
		return 2
	}
	c := exec.Command(argv[0], argv[1:]...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, childModeEnv+"=") && !strings.HasPrefix(kv, childNextEnv+"=") {
			c.Env = append(c.Env, kv)
		}
	}
	if next != "" {
		c.Env = append(c.Env, childModeEnv+"="+next)
	}
	c.Stdout, c.Stderr = os.Stderr, os.Stderr
	if err := c.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "launch %s: %v\n", argv[0], err)
		return 1
	}
	fmt.Printf("maxrss=%d\n", maxRSSOf(c.ProcessState))
	return 0
}

func runChild(mode, file string) int {
	raw, err := os.ReadFile(file)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	encoded := base64.StdEncoding.EncodeToString(raw)
	raw = nil
	switch mode {
	case "process":
		_, err = Process(encoded, Limits{})
	case "naive":
		_, err = naive(encoded)
	case "straight":
		_, err = straight(encoded)
	default:
		err = fmt.Errorf("unknown mode %q", mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

var (
	benchOnce    sync.Once
	benchDir     string
	benchFile    string // the workload JPEG, for vipsthumbnail and child processes
	benchEncoded string // the same as Base64, the input of Process
	benchErr     error
)

func workload(b *testing.B) (file, encoded string) {
	b.Helper()
	benchOnce.Do(func() {
		var buf bytes.Buffer
		if benchErr = jpeg.Encode(&buf, photo(benchW, benchH, 42), &jpeg.Options{Quality: benchQuality}); benchErr != nil {
			return
		}
		if benchDir, benchErr = os.MkdirTemp("", "imagesbench"); benchErr != nil {
			return
		}
		benchFile = filepath.Join(benchDir, "photo.jpg")
		benchErr = os.WriteFile(benchFile, buf.Bytes(), 0o644)
		benchEncoded = base64.StdEncoding.EncodeToString(buf.Bytes())
	})
	if benchErr != nil {
		b.Fatalf("make the workload: %v", benchErr)
	}
	return benchFile, benchEncoded
}

// naive is the straightforward pipeline Process is measured against: decode
// with imaging (orientation applied), a Lanczos Fill of the full image for each
// size, encode.
func naive(encoded string) (Result, error) {
	raw, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		return Result{}, err
	}
	img, err := imaging.Decode(bytes.NewReader(raw), imaging.AutoOrientation(true))
	if err != nil {
		return Result{}, err
	}
	var res Result
	for _, r := range []struct {
		out        *Rendition
		size, qual int
	}{{&res.High, HighSize, HighQuality}, {&res.Scaled, ScaledSize, ScaledQuality}} {
		m := imaging.Fill(img, r.size, r.size, imaging.Center, imaging.Lanczos)
		var buf bytes.Buffer
		if err := jpeg.Encode(&buf, m, &jpeg.Options{Quality: r.qual}); err != nil {
			return Result{}, err
		}
		*r.out = Rendition{Data: buf.Bytes(), ContentType: TypeJPEG, Width: r.size, Height: r.size}
	}
	return res, nil
}

// straight is the straightforward imaging pipeline: decode with imaging
// (orientation applied), a Catmull-Rom Fill of the full image to the High
// size, Scaled from High, encode.
func straight(encoded string) (Result, error) {
	raw, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		return Result{}, err
	}
	img, err := imaging.Decode(bytes.NewReader(raw), imaging.AutoOrientation(true))
	if err != nil {
		return Result{}, err
	}
	high := imaging.Fill(img, HighSize, HighSize, imaging.Center, imaging.CatmullRom)
	scaled := imaging.Fill(high, ScaledSize, ScaledSize, imaging.Center, imaging.CatmullRom)
	var res Result
	for _, r := range []struct {
		out  *Rendition
		m    image.Image
		qual int
	}{{&res.High, high, HighQuality}, {&res.Scaled, scaled, ScaledQuality}} {
		var buf bytes.Buffer
		if err := imaging.Encode(&buf, r.m, imaging.JPEG, imaging.JPEGQuality(r.qual)); err != nil {
			return Result{}, err
		}
		b := r.m.Bounds()
		*r.out = Rendition{Data: buf.Bytes(), ContentType: TypeJPEG, Width: b.Dx(), Height: b.Dy()}
	}
	return res, nil
}

// vipsthumbnailCmds makes both renditions of file with libvips' command
// line tool, one process per size, centre-cropped, stripped, at the same
// qualities as Process.
func vipsthumbnailCmds(file, dir string) []*exec.Cmd {
	mk := func(size, qual int, name string) *exec.Cmd {
		return exec.Command("vipsthumbnail", file,
			"--size", fmt.Sprintf("%dx%d", size, size), "--smartcrop", "centre",
			"-o", filepath.Join(dir, fmt.Sprintf("%s.jpg[Q=%d,strip]", name, qual)))
	}
	return []*exec.Cmd{mk(HighSize, HighQuality, "high"), mk(ScaledSize, ScaledQuality, "scaled")}
}

func needVips(b *testing.B) {
	b.Helper()
	if _, err := exec.LookPath("vipsthumbnail"); err != nil {
		b.Skip("vipsthumbnail is not installed (apt-get install libvips-tools); no side-by-side figures")
	}
}

func run(b *testing.B, cmds ...*exec.Cmd) (maxRSS int64) {
	b.Helper()
	for _, c := range cmds {
		if out, err := c.CombinedOutput(); err != nil {
			b.Fatalf("%s: %v\n%s", c, err, out)
		}
		maxRSS = max(maxRSS, maxRSSOf(c.ProcessState))
	}
	return maxRSS
}

func BenchmarkProcess(b *testing.B) {
	_, encoded := workload(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Process(encoded, Limits{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNaive(b *testing.B) {
	_, encoded := workload(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := naive(encoded); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStraight(b *testing.B) {
	_, encoded := workload(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := straight(encoded); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVipsthumbnail runs vipsthumbnail twice an op, once per size. Its
// B/op and allocs/op count only the Go side of starting the processes.
func BenchmarkVipsthumbnail(b *testing.B) {
	needVips(b)
	file, _ := workload(b)
	dir := b.TempDir()
	b.ReportAllocs()
	for b.Loop() {
		run(b, vipsthumbnailCmds(file, dir)...)
	}
}

// BenchmarkSideBySide times the four pipelines in turn within each op, so
// that they share the machine's state, and reports each one's milliseconds
// and the ratios to vipsthumbnail.
func BenchmarkSideBySide(b *testing.B) {
	needVips(b)
	file, encoded := workload(b)
	dir := b.TempDir()
	var tp, tn, ts, tv time.Duration
	for b.Loop() {
		t0 := time.Now()
		if _, err := Process(encoded, Limits{}); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := naive(encoded); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		if _, err := straight(encoded); err != nil {
			b.Fatal(err)
		}
		t3 := time.Now()
		run(b, vipsthumbnailCmds(file, dir)...)
		t4 := time.Now()
		tp, tn, ts, tv = tp+t1.Sub(t0), tn+t2.Sub(t1), ts+t3.Sub(t2), tv+t4.Sub(t3)
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / float64(b.N) }
	b.ReportMetric(ms(tp), "process-ms")
	b.ReportMetric(ms(tn), "naive-ms")
	b.ReportMetric(ms(ts), "straight-ms")
	b.ReportMetric(ms(tv), "vips-ms")
	b.ReportMetric(float64(tp)/float64(tv), "process/vips")
	b.ReportMetric(float64(tn)/float64(tv), "naive/vips")
	b.ReportMetric(float64(ts)/float64(tv), "straight/vips")
}

// BenchmarkPeakRSS runs each pipeline in a process of its own, once an op,
// and reports the largest maximum resident set seen, in MiB (for
// vipsthumbnail, of either of its two processes). The Go pipelines run in
// this test binary, re-executed: their figure includes the binary's own few
// megabytes.
func BenchmarkPeakRSS(b *testing.B) {
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	// measure runs argv through the launcher and returns its peak RSS.
	measure := func(b *testing.B, next string, file string, argv ...string) int64 {
		c := exec.Command(self, argv...)
		c.Env = append(os.Environ(), childModeEnv+"=launch", childNextEnv+"="+next, childFileEnv+"="+file)
		var stderr bytes.Buffer
		c.Stderr = &stderr
		out, err := c.Output()
		if err != nil {
			b.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, stderr.Bytes())
		}
		var rss int64
		if _, err := fmt.Sscanf(string(out), "maxrss=%d", &rss); err != nil {
			b.Fatalf("launcher said %q: %v", out, err)
		}
		return rss
	}
	for _, mode := range []string{"process", "naive", "straight", "vipsthumbnail"} {
		b.Run(mode, func(b *testing.B) {
			if mode == "vipsthumbnail" {
				needVips(b)
			}
			file, _ := workload(b)
			dir := b.TempDir()
			var peak int64
			for b.Loop() {
				if mode == "vipsthumbnail" {
					for _, c := range vipsthumbnailCmds(file, dir) {
						peak = max(peak, measure(b, "", file, c.Args...))
					}
					continue
				}
				peak = max(peak, measure(b, mode, file, self))
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-MB")
		})
	}
}
