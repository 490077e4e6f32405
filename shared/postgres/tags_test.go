package postgres_test

import (
	"context"
	"slices"
	"sort"
	"testing"

	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/catalog"
	"github.com/mediacatalog/service/shared/postgres"
)

// catalogDB is a database with the demo data, whose queries counter counts.
func catalogDB(t *testing.T, counter *postgres.QueryCounter) *testenv.DB {
	t.Helper()
	db := testenv.NewDemoDB(t, postgres.WithTracer(counter))
	return db
}

// catalogExec runs fixture SQL (several statements, no arguments).
func catalogExec(t *testing.T, db *testenv.DB, sql string) {
	t.Helper()
	if _, err := db.Pool.Exec(context.Background(), sql); err != nil {
		t.Fatalf("fixture: %v", err)
	}
}

// catalogQueries fails the test unless the last call sent exactly want queries.
func catalogQueries(t *testing.T, counter *postgres.QueryCounter, want int64) {
	t.Helper()
	if n := counter.Reset(); n != want {
		t.Errorf("%d queries, want %d", n, want)
	}
}

func TestTagsList(t *testing.T) {
	ctx := context.Background()
	counter := &postgres.QueryCounter{}
	db := catalogDB(t, counter)
	catalogExec(t, db, `
		INSERT INTO clients (id, name) VALUES (2, 'Second'), (3, 'Empty');
		INSERT INTO tags (id, client_id, name, type) VALUES
			(1001, 2, 'Zombies', 'theme'), (1002, 2, 'Action', 'genre'), (1003, 2, 'Mecha', 'theme');`)

	tests := []struct {
		name   string
		client int64
		want   []string // nil: the demo tags
	}{
		{"demo client", 1, nil},
		{"other client sees only its own", 2, []string{"Action", "Mecha", "Zombies"}},
		{"client without tags", 3, []string{}},
		{"unknown client", 999, []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			counter.Reset()
			tags, err := db.Tags(ctx, tc.client)
			if err != nil {
				t.Fatal(err)
			}
			catalogQueries(t, counter, 1)
			if tags == nil {
				t.Fatal("nil slice: would encode as null")
			}
			names := make([]string, len(tags))
			for i, tag := range tags {
				names[i] = tag.Name
				if tag.ID == 0 || tag.Type == "" {
					t.Errorf("incomplete tag %+v", tag)
				}
			}
			if tc.want == nil {
				if len(names) < 20 {
					t.Errorf("%d demo tags, want at least 20", len(names))
				}
				if !sort.StringsAreSorted(names) {
					t.Errorf("not ordered by name: %q", names)
				}
				for _, tag := range tags {
					if tag.ID > 1000 {
						t.Errorf("client 1 sees client 2's tag %+v", tag)
					}
				}
				return
			}
			if !slices.Equal(names, tc.want) {
				t.Errorf("tags %q, want %q", names, tc.want)
			}
		})
	}
}

func TestTagByID(t *testing.T) {
	ctx := context.Background()
	counter := &postgres.QueryCounter{}
	db := catalogDB(t, counter)
	catalogExec(t, db, `
		INSERT INTO clients (id, name) VALUES (2, 'Second');
		INSERT INTO tags (id, client_id, name, type) VALUES (1001, 2, 'Unused', 'theme');`)

	var actionSeries int64
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM series_tags WHERE tag_id = 1`).Scan(&actionSeries); err != nil {
		t.Fatal(err)
	}
	if actionSeries == 0 {
		t.Fatal("the demo data labels no series Action")
	}

	tests := []struct {
		name string
		id   int64
		want catalog.TagDetail
		code apperr.Code
	}{
		{"demo tag with series", 1, catalog.TagDetail{Tag: catalog.Tag{ID: 1, Name: "Action", Type: "genre"}, SeriesCount: actionSeries}, ""},
		{"tag without series", 1001, catalog.TagDetail{Tag: catalog.Tag{ID: 1001, Name: "Unused", Type: "theme"}}, ""},
		{"unknown tag", 99999, catalog.TagDetail{}, apperr.NotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			counter.Reset()
			got, err := db.TagByID(ctx, tc.id)
			catalogQueries(t, counter, 1)
			if tc.code != "" {
				e, ok := apperr.As(err)
				if !ok || e.Code != tc.code || e.Message != catalog.MsgTagNotFound {
					t.Fatalf("error %v, want %s %q", err, tc.code, catalog.MsgTagNotFound)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
