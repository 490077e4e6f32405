// Package avatartest makes the uploads that tests of the image routes send: real
// pictures in each accepted format, and the bad inputs that must be refused without
// storing anything.
package avatartest

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"strings"
	"testing"
)

// Picture returns a w x h picture with a gradient, so that every region differs;
// alpha makes its left half half-transparent.
func Picture(w, h int, alpha bool) *image.NRGBA {
	m := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			a := uint8(255)
			if alpha && x < w/2 {
				a = 128
			}
			m.SetNRGBA(x, y, color.NRGBA{uint8(x * 255 / max(1, w-1)), uint8(y * 255 / max(1, h-1)), 160, a})
		}
	}
	return m
}

// PNG encodes Picture(w, h, alpha) as PNG.
func PNG(t testing.TB, w, h int, alpha bool) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, Picture(w, h, alpha)); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// JPEG encodes Picture(w, h, false) as JPEG.
func JPEG(t testing.TB, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, Picture(w, h, false), &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// GIF encodes Picture(w, h, false) as GIF.
func GIF(t testing.TB, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := gif.Encode(&b, Picture(w, h, false), nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// DataURL wraps data in a Base64 data URL of the given type.
func DataURL(contentType string, data []byte) string {
	return "data:" + contentType + ";base64," + base64.StdEncoding.EncodeToString(data)
}

// Base64 is data as bare Base64.
func Base64(data []byte) string { return base64.StdEncoding.EncodeToString(data) }

// Bomb is a valid PNG of w x h black pixels: tiny once compressed, w*h bytes once
// decoded. Above the pixel limit it must be refused from its header alone.
func Bomb(t testing.TB, w, h int) []byte {
	t.Helper()
	return uniformPNG(t, w, h, 8, 0, 1, 0) // 8-bit grayscale
}

// Deep is a valid 16-bit RGBA PNG of w x h grey pixels: small once compressed, 8
// bytes a pixel once decoded (image.RGBA64), so that it is refused by the bound on
// decoded bytes while its pixel count is allowed.
func Deep(t testing.TB, w, h int) []byte {
	t.Helper()
	return uniformPNG(t, w, h, 16, 6, 8, 0x80) // 16-bit RGBA
}

// uniformPNG is a PNG of w x h pixels whose bytes are all value: bit depth depth,
// colour type colorType, bytesPerPixel bytes a pixel, rows unfiltered, IDAT
// compressed as hard as zlib can.
func uniformPNG(t testing.TB, w, h int, depth, colorType byte, bytesPerPixel int, value byte) []byte {
	t.Helper()
	var idat bytes.Buffer
	zw, err := zlib.NewWriterLevel(&idat, zlib.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	row := bytes.Repeat([]byte{value}, 1+bytesPerPixel*w)
	row[0] = 0 // filter None
	for range h {
		if _, err := zw.Write(row); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	var ihdr [13]byte
	binary.BigEndian.PutUint32(ihdr[0:], uint32(w))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(h))
	ihdr[8], ihdr[9] = depth, colorType
	out := []byte("\x89PNG\r\n\x1a\n")
	out = chunk(out, "IHDR", ihdr[:])
	out = chunk(out, "IDAT", idat.Bytes())
	return chunk(out, "IEND", nil)
}

func chunk(out []byte, typ string, data []byte) []byte {
	out = binary.BigEndian.AppendUint32(out, uint32(len(data)))
	start := len(out)
	out = append(out, typ...)
	out = append(out, data...)
	return binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(out[start:]))
}

// BadUpload is an upload body the image routes must answer 400, storing nothing.
type BadUpload struct {
	Name string
	Body any // the JSON body, as testenv.Request takes it
}

// BadUploads are the refused bodies, for limits maxBytes (IMAGE_MAX_BYTES) and
// maxPixels (IMAGE_MAX_PIXELS); bodyLimit is the routes' JSON body limit.
func BadUploads(t testing.TB, maxBytes, maxPixels int, bodyLimit int64) []BadUpload {
	t.Helper()
	good := PNG(t, 40, 30, false)
	side := 1
	for side*side <= maxPixels {
		side *= 2
	}
	// Base64 of more than maxBytes, yet within the body limit: refused once counted.
	over := make([]byte, maxBytes+1)
	copy(over, good)
	return []BadUpload{
		{"no body", nil},
		{"empty object", map[string]any{}},
		{"image null", map[string]any{"image": nil}},
		{"image blank", map[string]any{"image": "   "}},
		{"image a number", map[string]any{"image": 42}},
		{"malformed JSON", `{"image": "`},
		{"truncated PNG", map[string]any{"image": DataURL("image/png", good[:len(good)/2])}},
		{"truncated JPEG", map[string]any{"image": Base64(JPEG(t, 64, 64)[:300])}},
		{"wrong magic bytes", map[string]any{"image": DataURL("image/png", append([]byte("NOTPNG!!"), good[8:]...))}},
		{"text, not an image", map[string]any{"image": Base64([]byte("hello, this is not a picture at all"))}},
		{"decompression bomb", map[string]any{"image": DataURL("image/png", Bomb(t, side, side))}},
		{"more than the byte limit", map[string]any{"image": Base64(over)}},
		{"body beyond the body limit", map[string]any{"image": strings.Repeat("A", int(bodyLimit)+16)}},
		{"data URL not Base64", map[string]any{"image": "data:image/png,%89PNG%0D%0A%1A%0A"}},
		{"data URL without comma", map[string]any{"image": "data:image/png;base64"}},
		{"not Base64", map[string]any{"image": "iVBORw0KGgo!!!!"}},
	}
}
