package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// The catalog's speed targets, checked by the report (not by a test: figures vary with the
// machine): p95 at the largest size, and the growth of p95 from the smallest.
const (
	targetP95    = 25.0 // ms
	targetGrowth = 2.0
	// growthFloor: growth to a p95 under it at the largest size is flagged apart
	// ("growth > 2×, p95 < 5 ms"): a figure of a millisecond or two doubles with the
	// machine's load alone (the reference statement's own figure varies more than that
	// between the two sizes' runs), so the reader should tell such a flag from a route
	// whose work grows; both are misses of the target.
	growthFloor = 5.0 // ms
)

// pass tells a result's pass, also in files written before results carried it.
func (x Result) pass() string {
	switch {
	case x.Pass != "":
		return x.Pass
	case strings.HasSuffix(x.Label, " (fresh connection, pooler)"):
		return "pooler"
	case strings.HasSuffix(x.Label, " (fresh connection)"):
		return "fresh"
	case strings.HasPrefix(x.Label, "(statement") || strings.HasPrefix(x.Label, "(reference statement"):
		return "statement"
	}
	return "warm"
}

// key names a result's row: its label without the pass's suffix.
func (x Result) key() string {
	k := x.Label
	if k == "" {
		k = x.Route
	}
	k = strings.TrimSuffix(k, " (fresh connection, pooler)")
	return strings.TrimSuffix(k, " (fresh connection)")
}

// printReport prints one Markdown table of the result files (smallest size first): per
// route, p50/p95 at each size warm, the growth of p95, the same on a fresh connection
// through the pooler, and the targets each misses. Deep pages are held to the absolute
// target only (a page past T starts at an offset that grows with the catalog, so its
// growth measures the offset, not the code); growth to under growthFloor is flagged apart;
// statements and the connection set-up are references, not held to
// either.
func printReport(out io.Writer, files []string) error {
	var runs []Run
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		var r Run
		if err := json.Unmarshal(b, &r); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		runs = append(runs, r)
	}
	if len(runs) == 0 {
		return errors.New("no result files")
	}
	slices.SortStableFunc(runs, func(a, b Run) int { return a.Scale - b.Scale })
	passes := []string{"warm", "pooler"}
	if slices.ContainsFunc(runs, func(r Run) bool {
		return slices.ContainsFunc(r.Results, func(x Result) bool { return x.pass() == "fresh" })
	}) {
		passes = append(passes, "fresh")
	}
	title := map[string]string{"warm": "warm", "pooler": "fresh conn. via pooler", "fresh": "fresh conn. direct"}
	fmt.Fprint(out, "| route |")
	for _, p := range passes {
		for _, r := range runs {
			pages := ""
			if r.HugePages {
				pages = ", huge pages"
			}
			fmt.Fprintf(out, " %s p50 / p95 ms at %d%s |", title[p], r.Scale, pages)
		}
		fmt.Fprintf(out, " %s p95 growth |", title[p])
	}
	fmt.Fprintln(out, " over target |")
	fmt.Fprint(out, "|---|")
	for range passes {
		fmt.Fprint(out, strings.Repeat("---:|", len(runs)+1))
	}
	fmt.Fprintln(out, "---|")

	// Rows in the order of the runs' results: the warm pass's routes and statements,
	// then whatever only the other passes have (the connection set-up).
	var keys []string
	for _, r := range runs {
		for _, x := range r.Results {
			if !slices.Contains(keys, x.key()) {
				keys = append(keys, x.key())
			}
		}
	}
	find := func(r Run, key, pass string) (Result, bool) {
		i := slices.IndexFunc(r.Results, func(x Result) bool {
			p := x.pass()
			if p == "statement" {
				p = "warm"
			}
			return x.key() == key && p == pass
		})
		if i < 0 {
			return Result{}, false
		}
		return r.Results[i], true
	}
	over := 0
	for _, key := range keys {
		fmt.Fprintf(out, "| `%s` |", key)
		var flags []string
		for _, p := range passes {
			var first, last Result
			var have int
			for _, r := range runs {
				x, ok := find(r, key, p)
				if !ok {
					fmt.Fprint(out, " - |")
					continue
				}
				if have == 0 {
					first = x
				}
				last = x
				have++
				fmt.Fprintf(out, " %.1f / %.1f |", x.P50, x.P95)
			}
			if have < 2 || first.P95 == 0 {
				fmt.Fprint(out, " - |")
			} else {
				fmt.Fprintf(out, " %.1f× |", last.P95/first.P95)
			}
			if have == 0 || last.pass() == "statement" || strings.HasPrefix(key, "(") {
				continue
			}
			name := map[string]string{"warm": "", "pooler": "pooler ", "fresh": "direct "}[p]
			if last.P95 > targetP95 {
				flags = append(flags, fmt.Sprintf("%sp95 > %.0f ms", name, targetP95))
			}
			if have >= 2 && first.P95 > 0 && last.P95/first.P95 > targetGrowth && !strings.Contains(key, "offset=<") {
				if last.P95 < growthFloor {
					flags = append(flags, fmt.Sprintf("%sgrowth > %.0f×, p95 < %.0f ms", name, targetGrowth, growthFloor))
				} else {
					flags = append(flags, fmt.Sprintf("%sgrowth > %.0f×", name, targetGrowth))
				}
			}
		}
		if len(flags) > 0 {
			over++
			fmt.Fprintf(out, " **%s** |\n", strings.Join(flags, ", "))
		} else {
			fmt.Fprintln(out, " |")
		}
	}
	fmt.Fprintf(out, "\n%d rows over target (p95 > %.0f ms at %d, or p95 growth > %.0f× from %d, except on deep pages;\n"+
		"a growth flag to a p95 under %.0f ms says so: such figures double with the machine's load alone).\n",
		over, targetP95, runs[len(runs)-1].Scale, targetGrowth, runs[0].Scale, growthFloor)
	return nil
}
