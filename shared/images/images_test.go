package images

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"image"
	"image/color"
	"image/color/palette"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/disintegration/imaging"

	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/imageset"
)

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkResult checks what every successful Process must give: the sizes,
// the content types, and bytes that are what their content type says.
func checkResult(t *testing.T, res Result, wantHigh, wantScaled int, wantType string) {
	t.Helper()
	for _, c := range []struct {
		name string
		r    Rendition
		size int
	}{{"High", res.High, wantHigh}, {"Scaled", res.Scaled, wantScaled}} {
		if c.r.Width != c.size || c.r.Height != c.size {
			t.Errorf("%s is %dx%d, want %dx%d", c.name, c.r.Width, c.r.Height, c.size, c.size)
		}
		if c.r.ContentType != wantType {
			t.Errorf("%s content type %q, want %q", c.name, c.r.ContentType, wantType)
		}
		if ct, ok := Sniff(c.r.Data); !ok || ct != c.r.ContentType {
			t.Errorf("%s: Sniff of the bytes gives %q, %v; the rendition says %q", c.name, ct, ok, c.r.ContentType)
		}
		if b := decodeRendition(t, c.r).Bounds(); b.Dx() != c.r.Width || b.Dy() != c.r.Height {
			t.Errorf("%s decodes to %v, the rendition says %dx%d", c.name, b, c.r.Width, c.r.Height)
		}
	}
}

func TestProcessAcceptsFormats(t *testing.T) {
	jpg := encodeJPEG(t, photo(640, 480, 1), 90)
	big := encodeJPEG(t, photo(2200, 2100, 2), 85)
	gray := image.NewGray(image.Rect(0, 0, 700, 900))
	for i := range gray.Pix {
		gray.Pix[i] = uint8(i / 7)
	}
	paletted := image.NewPaletted(image.Rect(0, 0, 200, 150), palette.Plan9)
	for i := range paletted.Pix {
		paletted.Pix[i] = uint8(i % 200)
	}
	deep := image.NewRGBA64(image.Rect(0, 0, 150, 150))
	for y := range 150 {
		for x := range 150 {
			deep.SetRGBA64(x, y, color.RGBA64{uint16(x * 400), uint16(y * 400), 0x8000, 0xFFFF})
		}
	}
	png := encodePNG(t, photo(600, 700, 3))
	gif := encodeGIF(t, photo(300, 240, 4))
	webp := readTestdata(t, "opaque.webp")

	var wrapped strings.Builder
	wrapped.WriteString("\r\n  ")
	for s := b64(jpg); len(s) > 0; {
		n := min(76, len(s))
		wrapped.WriteString(s[:n] + "\r\n")
		s = s[n:]
	}

	tests := []struct {
		name            string
		in              string
		high, scaled    int
		wantContentType string
	}{
		{"jpeg, plain Base64", b64(jpg), 480, 128, TypeJPEG},
		{"jpeg, data URL", "data:image/jpeg;base64," + b64(jpg), 480, 128, TypeJPEG},
		{"jpeg, data URL declaring png", "data:image/png;base64," + b64(jpg), 480, 128, TypeJPEG},
		{"jpeg, data URL with parameters", "data:image/jpeg;name=me.jpg;base64," + b64(jpg), 480, 128, TypeJPEG},
		{"jpeg, data URL in upper case", "DATA:IMAGE/JPEG;BASE64," + b64(jpg), 480, 128, TypeJPEG},
		{"jpeg, URL alphabet without padding", base64.RawURLEncoding.EncodeToString(jpg), 480, 128, TypeJPEG},
		{"jpeg, standard alphabet without padding", base64.RawStdEncoding.EncodeToString(jpg), 480, 128, TypeJPEG},
		{"jpeg, MIME line breaks and surrounding space", wrapped.String(), 480, 128, TypeJPEG},
		{"jpeg, large (box reduction)", b64(big), 512, 128, TypeJPEG},
		{"jpeg, grayscale", b64(encodeJPEG(t, gray, 90)), 512, 128, TypeJPEG},
		{"png", b64(png), 512, 128, TypeJPEG},
		{"png, data URL", "data:image/png;base64," + b64(png), 512, 128, TypeJPEG},
		{"png, paletted", b64(encodePNG(t, paletted)), 150, 128, TypeJPEG},
		{"png, 16 bits a channel", b64(encodePNG(t, deep)), 150, 128, TypeJPEG},
		{"gif", b64(gif), 240, 128, TypeJPEG},
		{"gif, data URL", "data:image/gif;base64," + b64(gif), 240, 128, TypeJPEG},
		{"webp", b64(webp), 64, 64, TypeJPEG},
		{"webp, data URL", "data:image/webp;base64," + b64(webp), 64, 64, TypeJPEG},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Process(tt.in, Limits{})
			if err != nil {
				t.Fatalf("Process: %v", err)
			}
			checkResult(t, res, tt.high, tt.scaled, tt.wantContentType)
		})
	}
}

func TestProcessSizes(t *testing.T) {
	tests := []struct {
		w, h         int
		high, scaled int
	}{
		{4000, 3000, 512, 128},
		{3000, 4000, 512, 128},
		{2048, 2048, 512, 128},
		{1537, 3075, 512, 128},
		{600, 600, 512, 128},
		{512, 512, 512, 128},
		{513, 700, 512, 128},
		{300, 200, 200, 128},
		{128, 1000, 128, 128},
		{127, 127, 127, 127},
		{100, 80, 80, 80},
		{1, 1, 1, 1},
		{5000, 1, 1, 1},
	}
	for _, tt := range tests {
		t.Run(image.Pt(tt.w, tt.h).String(), func(t *testing.T) {
			m := image.NewGray(image.Rect(0, 0, tt.w, tt.h))
			for i := range m.Pix {
				m.Pix[i] = uint8(i % 251)
			}
			res, err := Process(b64(encodeJPEG(t, m, 75)), Limits{})
			if err != nil {
				t.Fatalf("Process: %v", err)
			}
			checkResult(t, res, tt.high, tt.scaled, TypeJPEG)
		})
	}
}

// TestProcessMatchesReference compares the fast pipeline with imaging's
// Lanczos Fill of the full image: they must look alike.
func TestProcessMatchesReference(t *testing.T) {
	tests := []struct {
		name string
		src  image.Image
		enc  func(testing.TB, image.Image) []byte
	}{
		{"jpeg 2400x1800, box factor 1", photo(2400, 1800, 5), func(t testing.TB, m image.Image) []byte { return encodeJPEG(t, m, 95) }},
		{"jpeg 2100x3300, box factor 2", photo(2100, 3300, 6), func(t testing.TB, m image.Image) []byte { return encodeJPEG(t, m, 95) }},
		{"jpeg 3200x3100, box factor 3", photo(3200, 3100, 7), func(t testing.TB, m image.Image) []byte { return encodeJPEG(t, m, 95) }},
		{"png 2500x2300, box factor 2", photo(2500, 2300, 8), encodePNG},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := tt.enc(t, tt.src)
			res, err := Process(b64(data), Limits{MaxBytes: 64 << 20})
			if err != nil {
				t.Fatalf("Process: %v", err)
			}
			src, err := imaging.Decode(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				name string
				r    Rendition
			}{{"High", res.High}, {"Scaled", res.Scaled}} {
				ref := imaging.Fill(src, c.r.Width, c.r.Height, imaging.Center, imaging.Lanczos)
				got := imaging.Clone(decodeRendition(t, c.r))
				var sum, n float64
				for i := 0; i < len(got.Pix); i += 4 {
					for j := range 3 {
						d := float64(got.Pix[i+j]) - float64(ref.Pix[i+j])
						sum += max(d, -d)
						n++
					}
				}
				mad := sum / n
				t.Logf("%s: mean absolute difference %.2f", c.name, mad)
				if mad > 4 {
					t.Errorf("%s differs from the reference by %.2f a sample on average, want at most 4", c.name, mad)
				}
			}
		})
	}
}

func TestProcessCentreCrop(t *testing.T) {
	m := image.NewNRGBA(image.Rect(0, 0, 300, 100))
	thirds := [3]color.NRGBA{{0xFF, 0, 0, 0xFF}, {0, 0xFF, 0, 0xFF}, {0, 0, 0xFF, 0xFF}}
	for y := range 100 {
		for x := range 300 {
			m.SetNRGBA(x, y, thirds[x/100])
		}
	}
	tests := []struct {
		name string
		img  image.Image
	}{
		{"landscape", m},
		{"portrait", imaging.Rotate90(m)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Process(b64(encodePNG(t, tt.img)), Limits{})
			if err != nil {
				t.Fatalf("Process: %v", err)
			}
			checkResult(t, res, 100, 100, TypeJPEG)
			out := decodeRendition(t, res.High)
			for _, p := range []image.Point{{2, 2}, {97, 2}, {2, 97}, {97, 97}, {50, 50}} {
				if !near(out, p.X, p.Y, thirds[1], 24) {
					t.Errorf("pixel %v is %v, want the green middle third", p, out.At(p.X, p.Y))
				}
			}
		})
	}
}

func TestProcessTransparency(t *testing.T) {
	hole := solid(200, 200, color.NRGBA{0x20, 0x80, 0xC0, 0xFF})
	for y := range 200 {
		for x := range 200 {
			if dx, dy := x-100, y-100; dx*dx+dy*dy < 50*50 {
				hole.SetNRGBA(x, y, color.NRGBA{})
			}
		}
	}
	sides := solid(300, 100, color.NRGBA{0x20, 0x80, 0xC0, 0xFF})
	for y := range 100 {
		for x := range 300 {
			if x < 100 || x >= 200 {
				sides.SetNRGBA(x, y, color.NRGBA{0xFF, 0, 0, 0})
			}
		}
	}
	translucent := solid(64, 64, color.NRGBA{0xC0, 0x40, 0x20, 0x80})
	gifPalette := color.Palette{color.Transparent, color.RGBA{0, 0, 0xFF, 0xFF}}
	gifHole := image.NewPaletted(image.Rect(0, 0, 80, 80), gifPalette)
	for i := range gifHole.Pix {
		if x, y := i%80, i/80; x < 20 || x >= 60 || y < 20 || y >= 60 {
			gifHole.Pix[i] = 1
		}
	}

	tests := []struct {
		name     string
		in       []byte
		size     int
		wantType string
		// check, when set, inspects the decoded High rendition.
		check func(t *testing.T, m image.Image)
	}{
		{"png with a transparent hole", encodePNG(t, hole), 200, TypePNG, func(t *testing.T, m image.Image) {
			if _, _, _, a := m.At(100, 100).RGBA(); a != 0 {
				t.Errorf("centre alpha %d, want 0", a)
			}
			if !near(m, 5, 5, color.NRGBA{0x20, 0x80, 0xC0, 0xFF}, 2) {
				t.Errorf("corner %v, want the opaque colour", m.At(5, 5))
			}
		}},
		{"png with an alpha channel but opaque", encodePNG(t, solid(200, 200, color.NRGBA{1, 2, 3, 0xFF})), 200, TypeJPEG, nil},
		{"png transparent only outside the crop", encodePNG(t, sides), 100, TypeJPEG, nil},
		{"png translucent", encodePNG(t, translucent), 64, TypePNG, func(t *testing.T, m image.Image) {
			c := color.NRGBAModel.Convert(m.At(32, 32)).(color.NRGBA)
			if c.A != 0x80 || !near(m, 32, 32, color.NRGBA{0xC0, 0x40, 0x20, 0x80}, 2) {
				t.Errorf("pixel %v, want %v", c, color.NRGBA{0xC0, 0x40, 0x20, 0x80})
			}
		}},
		{"gif with a transparent index", encodeGIF(t, gifHole), 80, TypePNG, func(t *testing.T, m image.Image) {
			if _, _, _, a := m.At(40, 40).RGBA(); a != 0 {
				t.Errorf("centre alpha %d, want 0", a)
			}
		}},
		{"webp lossless with alpha", readTestdata(t, "alpha-lossless.webp"), 64, TypePNG, nil},
		{"webp lossy with alpha", readTestdata(t, "alpha-lossy.webp"), 64, TypePNG, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Process(b64(tt.in), Limits{})
			if err != nil {
				t.Fatalf("Process: %v", err)
			}
			checkResult(t, res, tt.size, min(tt.size, ScaledSize), tt.wantType)
			if tt.check != nil {
				tt.check(t, decodeRendition(t, res.High))
			}
		})
	}
}

func TestProcessOrientation(t *testing.T) {
	// Which source quadrant (0 top left, 1 top right, 2 bottom left, 3 bottom
	// right) each output quadrant shows, for each EXIF orientation.
	want := map[uint16][4]int{
		1: {0, 1, 2, 3},
		2: {1, 0, 3, 2},
		3: {3, 2, 1, 0},
		4: {2, 3, 0, 1},
		5: {0, 2, 1, 3},
		6: {2, 0, 3, 1},
		7: {3, 1, 2, 0},
		8: {1, 3, 0, 2},
	}
	sources := []struct {
		name string
		jpg  []byte
	}{
		{"square", encodeJPEG(t, quadrants(200, 200), 95)},
		{"landscape, box reduced", encodeJPEG(t, quadrants(2400, 2048), 95)},
	}
	for _, src := range sources {
		for _, bo := range []byteOrder{binary.LittleEndian, binary.BigEndian} {
			for o := uint16(1); o <= 8; o++ {
				t.Run(src.name+"/"+bo.String()+"/"+string(rune('0'+o)), func(t *testing.T) {
					in := withExif(src.jpg, o, bo)
					if got := jpegOrientation(in); got != int(o) {
						t.Fatalf("jpegOrientation = %d, want %d", got, o)
					}
					res, err := Process(b64(in), Limits{})
					if err != nil {
						t.Fatalf("Process: %v", err)
					}
					for _, r := range []Rendition{res.High, res.Scaled} {
						if bytes.Contains(r.Data, []byte("Exif")) {
							t.Errorf("%dx%d rendition still carries EXIF", r.Width, r.Height)
						}
						m := decodeRendition(t, r)
						q := r.Width / 4
						for i, p := range []image.Point{{q, q}, {3 * q, q}, {q, 3 * q}, {3 * q, 3 * q}} {
							if c := quadrantColors[want[o][i]]; !near(m, p.X, p.Y, c, 40) {
								t.Errorf("%dx%d: quadrant %d shows %v, want %v", r.Width, r.Height, i, m.At(p.X, p.Y), c)
							}
						}
					}
				})
			}
		}
	}
}

func TestJPEGOrientationMalformed(t *testing.T) {
	valid := withExif([]byte{0xFF, 0xD8, 0xFF, 0xD9}, 6, binary.BigEndian)
	app1 := func(body string) []byte {
		seg := []byte{0xFF, 0xD8, 0xFF, 0xE1}
		seg = binary.BigEndian.AppendUint16(seg, uint16(len(body)+2))
		return append(append(seg, body...), 0xFF, 0xD9)
	}
	tests := []struct {
		name string
		in   []byte
		want int
	}{
		{"valid", valid, 6},
		{"fill bytes before the marker", append([]byte{0xFF, 0xD8, 0xFF, 0xFF}, valid[2:]...), 6},
		{"after a scan", append([]byte{0xFF, 0xD8, 0xFF, 0xDA, 0, 2}, valid[2:]...), 1},
		{"empty", nil, 1},
		{"not a jpeg", []byte("GIF89a"), 1},
		{"cut in the length", valid[:5], 1},
		{"cut in the segment", valid[:20], 1},
		{"length below two", []byte{0xFF, 0xD8, 0xFF, 0xE1, 0, 1, 0, 0}, 1},
		{"garbage between segments", []byte{0xFF, 0xD8, 0x00, 0xFF, 0xE1}, 1},
		{"not exif", app1("XMP\x00\x00\x00II*\x00"), 1},
		{"bad byte order", app1("Exif\x00\x00XX*\x00\x08\x00\x00\x00"), 1},
		{"bad magic", app1("Exif\x00\x00II+\x00\x08\x00\x00\x00"), 1},
		{"ifd past the end", app1("Exif\x00\x00II*\x00\xFF\x00\x00\x00"), 1},
		{"entries past the end", app1("Exif\x00\x00II*\x00\x08\x00\x00\x00\x09\x00"), 1},
		{"orientation zero", withExif([]byte{0xFF, 0xD8, 0xFF, 0xD9}, 0, binary.LittleEndian), 1},
		{"orientation nine", withExif([]byte{0xFF, 0xD8, 0xFF, 0xD9}, 9, binary.LittleEndian), 1},
		{"orientation as LONG", app1("Exif\x00\x00II*\x00\x08\x00\x00\x00\x01\x00\x12\x01\x04\x00\x01\x00\x00\x00\x03\x00\x00\x00\x00\x00\x00\x00"), 3},
		{"orientation with a bad type", app1("Exif\x00\x00II*\x00\x08\x00\x00\x00\x01\x00\x12\x01\x07\x00\x01\x00\x00\x00\x03\x00\x00\x00\x00\x00\x00\x00"), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := jpegOrientation(tt.in); got != tt.want {
				t.Errorf("jpegOrientation = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestProcessRejects(t *testing.T) {
	jpg := encodeJPEG(t, photo(320, 240, 9), 85)
	png := encodePNG(t, solid(100, 100, color.NRGBA{1, 2, 3, 0xFF}))

	// A JPEG whose SOF0 declares 65000x65000.
	jpegBomb := bytes.Clone(jpg)
	if i := bytes.Index(jpegBomb, []byte{0xFF, 0xC0}); i < 0 {
		t.Fatal("no SOF0 in the test JPEG")
	} else {
		binary.BigEndian.PutUint16(jpegBomb[i+5:], 65000)
		binary.BigEndian.PutUint16(jpegBomb[i+7:], 65000)
	}
	gifBomb := []byte("GIF89a\xff\xff\xff\xff\x00\x00\x00;")
	webpBomb := []byte("RIFF\x16\x00\x00\x00WEBPVP8X\x0a\x00\x00\x00\x10\x00\x00\x00\xff\x3f\x00\xff\x3f\x00")
	wrongMagic := bytes.Clone(jpg)
	wrongMagic[0] = 0x00

	tests := []struct {
		name    string
		in      string
		lim     Limits
		wantMsg string
	}{
		{"empty", "", Limits{}, MsgInvalidImage},
		{"whitespace", " \r\n\t ", Limits{}, MsgInvalidImage},
		{"text", "hello, world!", Limits{}, MsgNotBase64},
		{"text that happens to be Base64", "hello world", Limits{}, MsgUnsupportedFormat},
		{"Base64 of text", b64([]byte("just some text, not an image")), Limits{}, MsgUnsupportedFormat},
		{"Base64 of a short prefix", b64(jpg[:2]), Limits{}, MsgUnsupportedFormat},
		{"data URL, not Base64", "data:image/png,iVBORw0KGgo", Limits{}, MsgNotBase64},
		{"data URL, charset without base64", "data:image/png;charset=utf-8," + b64(png), Limits{}, MsgNotBase64},
		{"data URL, base64 not last", "data:image/png;base64;charset=utf-8," + b64(png), Limits{}, MsgNotBase64},
		{"data URL without a comma", "data:image/png;base64", Limits{}, MsgInvalidImage},
		{"data URL without data", "data:image/png;base64,", Limits{}, MsgInvalidImage},
		{"data URL with bad characters", "data:image/png;base64,!!!!", Limits{}, MsgNotBase64},
		{"padding in the middle", "AAAA=AAA", Limits{}, MsgNotBase64},
		{"too much padding", "AA===", Limits{}, MsgNotBase64},
		{"one character", "A", Limits{}, MsgNotBase64},
		{"wrong magic bytes", b64(wrongMagic), Limits{}, MsgUnsupportedFormat},
		{"bmp", b64([]byte("BM\x3a\x00\x00\x00\x00\x00\x00\x00\x36\x00\x00\x00\x28\x00")), Limits{}, MsgUnsupportedFormat},
		{"tiff", b64([]byte("II*\x00\x08\x00\x00\x00\x00\x00")), Limits{}, MsgUnsupportedFormat},
		{"riff but not webp", b64([]byte("RIFF\x04\x00\x00\x00WAVEfmt ")), Limits{}, MsgUnsupportedFormat},
		{"jpeg, truncated to half", b64(jpg[:len(jpg)/2]), Limits{}, MsgInvalidImage},
		{"jpeg, truncated after the headers", b64(jpg[:700]), Limits{}, MsgInvalidImage},
		{"jpeg, only the magic", b64(jpg[:3]), Limits{}, MsgInvalidImage},
		{"png, truncated", b64(png[:len(png)-20]), Limits{}, MsgInvalidImage},
		{"png, signature only", b64(png[:8]), Limits{}, MsgInvalidImage},
		{"gif, truncated", b64([]byte("GIF89a\x10\x00")), Limits{}, MsgInvalidImage},
		{"webp, truncated", b64(readTestdata(t, "opaque.webp")[:40]), Limits{}, MsgInvalidImage},
		{"png, zero width", b64(pngHeader(0, 10)), Limits{}, MsgInvalidImage},
		{"decompression bomb, png 100000x100000", b64(pngHeader(100000, 100000)), Limits{}, MsgImageTooLarge},
		{"decompression bomb, jpeg 65000x65000", b64(jpegBomb), Limits{}, MsgImageTooLarge},
		{"decompression bomb, gif 65535x65535", b64(gifBomb), Limits{}, MsgImageTooLarge},
		{"decompression bomb, webp 16384x16384", b64(webpBomb), Limits{}, MsgImageTooLarge},
		{"over the pixel limit by one row", b64(png), Limits{MaxPixels: 100*100 - 100}, MsgImageTooLarge},
		{"over the byte limit by one byte", b64(png), Limits{MaxBytes: len(png) - 1}, MsgImageTooLarge},
		{"huge Base64", strings.Repeat("QUFB", 4<<20), Limits{}, MsgImageTooLarge},
		{"huge Base64 with whitespace", strings.Repeat("QUFB\n", 4<<20), Limits{}, MsgImageTooLarge},
		{"huge data URL", "data:image/png;base64," + strings.Repeat("A", 64<<20), Limits{}, MsgImageTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Process(tt.in, tt.lim)
			if err == nil {
				t.Fatalf("Process accepted it: High %dx%d", res.High.Width, res.High.Height)
			}
			e, ok := apperr.As(err)
			if !ok || e.Code != apperr.Invalid || e.Message != tt.wantMsg {
				t.Fatalf("Process error %v, want code %q, message %q", err, apperr.Invalid, tt.wantMsg)
			}
			if res.High.Data != nil || res.Scaled.Data != nil {
				t.Error("Process returned data with its error")
			}
		})
	}
}

// TestProcessRefusesDecodedSize checks the bound on what decoding takes: a
// small file whose decoding would allocate more than the limit is refused
// from its header, before anything is decoded; at the limit it passes.
func TestProcessRefusesDecodedSize(t *testing.T) {
	deep := deepPNG(t, 7000, 7000) // 392 MB as image.RGBA64
	t.Logf("7000x7000 16-bit PNG: %d bytes", len(deep))
	deep200 := deepPNG(t, 200, 200)
	grayJPEG := encodeJPEG(t, image.NewGray(image.Rect(0, 0, 100, 100)), 80)
	colorJPEG := encodeJPEG(t, photo(100, 100, 1), 80)
	peak := func(raw []byte) int {
		cfg, _, err := image.DecodeConfig(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		return int(peakBytes(sniff(raw), raw, cfg.Width, cfg.Height))
	}
	tests := []struct {
		name    string
		in      []byte
		lim     Limits
		wantMsg string // "" for accepted
	}{
		{"16-bit PNG 7000x7000, defaults", deep, Limits{}, MsgImageTooDeep},
		{"16-bit PNG 200x200 a byte over", deep200, Limits{MaxDecodedBytes: peak(deep200) - 1}, MsgImageTooDeep},
		{"16-bit PNG 200x200 at the limit", deep200, Limits{MaxDecodedBytes: peak(deep200)}, ""},
		{"gray JPEG 100x100 at the limit", grayJPEG, Limits{MaxDecodedBytes: peak(grayJPEG)}, ""},
		{"color JPEG 100x100 a byte over", colorJPEG, Limits{MaxDecodedBytes: peak(colorJPEG) - 1}, MsgImageTooDeep},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := b64(tt.in)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := Process(in, tt.lim)
			runtime.ReadMemStats(&after)
			if tt.wantMsg == "" {
				if err != nil {
					t.Fatalf("Process: %v", err)
				}
				return
			}
			e, ok := apperr.As(err)
			if !ok || e.Code != apperr.Invalid || e.Message != tt.wantMsg {
				t.Fatalf("Process error %v, want code %q, message %q", err, apperr.Invalid, tt.wantMsg)
			}
			// Decoding would allocate the pixels; refusing allocates about the file.
			if got := after.TotalAlloc - before.TotalAlloc; got > uint64(4*len(in)+1<<20) {
				t.Errorf("refusing allocated %d bytes for a %d-byte upload: it decoded", got, len(in))
			}
		})
	}
}

func TestProcessLimitsInclusive(t *testing.T) {
	png := encodePNG(t, solid(100, 80, color.NRGBA{9, 8, 7, 0xFF}))
	tests := []struct {
		name string
		lim  Limits
	}{
		{"exactly the pixel limit", Limits{MaxPixels: 100 * 80}},
		{"exactly the byte limit", Limits{MaxBytes: len(png)}},
		{"defaults", Limits{MaxBytes: -1, MaxPixels: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Process(b64(png), tt.lim)
			if err != nil {
				t.Fatalf("Process: %v", err)
			}
			checkResult(t, res, 80, 80, TypeJPEG)
		})
	}
}

// TestProcessHugeInputNotDecoded checks that an oversized body is refused
// from its length, without allocating for it.
func TestProcessHugeInputNotDecoded(t *testing.T) {
	huge := strings.Repeat("A", 200<<20)
	var err error
	allocs := testing.AllocsPerRun(3, func() { _, err = Process(huge, Limits{}) })
	if e, ok := apperr.As(err); !ok || e.Message != MsgImageTooLarge {
		t.Fatalf("Process error %v, want %q", err, MsgImageTooLarge)
	}
	if allocs > 10 {
		t.Errorf("refusing a huge body took %v allocations, want a handful", allocs)
	}
}

func TestSniff(t *testing.T) {
	tests := []struct {
		name   string
		in     []byte
		want   string
		wantOK bool
	}{
		{"jpeg", []byte{0xFF, 0xD8, 0xFF, 0xE0}, TypeJPEG, true},
		{"png", []byte("\x89PNG\r\n\x1a\n\x00"), TypePNG, true},
		{"gif87a", []byte("GIF87a"), TypeGIF, true},
		{"gif89a", []byte("GIF89a\x01"), TypeGIF, true},
		{"webp", []byte("RIFF\x00\x00\x00\x00WEBPVP8 "), TypeWebP, true},
		{"webp testdata", readTestdata(t, "opaque.webp"), TypeWebP, true},
		{"default avatar", DefaultAvatar(imageset.High).Data, TypePNG, true},
		{"empty", nil, "", false},
		{"jpeg, too short", []byte{0xFF, 0xD8}, "", false},
		{"png, too short", []byte("\x89PNG\r\n"), "", false},
		{"riff wave", []byte("RIFF\x00\x00\x00\x00WAVE"), "", false},
		{"bmp", []byte("BM\x00\x00\x00\x00"), "", false},
		{"text", []byte("hello"), "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Sniff(tt.in)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("Sniff = %q, %v, want %q, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestDefaultAvatar(t *testing.T) {
	tests := []struct {
		res  string
		size int
	}{
		{imageset.High, HighSize},
		{imageset.Scaled, ScaledSize},
		{"", ScaledSize},
		{"unknown", ScaledSize},
	}
	for _, tt := range tests {
		t.Run(tt.res, func(t *testing.T) {
			r := DefaultAvatar(tt.res)
			if r.Width != tt.size || r.Height != tt.size {
				t.Errorf("DefaultAvatar(%q) says %dx%d, want %dx%d", tt.res, r.Width, r.Height, tt.size, tt.size)
			}
			if ct, ok := Sniff(r.Data); !ok || ct != r.ContentType {
				t.Errorf("Sniff = %q, %v; ContentType %q", ct, ok, r.ContentType)
			}
			m := decodeRendition(t, r)
			if b := m.Bounds(); b.Dx() != tt.size || b.Dy() != tt.size {
				t.Errorf("decodes to %v, want %dx%d", b, tt.size, tt.size)
			}
			// Each call gets its own copy.
			r.Data[len(r.Data)-1] ^= 0xFF
			if again := DefaultAvatar(tt.res); bytes.Equal(again.Data, r.Data) {
				t.Error("DefaultAvatar shares its bytes between calls")
			}
		})
	}
}

func FuzzProcess(f *testing.F) {
	f.Add(encodeJPEG(f, photo(40, 30, 10), 80))
	f.Add(withExif(encodeJPEG(f, quadrants(16, 16), 80), 6, binary.BigEndian))
	f.Add(encodePNG(f, solid(20, 10, color.NRGBA{1, 2, 3, 4})))
	f.Add(encodeGIF(f, photo(16, 16, 11)))
	f.Add(readTestdata(f, "alpha-lossy.webp"))
	f.Add(pngHeader(100000, 100000))
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := Process(b64(data), Limits{MaxPixels: 1 << 20})
		if err != nil {
			if e, ok := apperr.As(err); !ok || e.Code != apperr.Invalid {
				t.Fatalf("error %v is not an apperr.Invalid", err)
			}
			return
		}
		for _, r := range []Rendition{res.High, res.Scaled} {
			if ct, ok := Sniff(r.Data); !ok || ct != r.ContentType || r.Width != r.Height || r.Width < 1 {
				t.Fatalf("bad rendition %q %dx%d (sniffed %q)", r.ContentType, r.Width, r.Height, ct)
			}
		}
	})
}
