package main

import (
	"math"
	"slices"
	"testing"
)

func TestMedianOf(t *testing.T) {
	inf := math.Inf(1)
	for _, tc := range []struct {
		name                  string
		rounds                []float64
		median, lo, hi, cover float64
	}{
		// Five rounds: no interval reaches 95% on both sides (the range covers 1 - 2/32).
		{"five rounds", []float64{1.3, 1.0, 1.2, 1.1, 1.4}, 1.2, -inf, 1.4, 0.96875},
		// Six: the range is the only interval at 95% (1 - 2/64).
		{"six rounds", []float64{6, 1, 5, 2, 4, 3}, 3.5, 1, 6, 0.96875},
		// Nine: x(2)..x(8) covers 1 - 2·10/512 = 96.1%; x(3)..x(7) only 82%.
		{"nine rounds", []float64{9, 8, 7, 6, 5, 4, 3, 2, 1}, 5, 2, 8, 1 - 2*10.0/512},
		// Seventeen: x(5)..x(13) covers 1 - 2·3214/131072 = 95.1%; x(6)..x(12) 85.7%.
		{"seventeen rounds", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17}, 9, 5, 13, 1 - 2*3214.0/131072},
		{"one round", []float64{1.1}, 1.1, -inf, inf, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rounds := slices.Clone(tc.rounds)
			s := medianOf(rounds)
			if s.Center != tc.median || s.Lo != tc.lo || s.Hi != tc.hi || math.Abs(s.Confidence-tc.cover) > 1e-9 {
				t.Errorf("medianOf = %v [%v, %v] %.4f, want %v [%v, %v] %.4f", s.Center, s.Lo, s.Hi, s.Confidence, tc.median, tc.lo, tc.hi, tc.cover)
			}
			if !slices.Equal(rounds, tc.rounds) {
				t.Errorf("medianOf reordered the rounds: %v", rounds)
			}
		})
	}
}

func TestVerdict(t *testing.T) {
	for _, tc := range []struct {
		lo, hi, goal float64
		atMost       bool
		want         string
	}{
		{1.01, 1.04, 1.05, true, "met"},
		{1.03, 1.08, 1.05, true, "within noise"},
		{1.06, 1.10, 1.05, true, "not met"},
		{1.00, 1.05, 1.05, true, "met"},
		{0.86, 0.95, 0.85, false, "met"},
		{0.80, 0.90, 0.85, false, "within noise"},
		{0.70, 0.84, 0.85, false, "not met"},
	} {
		if got := verdict(tc.lo, tc.hi, tc.goal, tc.atMost); got != tc.want {
			t.Errorf("verdict(%v, %v, goal %v, at most %v) = %q, want %q", tc.lo, tc.hi, tc.goal, tc.atMost, got, tc.want)
		}
	}
}
