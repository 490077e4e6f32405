package app

import "runtime/debug"

// GCPercent is the garbage collector's target (GOGC) every function and make run's
// server run with unless the environment sets GOGC: the heap may grow to five times
// what is live before a collection, not twice. A request's garbage is a few kilobytes
// over a live heap of a few megabytes, so at the runtime's default of 100 a collection
// runs every few thousand requests and its marking is a measurable share of each
// request's CPU (docs/performance.md); at 400 it runs a quarter as often for some
// megabytes more heap. GOMEMLIMIT (template.yaml, each function's) still
// bounds the heap: near it the collector runs as often as it must, whatever
// this target, so a large image decode cannot take the function past its memory.
const GCPercent = 400

// TuneGC sets the collector's target to GCPercent unless getenv has GOGC, which the
// runtime has applied already and which then stays as the operator set it.
func TuneGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(GCPercent)
	}
}
