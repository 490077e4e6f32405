package demo

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"math/rand/v2"
)

// Photo is a generated 1200×900 JPEG with a photo's texture (a gradient under blocks of
// noise), the picture the avatar benchmarks give the member user: the upload renders
// it to 3,927 bytes scaled and 37,557 high, the sizes the cdn's targets are set for.
// It is the picture of BenchmarkAvatarServer's member (infra/local/cmd/local), made the same
// way.
func Photo() ([]byte, error) {
	const w, h, amp, block = 1200, 900, 18, 16
	r := rand.New(rand.NewPCG(3, 4))
	noise := make([]int, (w/block+1)*(h/block+1))
	for i := range noise {
		noise[i] = r.IntN(2*amp+1) - amp
	}
	m := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			n := noise[(y/block)*(w/block+1)+x/block]
			c := func(v int) uint8 { return uint8(min(255, max(0, v+n))) }
			m.SetNRGBA(x, y, color.NRGBA{c(x * 255 / w), c(y * 255 / h), c(160), 255})
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, m, &jpeg.Options{Quality: 92}); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
