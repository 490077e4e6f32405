package main

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// TestRehearsal is the short rehearsal (the demo catalog, 8 workload users: one per
// kind of change): one base backup and workload, restored three times. Without
// reconcile-images the pictures deleted after T are not served and the objects
// uploaded after it stay; without the sessions-valid-after mark the sessions from
// before the restore are accepted; the whole procedure passes every check.
func TestRehearsal(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL clusters and moto's server")
	}
	var out strings.Builder
	outcomes, err := rehearse(context.Background(), options{users: 8, out: &out,
		variants: []variant{{skipReconcile: true}, {skipCutoff: true}, {}}})
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"every picture a row names is served by the cdn", "no object unnamed"},
		{"no session from before the restore accepted"},
		nil,
	}
	for i, res := range outcomes {
		if failed := res.failed(); !slices.Equal(failed, want[i]) {
			t.Errorf("%s: failed %q, want %q", res.variant, failed, want[i])
		}
	}
	if len(outcomes) != 3 {
		t.Fatalf("%d restores, want 3", len(outcomes))
	}
	if whole := outcomes[2]; whole.rpo <= 0 || whole.rto <= 0 {
		t.Errorf("RPO %s, RTO %s", whole.rpo, whole.rto)
	}
}
