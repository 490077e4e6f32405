// Command rehearsal applies the migrations that the previous release did not have to a
// copy of a large generated catalog while probes send the service's reads and writes,
// and reports per migration its time, the longest wait of any probe, and the probes'
// timeouts and deadlocks (make migrate-rehearsal; a benchmark, not part of make test):
//
//	go run ./infra/local/cmd/withstack -dir .scale/rehearsal -- go run ./infra/bench/cmd/rehearsal -scale 1000000 -from 17
//
// The catalog is generated once at version -from into a template database, kept for
// later runs; each run copies it and migrates the copy, which it drops at the end.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	iofs "io/fs"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mediacatalog/service/infra/cmdrun"
	"github.com/mediacatalog/service/infra/local/demo"
	"github.com/mediacatalog/service/infra/local/localservices"
	"github.com/mediacatalog/service/shared/namekey"
	"github.com/mediacatalog/service/shared/postgres"
	"github.com/mediacatalog/service/shared/postgres/migrate"
)

// client is the generated catalog's client (the demo catalog is client 1).
const client = 2

func main() {
	cmdrun.Main("rehearsal", func(ctx context.Context) error { return run(ctx, os.Args[1:], os.Getenv, os.Stdout) })
}

func run(ctx context.Context, args []string, getenv func(string) string, out io.Writer) error {
	fs := flag.NewFlagSet("rehearsal", flag.ContinueOnError)
	scale := fs.Int("scale", 1_000_000, "series in the generated catalog")
	from := fs.Int64("from", 17, "the schema version of the previous release (17: the baseline)")
	every := fs.Duration("every", 500*time.Millisecond, "pause between two rounds of a probe")
	if err := fs.Parse(args); err != nil {
		return err
	}
	server := getenv("DATABASE_URL")
	if server == "" {
		return errors.New("DATABASE_URL is not set (run it through infra/local/cmd/withstack)")
	}
	base := fmt.Sprintf("rehearsal_v%d_%d", *from, *scale)
	if err := prepare(ctx, server, base, *from, *scale, out); err != nil {
		return err
	}
	target := fmt.Sprintf("rehearsal_run_%d", time.Now().Unix())
	if err := localservices.AdminExec(ctx, server, fmt.Sprintf("CREATE DATABASE %s TEMPLATE %s", target, base)); err != nil {
		return fmt.Errorf("copy the catalog: %w", err)
	}
	defer func() {
		_ = localservices.AdminExec(context.Background(), server, fmt.Sprintf("DROP DATABASE IF EXISTS %s WITH (FORCE)", target))
	}()
	url := localservices.WithDatabase(server, target)

	rec := &recorder{}
	probeCtx, stopProbes := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, p := range probes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runProbe(probeCtx, url, p, *every, rec)
		}()
	}
	time.Sleep(2 * *every) // the probes' connections are open and warm before the first migration
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	var rows []row
	for {
		start := time.Now()
		results, err := migrate.Apply(ctx, url, migrate.Files(), migrate.Options{Log: log, To: nextVersion(ctx, url)})
		if err != nil {
			stopProbes()
			wg.Wait()
			return err
		}
		if len(results) == 0 {
			break
		}
		end := time.Now()
		for _, r := range results {
			rows = append(rows, row{result: r, stats: rec.between(start, end)})
		}
	}
	// make migrate's Go step (migrate.Up): the users' name keys, batched, under the
	// same probes.
	start := time.Now()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		stopProbes()
		wg.Wait()
		return err
	}
	_, err = namekey.Fill(ctx, conn)
	conn.Close(ctx)
	if err != nil {
		stopProbes()
		wg.Wait()
		return err
	}
	rows = append(rows, row{result: migrate.Result{File: "namekey.Fill (make migrate's Go step)", Duration: time.Since(start)},
		stats: rec.between(start, time.Now())})
	time.Sleep(2 * *every)
	stopProbes()
	wg.Wait()
	all := rec.between(time.Time{}, time.Now())
	printTable(out, *scale, *from, rows, all)
	return verdict(all)
}

// verdict is the rehearsal's target: no probe waits over a second, none times out, no
// deadlock. Its error makes the command, and so make migrate-rehearsal, fail.
func verdict(all stats) error {
	if all.longest > time.Second || all.timeouts > 0 || all.deadlocks > 0 {
		return fmt.Errorf("FAIL: longest probe wait %s (%s), %d timeouts, %d deadlocks: the target is no wait over 1 s, no timeout, no deadlock",
			all.longest.Round(time.Millisecond), all.longestProbe, all.timeouts, all.deadlocks)
	}
	return nil
}

// nextVersion is the version after the database's current one among the embedded
// migrations (0 when none is pending), so that each migration is timed alone.
func nextVersion(ctx context.Context, url string) int64 {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return 0
	}
	defer conn.Close(ctx)
	var current int64
	if err := conn.QueryRow(ctx, `SELECT coalesce(max(version_id), 0) FROM goose_db_version WHERE is_applied`).Scan(&current); err != nil {
		return 0
	}
	for _, v := range versions() {
		if v > current {
			return v
		}
	}
	return current
}

// prepare generates the catalog at version from into the template database base,
// unless an earlier run did.
func prepare(ctx context.Context, server, base string, from int64, scale int, out io.Writer) error {
	conn, err := pgx.Connect(ctx, server)
	if err != nil {
		return err
	}
	var exists bool
	err = conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, base).Scan(&exists)
	conn.Close(ctx)
	if err != nil || exists {
		return err
	}
	fmt.Fprintf(out, "generating a catalog of %d series at version %d into %s (once)\n", scale, from, base)
	building := base + "_building"
	_ = localservices.AdminExec(ctx, server, "DROP DATABASE IF EXISTS "+building+" WITH (FORCE)")
	if err := localservices.AdminExec(ctx, server, "CREATE DATABASE "+building); err != nil {
		return err
	}
	url := localservices.WithDatabase(server, building)
	if _, err := migrate.Apply(ctx, url, migrate.Files(), migrate.Options{To: from}); err != nil {
		return err
	}
	db, err := postgres.Open(ctx, url)
	if err != nil {
		return err
	}
	start := time.Now()
	err = demo.Load(ctx, db)
	if err == nil {
		err = demo.Generate(ctx, db, client, scale, demo.Progress(out))
	}
	db.Close()
	if err != nil {
		return fmt.Errorf("generate the catalog at version %d: %w", from, err)
	}
	fmt.Fprintf(out, "catalog ready in %s\n", time.Since(start).Round(time.Second))
	return localservices.AdminExec(ctx, server, fmt.Sprintf("ALTER DATABASE %s RENAME TO %s", building, base))
}

// probe is one of the service's statements, run as the release before the migrations
// runs it: under the roles' statement timeout, in a transaction of its own.
type probe struct {
	name  string
	write bool
	sql   string
	args  func(round int) []any
}

// probes read and write what the routes read and write at the baseline's schema: the
// lists and searches of each paged route, the authentication query, and the writes of
// the admin routes, each against the generated client's rows.
var probes = []probe{
	{name: "publishers list", sql: `SELECT id, name FROM publishers WHERE client_id = $1 ORDER BY name, id LIMIT 20`,
		args: func(int) []any { return []any{client} }},
	{name: "publications search", sql: `SELECT series_id, name FROM series_publishers
		WHERE publisher_id = (SELECT min(id) FROM publishers WHERE client_id = $1) AND client_id = $1 AND search LIKE '%' || $2 || '%'
		ORDER BY name, series_id LIMIT 20`, args: func(int) []any { return []any{client, "ka"} }},
	{name: "contributors search", sql: `SELECT id, first_name FROM contributors WHERE client_id = $1 AND search LIKE '%' || $2 || '%'
		ORDER BY first_name, id LIMIT 20`, args: func(int) []any { return []any{client, "ta"} }},
	{name: "users list", sql: `SELECT id, username FROM users ORDER BY username, id LIMIT 20`, args: func(int) []any { return nil }},
	{name: "authentication", sql: `SELECT u.id, array_agg(DISTINCT p.key) FROM users u
		LEFT JOIN user_roles ur ON ur.user_id = u.id LEFT JOIN role_permissions rp ON rp.role_id = ur.role_id
		LEFT JOIN permissions p ON p.id = rp.permission_id WHERE u.id = $1 GROUP BY u.id`,
		args: func(int) []any { return []any{demo.AdminUserID} }},
	{name: "contributor add and delete", write: true, sql: `WITH c AS (INSERT INTO contributors (client_id, first_name, slug)
		VALUES ($1, $2, $2) RETURNING id) DELETE FROM contributors WHERE id = (SELECT id FROM c)`,
		args: func(round int) []any { return []any{client, fmt.Sprintf("probe-%d-%d", time.Now().UnixNano(), round)} }},
	{name: "contributor rename", write: true, sql: `UPDATE contributors SET last_name = $2
		WHERE id = (SELECT min(id) FROM contributors WHERE client_id = $1)`,
		args: func(round int) []any { return []any{client, fmt.Sprintf("probe %d", round)} }},
	{name: "publisher link", write: true, sql: `WITH l AS (INSERT INTO series_publishers (series_id, publisher_id)
		SELECT (SELECT max(id) FROM series WHERE client_id = $1), (SELECT max(id) FROM publishers WHERE client_id = $1)
		ON CONFLICT DO NOTHING RETURNING series_id, publisher_id)
		DELETE FROM series_publishers sp USING l WHERE sp.series_id = l.series_id AND sp.publisher_id = l.publisher_id`,
		args: func(int) []any { return []any{client} }},
	{name: "user rename", write: true, sql: `UPDATE users SET username = username WHERE id = $1`,
		args: func(int) []any { return []any{demo.MemberUserID} }},
}

// sample is one probe round.
type sample struct {
	probe    string
	at       time.Time
	took     time.Duration
	timeout  bool
	deadlock bool
	err      string
}

type recorder struct {
	mu      sync.Mutex
	samples []sample
}

func (r *recorder) add(s sample) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.samples = append(r.samples, s)
}

// stats are the probes' figures over a span of time.
type stats struct {
	rounds, timeouts, deadlocks, errors int
	longest                             time.Duration
	longestProbe                        string
	firstError                          string
}

// between sums the rounds that started in [from, to] or were running then.
func (r *recorder) between(from, to time.Time) stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	var st stats
	for _, s := range r.samples {
		if s.at.Add(s.took).Before(from) || s.at.After(to) {
			continue
		}
		st.rounds++
		if s.took > st.longest {
			st.longest, st.longestProbe = s.took, s.probe
		}
		switch {
		case s.timeout:
			st.timeouts++
		case s.deadlock:
			st.deadlocks++
		case s.err != "":
			st.errors++
			if st.firstError == "" {
				st.firstError = s.probe + ": " + s.err
			}
		}
	}
	return st
}

// runProbe runs p every pause on a connection of its own until ctx ends.
func runProbe(ctx context.Context, url string, p probe, pause time.Duration, rec *recorder) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		rec.add(sample{probe: p.name, at: time.Now(), err: err.Error()})
		return
	}
	defer conn.Close(context.Background())
	// The functions' database roles run with this statement timeout.
	if _, err := conn.Exec(ctx, `SET statement_timeout = '5s'`); err != nil {
		rec.add(sample{probe: p.name, at: time.Now(), err: err.Error()})
		return
	}
	for round := 0; ctx.Err() == nil; round++ {
		start := time.Now()
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			rows, err := tx.Query(ctx, p.sql, p.args(round)...)
			if err != nil {
				return err
			}
			rows.Close()
			return rows.Err()
		})
		s := sample{probe: p.name, at: start, took: time.Since(start)}
		var pgErr *pgconn.PgError
		switch {
		case err == nil:
		case ctx.Err() != nil:
			return
		case errors.As(err, &pgErr) && pgErr.Code == "57014":
			s.timeout = true
		case errors.As(err, &pgErr) && pgErr.Code == "40P01":
			s.deadlock = true
		default:
			s.err = err.Error()
		}
		rec.add(s)
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
		}
	}
}

type row struct {
	result migrate.Result
	stats  stats
}

func printTable(out io.Writer, scale int, from int64, rows []row, all stats) {
	fmt.Fprintf(out, "\nmigrations after version %d on a catalog of %d series, %d probes every round\n\n", from, scale, len(probes))
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "migration\ttime\tlock retries\tlongest probe wait\tprobe\ttimeouts\tdeadlocks\terrors")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%d\t%d\t%d\n", r.result.File, r.result.Duration.Round(time.Millisecond), r.result.Retries,
			r.stats.longest.Round(time.Millisecond), r.stats.longestProbe, r.stats.timeouts, r.stats.deadlocks, r.stats.errors)
	}
	fmt.Fprintf(tw, "whole run\t\t\t%s\t%s\t%d\t%d\t%d\n", all.longest.Round(time.Millisecond), all.longestProbe, all.timeouts, all.deadlocks, all.errors)
	tw.Flush()
	if len(rows) == 0 {
		fmt.Fprintln(out, "(no migration after that version)")
	}
	if all.firstError != "" {
		fmt.Fprintln(out, "first probe error:", all.firstError)
	}
	result := "PASS"
	if verdict(all) != nil {
		result = "FAIL"
	}
	fmt.Fprintf(out, "\ntarget: no probe waits over 1 s, no deadlock, no timeout: %s\n", result)
}

// versions are the embedded migrations' versions, in order.
func versions() []int64 {
	entries, err := iofs.ReadDir(migrate.Files(), ".")
	if err != nil {
		return nil
	}
	var vs []int64
	for _, e := range entries {
		var v int64
		if _, err := fmt.Sscanf(e.Name(), "%d_", &v); err == nil && strings.HasSuffix(e.Name(), ".sql") {
			vs = append(vs, v)
		}
	}
	slices.Sort(vs)
	return vs
}
