package images

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"os"
	"strings"
	"testing"

	"github.com/mediacatalog/service/shared/apperr"
)

// fuzzMaxBytes keeps the fuzzed inputs' decoded size small.
const fuzzMaxBytes = 4096

// inputSeeds are small real images of each format, and the WebP test files.
func inputSeeds(f *testing.F) [][]byte {
	m := image.NewNRGBA(image.Rect(0, 0, 3, 2))
	m.Set(1, 1, color.NRGBA{R: 200, A: 128})
	var p, g, j bytes.Buffer
	if err := png.Encode(&p, m); err != nil {
		f.Fatal(err)
	}
	if err := gif.Encode(&g, m, nil); err != nil {
		f.Fatal(err)
	}
	if err := jpeg.Encode(&j, m, nil); err != nil {
		f.Fatal(err)
	}
	out := [][]byte{p.Bytes(), g.Bytes(), j.Bytes()}
	if w, err := os.ReadFile("testdata/opaque.webp"); err == nil && len(w) <= fuzzMaxBytes {
		out = append(out, w)
	}
	return out
}

// FuzzDecodeInput: the upload text (Base64, either alphabet, with or without padding,
// whitespace and a data URL prefix) decodes to what a reference decoder makes of it,
// or is refused with a 400 (apperr.Invalid); never a panic, never more than the limit.
func FuzzDecodeInput(f *testing.F) {
	for _, img := range inputSeeds(f) {
		s := base64.StdEncoding.EncodeToString(img)
		f.Add(s)
		f.Add("data:image/png;base64," + s)
		f.Add(" DATA:image/jpeg; BASE64 ,\n" + base64.RawURLEncoding.EncodeToString(img) + "\n")
	}
	for _, s := range []string{"", "data:", "data:,", "data:image/png,abc", "data:image/png;base64", "====",
		"QQ==", "QQ", "Q", "QUJD\r\nREVG", "QQ==QQ==", "data:;base64,QUJD", "\x00", "\xff\xfe", "QUJD\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := decodeInput(s, fuzzMaxBytes)
		if err != nil {
			if c := apperr.CodeOf(err); c != apperr.Invalid {
				t.Fatalf("%q: error %v has code %s, want invalid", s, err, c)
			}
			return
		}
		if len(got) == 0 || len(got) > fuzzMaxBytes {
			t.Fatalf("%q: %d bytes decoded, want 1..%d", s, len(got), fuzzMaxBytes)
		}
		want, ok := referenceDecode(s)
		if !ok || !bytes.Equal(got, want) {
			t.Fatalf("%q: decoded %x, the reference decoder %x (ok %v)", s, got, want, ok)
		}
	})
}

// referenceDecode is decodeInput written the plain way, with the standard library.
func referenceDecode(s string) ([]byte, bool) {
	s = strings.TrimSpace(s)
	if len(s) >= 5 && strings.EqualFold(s[:5], "data:") {
		meta, body, ok := strings.Cut(s[5:], ",")
		if !ok || !isBase64DataURL(meta) {
			return nil, false
		}
		s = body
	}
	s = strings.Map(func(r rune) rune {
		switch r {
		case ' ', '\t', '\r', '\n', '\f', '\v':
			return -1
		case '-':
			return '+'
		case '_':
			return '/'
		}
		return r
	}, s)
	s = strings.TrimRight(s, "=")
	b, err := base64.RawStdEncoding.DecodeString(s)
	return b, err == nil
}

// FuzzImageHeaders: the format sniffing, the header read before decoding (dimensions,
// checked against the pixel limit, and the decoder's memory, peakBytes) and the EXIF
// orientation of JPEGs take any bytes without a panic, and agree with each other.
func FuzzImageHeaders(f *testing.F) {
	for _, img := range inputSeeds(f) {
		f.Add(img)
		if len(img) > 16 {
			f.Add(img[:16]) // truncated header
		}
	}
	f.Add([]byte("RIFF\x00\x00\x00\x00WEBPVP8 "))
	f.Add(craftJPEG(40, 24, jpegKind("progressive YCCK 2x2")))
	f.Add(craftJPEG(17, 9, jpegKind("baseline RGB")))
	f.Add(craftPNG(f, 13, 7, pngSpec{depth: 16, colorType: 0, trns: true, interlaced: true}))
	f.Add([]byte("\xff\xd8\xff\xe1\x00\x10Exif\x00\x00MM\x00\x2a\x00\x00\x00\x08"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ct, ok := Sniff(b)
		fm := sniff(b)
		if ok != (fm != formatUnknown) || ct != fm.contentType() {
			t.Fatalf("Sniff says %q %v, sniff %v", ct, ok, fm)
		}
		if !ok {
			return
		}
		if cfg, err := fm.decodeConfig(bytes.NewReader(b)); err == nil {
			if cfg.Width < 0 || cfg.Height < 0 {
				t.Fatalf("negative dimensions %dx%d", cfg.Width, cfg.Height)
			}
			// Every decoder allocates at least a byte a pixel.
			if p := peakBytes(fm, b, cfg.Width, cfg.Height); p < int64(cfg.Width)*int64(cfg.Height) {
				t.Fatalf("%dx%d: peakBytes %d", cfg.Width, cfg.Height, p)
			}
		}
		if fm == formatJPEG {
			if o := jpegOrientation(b); o < 1 || o > 8 {
				t.Fatalf("orientation %d, want 1..8", o)
			}
		}
	})
}
