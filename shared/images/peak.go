package images

import "encoding/binary"

// The memory an upload takes, reckoned from its header before anything is
// decoded: peakBytes is the bound Process holds Limits.MaxDecodedBytes to.
//
// It adds up every allocation of the standard decoders (image/jpeg,
// image/png, image/gif, golang.org/x/image/webp) for the variant the header
// declares, and of render after them, as the decoders' sources make them;
// the garbage collector can only give some of it back earlier (the one
// exception is the scratch of lossless WebP's Huffman trees, hScratch). A
// count of pixels alone misses most of it: a progressive JPEG keeps 64 int32
// coefficients (256 bytes) for every 8x8 block of every component until its
// last scan, 12 bytes a pixel for a 4:4:4 image; a 4-component JPEG
// is decoded into planes and then copied into a 4-byte-a-pixel CMYK image; an
// interlaced PNG allocates each of its seven passes beside the full image; a
// lossless WebP holds its Huffman tables beside the pixels. TestPeakBytes
// holds these sums to the allocations of real decodes.

// peakBytes returns what decoding raw, an image of format f whose header
// declares w x h (as DecodeConfig read it), and rendering it allocate at
// most. A header this code cannot follow counts as the most costly variant
// of its format.
func peakBytes(f format, raw []byte, w, h int) int64 {
	var dec int64
	generic := false // render reads the decoded image pixel by pixel (imaging's At path)
	switch f {
	case formatJPEG:
		hd, ok := parseJPEG(raw)
		if !ok {
			hd = jpegWorst
		}
		dec = hd.peak(w, h)
		generic = hd.nComp == 4
	case formatPNG:
		hd, ok := parsePNG(raw)
		if !ok {
			hd = pngWorst
		}
		dec = hd.peak(w, h)
	case formatGIF:
		// The first frame, a palette index a pixel within the logical
		// screen, and the same again to undo interlacing.
		dec = 2*int64(w)*int64(h) + gifFixed
	case formatWebP:
		hd, ok := parseWebP(raw)
		if !ok {
			hd = webpWorst
		}
		dec = hd.peak(w, h)
		generic = hd.alpha && !hd.lossless
	default:
		return 1 << 62
	}
	return dec + renderPeak(w, h, generic)
}

// Fixed costs of each decoder (its state, Huffman or LZW tables, read
// buffers, palettes) and of render (the 512x512 renditions, the filter
// weights, the encoders' buffers), rounded up.
const (
	jpegFixed   = 64 << 10
	pngFixed    = 128 << 10 // zlib's inflater with its 32 KiB window, a bufio.Reader
	gifFixed    = 64 << 10
	webpFixed   = 128 << 10
	renderFixed = 2*4*HighSize*HighSize + 3<<20
)

// renderPeak is what render allocates for a w x h image: it cuts the centred
// square out of the decoded image without copying it, box-reduces the planes
// of JPEG, WebP and gray images below 1024 pixels a side, and imaging's
// Catmull-Rom resize then makes a HighSize-wide NRGBA image as tall as the
// square (4 bytes a pixel) before scaling it down to HighSize. An image that
// imaging reads through At (CMYK, YCbCr with alpha) may leave garbage for
// every pixel it reads, at most 1023 x 1023 of them once box-reduced.
func renderPeak(w, h int, generic bool) int64 {
	s := int64(min(w, h))
	n := int64(4*HighSize)*s + renderFixed
	r := s // the side of what imaging reads
	if k := s / HighSize; k >= 2 {
		r = s / k
		n += 4 * r * r // the box-reduced planes, at most 4 bytes a pixel
	}
	if generic {
		n += 8 * r * r
	}
	return n
}

// jpegInfo is what decides the memory of image/jpeg's decoder: the
// components and their sampling factors, whether the image is progressive,
// and the markers that make a 3-component image RGB, as the decoder sees them
// when it reaches the end of the image.
type jpegInfo struct {
	progressive bool
	nComp       int
	h, v        [4]int
	id          [4]byte
	jfif        bool // the last APP0 is JFIF
	adobe       bool // an Adobe APP14 was seen
	transform   byte // the last Adobe APP14's transform
}

// jpegWorst is the most costly variant the decoder accepts per pixel: a
// progressive CMYK image.
var jpegWorst = jpegInfo{progressive: true, nComp: 4, h: [4]int{1, 1, 1, 1}, v: [4]int{1, 1, 1, 1}}

// parseJPEG reads the markers of a JPEG as image/jpeg's decoder does: up to
// the end of image, skipping entropy-coded data (where 0xFF is followed by 0
// or a restart marker), taking the first SOF0, SOF1 or SOF2.
func parseJPEG(b []byte) (jpegInfo, bool) {
	var hd jpegInfo
	if len(b) < 2 || b[0] != 0xFF || b[1] != 0xD8 {
		return hd, false
	}
	sof := false
	for i := 2; i+1 < len(b); {
		if b[i] != 0xFF {
			i++ // the decoder skips stray bytes between segments too
			continue
		}
		m := b[i+1]
		switch {
		case m == 0xFF: // fill byte
			i++
			continue
		case m == 0x00 || m == 0x01 || (m >= 0xD0 && m <= 0xD7):
			i += 2
			continue
		case m == 0xD8 || m == 0xD9:
			return hd, sof
		}
		if i+4 > len(b) {
			break
		}
		n := int(binary.BigEndian.Uint16(b[i+2:])) - 2
		if n < 0 || i+4+n > len(b) {
			break
		}
		seg := b[i+4 : i+4+n]
		i += 4 + n
		switch m {
		case 0xC0, 0xC1, 0xC2:
			if sof {
				return hd, false // the decoder refuses a second SOF
			}
			sof = true
			if !hd.readSOF(seg, m == 0xC2) {
				return hd, false
			}
		case 0xE0:
			if n >= 5 {
				hd.jfif = string(seg[:5]) == "JFIF\x00"
			}
		case 0xEE:
			if n >= 12 && string(seg[:5]) == "Adobe" {
				hd.adobe, hd.transform = true, seg[11]
			}
		case 0xDA:
			// Entropy-coded data follows, up to the next marker.
			for i+1 < len(b) && (b[i] != 0xFF || b[i+1] == 0 || (b[i+1] >= 0xD0 && b[i+1] <= 0xD7)) {
				i++
			}
		}
	}
	return hd, sof // a truncated file: the decoder stops there too
}

// readSOF reads a frame header's components as processSOF does, refusing
// what it refuses.
func (hd *jpegInfo) readSOF(seg []byte, progressive bool) bool {
	if len(seg) < 6 {
		return false
	}
	n := int(seg[5])
	if (n != 1 && n != 3 && n != 4) || len(seg) < 6+3*n {
		return false
	}
	hd.progressive, hd.nComp = progressive, n
	for c := range n {
		hd.id[c] = seg[6+3*c]
		hv := seg[7+3*c]
		hd.h[c], hd.v[c] = int(hv>>4), int(hv&0x0F)
		if hd.h[c] < 1 || hd.h[c] > 4 || hd.v[c] < 1 || hd.v[c] > 4 || hd.h[c] == 3 || hd.v[c] == 3 {
			return false
		}
	}
	if n == 1 {
		hd.h[0], hd.v[0] = 1, 1 // the decoder ignores a gray component's factors
	}
	if n >= 3 && (hd.h[0]%hd.h[1] != 0 || hd.v[0]%hd.v[1] != 0) {
		return false
	}
	return true
}

// peak adds up image/jpeg's allocations for a w x h image: the planes of
// whole MCUs (Y, Cb, Cr and, for 4 components, K), for a progressive image
// 256 bytes for each 8x8 block of each component, and the RGBA or CMYK image
// the planes are copied into for RGB and 4-component images.
func (hd jpegInfo) peak(w, h int) int64 {
	h0, v0 := int64(hd.h[0]), int64(hd.v[0])
	mxx := (int64(w) + 8*h0 - 1) / (8 * h0)
	myy := (int64(h) + 8*v0 - 1) / (8 * v0)
	pw, ph := 8*h0*mxx, 8*v0*myy // the Y plane, in whole MCUs
	n := pw * ph
	if hd.nComp > 1 {
		cw, ch := pw, ph
		switch h0 / int64(hd.h[1]) {
		case 2:
			cw = (pw + 1) / 2
		case 4:
			cw = (pw + 3) / 4
		}
		if v0/int64(hd.v[1]) == 2 {
			ch = (ph + 1) / 2
		}
		n += 2 * cw * ch
	}
	if hd.nComp == 4 {
		n += 8 * int64(hd.h[3]) * mxx * 8 * int64(hd.v[3]) * myy
	}
	if hd.progressive {
		for c := range hd.nComp {
			n += 256 * mxx * myy * int64(hd.h[c]) * int64(hd.v[c])
		}
	}
	if hd.nComp == 4 || hd.nComp == 3 && hd.rgb() {
		n += 4 * int64(w) * int64(h)
	}
	return n + jpegFixed
}

// rgb mirrors image/jpeg's isRGB: a 3-component image without JFIF is RGB
// when Adobe's transform says so or its components are named R, G, B.
func (hd jpegInfo) rgb() bool {
	if hd.jfif {
		return false
	}
	return hd.adobe && hd.transform == 0 || hd.id[0] == 'R' && hd.id[1] == 'G' && hd.id[2] == 'B'
}

// pngInfo is what decides the memory of image/png's decoder: the color
// type and bit depth, interlacing, and a tRNS chunk, which turns gray and
// truecolor images into NRGBA.
type pngInfo struct {
	depth, colorType int
	interlaced, trns bool
}

// pngWorst: an interlaced 16-bit RGBA image, 8 bytes a pixel.
var pngWorst = pngInfo{depth: 16, colorType: 6, interlaced: true}

// parsePNG reads the IHDR and the chunks up to the first IDAT (the decoder
// refuses a tRNS after it).
func parsePNG(b []byte) (pngInfo, bool) {
	var hd pngInfo
	if len(b) < 33 || string(b[12:16]) != "IHDR" {
		return hd, false
	}
	hd.depth, hd.colorType, hd.interlaced = int(b[24]), int(b[25]), b[28] == 1
	for i := 33; i+8 <= len(b); {
		n := int64(binary.BigEndian.Uint32(b[i:]))
		switch string(b[i+4 : i+8]) {
		case "tRNS":
			hd.trns = true
		case "IDAT":
			return hd, true
		}
		if n > int64(len(b)) {
			break
		}
		i += 12 + int(n)
	}
	return hd, true
}

// peak adds up image/png's allocations: the image (for an interlaced one
// also each pass's own image) and two rows of filtered bytes per pass.
func (hd pngInfo) peak(w, h int) int64 {
	var bits, out int64 // bits a pixel in the file, bytes a pixel decoded
	d := int64(hd.depth)
	switch hd.colorType {
	case 0: // gray: Gray or Gray16, NRGBA or NRGBA64 with tRNS
		bits, out = d, max(d/8, 1)
		if hd.trns {
			out *= 4
		}
	case 2: // truecolor: RGBA or RGBA64, N- with tRNS
		bits, out = 3*d, d/2
	case 3: // paletted
		bits, out = d, 1
	case 4: // gray with alpha: NRGBA or NRGBA64
		bits, out = 2*d, d/2
	case 6: // truecolor with alpha
		bits, out = 4*d, d/2
	default:
		bits, out = 64, 8
	}
	pass := func(w, h int64) int64 {
		if w == 0 || h == 0 {
			return 0
		}
		return w*h*out + 2*(1+(bits*w+7)/8)
	}
	W, H := int64(w), int64(h)
	n := pass(W, H)
	if hd.interlaced {
		for _, p := range [7][4]int64{{8, 0, 8, 0}, {8, 4, 8, 0}, {4, 0, 8, 4}, {4, 2, 4, 0}, {2, 0, 4, 2}, {2, 1, 2, 0}, {1, 0, 2, 1}} {
			n += pass((W-p[1]+p[0]-1)/p[0], (H-p[3]+p[2]-1)/p[2])
		}
	}
	return n + pngFixed
}

// webpInfo is what decides the memory of x/image/webp's decoder: lossy
// (VP8) or lossless (VP8L), an alpha channel and how it is compressed, and
// the length of the VP8 data, which the decoder reads whole.
type webpInfo struct {
	lossless    bool
	alpha       bool
	alphaVP8L   bool  // the alpha channel is VP8L-compressed
	chunkLength int64 // of the VP8 chunk
}

// webpWorst: lossy with VP8L alpha and data of the largest accepted file.
var webpWorst = webpInfo{alpha: true, alphaVP8L: true, chunkLength: DefaultMaxBytes}

// parseWebP walks the RIFF chunks as the decoder does, up to the VP8 or VP8L
// one.
func parseWebP(b []byte) (webpInfo, bool) {
	var hd webpInfo
	for i := 12; i+8 <= len(b); {
		n := int64(binary.LittleEndian.Uint32(b[i+4:]))
		switch string(b[i : i+4]) {
		case "ALPH":
			hd.alpha = true
			hd.alphaVP8L = i+8 >= len(b) || b[i+8]&0x03 != 0
		case "VP8 ":
			hd.chunkLength = n
			return hd, true
		case "VP8L":
			hd.lossless, hd.alpha = true, false
			return hd, true
		}
		if n > int64(len(b)) {
			break
		}
		i += 8 + int(n+n&1)
	}
	return hd, false
}

// peak adds up x/image/webp's allocations: for lossy data the 4:2:0 planes of
// whole macroblocks, per-macroblock filter state and the VP8 data read into
// memory, and the alpha plane (decoded through VP8L when compressed); for
// lossless data vp8lPeak.
func (hd webpInfo) peak(w, h int) int64 {
	W, H := int64(w), int64(h)
	if hd.lossless {
		return vp8lPeak(W, H) + webpFixed
	}
	mbw, mbh := (W+15)/16, (H+15)/16
	n := 384*mbw*mbh + 4*mbw*mbh + hd.chunkLength
	if hd.alpha {
		n += W * H
		if hd.alphaVP8L {
			n += vp8lPeak(W, H)
		}
	}
	return n + webpFixed
}

// vp8lPeak bounds vp8l's allocations for a w x h image: the 4-byte pixels,
// twice over less a half when a color-indexing transform unpacks them, the
// transform and entropy images (a pixel for each 4x4 tile at most), and the
// Huffman trees of up to 2600 groups (vp8l's own limit, one per tile at
// most), each of five trees as large as its alphabet allows (a 2048-entry
// color cache makes the first 2328 symbols). The header does not say how
// many groups there are: a file of a megabyte can declare all 2600 at their
// largest (craftVP8LBomb), libwebp's files use a few.
func vp8lPeak(w, h int64) int64 {
	tiles := ((w + 3) / 4) * ((h + 3) / 4)
	groups := min(2600, tiles) + 4 // and one for each sub-image
	return 4*w*h + 4*((w+1)/2)*h + 3*4*tiles + groups*hGroupBytes + hScratch
}

// hGroupBytes is what one Huffman group of vp8l keeps: five trees of 2n-1
// 8-byte nodes for n symbols, and a 512-byte look-up table each. The
// allocator rounds the first tree's nodes up to whole 8 KiB pages and the
// next three's to 4096 bytes.
const hGroupBytes = 5*(24+4*128) + (8*(2*2328-1)+8191)/8192*8192 + 3*4096 + 8*(2*40-1)

// hScratch is what vp8l allocates for a group's trees and drops as soon as
// they are built: the code lengths and canonical codes of each tree (4 bytes
// a symbol each) and the small tree of its code-length code. It is counted
// once: the collector reclaims it as decoding goes on, and counting it for
// each of 2600 groups would add 65 MiB that no process ever holds at once
// (BenchmarkDecoderPeak measures the file with 2600 groups).
const hScratch = 2*9472 + 2*4*(3*256+40) + 5*128 // 9472: the size class of 4 x 2328 bytes
