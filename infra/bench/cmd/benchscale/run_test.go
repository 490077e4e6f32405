package main

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mediacatalog/service/infra/tests/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// dataState is what the benchmark's writes must leave as they found it: the rows of
// the tables they write (sessions, locks and the admin's connection aside: logging a
// user out and opening a detail are what those routes do).
const dataState = `SELECT concat_ws(' | ',
	(SELECT count(*) || ':' || md5(coalesce(string_agg(id || ',' || username || ',' || age_verified, ';' ORDER BY id), '')) FROM users),
	(SELECT count(*) || ':' || md5(coalesce(string_agg(user_id || ',' || role_id, ';' ORDER BY user_id, role_id), '')) FROM user_roles),
	(SELECT count(*) || ':' || md5(coalesce(string_agg(id || ',' || name || ',' || coalesce(description, ''), ';' ORDER BY id), '')) FROM roles),
	(SELECT count(*) || ':' || md5(coalesce(string_agg(role_id || ',' || permission_id, ';' ORDER BY role_id, permission_id), '')) FROM role_permissions),
	(SELECT count(*) || ':' || md5(coalesce(string_agg(id || ',' || name || ',' || description, ';' ORDER BY id), '')) FROM permissions),
	(SELECT count(*) || ':' || md5(coalesce(string_agg(id || ',' || first_name || ',' || coalesce(last_name, '') || ',' || public, ';' ORDER BY id), '')) FROM contributors),
	(SELECT string_agg(id || ':' || contributor_count || ':' || publisher_count, ';' ORDER BY id) FROM clients),
	(SELECT n FROM user_count))`

// The whole benchmark on a small generated catalog, a few requests per route: every
// entry answers 200 (a write's error fails the run), every entry has its result, and
// the writes leave the data as they found it.
func TestRunEveryEntry(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL, dynalite and an S3 server")
	}
	db := testenv.NewDemoDB(t)
	_, stateTable, rateTable := testenv.DynamoTables(t)
	env := map[string]string{
		"DATABASE_URL":      db.URL,
		"DYNAMODB_ENDPOINT": testenv.DynamoEndpoint(t),
		"OAUTH_STATE_TABLE": stateTable,
		"RATE_LIMIT_TABLE":  rateTable,
		"S3_ENDPOINT":       testenv.S3Endpoint(t),
		"S3_BUCKET":         os.Getenv("S3_BUCKET"),
	}
	ln, err := net.Listen("tcp", "localhost:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	ctx := context.Background()
	dir := t.TempDir()
	args := func(out string) []string {
		return []string{"-scale", "1000", "-port", strconv.Itoa(port), "-n", "5", "-fresh", "0",
			"-server-log", filepath.Join(dir, "server.log"), "-out", out}
	}
	getenv := func(k string) string { return env[k] }
	var log strings.Builder
	// The first run generates the catalog; the state is taken after it, and a second
	// run must leave it as it was.
	if err := run(ctx, args(filepath.Join(dir, "first.json")), getenv, &log); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	before := db.Text(t, dataState)
	out := filepath.Join(dir, "second.json")
	if err := run(ctx, args(out), getenv, &log); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if after := db.Text(t, dataState); after != before {
		t.Errorf("the writes changed the data:\nbefore %s\nafter  %s", before, after)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var res Run
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	got := map[string]Result{}
	for _, r := range res.Results {
		got[r.key()] = r
	}
	for _, r := range benchRoutes(testAPI(t), someShape(), nil) {
		label := r.label
		if !strings.HasPrefix(label, r.verb()+" ") {
			label = r.verb() + " " + label
		}
		x, ok := got[label]
		if !ok {
			t.Errorf("no result for %s", label)
			continue
		}
		if x.Status != 200 || x.Requests != 5 || x.P95 <= 0 {
			t.Errorf("%s: %+v", label, x)
		}
	}
}
