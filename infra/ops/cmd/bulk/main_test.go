package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/mediacatalog/service/infra/local/demo"
	"github.com/mediacatalog/service/infra/ops/bulk"
	"github.com/mediacatalog/service/infra/tests/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// TestPurgeNeedsTheName: a purge deletes nothing unless -confirm is the client's name,
// and a run without it names the client the id belongs to; an id of no client is
// refused as such.
func TestPurgeNeedsTheName(t *testing.T) {
	db := testenv.NewDemoDB(t)
	ctx := t.Context()
	if err := demo.Generate(ctx, db.DB, 2, 50); err != nil {
		t.Fatal(err)
	}
	name := db.Text(t, `SELECT name FROM clients WHERE id = 2`)
	getenv := func(k string) string { return map[string]string{"DATABASE_URL": db.URL}[k] }
	series := func(client int64) int64 { return db.Int(t, `SELECT count(*) FROM series WHERE client_id = $1`, client) }
	demoSeries := series(demo.Client)
	for _, c := range []struct {
		name    string
		args    []string
		refused string
		left    int64 // client 2's series after the run
	}{
		{"no confirmation", []string{"purge-client", "-client", "2"}, `client 2 is "` + name + `"`, 50},
		{"another client's name", []string{"purge-client", "-client", "2", "-confirm", db.Text(t, `SELECT name FROM clients WHERE id = 1`)}, `client 2 is "` + name + `"`, 50},
		{"the name with a space", []string{"purge-client", "-client", "2", "-confirm", name + " "}, `client 2 is "` + name + `"`, 50},
		{"no such client", []string{"purge-client", "-client", "99", "-confirm", name}, "no such client", 50},
		{"confirmed", []string{"purge-client", "-client", "2", "-confirm", name}, "", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out strings.Builder
			err := run(ctx, c.args, getenv, &out)
			switch {
			case c.refused == "" && err != nil:
				t.Errorf("bulk %v: %v", c.args, err)
			case c.refused != "" && (err == nil || !strings.Contains(err.Error(), c.refused)):
				t.Errorf("bulk %v: %v, want it refused saying %q", c.args, err, c.refused)
			}
			if got := series(2); got != c.left {
				t.Errorf("client 2 has %d series after bulk %v, want %d", got, c.args, c.left)
			}
			if got := series(demo.Client); got != demoSeries {
				t.Errorf("the demo client's series went from %d to %d", demoSeries, got)
			}
		})
	}
	if _, err := bulk.DescribeClient(ctx, db.Pool, 2); !errors.Is(err, bulk.ErrNoClient) {
		t.Errorf("client 2 after its purge: %v, want %v", err, bulk.ErrNoClient)
	}
}
