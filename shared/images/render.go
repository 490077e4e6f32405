package images

import (
	"bytes"
	"fmt"
	"image"
	"sync"

	"github.com/disintegration/imaging"
)

// filter is the resampling filter of both renditions: Catmull-Rom is sharp,
// without the ringing of Lanczos, and has half its taps.
var filter = imaging.CatmullRom

// render crops, scales, orients and encodes a decoded image.
func render(img image.Image, orientation int) (Result, error) {
	img = centre(img)
	side := img.Bounds().Dx()
	high := square(reduce(img), min(HighSize, side))
	high = orient(high, orientation)
	scaled := high
	if s := min(ScaledSize, side); s != high.Rect.Dx() {
		scaled = imaging.Resize(high, s, s, filter)
	}
	alpha := !high.Opaque()

	var res Result
	var herr, serr error
	var wg sync.WaitGroup
	wg.Go(func() { res.High, herr = encode(high, alpha, HighQuality) })
	res.Scaled, serr = encode(scaled, alpha, ScaledQuality)
	wg.Wait()
	if herr != nil {
		return Result{}, herr
	}
	if serr != nil {
		return Result{}, serr
	}
	return res, nil
}

// centre returns the centred square of img as a sub-image that shares its
// pixels (every decoder's image type has SubImage), its corner a multiple of
// 4 from img's so that box-reducing starts on whole chroma samples. Scaling
// only the square keeps imaging's intermediate image, HighSize wide and as
// tall as the source, at most as tall as the square: for a panorama or a
// tall strip it would be larger than the decoded image (peak.go counts it).
func centre(img image.Image) image.Image {
	b := img.Bounds()
	s := min(b.Dx(), b.Dy())
	si, ok := img.(interface {
		SubImage(image.Rectangle) image.Image
	})
	if !ok || (b.Dx() == s && b.Dy() == s) {
		return img
	}
	x0, y0 := b.Min.X+(b.Dx()-s)/2&^3, b.Min.Y+(b.Dy()-s)/2&^3
	return si.SubImage(image.Rect(x0, y0, x0+s, y0+s))
}

// reduce returns img box-reduced by the largest integer factor that leaves
// its shorter side at least the High size, when img has planes to reduce
// (boxReduce), so that imaging's filter works on a small image and scales it
// by less than two; else img. (libvips does the same: shrink, then reduce.)
func reduce(img image.Image) image.Image {
	b := img.Bounds()
	side := min(b.Dx(), b.Dy())
	if k := side / HighSize; k >= 2 {
		if small, ok := boxReduce(img, k); ok {
			return small
		}
	}
	return img
}

// square returns the centred size x size square of img, scaled with imaging
// so that its shorter side is size, then cropped. (imaging.Fill crops with
// imaging.Crop, which copies the whole crop of the full-size image as NRGBA;
// centre has cut the square already, without a copy.)
func square(img image.Image, size int) *image.NRGBA {
	b := img.Bounds()
	var m *image.NRGBA
	if b.Dx() < b.Dy() {
		m = imaging.Resize(img, size, 0, filter)
	} else {
		m = imaging.Resize(img, 0, size, filter)
	}
	if m.Rect.Dx() == size && m.Rect.Dy() == size {
		return m
	}
	return imaging.CropCenter(m, size, size)
}

// orient applies an EXIF orientation (1 to 8) with imaging's transforms, as
// imaging.Decode's AutoOrientation does. A centred square crop commutes with
// the orientation, so it is applied to the small result, not the source.
func orient(m *image.NRGBA, o int) *image.NRGBA {
	switch o {
	case 2:
		return imaging.FlipH(m)
	case 3:
		return imaging.Rotate180(m)
	case 4:
		return imaging.FlipV(m)
	case 5:
		return imaging.Transpose(m)
	case 6:
		return imaging.Rotate270(m)
	case 7:
		return imaging.Transverse(m)
	case 8:
		return imaging.Rotate90(m)
	}
	return m
}

// encode writes m as PNG when alpha is set, else as JPEG of quality q.
func encode(m *image.NRGBA, alpha bool, q int) (Rendition, error) {
	var buf bytes.Buffer
	r := Rendition{ContentType: TypeJPEG, Width: m.Rect.Dx(), Height: m.Rect.Dy()}
	format, opt := imaging.JPEG, imaging.JPEGQuality(q)
	if alpha {
		r.ContentType, format = TypePNG, imaging.PNG
	} else {
		buf.Grow(r.Width * r.Height / 2)
	}
	if err := imaging.Encode(&buf, m, format, opt); err != nil {
		return Rendition{}, fmt.Errorf("encode %s: %w", r.ContentType, err)
	}
	r.Data = buf.Bytes()
	return r, nil
}
