package bulk_test

import (
	"testing"

	"github.com/mediacatalog/service/infra/local/demo"
	"github.com/mediacatalog/service/infra/ops/bulk"
	"github.com/mediacatalog/service/infra/tests/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// counts is what a purge must leave alone or empty: the demo client's and the
// generated client's rows, and the kept counts.
const counts = `SELECT concat_ws(' ',
	(SELECT count(*) FROM series WHERE client_id = $1), (SELECT count(*) FROM publishers WHERE client_id = $1),
	(SELECT count(*) FROM contributors WHERE client_id = $1), (SELECT count(*) FROM tags WHERE client_id = $1),
	(SELECT count(*) FROM series_publishers WHERE client_id = $1), (SELECT count(*) FROM contributor_search_grams WHERE client_id = $1),
	(SELECT count(*) FROM clients WHERE id = $1))`

func TestPurgeClient(t *testing.T) {
	db := testenv.NewDemoDB(t)
	ctx := t.Context()
	if err := demo.Generate(ctx, db.DB, 2, 3000); err != nil {
		t.Fatal(err)
	}
	demoBefore := db.Text(t, counts, demo.Client)
	deleted, err := bulk.PurgeClient(ctx, db.Pool, 2, bulk.Options{BatchSize: 250})
	if err != nil {
		t.Fatal(err)
	}
	if deleted["series"] != 3000 || deleted["clients"] != 1 {
		t.Errorf("deleted %v, want the 3000 series and the client", deleted)
	}
	if got := db.Text(t, counts, 2); got != "0 0 0 0 0 0 0" {
		t.Errorf("client 2 after the purge: %s", got)
	}
	if got := db.Text(t, counts, demo.Client); got != demoBefore {
		t.Errorf("the demo client changed: %s -> %s", demoBefore, got)
	}
	// Run again: nothing left, nothing to do.
	if deleted, err := bulk.PurgeClient(ctx, db.Pool, 2, bulk.Options{}); err != nil || deleted["series"] != 0 {
		t.Errorf("second run: %v %v", deleted, err)
	}
}

func TestUpdateInBatches(t *testing.T) {
	db := testenv.NewDemoDB(t)
	ctx := t.Context()
	want := db.Text(t, `SELECT count(*) FROM contributors WHERE client_id = $1`, demo.Client)
	// The WHERE keeps matching the renamed rows: each row is still changed once.
	n, err := bulk.Update(ctx, db.Pool, "contributors", "first_name = first_name || '!'", "client_id = 1", bulk.Options{BatchSize: 3})
	if err != nil {
		t.Fatal(err)
	}
	if got := db.Text(t, `SELECT count(*) FROM contributors WHERE client_id = 1 AND first_name LIKE '%!' AND first_name NOT LIKE '%!!'`); got != want || want == "0" {
		t.Errorf("%d updated; %s contributors renamed once, want %s", n, got, want)
	}
	// The kept search texts followed the renames (the triggers ran per batch).
	if got := db.Text(t, `SELECT count(*) FROM contributors WHERE client_id = 1 AND search NOT LIKE '%!%'`); got != "0" {
		t.Errorf("%s search texts not updated", got)
	}
}
