// Command benchexact compares thresholds T of the exactly counted matches of a search
// or filter (postgres.DB.MaxExact, docs/queries.md) on a generated catalog. Run it under
// withstack with the folder of a catalog that make bench-scale generated:
//
//	go run ./infra/local/cmd/withstack -dir .scale/1000000 -- \
//	    go run ./infra/bench/cmd/benchexact -t 1000,2000,5000,10000 -n 200
//
// It times the store call of each broad search and filter of the paged lists, and a
// fixed reference statement, taking the thresholds in turn within each round (one
// request of each case at each T, then the next round), so that a change of the
// machine's speed during the run (the VM is shared) falls on every T alike; make
// bench-scale's routes run one after the other and cannot be compared that way. It
// prints p50/p95/p99 per case and T. The figures are the store's, without HTTP.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mediacatalog/service/infra/cmdrun"
	"github.com/mediacatalog/service/infra/local/demo"
	"github.com/mediacatalog/service/shared/catalog"
	"github.com/mediacatalog/service/shared/postgres"
)

func main() {
	cmdrun.Main("benchexact", func(ctx context.Context) error { return run(ctx, os.Args[1:], os.Getenv, os.Stdout) })
}

// client is the generated catalog's client (as make bench-scale generates it).
const client = 2

// benchCase is one page of a list, read on a DB with some T.
type benchCase struct {
	label string
	read  func(ctx context.Context, db *postgres.DB) error
}

func run(ctx context.Context, args []string, getenv func(string) string, out io.Writer) error {
	fs := flag.NewFlagSet("benchexact", flag.ContinueOnError)
	fs.SetOutput(out)
	ts := fs.String("t", "1000,2000,5000,10000", "thresholds to compare, comma-separated")
	n := fs.Int("n", 200, "rounds (after a warm-up of n/10)")
	match := fs.String("match", "", "only the cases whose label contains one of these texts (separated by |)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var thresholds []int64
	for _, s := range strings.Split(*ts, ",") {
		t, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil || t <= 0 {
			return fmt.Errorf("-t: %q is not a positive threshold", s)
		}
		thresholds = append(thresholds, t)
	}
	db, err := postgres.Open(ctx, getenv("DATABASE_URL"))
	if err != nil {
		return err
	}
	defer db.Close()
	var big int64
	if err := db.Pool.QueryRow(ctx, `SELECT id FROM publishers WHERE slug = $1`,
		demo.GeneratedPublisherSlug(client, 1)).Scan(&big); err != nil {
		return fmt.Errorf("the large publisher (generate the catalog with make bench-scale): %w", err)
	}
	var blue int64 // the large publisher's series matching Blue
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM series_publishers
		WHERE publisher_id = $1 AND client_id = $2 AND search LIKE '%blue%'`, big, client).Scan(&blue); err != nil {
		return err
	}
	var cases []benchCase
	for _, c := range benchCases(big, blue) {
		if slices.ContainsFunc(strings.Split(*match, "|"), func(m string) bool { return strings.Contains(c.label, m) }) {
			cases = append(cases, c)
		}
	}
	// times[case][threshold] holds the round's milliseconds.
	times := make([][][]float64, len(cases))
	for i := range times {
		times[i] = make([][]float64, len(thresholds))
	}
	dbs := make([]*postgres.DB, len(thresholds))
	for j, t := range thresholds {
		d := *db
		d.MaxExact = t
		dbs[j] = &d
	}
	warm := max(1, *n/10)
	for round := range warm + *n {
		for i, c := range cases {
			for j := range thresholds {
				start := time.Now()
				if err := c.read(ctx, dbs[j]); err != nil {
					return fmt.Errorf("%s at T=%d: %w", c.label, thresholds[j], err)
				}
				if round >= warm {
					times[i][j] = append(times[i][j], float64(time.Since(start).Microseconds())/1000)
				}
			}
		}
	}
	for i, c := range cases {
		for j, t := range thresholds {
			p50, p95, p99 := percentiles(times[i][j])
			fmt.Fprintf(out, "%-70s T=%-6d p50 %7.1f  p95 %7.1f  p99 %7.1f ms\n", c.label, t, p50, p95, p99)
		}
	}
	return nil
}

// benchCases are the broad searches and filters of make bench-scale's routes (big is
// the large publisher, blue the number of its series matching Blue), the deep pages of
// the Blue search (the last page before T, the first at T, the middle and the last of
// the list) and the reference statement (the same work at every size and T).
func benchCases(big, blue int64) []benchCase {
	pubs := func(search, order string, offset int64) func(context.Context, *postgres.DB) error {
		return func(ctx context.Context, db *postgres.DB) error {
			_, err := db.PublisherPublications(ctx, catalog.PublicationFilter{Publisher: big, Client: client,
				Search: search, Order: order, Language: catalog.DefaultLanguage, Limit: 20, Offset: offset})
			return err
		}
	}
	contributors := func(search string) func(context.Context, *postgres.DB) error {
		return func(ctx context.Context, db *postgres.DB) error {
			_, err := db.Contributors(ctx, catalog.ContributorQuery{Client: client, Search: search, Limit: 20})
			return err
		}
	}
	users := func(search string, role int64) func(context.Context, *postgres.DB) error {
		return func(ctx context.Context, db *postgres.DB) error {
			_, err := db.Users(ctx, catalog.UserQuery{Search: search, Role: role, Limit: 20})
			return err
		}
	}
	return []benchCase{
		{"publications search=Blue (first page)", pubs("Blue", catalog.PublisherOrderNameAsc, 0)},
		{"publications search=Blue order=added-desc (first page)", pubs("Blue", catalog.PublisherOrderAddedDesc, 0)},
		{"publications search=Blue offset=<T>", func(ctx context.Context, db *postgres.DB) error {
			return pubs("Blue", catalog.PublisherOrderNameAsc, db.MaxExact)(ctx, db)
		}},
		{"publications search=Blue offset=<T-20>", func(ctx context.Context, db *postgres.DB) error {
			return pubs("Blue", catalog.PublisherOrderNameAsc, db.MaxExact-20)(ctx, db)
		}},
		{"publications search=Blue offset=<middle page>", pubs("Blue", catalog.PublisherOrderNameAsc, max(0, blue/2-10))},
		{"publications search=Blue offset=<last page>", pubs("Blue", catalog.PublisherOrderNameAsc, max(0, blue-20))},
		{"publications search=Blue order=added-desc offset=<middle page>", pubs("Blue", catalog.PublisherOrderAddedDesc, max(0, blue/2-10))},
		{"contributors search=ta", contributors("ta")},
		{"contributors search=kobayashi", contributors("kobayashi")},
		{"users search=otaku", users("otaku", 0)},
		{"users role=<member>", users("", demo.MemberRoleID)},
		{"(reference statement: count(*) over generate_series(1, 50000))", func(ctx context.Context, db *postgres.DB) error {
			_, err := db.Pool.Exec(ctx, `SELECT count(*) FROM generate_series(1, 50000)`)
			return err
		}},
	}
}

// percentiles returns the p50, p95 and p99 of ms (sorted in place).
func percentiles(ms []float64) (p50, p95, p99 float64) {
	if len(ms) == 0 {
		return 0, 0, 0
	}
	slices.Sort(ms)
	pct := func(p float64) float64 { return ms[min(len(ms)-1, int(p*float64(len(ms))))] }
	return pct(0.50), pct(0.95), pct(0.99)
}
