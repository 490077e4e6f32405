package images

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"

	"github.com/mediacatalog/service/shared/apperr"
)

// peakCase is one image of each kind the decoders accept.
type peakCase struct {
	name string
	raw  []byte
}

// peakCases are the crafted JPEG, PNG and GIF variants at w x h, and the
// WebP test files (lossy, lossy with VP8L alpha, lossless).
func peakCases(t testing.TB, w, h int) []peakCase {
	var cs []peakCase
	for _, s := range jpegKinds {
		cs = append(cs, peakCase{"JPEG " + s.name, craftJPEG(w, h, s)})
	}
	for _, s := range pngKinds {
		cs = append(cs, peakCase{"PNG " + s.name, craftPNG(t, w, h, s)})
	}
	cs = append(cs, peakCase{"GIF", craftGIF(t, w, h)})
	return cs
}

// measureDecode returns the bytes decoding raw and rendering it allocate
// (TotalAlloc, which counts what the garbage collector gave back too).
func measureDecode(t *testing.T, raw []byte) uint64 {
	t.Helper()
	f := sniff(raw)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	img, err := f.decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	if _, err := render(img, 1); err != nil {
		t.Fatalf("render: %v", err)
	}
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestPeakBytes holds the header arithmetic to real decodes: for every
// variant of every format, at sizes on both sides of render's box reduction,
// what decoding and rendering allocate is at most peakBytes, and peakBytes
// is not far above it. Lossless WebP's Huffman tables are counted at their
// largest, which the header cannot rule out (vp8lPeak): a crafted file with
// 2600 groups of them meets the estimate, but for the scratch the decoder
// drops after each tree (hScratch); libwebp's files are far below it.
func TestPeakBytes(t *testing.T) {
	if testing.Short() {
		t.Skip("decodes some hundred images")
	}
	for _, size := range [][2]int{{333, 250}, {1500, 1100}} {
		cases := peakCases(t, size[0], size[1])
		if size[0] == 333 {
			for _, name := range []string{"opaque.webp", "alpha-lossy.webp", "alpha-lossless.webp"} {
				cases = append(cases, peakCase{"WebP " + name, readTestdata(t, name)})
			}
			cases = append(cases, peakCase{"WebP lossless bomb", craftVP8LBomb(size[0], size[1])})
		}
		for _, c := range cases {
			f := sniff(c.raw)
			cfg, err := f.decodeConfig(bytes.NewReader(c.raw))
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			name := fmt.Sprintf("%s %dx%d", c.name, cfg.Width, cfg.Height)
			t.Run(name, func(t *testing.T) {
				est := peakBytes(f, c.raw, cfg.Width, cfg.Height)
				got := measureDecode(t, c.raw)
				bomb := c.name == "WebP lossless bomb"
				if bomb {
					// The trees' scratch, counted once (hScratch).
					got -= 2600 * hScratch
				}
				t.Logf("estimate %d, allocated %d (%.2f)", est, got, float64(est)/float64(got))
				if uint64(est) < got {
					t.Errorf("estimate %d bytes, decoding and rendering allocated %d", est, got)
				}
				// Not far above: the fixed allowances and at most a
				// fifth more (the generic path's garbage is a guess
				// high). Lossless WebP's Huffman tables are counted at
				// their most.
				lossless := !bomb && f == formatWebP && (bytes.Contains(c.raw, []byte("VP8L")) || bytes.Contains(c.raw, []byte("ALPH")))
				if slack := uint64(renderFixed + 1<<20); !lossless && uint64(est) > got*6/5+slack {
					t.Errorf("estimate %d bytes is far above the %d allocated", est, got)
				}
			})
		}
	}
}

// TestProcessRefusesDecoderPeak: files of a few hundred kilobytes whose
// pixel count and decoded size pass the simple checks (at most 50
// megapixels, at most 150 MB of pixels) can make the decoder allocate
// several times that: a progressive 7071x7071 JPEG (coefficients
// for every block until the last scan) and a progressive 6000x6000 CMYK
// JPEG (four components of coefficients, then a CMYK copy). Both are
// refused from the header, allocating about their file size; so are the
// same images as baseline CMYK or with 4:4:4 progressive, but a baseline
// 4:2:0 JPEG of the same size passes the bound.
func TestProcessRefusesDecoderPeak(t *testing.T) {
	tests := []struct {
		w, h   int
		spec   jpegSpec
		refuse bool
	}{
		{7071, 7071, jpegSpec{name: "progressive 4:2:0", hv: []byte{0x22, 0x11, 0x11}, progressive: true, jfif: true, adobe: -1}, true},
		{7071, 7071, jpegSpec{name: "progressive 4:4:4", hv: []byte{0x11, 0x11, 0x11}, progressive: true, jfif: true, adobe: -1}, true},
		{6000, 6000, jpegSpec{name: "progressive CMYK", hv: []byte{0x11, 0x11, 0x11, 0x11}, progressive: true, adobe: 0}, true},
		{6000, 6000, jpegSpec{name: "baseline CMYK", hv: []byte{0x11, 0x11, 0x11, 0x11}, adobe: 0}, true},
		{7071, 7071, jpegSpec{name: "baseline 4:2:0", hv: []byte{0x22, 0x11, 0x11}, jfif: true, adobe: -1}, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s %dx%d", tt.spec.name, tt.w, tt.h), func(t *testing.T) {
			raw := craftJPEG(tt.w, tt.h, tt.spec)
			in := b64(raw)
			f := sniff(raw)
			peak := peakBytes(f, raw, tt.w, tt.h)
			t.Logf("%d-byte file, estimate %d bytes", len(raw), peak)
			if !tt.refuse {
				if peak > DefaultMaxDecodedBytes {
					t.Errorf("estimate %d bytes is over the default bound %d", peak, DefaultMaxDecodedBytes)
				}
				return
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := Process(in, Limits{})
			runtime.ReadMemStats(&after)
			e, ok := apperr.As(err)
			if !ok || e.Code != apperr.Invalid || e.Message != MsgImageTooDeep {
				t.Fatalf("Process error %v, want code %q, message %q", err, apperr.Invalid, MsgImageTooDeep)
			}
			if got := after.TotalAlloc - before.TotalAlloc; got > uint64(4*len(in)+1<<20) {
				t.Errorf("refusing allocated %d bytes for a %d-byte upload: it decoded", got, len(in))
			}
		})
	}
}
