package images

import (
	"image"
	"sync"
)

// boxReduce averages each k x k block of img into one pixel, straight from
// the planes the decoder produced (Y, Cb and Cr of a JPEG or lossy WebP, its
// alpha, gray, the interleaved CMYK of a 4-component JPEG), keeping the chroma subsampling: no RGBA copy of the full-size image
// is made. imaging has no such step: it converts every source pixel to NRGBA
// as it resamples, with a filter whose taps grow with the scale. The reduced
// image covers the centre of img, its sides multiples of 4 (whole chroma
// samples for every subsampling), so fewer than 4k source rows and columns at
// the edges are left out. ok is false for an image without 8-bit planes.
func boxReduce(img image.Image, k int) (small image.Image, ok bool) {
	b := img.Bounds()
	ow, oh := b.Dx()/k&^3, b.Dy()/k&^3
	if ow == 0 || oh == 0 {
		return nil, false
	}
	// Offsets that are multiples of 4 start on a chroma sample.
	x0, y0 := b.Min.X+(b.Dx()-ow*k)/2&^3, b.Min.Y+(b.Dy()-oh*k)/2&^3
	out := image.Rect(0, 0, ow, oh)
	switch m := img.(type) {
	case *image.YCbCr:
		if m.Rect.Min.X%4 != 0 || m.Rect.Min.Y%4 != 0 {
			return nil, false
		}
		d := image.NewYCbCr(out, m.SubsampleRatio)
		cw, ch := d.CStride, len(d.Cb)/d.CStride // the chroma planes' size
		yo, co := m.YOffset(x0, y0), m.COffset(x0, y0)
		var wg sync.WaitGroup
		wg.Go(func() { boxPlane(d.Y, d.YStride, ow, oh, m.Y[yo:], m.YStride, k) })
		boxPlane(d.Cb, d.CStride, cw, ch, m.Cb[co:], m.CStride, k)
		boxPlane(d.Cr, d.CStride, cw, ch, m.Cr[co:], m.CStride, k)
		wg.Wait()
		return d, true
	case *image.NYCbCrA: // lossy WebP with alpha
		if m.Rect.Min.X%4 != 0 || m.Rect.Min.Y%4 != 0 {
			return nil, false
		}
		c, ok := boxReduce(&m.YCbCr, k)
		if !ok {
			return nil, false
		}
		d := &image.NYCbCrA{YCbCr: *c.(*image.YCbCr), A: make([]uint8, ow*oh), AStride: ow}
		boxPlane(d.A, d.AStride, ow, oh, m.A[m.AOffset(x0, y0):], m.AStride, k)
		return d, true
	case *image.Gray:
		d := image.NewGray(out)
		boxPlane(d.Pix, d.Stride, ow, oh, m.Pix[m.PixOffset(x0, y0):], m.Stride, k)
		return d, true
	case *image.CMYK: // 4-component JPEG
		d := image.NewCMYK(out)
		boxInterleaved(d.Pix, d.Stride, ow, oh, m.Pix[m.PixOffset(x0, y0):], m.Stride, k, 4)
		return d, true
	}
	return nil, false
}

// boxPlane writes into the w x h plane dst the rounded average of each k x k
// block of src, which starts at the block of dst's first sample.
func boxPlane(dst []uint8, dstStride, w, h int, src []uint8, srcStride, k int) {
	acc := make([]uint32, w)
	n := uint32(k * k)
	for y := range h {
		clear(acc)
		for j := range k {
			row := src[(y*k+j)*srcStride:]
			row = row[:w*k]
			for x := range acc {
				var s uint32
				for _, v := range row[x*k : x*k+k] {
					s += uint32(v)
				}
				acc[x] += s
			}
		}
		out := dst[y*dstStride : y*dstStride+w]
		for x, s := range acc {
			out[x] = uint8((s + n/2) / n)
		}
	}
}

// boxInterleaved is boxPlane for samples of n interleaved channels.
func boxInterleaved(dst []uint8, dstStride, w, h int, src []uint8, srcStride, k, n int) {
	acc := make([]uint32, w*n)
	d := uint32(k * k)
	for y := range h {
		clear(acc)
		for j := range k {
			row := src[(y*k+j)*srcStride:]
			row = row[:w*k*n]
			for x := range w {
				a := acc[x*n : x*n+n]
				for px := row[x*k*n : (x+1)*k*n]; len(px) >= n; px = px[n:] {
					for c := range a {
						a[c] += uint32(px[c])
					}
				}
			}
		}
		out := dst[y*dstStride : y*dstStride+w*n]
		for i, s := range acc {
			out[i] = uint8((s + d/2) / d)
		}
	}
}
