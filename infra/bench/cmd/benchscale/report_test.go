package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeRunFile(t *testing.T, r Run) string {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "run.json")
	if err := os.WriteFile(f, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// The report flags each row against the targets: p95 over 25 ms at the largest size,
// or growth of p95 over 2× (not on deep pages; said apart when to under 5 ms), in each pass; statements and the
// connection set-up are references, never flagged.
func TestReportFlags(t *testing.T) {
	res := func(label, pass string, p95 float64) Result {
		return Result{Label: label, Route: label, Pass: pass, P50: p95 / 2, P95: p95}
	}
	small := Run{Scale: 10000, Results: []Result{
		res("GET /fast", "warm", 2), res("GET /slow", "warm", 20), res("GET /grows", "warm", 2), res("GET /noise", "warm", 0.5),
		res("GET /deep&offset=<middle page>", "warm", 2), res("(statement: count)", "statement", 1),
		res("GET /fast", "pooler", 3), res("GET /slow", "pooler", 3), res("GET /grows", "pooler", 3),
		res("GET /deep&offset=<middle page>", "pooler", 3), res("(connection set-up: connect, SELECT 1)", "pooler", 1),
	}}
	large := Run{Scale: 1000000, Results: []Result{
		res("GET /fast", "warm", 3), res("GET /slow", "warm", 30), res("GET /grows", "warm", 5), res("GET /noise", "warm", 3),
		res("GET /deep&offset=<middle page>", "warm", 20), res("(statement: count)", "statement", 100),
		res("GET /fast", "pooler", 4), res("GET /slow", "pooler", 4), res("GET /grows", "pooler", 4),
		res("GET /deep&offset=<middle page>", "pooler", 30), res("(connection set-up: connect, SELECT 1)", "pooler", 50),
	}}
	// Given in either order: the smaller size is the base of the growth.
	var out strings.Builder
	if err := printReport(&out, []string{writeRunFile(t, large), writeRunFile(t, small)}); err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(line, "| `") {
			key, _, _ := strings.Cut(strings.TrimPrefix(line, "| `"), "`")
			rows[key] = line
		}
	}
	for _, tt := range []struct {
		key, flags string
		cells      []string
	}{
		{"GET /fast", " |", []string{"1.0 / 2.0", "1.5 / 3.0", "1.5×", "1.3×"}},
		{"GET /slow", " **p95 > 25 ms** |", []string{"15.0 / 30.0"}},
		{"GET /grows", " **growth > 2×** |", []string{"2.5×"}},
		{"GET /deep&offset=<middle page>", " **pooler p95 > 25 ms** |", []string{"10.0×"}},
		{"GET /noise", " **growth > 2×, p95 < 5 ms** |", []string{"6.0×"}},
		{"(statement: count)", " |", []string{"100.0×"}},
		{"(connection set-up: connect, SELECT 1)", " |", []string{"50.0×"}},
	} {
		line, ok := rows[tt.key]
		if !ok {
			t.Errorf("no row %q in\n%s", tt.key, out.String())
			continue
		}
		if !strings.HasSuffix(line, tt.flags) {
			t.Errorf("%s: want flags %q, got %s", tt.key, tt.flags, line)
		}
		for _, c := range tt.cells {
			if !strings.Contains(line, " "+c+" |") {
				t.Errorf("%s: no cell %q in %s", tt.key, c, line)
			}
		}
	}
	if !strings.Contains(out.String(), "4 rows over target") {
		t.Errorf("want 4 rows over target:\n%s", out.String())
	}
}

// Files written before results carried their pass are read by their labels.
func TestReportOldFiles(t *testing.T) {
	old := Run{Scale: 10000, Results: []Result{
		{Route: "/tags?client=2", Label: "/tags?client=2", P95: 2},
		{Route: "/tags?client=2 (fresh connection, pooler)", Label: "/tags?client=2 (fresh connection, pooler)", P95: 4},
	}}
	var out strings.Builder
	if err := printReport(&out, []string{writeRunFile(t, old)}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "| `/tags?client=2` | 0.0 / 2.0 | - | 0.0 / 4.0 | - |") {
		t.Errorf("old file misread:\n%s", out.String())
	}
}
