package main

import (
	"testing"
	"time"
)

// TestVerdict: the rehearsal fails (so make migrate-rehearsal exits non-zero) when a
// probe waited over a second, timed out or deadlocked, and passes otherwise.
func TestVerdict(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    stats
		fail bool
	}{
		{"quiet", stats{longest: 120 * time.Millisecond}, false},
		{"a second exactly", stats{longest: time.Second}, false},
		{"00031's probe: 1.23 s", stats{longest: 1230 * time.Millisecond, longestProbe: "tags search"}, true},
		{"a timeout", stats{longest: 10 * time.Millisecond, timeouts: 1}, true},
		{"a deadlock", stats{longest: 10 * time.Millisecond, deadlocks: 1}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := verdict(tc.s); (err != nil) != tc.fail {
				t.Errorf("verdict %v, want failure %v", err, tc.fail)
			}
		})
	}
}
