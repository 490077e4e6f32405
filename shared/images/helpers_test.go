package images

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
	"math/rand/v2"
	"testing"
)

// photo draws a deterministic photo-like image: smooth gradients, a few soft
// blobs of light and colour, and sensor-like noise, as 4:2:0 YCbCr (what a
// camera JPEG decodes to).
func photo(w, h int, seed uint64) *image.YCbCr {
	m := image.NewYCbCr(image.Rect(0, 0, w, h), image.YCbCrSubsampleRatio420)
	rng := rand.New(rand.NewPCG(seed, 0x9E3779B97F4A7C15))
	type blob struct{ x, y, r2, dy, dcb, dcr float64 }
	blobs := make([]blob, 6)
	for i := range blobs {
		r := (0.08 + 0.2*rng.Float64()) * float64(w)
		blobs[i] = blob{
			x: rng.Float64() * float64(w), y: rng.Float64() * float64(h), r2: r * r,
			dy: 120*rng.Float64() - 60, dcb: 40*rng.Float64() - 20, dcr: 40*rng.Float64() - 20,
		}
	}
	falloff := func(b blob, x, y float64) float64 {
		dx, dy := x-b.x, y-b.y
		t := 1 - (dx*dx+dy*dy)/b.r2
		if t <= 0 {
			return 0
		}
		return t * t
	}
	clampByte := func(v float64) uint8 { return uint8(max(0, min(255, v+0.5))) }
	var noise uint64
	for y := range h {
		for x := range w {
			if x%8 == 0 {
				noise = rng.Uint64()
			}
			v := 50 + 130*float64(x)/float64(w) + 40*float64(y)/float64(h)
			for _, b := range blobs {
				if f := falloff(b, float64(x), float64(y)); f > 0 {
					v += b.dy * f
				}
			}
			v += float64(int(noise&0x1F)) - 16
			noise >>= 8
			m.Y[y*m.YStride+x] = clampByte(v)
		}
	}
	for cy := range (h + 1) / 2 {
		for cx := range (w + 1) / 2 {
			x, y := float64(2*cx), float64(2*cy)
			cb := 100 + 50*y/float64(h) + float64(rng.IntN(7)) - 3
			cr := 160 - 60*x/float64(w) + float64(rng.IntN(7)) - 3
			for _, b := range blobs {
				if f := falloff(b, x, y); f > 0 {
					cb += b.dcb * f
					cr += b.dcr * f
				}
			}
			m.Cb[cy*m.CStride+cx] = clampByte(cb)
			m.Cr[cy*m.CStride+cx] = clampByte(cr)
		}
	}
	return m
}

func encodeJPEG(t testing.TB, m image.Image, q int) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, m, &jpeg.Options{Quality: q}); err != nil {
		t.Fatalf("encode jpeg: %v", err)
	}
	return buf.Bytes()
}

func encodePNG(t testing.TB, m image.Image) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&buf, m); err != nil {
		t.Fatalf("encode png: %v", err)
	}
	return buf.Bytes()
}

func encodeGIF(t testing.TB, m image.Image) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := gif.Encode(&buf, m, nil); err != nil {
		t.Fatalf("encode gif: %v", err)
	}
	return buf.Bytes()
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// solid returns an opaque w x h NRGBA image of one colour.
func solid(w, h int, c color.NRGBA) *image.NRGBA {
	m := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i := 0; i < len(m.Pix); i += 4 {
		m.Pix[i], m.Pix[i+1], m.Pix[i+2], m.Pix[i+3] = c.R, c.G, c.B, c.A
	}
	return m
}

// quadrants returns a w x h image whose quarters are red (top left), green
// (top right), blue (bottom left) and white (bottom right).
func quadrants(w, h int) *image.NRGBA {
	m := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			c := quadrantColors[2*(2*y/h)+2*x/w]
			m.SetNRGBA(x, y, c)
		}
	}
	return m
}

var quadrantColors = [4]color.NRGBA{
	{0xFF, 0, 0, 0xFF}, {0, 0xFF, 0, 0xFF}, {0, 0, 0xFF, 0xFF}, {0xFF, 0xFF, 0xFF, 0xFF},
}

// byteOrder is what binary.LittleEndian and binary.BigEndian both are.
type byteOrder interface {
	binary.ByteOrder
	binary.AppendByteOrder
}

// withExif inserts, right after the SOI marker of a JPEG, an APP1 EXIF
// segment whose IFD0 holds one Orientation entry.
func withExif(jpg []byte, orientation uint16, bo byteOrder) []byte {
	var tiff []byte
	if bo == binary.LittleEndian {
		tiff = append(tiff, 'I', 'I')
	} else {
		tiff = append(tiff, 'M', 'M')
	}
	tiff = bo.AppendUint16(tiff, 42)
	tiff = bo.AppendUint32(tiff, 8) // IFD0 right after the header
	tiff = bo.AppendUint16(tiff, 2) // two entries
	// An unrelated entry first (ImageDescription offset, ASCII), then Orientation.
	tiff = bo.AppendUint16(tiff, 0x010E)
	tiff = bo.AppendUint16(tiff, 2)
	tiff = bo.AppendUint32(tiff, 4)
	tiff = append(tiff, 'a', 'b', 'c', 0)
	tiff = bo.AppendUint16(tiff, 0x0112)
	tiff = bo.AppendUint16(tiff, 3)
	tiff = bo.AppendUint32(tiff, 1)
	tiff = bo.AppendUint16(tiff, orientation)
	tiff = bo.AppendUint16(tiff, 0)
	tiff = bo.AppendUint32(tiff, 0) // no next IFD
	seg := append([]byte("Exif\x00\x00"), tiff...)

	out := append([]byte{}, jpg[:2]...)
	out = append(out, 0xFF, 0xE1)
	out = binary.BigEndian.AppendUint16(out, uint16(len(seg)+2))
	out = append(out, seg...)
	return append(out, jpg[2:]...)
}

// pngHeader returns a PNG signature and IHDR declaring w x h RGBA, followed
// by a tiny, valid IDAT and IEND: enough for DecodeConfig, far too little
// data for the pixels.
func pngHeader(w, h uint32) []byte {
	var ihdr []byte
	ihdr = binary.BigEndian.AppendUint32(ihdr, w)
	ihdr = binary.BigEndian.AppendUint32(ihdr, h)
	ihdr = append(ihdr, 8, 6, 0, 0, 0)
	out := []byte("\x89PNG\r\n\x1a\n")
	out = appendChunk(out, "IHDR", ihdr)
	out = appendChunk(out, "IDAT", []byte{0x78, 0x9C, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01})
	return appendChunk(out, "IEND", nil)
}

func appendChunk(out []byte, typ string, data []byte) []byte {
	out = binary.BigEndian.AppendUint32(out, uint32(len(data)))
	start := len(out)
	out = append(out, typ...)
	out = append(out, data...)
	return binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(out[start:]))
}

// decodeRendition decodes a rendition's bytes, failing the test on error.
func decodeRendition(t *testing.T, r Rendition) image.Image {
	t.Helper()
	m, _, err := image.Decode(bytes.NewReader(r.Data))
	if err != nil {
		t.Fatalf("decode %s rendition: %v", r.ContentType, err)
	}
	return m
}

// near reports whether the colour at (x, y) of m is within tol of want on
// each of R, G, B.
func near(m image.Image, x, y int, want color.NRGBA, tol int) bool {
	c := color.NRGBAModel.Convert(m.At(x, y)).(color.NRGBA)
	d := func(a, b uint8) int { return max(int(a)-int(b), int(b)-int(a)) }
	return d(c.R, want.R) <= tol && d(c.G, want.G) <= tol && d(c.B, want.B) <= tol
}

// deepPNG encodes a w x h 16-bit RGBA PNG of one colour row by row, without
// holding its pixels: its rows compress to almost nothing.
func deepPNG(t testing.TB, w, h int) []byte {
	t.Helper()
	row := make([]byte, 1+8*w) // filter byte None, then opaque mid-grey
	for i := 1; i < len(row); i++ {
		row[i] = 0x80
	}
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	for range h {
		if _, err := zw.Write(row); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	var ihdr []byte
	ihdr = binary.BigEndian.AppendUint32(ihdr, uint32(w))
	ihdr = binary.BigEndian.AppendUint32(ihdr, uint32(h))
	ihdr = append(ihdr, 16, 6, 0, 0, 0) // 16 bits, RGBA
	out := []byte("\x89PNG\r\n\x1a\n")
	out = appendChunk(out, "IHDR", ihdr)
	out = appendChunk(out, "IDAT", z.Bytes())
	return appendChunk(out, "IEND", nil)
}
