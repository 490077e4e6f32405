package images

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"image"
	"image/color"
	"image/gif"
	"testing"
)

// Crafted images of every variant the decoders accept, written byte by byte:
// Go's encoders write neither progressive nor 4-component nor subsampled
// JPEG other than 4:2:0, nor interlaced PNG. Their pixels are all zero
// (black, or palette entry 0), which keeps the files small at any size while
// the decoders allocate for them what they allocate for a photograph.

// jpegSpec describes a crafted JPEG: its components' sampling factors (hv,
// 0x11 for 1x1, 0x22 for 2x2, ...), progressive or baseline, and the markers
// that decide RGB and CMYK.
type jpegSpec struct {
	name        string
	hv          []byte // one per component: 1, 3 or 4 of them
	progressive bool
	jfif        bool
	adobe       int // -1 for no Adobe APP14, else its transform (0 RGB or CMYK, 1 YCbCr, 2 YCCK)
}

// jpegKinds are the variants image/jpeg decodes: gray, every chroma
// subsampling it supports, RGB, CMYK and YCCK, each baseline and progressive.
var jpegKinds = func() []jpegSpec {
	base := []jpegSpec{
		{name: "gray", hv: []byte{0x11}, jfif: true, adobe: -1},
		{name: "4:4:4", hv: []byte{0x11, 0x11, 0x11}, jfif: true, adobe: -1},
		{name: "4:4:0", hv: []byte{0x12, 0x11, 0x11}, jfif: true, adobe: -1},
		{name: "4:2:2", hv: []byte{0x21, 0x11, 0x11}, jfif: true, adobe: -1},
		{name: "4:2:0", hv: []byte{0x22, 0x11, 0x11}, jfif: true, adobe: -1},
		{name: "4:1:1", hv: []byte{0x41, 0x11, 0x11}, jfif: true, adobe: -1},
		{name: "4:1:0", hv: []byte{0x42, 0x11, 0x11}, jfif: true, adobe: -1},
		{name: "RGB", hv: []byte{0x11, 0x11, 0x11}, adobe: 0},
		{name: "CMYK", hv: []byte{0x11, 0x11, 0x11, 0x11}, adobe: 0},
		{name: "YCCK 2x2", hv: []byte{0x22, 0x11, 0x11, 0x22}, adobe: 2},
	}
	var all []jpegSpec
	for _, p := range []bool{false, true} {
		for _, s := range base {
			s.progressive = p
			if p {
				s.name = "progressive " + s.name
			} else {
				s.name = "baseline " + s.name
			}
			all = append(all, s)
		}
	}
	return all
}()

// craftJPEG writes a w x h JPEG of spec s whose every 8x8 block is zero: one
// Huffman code (0, one bit) for DC and AC tables alike, so a block of a
// baseline scan is two zero bits (DC difference 0, end of block) and a block
// of a progressive DC scan one. A progressive image has its DC scan only,
// which is enough for the decoder to allocate every component's coefficients.
func craftJPEG(w, h int, s jpegSpec) []byte {
	seg := func(out []byte, marker byte, data []byte) []byte {
		out = append(out, 0xFF, marker)
		out = binary.BigEndian.AppendUint16(out, uint16(len(data)+2))
		return append(out, data...)
	}
	out := []byte{0xFF, 0xD8}
	if s.jfif {
		out = seg(out, 0xE0, []byte{'J', 'F', 'I', 'F', 0, 1, 1, 0, 0, 1, 0, 1, 0, 0})
	}
	if s.adobe >= 0 {
		out = seg(out, 0xEE, []byte{'A', 'd', 'o', 'b', 'e', 0, 100, 0, 0, 0, 0, byte(s.adobe)})
	}
	dqt := make([]byte, 65)
	for i := 1; i < 65; i++ {
		dqt[i] = 1
	}
	out = seg(out, 0xDB, dqt)
	sof := []byte{8, byte(h >> 8), byte(h), byte(w >> 8), byte(w), byte(len(s.hv))}
	ids := []byte{1, 2, 3, 4}
	if s.adobe == 0 && len(s.hv) == 3 {
		ids = []byte{'R', 'G', 'B'}
	}
	for c, hv := range s.hv {
		sof = append(sof, ids[c], hv, 0)
	}
	marker := byte(0xC0)
	if s.progressive {
		marker = 0xC2
	}
	out = seg(out, marker, sof)
	table := make([]byte, 18) // class and id, 16 counts, one value
	table[1] = 1              // one code of length 1, for symbol 0
	out = seg(out, 0xC4, table)
	table[0] = 0x10 // the same as AC table 0: symbol 0 is end of block
	out = seg(out, 0xC4, table)

	sos := []byte{byte(len(s.hv))}
	for c := range s.hv {
		sos = append(sos, ids[c], 0)
	}
	se := byte(63)
	if s.progressive {
		se = 0
	}
	out = seg(out, 0xDA, append(sos, 0, se, 0))
	// The blocks: MCUs of the largest factors, each with h x v blocks of
	// every component; a gray image's MCU is one block.
	hmax, vmax := int(s.hv[0]>>4), int(s.hv[0]&0x0F)
	if len(s.hv) == 1 {
		hmax, vmax = 1, 1
	}
	mcus := ((w + 8*hmax - 1) / (8 * hmax)) * ((h + 8*vmax - 1) / (8 * vmax))
	blocks := 0
	for _, hv := range s.hv {
		if len(s.hv) == 1 {
			hv = 0x11
		}
		blocks += mcus * int(hv>>4) * int(hv&0x0F)
	}
	bits := 2 * blocks
	if s.progressive {
		bits = blocks
	}
	out = append(out, make([]byte, bits/8+16)...)
	return append(out, 0xFF, 0xD9)
}

// pngSpec describes a crafted PNG.
type pngSpec struct {
	name       string
	depth      byte
	colorType  byte // 0 gray, 2 RGB, 3 paletted, 4 gray and alpha, 6 RGBA
	trns       bool
	interlaced bool
}

// pngKinds are the variants image/png decodes into different image types,
// each plain and interlaced.
var pngKinds = func() []pngSpec {
	base := []pngSpec{
		{name: "gray 1-bit", depth: 1, colorType: 0},
		{name: "gray 8-bit", depth: 8, colorType: 0},
		{name: "gray 8-bit tRNS", depth: 8, colorType: 0, trns: true},
		{name: "gray 16-bit", depth: 16, colorType: 0},
		{name: "gray 16-bit tRNS", depth: 16, colorType: 0, trns: true},
		{name: "gray+alpha 8-bit", depth: 8, colorType: 4},
		{name: "gray+alpha 16-bit", depth: 16, colorType: 4},
		{name: "RGB 8-bit", depth: 8, colorType: 2},
		{name: "RGB 8-bit tRNS", depth: 8, colorType: 2, trns: true},
		{name: "RGB 16-bit", depth: 16, colorType: 2},
		{name: "RGBA 8-bit", depth: 8, colorType: 6},
		{name: "RGBA 16-bit", depth: 16, colorType: 6},
		{name: "paletted 8-bit", depth: 8, colorType: 3},
		{name: "paletted 8-bit tRNS", depth: 8, colorType: 3, trns: true},
	}
	var all []pngSpec
	for _, il := range []bool{false, true} {
		for _, s := range base {
			s.interlaced = il
			if il {
				s.name += " interlaced"
			}
			all = append(all, s)
		}
	}
	return all
}()

// craftPNG writes a w x h PNG of spec s whose pixels are all zero, its rows
// (of every Adam7 pass when interlaced) unfiltered.
func craftPNG(t testing.TB, w, h int, s pngSpec) []byte {
	t.Helper()
	channels := map[byte]int{0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[s.colorType]
	rowBytes := func(w int) int { return 1 + (channels*int(s.depth)*w+7)/8 }
	var z bytes.Buffer
	zw, err := zlib.NewWriterLevel(&z, zlib.BestSpeed)
	if err != nil {
		t.Fatal(err)
	}
	write := func(w, h int) {
		if w == 0 || h == 0 {
			return
		}
		row := make([]byte, rowBytes(w))
		for range h {
			if _, err := zw.Write(row); err != nil {
				t.Fatal(err)
			}
		}
	}
	if s.interlaced {
		for _, p := range [7][4]int{{8, 0, 8, 0}, {8, 4, 8, 0}, {4, 0, 8, 4}, {4, 2, 4, 0}, {2, 0, 4, 2}, {2, 1, 2, 0}, {1, 0, 2, 1}} {
			write((w-p[1]+p[0]-1)/p[0], (h-p[3]+p[2]-1)/p[2])
		}
	} else {
		write(w, h)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return assemblePNG(w, h, s, z.Bytes())
}

// assemblePNG writes the chunks of a w x h PNG of spec s around its
// compressed pixels idat (with none: a header for peakBytes only).
func assemblePNG(w, h int, s pngSpec, idat []byte) []byte {
	var ihdr []byte
	ihdr = binary.BigEndian.AppendUint32(ihdr, uint32(w))
	ihdr = binary.BigEndian.AppendUint32(ihdr, uint32(h))
	il := byte(0)
	if s.interlaced {
		il = 1
	}
	ihdr = append(ihdr, s.depth, s.colorType, 0, 0, il)
	out := []byte("\x89PNG\r\n\x1a\n")
	out = appendChunk(out, "IHDR", ihdr)
	if s.colorType == 3 {
		out = appendChunk(out, "PLTE", []byte{10, 20, 30, 200, 100, 50})
	}
	if s.trns {
		switch s.colorType {
		case 0:
			out = appendChunk(out, "tRNS", []byte{0, 1})
		case 2:
			out = appendChunk(out, "tRNS", []byte{0, 1, 0, 1, 0, 1})
		case 3:
			out = appendChunk(out, "tRNS", []byte{128})
		}
	}
	out = appendChunk(out, "IDAT", idat)
	return appendChunk(out, "IEND", nil)
}

// craftGIF writes a w x h GIF of one frame of palette entry 0.
func craftGIF(t testing.TB, w, h int) []byte {
	t.Helper()
	m := image.NewPaletted(image.Rect(0, 0, w, h), color.Palette{color.Black, color.White})
	var buf bytes.Buffer
	if err := gif.Encode(&buf, m, nil); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// bitWriter writes VP8L's bit stream: least significant bit first.
type bitWriter struct {
	out   []byte
	acc   uint64
	nBits uint
}

func (b *bitWriter) bits(v uint32, n uint) {
	b.acc |= uint64(v) << b.nBits
	b.nBits += n
	for b.nBits >= 8 {
		b.out = append(b.out, byte(b.acc))
		b.acc >>= 8
		b.nBits -= 8
	}
}

// code writes a Huffman code of n bits, its most significant bit first.
func (b *bitWriter) code(c uint32, n uint) {
	for i := int(n) - 1; i >= 0; i-- {
		b.bits(c>>uint(i)&1, 1)
	}
}

func (b *bitWriter) bytes() []byte {
	if b.nBits > 0 {
		b.out = append(b.out, byte(b.acc))
	}
	return b.out
}

// lengthsTree writes a normal VP8L Huffman tree whose code lengths are
// coded with a code-length code of the given symbols (each of length 1 when
// two, of length 0 when one), then maxSymbol code lengths (0: all the
// alphabet) as emit writes them.
func (b *bitWriter) lengthsTree(symbols []int, maxSymbol int, emit func()) {
	order := [19]int{17, 18, 0, 1, 2, 3, 4, 5, 16, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
	last := 0
	for i, s := range order {
		for _, want := range symbols {
			if s == want {
				last = i
			}
		}
	}
	b.bits(0, 1)                // not simple
	b.bits(uint32(last+1-4), 4) // number of code-length code lengths
	for _, s := range order[:last+1] {
		l := uint32(0)
		for _, want := range symbols {
			if s == want {
				l = 1
			}
		}
		b.bits(l, 3)
	}
	if maxSymbol == 0 {
		b.bits(0, 1)
	} else {
		b.bits(1, 1)
		b.bits(3, 3) // 8 bits of max_symbol
		b.bits(uint32(maxSymbol-2), 8)
	}
	emit()
}

// simpleTree writes a simple VP8L Huffman tree of the one symbol 0.
func (b *bitWriter) simpleTree() {
	b.bits(1, 1) // simple
	b.bits(0, 1) // one symbol
	b.bits(0, 1) // of 1 bit
	b.bits(0, 1) // 0
}

// craftVP8LBomb writes a lossless w x h WebP (w*h at least 16 x 2600) whose
// Huffman tables are as large as vp8l decodes: 2600 groups, one per 4x4
// tile, each with a 2048-entry color cache and trees of every symbol of
// their alphabets. It is about a megabyte: the tables cost nothing like
// their size in the file. Its pixels are all black, most of them copied.
func craftVP8LBomb(w, h int) []byte {
	var b bitWriter
	b.bits(0x2f, 8)
	b.bits(uint32(w-1), 14)
	b.bits(uint32(h-1), 14)
	b.bits(0, 1) // alpha hint
	b.bits(0, 3) // version
	b.bits(0, 1) // no transform
	b.bits(1, 1) // color cache
	b.bits(11, 4)
	b.bits(1, 1) // meta Huffman codes
	b.bits(0, 3) // 4x4 tiles
	tiles := ((w + 3) / 4) * ((h + 3) / 4)
	const groups = 2600
	// The entropy image: each tile's group in green (low byte) and red.
	b.bits(0, 1)                            // no color cache
	b.lengthsTree([]int{8}, 256, func() {}) // green: 0..255, 8 bits each
	b.lengthsTree([]int{4}, 16, func() {})  // red: 0..15, 4 bits each
	b.simpleTree()                          // blue
	b.simpleTree()                          // alpha
	b.simpleTree()                          // distance
	for t := range tiles {
		g := t % groups
		b.code(uint32(g&0xFF), 8)
		b.code(uint32(g>>8), 4)
	}
	// The groups: green with all 280+2048 symbols (1768 of 11 bits, 560 of
	// 12: a complete code), red, blue and alpha with all 256 of 8 bits.
	for range groups {
		b.lengthsTree([]int{11, 12}, 0, func() {
			for i := range 280 + 2048 {
				if i < 1768 {
					b.code(0, 1) // length 11
				} else {
					b.code(1, 1) // length 12
				}
			}
		})
		for range 3 {
			b.lengthsTree([]int{8}, 0, func() {})
		}
		b.simpleTree()
	}
	// The pixels: the first row black (green, red, blue and alpha symbol 0,
	// the first code of each tree: zero bits), the rest copies of the row
	// above 4096 pixels at a time (length symbol 279, 11 bits; 10 extra
	// bits; distance symbol 0, the row above).
	for i, n := 0, w*h; i < n; {
		if i >= w && n-i >= 4096 {
			b.code(279, 11)
			b.bits(1023, 10)
			i += 4096
			continue
		}
		b.bits(0, 11+8+8+8)
		i++
	}
	data := b.bytes()
	var out []byte
	out = append(out, "RIFF"...)
	out = binary.LittleEndian.AppendUint32(out, uint32(4+8+len(data)+len(data)&1))
	out = append(out, "WEBPVP8L"...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(data)))
	out = append(out, data...)
	if len(data)&1 == 1 {
		out = append(out, 0)
	}
	return out
}
