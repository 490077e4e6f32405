package images

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// peakKind is one kind of upload for BenchmarkDecoderPeak: how to make a
// s x s file of it, and how to judge one from the header (without making
// the whole file), nil for "make it and read it".
type peakKind struct {
	name   string
	make   func(tb testing.TB, s int) ([]byte, error)
	header func(s int) []byte
}

// peakKinds are every crafted JPEG and PNG variant, GIF, a crafted lossless
// WebP with the largest Huffman tables, and, when libvips' command is
// installed (make bench installs it), JPEGs from a real progressive encoder
// and WebP from libwebp.
func peakKinds() []peakKind {
	var ks []peakKind
	for _, s := range jpegKinds {
		spec := s
		ks = append(ks, peakKind{
			name:   "JPEG " + spec.name,
			make:   func(_ testing.TB, n int) ([]byte, error) { return craftJPEG(n, n, spec), nil },
			header: func(n int) []byte { return craftJPEG(n, n, spec) },
		})
	}
	for _, s := range pngKinds {
		spec := s
		ks = append(ks, peakKind{
			name:   "PNG " + spec.name,
			make:   func(tb testing.TB, n int) ([]byte, error) { return craftPNG(tb, n, n, spec), nil },
			header: func(n int) []byte { return assemblePNG(n, n, spec, nil) },
		})
	}
	ks = append(ks, peakKind{
		name:   "GIF",
		make:   func(tb testing.TB, n int) ([]byte, error) { return craftGIF(tb, n, n), nil },
		header: func(n int) []byte { return craftGIF(nopTB{}, 1, 1) },
	})
	ks = append(ks, peakKind{
		name:   "WebP lossless, 2600 Huffman groups",
		make:   func(_ testing.TB, n int) ([]byte, error) { return craftVP8LBomb(n, n), nil },
		header: func(int) []byte { return []byte("RIFF\x00\x00\x00\x00WEBPVP8L\x00\x00\x00\x00") },
	})
	if _, err := exec.LookPath("vips"); err != nil {
		return ks
	}
	riff := func(chunks ...[]byte) []byte {
		out := []byte("RIFF\x00\x00\x00\x00WEBP")
		for _, c := range chunks {
			out = append(out, c...)
		}
		return out
	}
	chunk := func(id string, data ...byte) []byte {
		return append(binary.LittleEndian.AppendUint32([]byte(id), uint32(len(data))), data...)
	}
	lossy := riff(chunk("VP8 "))
	alpha := riff(chunk("VP8X", 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0), chunk("ALPH", 1, 0), chunk("VP8 "))
	lossless := riff(chunk("VP8L"))
	for _, v := range []struct {
		name, ext, prep, save string
		header                func(n int) []byte
	}{
		{"JPEG progressive 4:2:0 (libvips)", "jpg", "", "[interlace,Q=85]", func(n int) []byte { return craftJPEG(n, n, jpegKind("progressive 4:2:0")) }},
		{"JPEG progressive 4:4:4 (libvips)", "jpg", "", "[interlace,Q=85,subsample-mode=off]", func(n int) []byte { return craftJPEG(n, n, jpegKind("progressive 4:4:4")) }},
		{"JPEG progressive CMYK (libvips)", "jpg", "cmyk", "[interlace,Q=85]", func(n int) []byte { return craftJPEG(n, n, jpegKind("progressive CMYK")) }},
		{"WebP lossy", "webp", "", "[Q=80]", func(int) []byte { return lossy }},
		{"WebP lossy with alpha", "webp", "alpha", "[Q=80]", func(int) []byte { return alpha }},
		{"WebP lossless", "webp", "", "[lossless]", func(int) []byte { return lossless }},
		{"WebP lossless with alpha", "webp", "alpha", "[lossless]", func(int) []byte { return lossless }},
	} {
		ks = append(ks, peakKind{name: v.name, header: v.header, make: func(tb testing.TB, n int) ([]byte, error) {
			return vipsImage(tb, n, v.ext, v.prep, v.save)
		}})
	}
	return ks
}

// nopTB lets the GIF header be made outside a test.
type nopTB struct{ testing.TB }

func (nopTB) Helper() {}

// vipsImage makes an n x n image with libvips' command: a gradient (so that
// lossy encoders have something to code), with an alpha channel or
// converted to CMYK as prep says, saved with the options save.
func vipsImage(tb testing.TB, n int, ext, prep, save string) ([]byte, error) {
	dir := tb.TempDir()
	src := filepath.Join(dir, "src.v")
	steps := [][]string{{"vips", "xyz", src, strconv.Itoa(n), strconv.Itoa(n)}}
	cur := src
	next := func(args ...string) {
		out := filepath.Join(dir, fmt.Sprintf("s%d.v", len(steps)))
		steps = append(steps, append(append([]string{"vips"}, args[0], cur, out), args[1:]...))
		cur = out
	}
	next("cast", "uchar")
	next("bandjoin_const", "128") // three bands: x, y, 128
	next("copy", "--interpretation", "srgb")
	switch prep {
	case "alpha":
		next("bandjoin_const", "200")
	case "cmyk":
		next("colourspace", "cmyk")
	}
	file := filepath.Join(dir, "out."+ext)
	steps = append(steps, []string{"vips", "copy", cur, file + save})
	for _, s := range steps {
		if out, err := exec.Command(s[0], s[1:]...).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("%s: %v: %s", strings.Join(s, " "), err, out)
		}
	}
	return os.ReadFile(file)
}

var hwmLine = regexp.MustCompile(`vmhwm_kib=(\d+) accepted=(true|false)`)

var peakTable struct {
	once  sync.Once
	rows  []string
	worst float64
	err   error
}

// BenchmarkDecoderPeak finds, for each kind of upload, the largest square
// image that the header arithmetic accepts under the default limits, makes
// it, and takes it through the upload pipeline in a fresh process
// (infra/bench/cmd/imagepeak), which prints its peak resident memory (VmHWM). It
// prints the table docs/performance.md records and reports the largest peak;
// the target is 256 MiB. The last two rows, progressive JPEGs whose decoders
// would allocate several times the bound, show them refused.
func BenchmarkDecoderPeak(b *testing.B) {
	peakTable.once.Do(func() {
		peakTable.rows, peakTable.worst, peakTable.err = decoderPeakTable(b)
		// On stdout: go test keeps ten lines of a benchmark's log.
		fmt.Println(strings.Join(peakTable.rows, "\n"))
	})
	if peakTable.err != nil {
		b.Fatal(peakTable.err)
	}
	for range b.N {
	}
	b.ReportMetric(peakTable.worst, "worst-VmHWM-MiB")
}

func decoderPeakTable(b *testing.B) ([]string, float64, error) {
	dir := b.TempDir()
	bin := filepath.Join(dir, "imagepeak")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/mediacatalog/service/infra/bench/cmd/imagepeak").CombinedOutput(); err != nil {
		return nil, 0, fmt.Errorf("go build imagepeak: %v: %s", err, out)
	}
	measure := func(raw []byte) (float64, bool, error) {
		file := filepath.Join(dir, "in")
		if err := os.WriteFile(file, raw, 0o600); err != nil {
			return 0, false, err
		}
		out, err := exec.Command(bin, file).CombinedOutput()
		m := hwmLine.FindSubmatch(out)
		if err != nil || m == nil {
			return 0, false, fmt.Errorf("imagepeak: %v: %s", err, out)
		}
		kib, _ := strconv.ParseFloat(string(m[1]), 64)
		return kib / 1024, string(m[2]) == "true", nil
	}
	estimate := func(raw []byte, s int) int64 { return peakBytes(sniff(raw), raw, s, s) }
	bound := int64(DefaultMaxDecodedBytes)
	rows := []string{
		fmt.Sprintf("bound %d MiB on the header estimate; target 256 MiB VmHWM", bound>>20),
		fmt.Sprintf("%-40s %11s %9s %9s %9s", "kind", "worst", "file KiB", "est MiB", "VmHWM MiB"),
	}
	var worst float64
	for _, k := range peakKinds() {
		lo := sideFor(func(s int) int64 { return estimate(k.header(s), s) })
		// A WebP's lossy data counts too, known once it is made: step
		// down while the file is refused.
		var raw []byte
		var mib float64
		for try := 0; ; try++ {
			var err error
			if raw, err = k.make(b, lo); err != nil {
				return nil, 0, err
			}
			var ok bool
			if mib, ok, err = measure(raw); err != nil {
				return nil, 0, err
			}
			if ok {
				break
			}
			if try == 10 {
				return nil, 0, fmt.Errorf("%s %dx%d refused", k.name, lo, lo)
			}
			lo = lo * 98 / 100
		}
		worst = max(worst, mib)
		rows = append(rows, fmt.Sprintf("%-40s %11s %9d %9.1f %9.1f", k.name, fmt.Sprintf("%dx%d", lo, lo),
			len(raw)>>10, float64(estimate(raw, lo))/(1<<20), mib))
	}
	// The file's own bytes count beside the decoder's: the worst
	// progressive 4:4:4 JPEG again, grown to the largest accepted file by
	// APP15 segments (the Base64 text and the decoded bytes both stay).
	{
		spec := jpegKind("progressive 4:4:4")
		s := sideFor(func(s int) int64 { return estimate(craftJPEG(s, s, spec), s) })
		raw := padJPEG(craftJPEG(s, s, spec), DefaultMaxBytes)
		mib, ok, err := measure(raw)
		if err != nil || !ok {
			return nil, 0, fmt.Errorf("padded %s: accepted %v, %v", spec.name, ok, err)
		}
		worst = max(worst, mib)
		rows = append(rows, fmt.Sprintf("%-40s %11s %9d %9.1f %9.1f", "JPEG "+spec.name+", 10 MiB file", fmt.Sprintf("%dx%d", s, s),
			len(raw)>>10, float64(estimate(raw, s))/(1<<20), mib))
	}
	for _, r := range []struct {
		s    int
		spec jpegSpec
	}{
		{7071, jpegSpec{name: "progressive 4:4:4", hv: []byte{0x11, 0x11, 0x11}, progressive: true, jfif: true, adobe: -1}},
		{6000, jpegSpec{name: "progressive CMYK", hv: []byte{0x11, 0x11, 0x11, 0x11}, progressive: true, adobe: 0}},
	} {
		raw := craftJPEG(r.s, r.s, r.spec)
		mib, ok, err := measure(raw)
		if err != nil {
			return nil, 0, err
		}
		if ok {
			return nil, 0, fmt.Errorf("the hostile %s %dx%d was accepted", r.spec.name, r.s, r.s)
		}
		rows = append(rows, fmt.Sprintf("%-40s %11s %9d %9.1f %9.1f  refused", "hostile JPEG "+r.spec.name, fmt.Sprintf("%dx%d", r.s, r.s),
			len(raw)>>10, float64(estimate(raw, r.s))/(1<<20), mib))
	}
	return rows, worst, nil
}

// sideFor returns the largest side s of a square image, at most the pixel
// limit allows, for which est(s) is within the default bound: est grows
// with s, so by bisection.
func sideFor(est func(s int) int64) int {
	lo, hi := 1, int(math.Sqrt(DefaultMaxPixels))
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if est(mid) <= DefaultMaxDecodedBytes {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// padJPEG inserts APP15 segments after the start of image until the file
// is size bytes long (or a few bytes less).
func padJPEG(raw []byte, size int) []byte {
	out := append([]byte{}, raw[:2]...)
	for need := size - len(raw); need > 4; {
		n := min(need-4, 65533)
		out = append(out, 0xFF, 0xEF, byte((n+2)>>8), byte(n+2))
		out = append(out, make([]byte, n)...)
		need -= n + 4
	}
	return append(out, raw[2:]...)
}

// jpegKind returns the jpegKinds entry of that name.
func jpegKind(name string) jpegSpec {
	for _, s := range jpegKinds {
		if s.name == name {
			return s
		}
	}
	panic(name)
}
