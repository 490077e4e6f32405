package main

import (
	"slices"

	"golang.org/x/perf/benchmath"
)

// level is the confidence the summary's interval of each median ratio asks for.
const level = 0.95

// medianOf summarizes a pair's rounds as benchstat summarizes a benchmark's runs
// (golang.org/x/perf/benchmath, the package behind make bench-compare): the median,
// and the interval of order statistics x(k)..x(n+1-k) that holds the true median with
// probability at least level whatever the rounds' spread (Confidence: the coverage it
// has). Fewer than six rounds have no such interval: a side of it is then infinite, and
// a warning says how many rounds it needs.
func medianOf(rounds []float64) benchmath.Summary {
	return benchmath.AssumeNothing.Summary(benchmath.NewSample(slices.Clone(rounds), &benchmath.DefaultThresholds), level)
}

// verdict says whether a goal is met on the interval's evidence: "met" when the whole
// interval is on the goal's side, "not met" when it is wholly beyond it, and "within
// noise" when the interval holds the goal (more rounds, or a quieter machine, decide).
// atMost is the goal's direction: a cost ratio must be at most the goal, a speed ratio at
// least.
func verdict(lo, hi, goal float64, atMost bool) string {
	if !atMost {
		lo, hi, goal = -hi, -lo, -goal
	}
	switch {
	case hi <= goal:
		return "met"
	case lo > goal:
		return "not met"
	}
	return "within noise"
}
