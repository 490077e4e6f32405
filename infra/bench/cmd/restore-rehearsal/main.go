// Command restore-rehearsal rehearses the restore procedure of docs/operations.md on
// the local stack, end to end (make restore-rehearsal; a short run is in make test):
//
//  1. a PostgreSQL cluster archiving its WAL (archive_command), with the demo data and a
//     generated catalog of -scale series, the API served in this process on it (the
//     admin-users and cdn groups) and a versioned bucket (moto's S3, which implements
//     versioning as S3 does);
//  2. a base backup (pg_basebackup), then a mixed workload through the API, before and
//     after a restore point T: uploads, picture deletes, user deletes, forced logouts,
//     renames, logins, and a writer acknowledging a row every few milliseconds;
//  3. the restore: a point-in-time recovery of the base backup and the archived WAL to T
//     into a new cluster, the migrations, restore-revocations with the audit records
//     the server logged, the API served from the new cluster, and reconcile-images;
//  4. the checks: every picture a row names is served by the cdn (the bytes uploaded),
//     no current object is unnamed, no session from before the restore is accepted,
//     the acknowledged writes before T are present and those after T absent (the
//     revocations after T made again); then RPO and RTO.
//
// It exits non-zero when a check fails. -skip-reconcile and -skip-cutoff leave a step
// out, to show the check that then fails (the test restores the same backup three
// times: without the reconcile, without the mark, and whole).
//
//	go run ./infra/bench/cmd/restore-rehearsal -scale 1000000 -dir .scale/restore
//
// With -dir the primary cluster (and its generated catalog) is kept for later runs;
// each run's backup, archive and restored clusters are made in a folder of their own
// and removed at the end (-keep keeps them).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mediacatalog/service/infra/cmdrun"
)

func main() {
	cmdrun.Main("restore-rehearsal", func(ctx context.Context) error {
		o, err := parse(os.Args[1:], os.Stdout)
		if err != nil {
			return err
		}
		outcomes, err := rehearse(ctx, o)
		if err != nil {
			return err
		}
		for _, res := range outcomes {
			if failed := res.failed(); len(failed) > 0 {
				return fmt.Errorf("FAIL: %s", strings.Join(failed, "; "))
			}
		}
		return nil
	})
}

// options are the rehearsal's flags.
type options struct {
	scale    int
	users    int
	dir      string
	keep     bool
	variants []variant // the restores of the one backup, in order
	out      io.Writer
}

// variant is one restore of the backup: the whole procedure, or one with a step left out.
type variant struct {
	skipReconcile bool
	skipCutoff    bool
}

func (v variant) String() string {
	switch {
	case v.skipReconcile && v.skipCutoff:
		return "without reconcile-images and the sessions-valid-after mark"
	case v.skipReconcile:
		return "without reconcile-images"
	case v.skipCutoff:
		return "without the sessions-valid-after mark"
	}
	return "the whole procedure"
}

func parse(args []string, out io.Writer) (options, error) {
	o := options{out: out}
	fs := flag.NewFlagSet("restore-rehearsal", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.IntVar(&o.scale, "scale", 10000, "series of the generated catalog (0: the demo catalog only)")
	fs.IntVar(&o.users, "users", 40, "users of the workload, each with a picture (at least 8)")
	fs.StringVar(&o.dir, "dir", "", "keep the primary cluster (and its catalog) in this folder for later runs (default: a temporary one)")
	fs.BoolVar(&o.keep, "keep", false, "keep the run's backup, WAL archive, restored clusters and logs")
	var v variant
	fs.BoolVar(&v.skipReconcile, "skip-reconcile", false, "leave reconcile-images out (a check then fails)")
	fs.BoolVar(&v.skipCutoff, "skip-cutoff", false, "leave the sessions-valid-after mark out (a check then fails)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	o.variants = []variant{v}
	if o.users < 8 {
		return o, errors.New("-users: at least 8 (the workload gives each of eight kinds of change a user)")
	}
	return o, nil
}

// step is a timed step of the rehearsal.
type step struct {
	name string
	took time.Duration
}

// outcome is what a rehearsal measured and found.
type outcome struct {
	variant variant
	steps   []step
	checks  []check
	rpo     time.Duration
	rto     time.Duration
	lost    time.Duration // the writes' span after T, which the restore gives up by design
}

// failed lists the checks that failed.
func (o outcome) failed() []string {
	var names []string
	for _, c := range o.checks {
		if !c.ok {
			names = append(names, c.name)
		}
	}
	return names
}

func rehearse(ctx context.Context, o options) ([]outcome, error) {
	start := time.Now()
	var steps *[]step
	timed := func(name string, fn func() error) error {
		t := time.Now()
		err := fn()
		*steps = append(*steps, step{name, time.Since(t)})
		fmt.Fprintf(o.out, "%-58s %s\n", name, time.Since(t).Round(time.Millisecond))
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	}
	var prep []step
	steps = &prep
	root := o.dir
	if root == "" {
		tmp, err := os.MkdirTemp("", "restore-rehearsal-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		// PostgreSQL runs as its own user when this process is root: it must enter.
		if err := os.Chmod(tmp, 0o755); err != nil {
			return nil, err
		}
		root = tmp
	}
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	run := filepath.Join(root, "run-"+time.Now().UTC().Format("20060102T150405"))
	if err := os.MkdirAll(run, 0o755); err != nil {
		return nil, err
	}
	if !o.keep {
		defer os.RemoveAll(run)
	}
	r := &rehearsal{o: o, root: root, run: run, timed: timed}
	defer r.close()

	if err := r.prepare(ctx); err != nil {
		return nil, err
	}
	if err := r.workload(ctx); err != nil {
		return nil, err
	}
	if err := r.disaster(); err != nil {
		return nil, err
	}
	var outcomes []outcome
	for i, v := range o.variants {
		res := outcome{variant: v}
		steps = &res.steps
		fmt.Fprintf(o.out, "\nrestore %d of %d: %s\n", i+1, len(o.variants), v)
		// The disaster is declared: from here the clock of the RTO runs.
		declared := time.Now()
		if err := r.restore(ctx, v, i); err != nil {
			return outcomes, err
		}
		res.rto = time.Since(declared)
		res.checks = r.check(ctx)
		res.rpo, res.lost = r.rpo()
		r.endRestore()
		report(o.out, o, res, time.Since(start))
		outcomes = append(outcomes, res)
	}
	return outcomes, nil
}

func report(w io.Writer, o options, res outcome, total time.Duration) {
	fmt.Fprintf(w, "\nrestore rehearsal: %d series, %d workload users, %s (%s in all so far)\n\n", o.scale, o.users, res.variant, total.Round(time.Second))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "check\tresult\tdetail")
	for _, c := range res.checks {
		verdict := "PASS"
		if !c.ok {
			verdict = "FAIL"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", c.name, verdict, c.detail)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nRPO: %s (the newest acknowledged write before the restore point that the restored database holds was sent that long before it; nothing acknowledged before it is lost)\n",
		res.rpo.Round(time.Millisecond))
	fmt.Fprintf(w, "     the %s of writes after the restore point are given up by design (the revocations among them made again)\n", res.lost.Round(time.Millisecond))
	fmt.Fprintf(w, "RTO: %s (from the disaster declared to the service answering from the restored database with every picture back)\n", res.rto.Round(time.Millisecond))
}
