package migrate_test

import (
	"context"
	"testing"

	"github.com/mediacatalog/service/infra/local/demo"
	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/postgres"
	"github.com/mediacatalog/service/shared/postgres/migrate"
)

// catalogAt is a database of the test's own migrated up to version, with the demo data
// and a small generated catalog (client 2, 300 series) written at that version: the
// rows a later migration's backfill finds.
func catalogAt(t *testing.T, version int64) *testenv.DB {
	t.Helper()
	ctx := context.Background()
	url := testenv.NewEmptyDB(t)
	if _, err := migrate.Apply(ctx, url, migrate.Files(), migrate.Options{To: version}); err != nil {
		t.Fatal(err)
	}
	db, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	if err := demo.Load(ctx, db); err != nil {
		t.Fatal(err)
	}
	if err := demo.Generate(ctx, db, 2, 300); err != nil {
		t.Fatal(err)
	}
	return &testenv.DB{DB: db, URL: url}
}
