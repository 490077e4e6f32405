package images

import (
	"image"
	"testing"
)

// TestBoxReduce checks the box reduction of each image type the decoders
// produce and render reduces, against the average computed pixel by pixel
// through At: every output pixel is the rounded mean of its k x k block.
func TestBoxReduce(t *testing.T) {
	const w, h, k = 40, 24, 2
	val := func(x, y, c int) uint8 { return uint8(x*7 + y*13 + c*29) }
	cmyk := image.NewCMYK(image.Rect(0, 0, w, h))
	ycc := image.NewYCbCr(image.Rect(0, 0, w, h), image.YCbCrSubsampleRatio420)
	alpha := image.NewNYCbCrA(image.Rect(0, 0, w, h), image.YCbCrSubsampleRatio444)
	gray := image.NewGray(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			for c := range 4 {
				cmyk.Pix[cmyk.PixOffset(x, y)+c] = val(x, y, c)
			}
			ycc.Y[ycc.YOffset(x, y)] = val(x, y, 0)
			ycc.Cb[ycc.COffset(x, y)] = val(x/2, y/2, 1)
			ycc.Cr[ycc.COffset(x, y)] = val(x/2, y/2, 2)
			alpha.Y[alpha.YOffset(x, y)] = val(x, y, 0)
			alpha.Cb[alpha.COffset(x, y)] = val(x, y, 1)
			alpha.Cr[alpha.COffset(x, y)] = val(x, y, 2)
			alpha.A[alpha.AOffset(x, y)] = val(x, y, 3)
			gray.Pix[gray.PixOffset(x, y)] = val(x, y, 0)
		}
	}
	// samples returns the 8-bit samples of pixel (x, y) of m, by type.
	samples := func(m image.Image, x, y int) []int {
		switch m := m.(type) {
		case *image.CMYK:
			p := m.Pix[m.PixOffset(x, y):]
			return []int{int(p[0]), int(p[1]), int(p[2]), int(p[3])}
		case *image.NYCbCrA:
			return []int{int(m.Y[m.YOffset(x, y)]), int(m.Cb[m.COffset(x, y)]), int(m.Cr[m.COffset(x, y)]), int(m.A[m.AOffset(x, y)])}
		case *image.YCbCr:
			return []int{int(m.Y[m.YOffset(x, y)])}
		case *image.Gray:
			return []int{int(m.Pix[m.PixOffset(x, y)])}
		}
		t.Fatalf("type %T", m)
		return nil
	}
	for _, src := range []image.Image{cmyk, ycc, alpha, gray} {
		small, ok := boxReduce(src, k)
		if !ok {
			t.Fatalf("%T: not reduced", src)
		}
		b := small.Bounds()
		if b.Dx() != w/k&^3 || b.Dy() != h/k&^3 {
			t.Fatalf("%T: reduced to %v", src, b)
		}
		x0, y0 := (w-b.Dx()*k)/2&^3, (h-b.Dy()*k)/2&^3
		for y := range b.Dy() {
			for x := range b.Dx() {
				got := samples(small, x, y)
				for c := range got {
					sum := 0
					for j := range k {
						for i := range k {
							sum += samples(src, x0+x*k+i, y0+y*k+j)[c]
						}
					}
					if want := (sum + k*k/2) / (k * k); got[c] != want {
						t.Fatalf("%T: sample %d of (%d, %d) is %d, want %d", src, c, x, y, got[c], want)
					}
				}
			}
		}
	}
}
