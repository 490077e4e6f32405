package app_test

import (
	"runtime/debug"
	"testing"

	"github.com/mediacatalog/service/shared/app"
)

// TestTuneGC: the collector's target becomes GCPercent unless the environment sets
// GOGC, whose value the runtime applied at start and TuneGC leaves alone.
func TestTuneGC(t *testing.T) {
	const unset = 137 // a target neither the runtime's default nor GCPercent
	prev := debug.SetGCPercent(unset)
	t.Cleanup(func() { debug.SetGCPercent(prev) })
	for _, tc := range []struct {
		name, gogc string
		want       int
	}{
		{"GOGC unset", "", app.GCPercent},
		{"GOGC set", "100", unset},
		{"GOGC off", "off", unset},
	} {
		t.Run(tc.name, func(t *testing.T) {
			debug.SetGCPercent(unset)
			app.TuneGC(func(k string) string {
				if k == "GOGC" {
					return tc.gogc
				}
				return ""
			})
			if got := debug.SetGCPercent(unset); got != tc.want {
				t.Errorf("GC percent %d, want %d", got, tc.want)
			}
		})
	}
}
