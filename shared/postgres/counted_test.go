package postgres_test

import (
	"context"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/catalog"
	"github.com/mediacatalog/service/shared/postgres"
)

// lastStatement is a pgx tracer that keeps the last statement sent and its arguments.
type lastStatement struct {
	mu   sync.Mutex
	sql  string
	args []any
}

func (l *lastStatement) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sql, l.args = d.SQL, d.Args
	return ctx
}

func (l *lastStatement) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// planNode is a node of EXPLAIN (ANALYZE, VERBOSE, FORMAT JSON).
type planNode struct {
	Type   string     `json:"Node Type"`
	Output []string   `json:"Output"`
	Loops  float64    `json:"Actual Loops"`
	Plans  []planNode `json:"Plans"`
}

// countsRun is the number of count(*) aggregates of the plan that ran.
func countsRun(n planNode) int {
	c := 0
	if n.Type == "Aggregate" && len(n.Output) == 1 && n.Output[0] == "count(*)" && n.Loops > 0 {
		c++
	}
	for _, p := range n.Plans {
		c += countsRun(p)
	}
	return c
}

// TestBoundedCountRunsOnce: the bounded count of a searched or filtered list runs once
// per statement. list_total's n is read twice (as the total, and in capped); when the
// planner pulled its subquery up into the CTE, each read became a copy of the count,
// and every search counted its matches twice (a deep page's offset+T of them).
func TestBoundedCountRunsOnce(t *testing.T) {
	rec := &lastStatement{}
	db := testenv.NewDemoDB(t, postgres.WithTracer(rec))
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"users search", func() error {
			_, err := db.Users(ctx, catalog.UserQuery{Order: "name-asc", Search: "adm", Limit: 20})
			return err
		}},
		{"users role filter", func() error {
			_, err := db.Users(ctx, catalog.UserQuery{Order: "name-desc", Role: 3, Limit: 20})
			return err
		}},
		{"contributors search of three letters", func() error {
			_, err := db.Contributors(ctx, catalog.ContributorQuery{Client: 1, Search: "oda", Limit: 20})
			return err
		}},
		{"publications search", func() error {
			_, err := db.PublisherPublications(ctx, catalog.PublicationFilter{Publisher: 1, Client: 1, Search: "o", Order: "name-asc", Language: "English", Limit: 20})
			return err
		}},
		{"publications search, a deep page in added order", func() error {
			_, err := db.PublisherPublications(ctx, catalog.PublicationFilter{Publisher: 1, Client: 1, Search: "o", Order: "added-desc", Language: "English", Limit: 2, Offset: 1})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.call(); err != nil {
				t.Fatal(err)
			}
			rec.mu.Lock()
			sql, args := rec.sql, rec.args
			rec.mu.Unlock()
			var plan []struct {
				Plan planNode `json:"Plan"`
			}
			if err := db.Pool.QueryRow(ctx, "EXPLAIN (ANALYZE, VERBOSE, FORMAT JSON) "+sql, args...).Scan(&plan); err != nil {
				t.Fatal(err)
			}
			if len(plan) != 1 {
				t.Fatalf("plan %+v", plan)
			}
			if n := countsRun(plan[0].Plan); n != 1 {
				t.Errorf("the count ran %d times, want once:\n%s", n, sql)
			}
		})
	}
}

// TestDeepSearchPageEstimate: the planner expects a search's page past T to hold about
// limit rows. Numbering the walk and filtering the page's row numbers made it expect a
// third of the walk, and the statement's cost then passed jit_above_cost: compiling it
// took longer than the walk (PostgreSQL's JIT, on by default).
func TestDeepSearchPageEstimate(t *testing.T) {
	rec := &lastStatement{}
	db := testenv.NewDB(t, postgres.WithTracer(rec))
	ctx := context.Background()
	db.Fixture(t, `
		INSERT INTO clients (id, name) VALUES (2, 'Second');
		INSERT INTO publishers (id, client_id, name, slug) VALUES (1, 2, 'Press', 'press');
		INSERT INTO series (id, client_id, name, slug, type)
		SELECT n, 2, CASE WHEN n % 4 = 0 THEN 'Blue ' ELSE 'Red ' END || n, 'series-' || n, 'Manga'
		FROM generate_series(1, 8000) n;
		INSERT INTO series_publishers (series_id, publisher_id) SELECT n, 1 FROM generate_series(1, 8000) n;
		ANALYZE series_publishers`)
	const limit = 20
	for _, order := range []string{catalog.PublisherOrderNameAsc, catalog.PublisherOrderAddedDesc} {
		if _, err := db.PublisherPublications(ctx, catalog.PublicationFilter{Publisher: 1, Client: 2, Search: "blue",
			Order: order, Language: "English", Limit: limit, Offset: postgres.DefaultMaxExact}); err != nil {
			t.Fatal(err)
		}
		rec.mu.Lock()
		sql, args := rec.sql, rec.args
		rec.mu.Unlock()
		var plan []struct {
			Plan struct {
				Rows float64 `json:"Plan Rows"`
			} `json:"Plan"`
		}
		if err := db.Pool.QueryRow(ctx, "EXPLAIN (FORMAT JSON) "+sql, args...).Scan(&plan); err != nil {
			t.Fatal(err)
		}
		if len(plan) != 1 || plan[0].Plan.Rows > 2*limit {
			t.Errorf("%s: the planner expects %+v rows, want at most %d", order, plan, 2*limit)
		}
	}
}
