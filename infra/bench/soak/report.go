package soak

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"strings"
	"time"
)

// print writes the report: the samples at the start, every summary step and at the
// end (a Markdown table, as docs/performance.md holds it), the faults, the growth
// over the judged window, the answers by class and status, the unexpected ones, and
// the verdict.
func (r *run) print(rep *Report) {
	out := r.o.Out
	step := 10 * time.Minute
	if rep.Duration < 30*time.Minute {
		step = rep.Duration / 6
	}
	fmt.Fprintf(out, "\nThe server at the start, every %s and at the end:\n\n", step)
	fmt.Fprintln(out, "| at | requests | RSS MiB | of it anonymous | Go heap in use MiB | heap live MiB | heap objects | goroutines | open files |")
	fmt.Fprintln(out, "|---|---|---|---|---|---|---|---|---|")
	taken := map[int64]bool{}
	for i, s := range rep.Samples {
		k := int64(math.Round(float64(s.At) / float64(step)))
		near := k >= 1 && (s.At-time.Duration(k)*step).Abs() <= r.o.Interval/2 && !taken[k]
		if i != 0 && i != len(rep.Samples)-1 && !near {
			continue
		}
		taken[k] = taken[k] || near
		at := s.At.Round(time.Minute).String()
		if s.Label != "" {
			at = s.Label
		} else if step < time.Minute {
			at = s.At.Round(time.Second).String()
		}
		fmt.Fprintf(out, "| %s | %d | %.1f | %.1f | %.1f | %.1f | %d | %d | %d |\n",
			at, s.Requests, mib(s.RSSBytes), mib(s.AnonBytes), mib(s.HeapInuse), mib(s.HeapLive), s.HeapObjects, s.Goroutines, s.OpenFiles)
	}
	fmt.Fprintln(out)
	for _, f := range rep.Faults {
		fmt.Fprintf(out, "fault: %s from %s to %s\n", f.Name, f.Start.Round(100*time.Millisecond), f.End.Round(100*time.Millisecond))
	}
	fmt.Fprintf(out, "growth from %s to the end (the line through the samples; bound: the larger of the absolute one and a share of the median):\n",
		rep.JudgedFrom.Round(time.Second))
	for _, g := range rep.Growth {
		fmt.Fprintf(out, "  %s\n", g)
	}

	statuses := map[int]bool{}
	for _, m := range rep.Counts {
		for s := range m {
			statuses[s] = true
		}
	}
	cols := slices.Sorted(maps.Keys(statuses))
	outside, inside := map[string]int{}, map[string]int{}
	for _, o := range rep.Outside {
		outside[o.Class]++
	}
	for _, o := range rep.Inside {
		inside[o.Class]++
	}
	fmt.Fprintf(out, "\nAnswers by route class and status (0: no answer); unexpected ones and failed checks, outside and during the faults (with %s after each):\n\n", r.o.Grace)
	head := []string{"class", "requests"}
	for _, c := range cols {
		head = append(head, fmt.Sprint(c))
	}
	head = append(head, "unexpected", "during faults")
	fmt.Fprintln(out, "| "+strings.Join(head, " | ")+" |")
	fmt.Fprintln(out, "|"+strings.Repeat("---|", len(head)))
	var total int64
	for _, class := range Classes {
		m := rep.Counts[class]
		var n int64
		for _, v := range m {
			n += v
		}
		total += n
		row := []string{class, fmt.Sprint(n)}
		for _, c := range cols {
			row = append(row, fmt.Sprint(m[c]))
		}
		row = append(row, fmt.Sprint(outside[class]), fmt.Sprint(inside[class]))
		fmt.Fprintln(out, "| "+strings.Join(row, " | ")+" |")
	}
	fmt.Fprintf(out, "\n%d requests in %s (%.0f/s)\n", total, rep.Duration, float64(total)/rep.Duration.Seconds())
	show := func(title string, os []outcome) {
		if len(os) == 0 {
			return
		}
		fmt.Fprintf(out, "%s (%d; the first 20):\n", title, len(os))
		for _, o := range os[:min(20, len(os))] {
			fmt.Fprintf(out, "  %s %-11s %-45s %4d  %s\n", o.Start.Sub(r.start).Round(time.Millisecond), o.Class, o.Route, o.Status, o.Detail)
		}
	}
	if len(rep.Inside) > 0 {
		type key struct {
			route  string
			status int
		}
		byKey := map[key]int{}
		for _, o := range rep.Inside {
			byKey[key{o.Route, o.Status}]++
		}
		keys := slices.SortedFunc(maps.Keys(byKey), func(a, b key) int { return byKey[b] - byKey[a] })
		fmt.Fprintf(out, "during the faults (%d), by route and status (0: no answer, -1: a failed check, 302: an OAuth error redirect):\n", len(rep.Inside))
		for _, k := range keys[:min(12, len(keys))] {
			fmt.Fprintf(out, "  %6d  %4d  %s\n", byKey[k], k.status, k.route)
		}
	}
	show("UNEXPECTED outside the faults", rep.Outside)
	if rep.Passed() {
		fmt.Fprintln(out, "soak: PASS")
		return
	}
	for _, f := range rep.Failures {
		fmt.Fprintln(out, "soak: FAIL:", f)
	}
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
