package images

import (
	"bytes"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"sync"
)

// render crops, scales, orients and encodes a decoded image.
func render(img image.Image, orientation int) (Result, error) {
	b := img.Bounds()
	side := min(b.Dx(), b.Dy())
	high := min(HighSize, side)
	scaled := min(ScaledSize, side)

	// Box-reduce by the largest integer factor that leaves at least twice
	// the High size, so the Catmull-Rom step works from a clean image.
	k := max(1, side/(2*high))
	side -= side % k
	// Even offsets keep the crop aligned with 4:2:0 chroma samples.
	x0 := b.Min.X + (b.Dx()-side)/2&^1
	y0 := b.Min.Y + (b.Dy()-side)/2&^1
	c := shrink(img, image.Rect(x0, y0, x0+side, y0+side), k)

	// A centred square crop commutes with the orientation, so orient the
	// small result rather than the source.
	h := orient(resample(c, high), orientation)
	alpha := h.transparent()

	var res Result
	var herr error
	var wg sync.WaitGroup
	wg.Go(func() { res.High, herr = encode(h, alpha, HighQuality) })
	s := resample(h, scaled)
	var serr error
	res.Scaled, serr = encode(s, alpha, ScaledQuality)
	wg.Wait()
	if herr != nil {
		return Result{}, herr
	}
	if serr != nil {
		return Result{}, serr
	}
	return res, nil
}

var pngEncoder = png.Encoder{CompressionLevel: png.DefaultCompression, BufferPool: &pngPool{}}

type pngPool struct{ p sync.Pool }

func (p *pngPool) Get() *png.EncoderBuffer {
	b, _ := p.p.Get().(*png.EncoderBuffer)
	return b
}

func (p *pngPool) Put(b *png.EncoderBuffer) { p.p.Put(b) }

// encode writes c as PNG when alpha is set, else as JPEG of quality q.
func encode(c canvas, alpha bool, q int) (Rendition, error) {
	var buf bytes.Buffer
	r := image.Rect(0, 0, c.w, c.h)
	if alpha {
		m := image.NewNRGBA(r)
		cr, cg, cb, ca := c.plane(0), c.plane(1), c.plane(2), c.plane(3)
		for i := range ca {
			a := uint32(ca[i])
			if a == 0 {
				continue
			}
			d := m.Pix[4*i : 4*i+4]
			d[0], d[1], d[2], d[3] = unpremul(cr[i], a), unpremul(cg[i], a), unpremul(cb[i], a), uint8(a)
		}
		if err := pngEncoder.Encode(&buf, m); err != nil {
			return Rendition{}, fmt.Errorf("encode png: %w", err)
		}
		return Rendition{Data: buf.Bytes(), ContentType: TypePNG, Width: c.w, Height: c.h}, nil
	}

	var m image.Image
	if c.ycc {
		m = &image.YCbCr{
			Y: c.plane(0), Cb: c.plane(1), Cr: c.plane(2),
			YStride: c.w, CStride: c.w,
			SubsampleRatio: image.YCbCrSubsampleRatio444,
			Rect:           r,
		}
	} else {
		rgba := image.NewRGBA(r)
		cr, cg, cb := c.plane(0), c.plane(1), c.plane(2)
		for i := range cr {
			d := rgba.Pix[4*i : 4*i+4]
			d[0], d[1], d[2], d[3] = cr[i], cg[i], cb[i], 0xFF
		}
		m = rgba
	}
	buf.Grow(c.w * c.h / 2)
	if err := jpeg.Encode(&buf, m, &jpeg.Options{Quality: q}); err != nil {
		return Rendition{}, fmt.Errorf("encode jpeg: %w", err)
	}
	return Rendition{Data: buf.Bytes(), ContentType: TypeJPEG, Width: c.w, Height: c.h}, nil
}

// unpremul returns c*255/a, rounded, with c clamped to a (a filter can
// overshoot a premultiplied color past its alpha).
func unpremul(c uint8, a uint32) uint8 {
	v := min(uint32(c), a)
	return uint8((v*0xFF + a/2) / a)
}
