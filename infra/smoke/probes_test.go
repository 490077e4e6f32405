package smoke_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/mediacatalog/service/shared/deployhook"
)

// TestDeployHookProbes: every real bootstrap, through the Runtime API on the test's
// PostgreSQL, dynalite and S3 with the demo data, answers the deploy hook's probe with
// the status the hook passes a new version on (shared/deployhook): the probes ask what
// the functions really answer.
func TestDeployHookProbes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds eight binaries")
	}
	dir := t.TempDir()
	env, _ := stackEnv(t)
	for _, fn := range functions {
		t.Run(fn, func(t *testing.T) {
			probe, ok := deployhook.Probes[fn]
			if !ok {
				t.Fatalf("the deploy hook has no probe for %s", fn)
			}
			bin, err := build(dir, fn, "./functions/"+fn, runtime.GOARCH)
			if err != nil {
				t.Fatal(err)
			}
			event, err := probe.Event("1", time.Now())
			if err != nil {
				t.Fatal(err)
			}
			results, _ := run(t, bin, env, [][]byte{event})
			resp, err := results[0].Decode()
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != probe.Want {
				t.Errorf("%s %s: status %d, the hook wants %d: %.300s", probe.RouteKey, probe.Path, resp.StatusCode, probe.Want, resp.Body)
			}
		})
	}
}
