// Command gendefault draws the default avatars embedded by package images: a
// neutral head-and-shoulders silhouette on a soft background, as opaque PNGs
// of each rendition size. Run it through go generate in shared/images.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
)

var (
	background = color.NRGBA{0xE2, 0xE8, 0xF0, 0xFF} // slate 200
	figure     = color.NRGBA{0x94, 0xA3, 0xB8, 0xFF} // slate 400
)

func main() {
	out := flag.String("out", "default", "directory to write high.png and scaled.png into")
	flag.Parse()
	for name, size := range map[string]int{"high.png": 512, "scaled.png": 128} {
		if err := write(filepath.Join(*out, name), draw(size)); err != nil {
			fmt.Fprintln(os.Stderr, "gendefault:", err)
			os.Exit(1)
		}
	}
}

// inside reports whether the point (x, y), in units of the image side, is on
// the silhouette: a round head over the top of an ellipse for the shoulders.
func inside(x, y float64) bool {
	hx, hy := x-0.5, y-0.39
	if hx*hx+hy*hy <= 0.17*0.17 {
		return true
	}
	sx, sy := (x-0.5)/0.33, (y-0.98)/0.36
	return sx*sx+sy*sy <= 1
}

// draw renders the silhouette with 4x4 supersampling for smooth edges.
func draw(size int) *image.NRGBA {
	const ss = 4
	m := image.NewNRGBA(image.Rect(0, 0, size, size))
	for py := range size {
		for px := range size {
			hits := 0
			for sy := range ss {
				for sx := range ss {
					x := (float64(px) + (float64(sx)+0.5)/ss) / float64(size)
					y := (float64(py) + (float64(sy)+0.5)/ss) / float64(size)
					if inside(x, y) {
						hits++
					}
				}
			}
			t := float64(hits) / ss / ss
			mix := func(a, b uint8) uint8 { return uint8(float64(a)*(1-t) + float64(b)*t + 0.5) }
			m.SetNRGBA(px, py, color.NRGBA{
				mix(background.R, figure.R), mix(background.G, figure.G), mix(background.B, figure.B), 0xFF,
			})
		}
	}
	return m
}

func write(path string, m image.Image) error {
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(&buf, m); err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}
