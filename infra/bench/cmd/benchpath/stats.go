package main

import "math"

// level is the confidence the summary's interval of each median ratio asks for.
const level = 0.95

// medianInterval is the median of sorted (ascending, not empty) and an interval that
// holds the true median with probability coverage, whatever the rounds' distribution:
// the order statistics x(k) and x(n+1-k), with k the largest whose coverage is at least
// level. A round falls below the true median with probability one half, so the number
// of rounds below it is Binomial(n, 1/2), and the interval misses the median only when
// fewer than k rounds fall on one side of it: coverage = 1 - 2·P(B ≤ k-1). Five rounds
// or fewer cannot reach 95%: the interval is then the whole range, with the coverage it
// has (93.75% for five).
func medianInterval(sorted []float64) (median, lo, hi, coverage float64) {
	n := len(sorted)
	median = sorted[n/2]
	if n%2 == 0 {
		median = (sorted[n/2-1] + sorted[n/2]) / 2
	}
	k, coverage := 1, coverageOf(n, 1)
	for c := coverageOf(n, k+1); k+1 <= (n+1)/2 && c >= level; c = coverageOf(n, k+1) {
		k, coverage = k+1, c
	}
	return median, sorted[k-1], sorted[n-k], coverage
}

// coverageOf is the probability that [x(k), x(n+1-k)] of n rounds holds the median.
func coverageOf(n, k int) float64 {
	below := 0.0 // P(B ≤ k-1), B ~ Binomial(n, 1/2)
	for i := range k {
		below += binomial(n, i)
	}
	return 1 - 2*below*math.Pow(0.5, float64(n))
}

func binomial(n, k int) float64 {
	c := 1.0
	for i := 1; i <= k; i++ {
		c = c * float64(n-k+i) / float64(i)
	}
	return c
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
