package images

import "math"

// Fixed-point precision of filter weights.
const (
	weightBits = 14
	weightOne  = 1 << weightBits
)

// weights are the taps of a 1-D resampling filter: output i reads
// src[start[i]+j] with weight w[off[i]+j] for 0 <= j < off[i+1]-off[i].
type weights struct {
	start []int
	off   []int
	w     []int32
}

// catmullRom is the Keys cubic with a = -0.5, support 2: sharp, without the
// ringing of larger Lanczos kernels, and cheap.
func catmullRom(x float64) float64 {
	x = math.Abs(x)
	switch {
	case x < 1:
		return (1.5*x-2.5)*x*x + 1
	case x < 2:
		return ((-0.5*x+2.5)*x-4)*x + 2
	}
	return 0
}

const catmullRomSupport = 2

// newWeights builds the taps that resample n source samples to m, m <= n.
func newWeights(n, m int) weights {
	scale := float64(n) / float64(m)
	support := catmullRomSupport * max(scale, 1)
	ws := weights{start: make([]int, m), off: make([]int, m+1)}
	ws.w = make([]int32, 0, m*(int(2*support)+2))
	fw := make([]float64, 0, int(2*support)+2)
	for i := range m {
		center := (float64(i)+0.5)*scale - 0.5
		lo := max(0, int(math.Ceil(center-support)))
		hi := min(n-1, int(math.Floor(center+support)))
		fw = fw[:0]
		sum := 0.0
		for j := lo; j <= hi; j++ {
			v := catmullRom((float64(j) - center) / max(scale, 1))
			fw = append(fw, v)
			sum += v
		}
		// Trim zero taps at both ends; normalise; make the fixed-point
		// weights sum to exactly one, adjusting the largest.
		for len(fw) > 1 && fw[0] == 0 {
			fw = fw[1:]
			lo++
		}
		for len(fw) > 1 && fw[len(fw)-1] == 0 {
			fw = fw[:len(fw)-1]
		}
		ws.start[i] = lo
		ws.off[i] = len(ws.w)
		total, big := int32(0), len(ws.w)
		for j, v := range fw {
			q := int32(math.Round(v / sum * weightOne))
			ws.w = append(ws.w, q)
			total += q
			if q > ws.w[big] {
				big = ws.off[i] + j
			}
		}
		ws.w[big] += weightOne - total
	}
	ws.off[m] = len(ws.w)
	return ws
}

func clamp8(v int32) uint8 {
	v = (v + weightOne/2) >> weightBits
	if uint32(v) > 0xFF {
		if v < 0 {
			return 0
		}
		return 0xFF
	}
	return uint8(v)
}

// resample returns c scaled to size x size with a Catmull-Rom filter; c must
// be square and no smaller than size. A canvas already of the size is
// returned as is.
func resample(c canvas, size int) canvas {
	if c.w == size && c.h == size {
		return c
	}
	wx := newWeights(c.w, size)
	wy := wx
	if c.h != c.w {
		wy = newWeights(c.h, size)
	}
	planes := c.planes()

	// Horizontal pass: c.w x c.h to size x c.h.
	tmp := canvas{w: size, h: c.h, ycc: c.ycc, pix: make([]uint8, planes*size*c.h)}
	parallel(planes*c.h, len(wx.w), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			src := c.pix[r*c.w : (r+1)*c.w]
			dst := tmp.pix[r*size : (r+1)*size]
			for x := range dst {
				px := src[wx.start[x]:]
				var s int32
				for j, w := range wx.w[wx.off[x]:wx.off[x+1]] {
					s += w * int32(px[j])
				}
				dst[x] = clamp8(s)
			}
		}
	})

	// Vertical pass: size x c.h to size x size.
	out := canvas{w: size, h: size, ycc: c.ycc, pix: make([]uint8, planes*size*size)}
	parallel(planes*size, len(wy.w), func(lo, hi int) {
		acc := make([]int32, size)
		for r := lo; r < hi; r++ {
			p, y := r/size, r%size
			plane := tmp.pix[p*size*c.h : (p+1)*size*c.h]
			clear(acc)
			for j, w := range wy.w[wy.off[y]:wy.off[y+1]] {
				row := plane[(wy.start[y]+j)*size : (wy.start[y]+j+1)*size]
				for x, v := range row {
					acc[x] += w * int32(v)
				}
			}
			dst := out.pix[r*size : (r+1)*size]
			for x, s := range acc {
				dst[x] = clamp8(s)
			}
		}
	})
	return out
}
