package soak

import (
	"fmt"
	"slices"
	"time"
)

// Bound is the most a figure may grow over the judged window: the larger of Abs and
// Rel times its median over the window.
type Bound struct {
	Abs float64
	Rel float64
}

// DefaultBounds are the noise a healthy server shows over a window, whatever its
// length: the collector's cycle and the scavenger move the resident set by a few MiB;
// the goroutines and open files follow the requests in flight (the eight workers', a
// connection and up to two goroutines each) and the idle connections of the pools
// (PostgreSQL's, the AWS clients', the stand-ins'), a few either way.
var DefaultBounds = map[string]Bound{
	FigureRSS:        {Abs: 16 << 20, Rel: 0.10},
	FigureGoroutines: {Abs: 24},
	FigureOpenFiles:  {Abs: 24},
}

// The judged figures.
const (
	FigureRSS        = "RSS"
	FigureGoroutines = "goroutines"
	FigureOpenFiles  = "open files"
)

// Growth is one figure's growth over the judged window: the rise of the least-squares
// line through its samples from the window's first to its last, against the bound.
type Growth struct {
	Figure  string  `json:"figure"`
	Samples int     `json:"samples"`
	Median  float64 `json:"median"`
	Growth  float64 `json:"growth"`   // the line's rise over the window
	PerHour float64 `json:"per_hour"` // its slope
	Bound   float64 `json:"bound"`
	OK      bool    `json:"ok"`
}

func (g Growth) String() string {
	f := func(v float64) string { return fmt.Sprintf("%.0f", v) }
	if g.Figure == FigureRSS {
		f = func(v float64) string { return fmt.Sprintf("%.1f MiB", v/(1<<20)) }
	}
	verdict := "ok"
	if !g.OK {
		verdict = "GROWS"
	}
	return fmt.Sprintf("%-10s median %s, growth %s over %d samples (%s per hour), bound %s: %s",
		g.Figure, f(g.Median), signed(f, g.Growth), g.Samples, signed(f, g.PerHour), f(g.Bound), verdict)
}

func signed(f func(float64) string, v float64) string {
	if v >= 0 {
		return "+" + f(v)
	}
	return f(v)
}

// minJudged is the fewest samples a window is judged on.
const minJudged = 5

// judgeGrowth judges the samples taken at or after from (the judged window) against
// bounds, one Growth per figure in bounds' order of FigureRSS, FigureGoroutines,
// FigureOpenFiles.
func judgeGrowth(samples []Sample, from time.Duration, bounds map[string]Bound) ([]Growth, error) {
	var win []Sample
	for _, s := range samples {
		if s.At >= from {
			win = append(win, s)
		}
	}
	if len(win) < minJudged {
		return nil, fmt.Errorf("%d samples from %s on, want at least %d to judge growth", len(win), from, minJudged)
	}
	values := map[string]func(Sample) float64{
		FigureRSS:        func(s Sample) float64 { return float64(s.RSSBytes) },
		FigureGoroutines: func(s Sample) float64 { return float64(s.Goroutines) },
		FigureOpenFiles:  func(s Sample) float64 { return float64(s.OpenFiles) },
	}
	var out []Growth
	for _, fig := range []string{FigureRSS, FigureGoroutines, FigureOpenFiles} {
		b, ok := bounds[fig]
		if !ok {
			continue
		}
		ts, vs := make([]float64, len(win)), make([]float64, len(win))
		for i, s := range win {
			ts[i], vs[i] = s.At.Seconds(), values[fig](s)
		}
		slope := slopeOf(ts, vs)
		g := Growth{Figure: fig, Samples: len(win), Median: median(vs), PerHour: slope * 3600,
			Growth: slope * (ts[len(ts)-1] - ts[0])}
		g.Bound = max(b.Abs, b.Rel*g.Median)
		g.OK = g.Growth <= g.Bound
		out = append(out, g)
	}
	return out, nil
}

// slopeOf is the slope of the least-squares line through (ts, vs).
func slopeOf(ts, vs []float64) float64 {
	n := float64(len(ts))
	var mt, mv float64
	for i := range ts {
		mt += ts[i]
		mv += vs[i]
	}
	mt, mv = mt/n, mv/n
	var num, den float64
	for i := range ts {
		num += (ts[i] - mt) * (vs[i] - mv)
		den += (ts[i] - mt) * (ts[i] - mt)
	}
	if den == 0 {
		return 0
	}
	return num / den
}

func median(vs []float64) float64 {
	s := slices.Clone(vs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
