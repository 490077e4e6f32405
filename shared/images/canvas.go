package images

import (
	"image"
	"image/color"
	"runtime"
	"sync"
)

// canvas is a planar 8-bit working image: three planes Y, Cb, Cr for opaque
// sources decoded as YCbCr or gray (JPEG, lossy WebP), or four planes of
// alpha-premultiplied R, G, B, A for everything else. Planes have stride w.
type canvas struct {
	w, h int
	ycc  bool
	pix  []uint8 // the planes, one after the other
}

func newCanvas(w, h int, ycc bool) canvas {
	n := 4
	if ycc {
		n = 3
	}
	return canvas{w: w, h: h, ycc: ycc, pix: make([]uint8, n*w*h)}
}

func (c canvas) planes() int { return len(c.pix) / max(1, c.w*c.h) }

func (c canvas) plane(i int) []uint8 { return c.pix[i*c.w*c.h : (i+1)*c.w*c.h] }

// transparent reports whether any pixel is less than opaque.
func (c canvas) transparent() bool {
	if c.ycc {
		return false
	}
	for _, a := range c.plane(3) {
		if a != 0xFF {
			return true
		}
	}
	return false
}

// parallel runs fn over [0, n) split in one contiguous band per CPU, or
// inline when the work (n times costPerItem) is too small to share.
func parallel(n, costPerItem int, fn func(lo, hi int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 || n*costPerItem < 1<<16 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	band := (n + workers - 1) / workers
	for lo := 0; lo < n; lo += band {
		wg.Go(func() { fn(lo, min(lo+band, n)) })
	}
	wg.Wait()
}

// recip returns the 32.32 fixed-point reciprocal of n, for rounding divisions
// of sums of n 8-bit samples: (sum*recip(n) + 1<<31) >> 32.
func recip(n int) uint64 { return (1<<32 + uint64(n)/2) / uint64(n) }

func avg(sum uint32, r uint64) uint8 { return uint8((uint64(sum)*r + 1<<31) >> 32) }

// shrink reduces the square r of img by an integer factor k, averaging each
// k x k block, into a canvas of (r.Dx()/k) x (r.Dy()/k). r must lie within
// img.Bounds() and its sides must be multiples of k.
func shrink(img image.Image, r image.Rectangle, k int) canvas {
	switch m := img.(type) {
	case *image.YCbCr:
		return shrinkYCbCr(m, r, k)
	case *image.Gray:
		return shrinkGray(m, r, k)
	}
	return shrinkRGBA(rowReader(img), r, k)
}

func chromaShift(s image.YCbCrSubsampleRatio) (hs, vs int) {
	switch s {
	case image.YCbCrSubsampleRatio422:
		return 2, 1
	case image.YCbCrSubsampleRatio420:
		return 2, 2
	case image.YCbCrSubsampleRatio440:
		return 1, 2
	case image.YCbCrSubsampleRatio411:
		return 4, 1
	case image.YCbCrSubsampleRatio410:
		return 4, 2
	}
	return 1, 1
}

func shrinkYCbCr(m *image.YCbCr, r image.Rectangle, k int) canvas {
	ow, oh := r.Dx()/k, r.Dy()/k
	dst := newCanvas(ow, oh, true)
	dy, dcb, dcr := dst.plane(0), dst.plane(1), dst.plane(2)
	hs, vs := chromaShift(m.SubsampleRatio)
	x0, y0 := r.Min.X-m.Rect.Min.X, r.Min.Y-m.Rect.Min.Y
	if k%hs == 0 && k%vs == 0 && x0%hs == 0 && y0%vs == 0 && m.Rect.Min.X%hs == 0 && m.Rect.Min.Y%vs == 0 {
		// Each k x k block of luma covers whole chroma samples: reduce
		// each plane on its own, chroma by (k/hs) x (k/vs).
		boxPlane(m.Y, m.YStride, x0, y0, k, k, ow, oh, dy)
		boxPlane(m.Cb, m.CStride, x0/hs, y0/vs, k/hs, k/vs, ow, oh, dcb)
		boxPlane(m.Cr, m.CStride, x0/hs, y0/vs, k/hs, k/vs, ow, oh, dcr)
		return dst
	}
	// Chroma column of each source column in r, as image.YCbCr.COffset has it.
	cx := make([]int32, ow*k)
	for i := range cx {
		cx[i] = int32((r.Min.X+i)/hs - m.Rect.Min.X/hs)
	}
	rc := recip(k * k)
	parallel(oh, ow*k*k, func(lo, hi int) {
		acc := make([]uint32, 3*ow)
		ay, acb, acr := acc[:ow], acc[ow:2*ow], acc[2*ow:]
		for oy := lo; oy < hi; oy++ {
			clear(acc)
			for j := range k {
				y := r.Min.Y + oy*k + j
				yo := (y-m.Rect.Min.Y)*m.YStride + r.Min.X - m.Rect.Min.X
				yrow := m.Y[yo : yo+ow*k]
				co := (y/vs - m.Rect.Min.Y/vs) * m.CStride
				cbrow, crrow := m.Cb[co:], m.Cr[co:]
				if k == 1 {
					for x, c := range cx {
						ay[x] += uint32(yrow[x])
						acb[x] += uint32(cbrow[c])
						acr[x] += uint32(crrow[c])
					}
					continue
				}
				for ox := range ow {
					var sy, scb, scr uint32
					xs := ox * k
					for x, c := range cx[xs : xs+k] {
						sy += uint32(yrow[xs+x])
						scb += uint32(cbrow[c])
						scr += uint32(crrow[c])
					}
					ay[ox] += sy
					acb[ox] += scb
					acr[ox] += scr
				}
			}
			o := oy * ow
			for x := range ow {
				dy[o+x] = avg(ay[x], rc)
				dcb[o+x] = avg(acb[x], rc)
				dcr[o+x] = avg(acr[x], rc)
			}
		}
	})
	return dst
}

func shrinkGray(m *image.Gray, r image.Rectangle, k int) canvas {
	ow, oh := r.Dx()/k, r.Dy()/k
	dst := newCanvas(ow, oh, true)
	boxPlane(m.Pix, m.Stride, r.Min.X-m.Rect.Min.X, r.Min.Y-m.Rect.Min.Y, k, k, ow, oh, dst.plane(0))
	for i := range dst.pix[ow*oh:] {
		dst.pix[ow*oh+i] = 0x80 // neutral chroma
	}
	return dst
}

// boxPlane averages the bw x bh blocks of one 8-bit plane, starting at
// (x0, y0), into the ow x oh plane dst.
func boxPlane(src []uint8, stride, x0, y0, bw, bh, ow, oh int, dst []uint8) {
	rc := recip(bw * bh)
	parallel(oh, ow*bw*bh, func(lo, hi int) {
		acc := make([]uint32, ow)
		for oy := lo; oy < hi; oy++ {
			clear(acc)
			for j := range bh {
				o := (y0+oy*bh+j)*stride + x0
				row := src[o : o+ow*bw]
				switch bw {
				case 1:
					for x, v := range row {
						acc[x] += uint32(v)
					}
				case 2:
					for x := range acc {
						acc[x] += uint32(row[2*x]) + uint32(row[2*x+1])
					}
				default:
					for x := range acc {
						var s uint32
						for _, v := range row[x*bw : x*bw+bw] {
							s += uint32(v)
						}
						acc[x] += s
					}
				}
			}
			out := dst[oy*ow : (oy+1)*ow]
			for x, s := range acc {
				out[x] = avg(s, rc)
			}
		}
	})
}

// rowReader returns a function that writes the pixels x0 <= x < x1 of row y
// of img into dst as alpha-premultiplied RGBA, 4 bytes a pixel. The function
// is safe to call from several goroutines.
func rowReader(img image.Image) func(y, x0, x1 int, dst []uint8) {
	switch m := img.(type) {
	case *image.RGBA:
		return func(y, x0, x1 int, dst []uint8) {
			copy(dst, m.Pix[m.PixOffset(x0, y):m.PixOffset(x1, y)])
		}
	case *image.NRGBA:
		return func(y, x0, x1 int, dst []uint8) {
			src := m.Pix[m.PixOffset(x0, y):m.PixOffset(x1, y)]
			for i := 0; i+3 < len(src); i += 4 {
				a := uint32(src[i+3])
				dst[i+0] = premul(src[i+0], a)
				dst[i+1] = premul(src[i+1], a)
				dst[i+2] = premul(src[i+2], a)
				dst[i+3] = uint8(a)
			}
		}
	case *image.Paletted:
		var lut [256][4]uint8 // indices past the palette read as transparent
		for i, c := range m.Palette {
			if i >= len(lut) {
				break
			}
			r, g, b, a := c.RGBA()
			lut[i] = [4]uint8{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), uint8(a >> 8)}
		}
		return func(y, x0, x1 int, dst []uint8) {
			for i, p := range m.Pix[m.PixOffset(x0, y):m.PixOffset(x1, y)] {
				copy(dst[4*i:4*i+4], lut[p][:])
			}
		}
	case *image.NYCbCrA:
		return func(y, x0, x1 int, dst []uint8) {
			for x := x0; x < x1; x++ {
				yi, ci := m.YOffset(x, y), m.COffset(x, y)
				r, g, b := color.YCbCrToRGB(m.Y[yi], m.Cb[ci], m.Cr[ci])
				a := uint32(m.A[m.AOffset(x, y)])
				d := dst[4*(x-x0) : 4*(x-x0)+4]
				d[0], d[1], d[2], d[3] = premul(r, a), premul(g, a), premul(b, a), uint8(a)
			}
		}
	case *image.CMYK:
		return func(y, x0, x1 int, dst []uint8) {
			src := m.Pix[m.PixOffset(x0, y):m.PixOffset(x1, y)]
			for i := 0; i+3 < len(src); i += 4 {
				dst[i+0], dst[i+1], dst[i+2] = color.CMYKToRGB(src[i], src[i+1], src[i+2], src[i+3])
				dst[i+3] = 0xFF
			}
		}
	}
	return func(y, x0, x1 int, dst []uint8) {
		for x := x0; x < x1; x++ {
			r, g, b, a := img.At(x, y).RGBA()
			d := dst[4*(x-x0) : 4*(x-x0)+4]
			d[0], d[1], d[2], d[3] = uint8(r>>8), uint8(g>>8), uint8(b>>8), uint8(a>>8)
		}
	}
}

// premul returns c*a/255, rounded.
func premul(c uint8, a uint32) uint8 {
	t := uint32(c)*a + 128
	return uint8((t + t>>8) >> 8)
}

func shrinkRGBA(read func(y, x0, x1 int, dst []uint8), r image.Rectangle, k int) canvas {
	ow, oh := r.Dx()/k, r.Dy()/k
	dst := newCanvas(ow, oh, false)
	dr, dg, db, da := dst.plane(0), dst.plane(1), dst.plane(2), dst.plane(3)
	rc := recip(k * k)
	parallel(oh, ow*k*k, func(lo, hi int) {
		row := make([]uint8, 4*ow*k)
		acc := make([]uint32, 4*ow)
		for oy := lo; oy < hi; oy++ {
			clear(acc)
			for j := range k {
				read(r.Min.Y+oy*k+j, r.Min.X, r.Min.X+ow*k, row)
				for ox := range ow {
					var s0, s1, s2, s3 uint32
					px := row[4*ox*k : 4*(ox+1)*k]
					for i := 0; i+3 < len(px); i += 4 {
						s0 += uint32(px[i])
						s1 += uint32(px[i+1])
						s2 += uint32(px[i+2])
						s3 += uint32(px[i+3])
					}
					a := acc[4*ox : 4*ox+4]
					a[0] += s0
					a[1] += s1
					a[2] += s2
					a[3] += s3
				}
			}
			o := oy * ow
			for x := range ow {
				a := acc[4*x : 4*x+4]
				dr[o+x], dg[o+x], db[o+x], da[o+x] = avg(a[0], rc), avg(a[1], rc), avg(a[2], rc), avg(a[3], rc)
			}
		}
	})
	return dst
}

// orient applies an EXIF orientation (1 to 8) to c.
func orient(c canvas, o int) canvas {
	if o < 2 || o > 8 {
		return c
	}
	w, h := c.w, c.h
	if o >= 5 {
		w, h = h, w
	}
	d := newCanvas(w, h, c.ycc)
	for p := range c.planes() {
		src, dst := c.plane(p), d.plane(p)
		for y := range c.h {
			row := src[y*c.w : (y+1)*c.w]
			for x, v := range row {
				var dx, dy int
				switch o {
				case 2: // mirrored horizontally
					dx, dy = c.w-1-x, y
				case 3: // rotated 180
					dx, dy = c.w-1-x, c.h-1-y
				case 4: // mirrored vertically
					dx, dy = x, c.h-1-y
				case 5: // transposed
					dx, dy = y, x
				case 6: // rotated 90 clockwise
					dx, dy = c.h-1-y, x
				case 7: // transversed
					dx, dy = c.h-1-y, c.w-1-x
				case 8: // rotated 90 counter-clockwise
					dx, dy = y, c.w-1-x
				}
				dst[dy*w+dx] = v
			}
		}
	}
	return d
}
