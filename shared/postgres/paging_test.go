package postgres_test

import (
	"context"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/catalog"
	"github.com/mediacatalog/service/shared/postgres"
)

// pagingFixture is nine of each list's rows in client 2, with ties on every sort key
// but the last (names and times repeat), so that a page read from the end has to agree
// with the tie-breaks of one read from the start.
const pagingFixture = `
	INSERT INTO clients (id, name) VALUES (2, 'Second');
	INSERT INTO publishers (id, client_id, name, slug, created_at)
	SELECT n, 2, 'Press ' || (n % 3), 'press-' || n, timestamptz '2020-01-01Z' + (n % 4) * interval '1 day'
	FROM generate_series(1, 9) n;
	INSERT INTO series (id, client_id, name, slug, type, created_at)
	SELECT n, 2, CASE WHEN n % 2 = 0 THEN 'Blue ' ELSE 'Red ' END || (n % 3), 'series-' || n, 'Manga',
	       timestamptz '2020-01-01Z' + (n % 4) * interval '1 day'
	FROM generate_series(1, 9) n;
	INSERT INTO series_publishers (series_id, publisher_id) SELECT n, 1 FROM generate_series(1, 9) n;
	INSERT INTO contributors (id, client_id, first_name, last_name, slug)
	SELECT n, 2, (ARRAY['Aki', 'Ben'])[1 + n % 2], CASE WHEN n IN (3, 6) THEN NULL ELSE 'Ito ' || n END, 'c-' || n
	FROM generate_series(1, 9) n;
	DELETE FROM roles; -- the day-0 roles of the migrations (00020): this fixture has its own
	INSERT INTO roles (id, name, is_default) VALUES (1, 'reader', true);
	INSERT INTO users (id, slug, username, registered)
	SELECT n, 'u-' || n, CASE WHEN n % 2 = 0 THEN 'Blue' ELSE 'red' END || n,
	       timestamptz '2021-01-01Z' + (n % 4) * interval '1 day'
	FROM generate_series(1, 9) n;
	INSERT INTO user_roles (user_id, role_id) SELECT n, 1 FROM generate_series(1, 9, 2) n;`

// TestPagesFromEitherEnd: every page of every list, at every offset and limit around the
// list's length, is the same slice of the whole list, whether the store walks to it
// from the start or (past the middle, see pageQuery) from the end; and each list's
// total is the length of the whole list.
func TestPagesFromEitherEnd(t *testing.T) {
	ctx := context.Background()
	db := testenv.NewDB(t)
	if _, err := db.Pool.Exec(ctx, pagingFixture); err != nil {
		t.Fatalf("fixture: %v", err)
	}
	// list returns the ids of one page and the list's total (-1: the list has none).
	type list func(limit, offset int64) ([]int64, int64, error)
	publishers := func(order, search string) list {
		return func(limit, offset int64) ([]int64, int64, error) {
			items, err := db.Publishers(ctx, catalog.PublisherFilter{Client: 2, Order: order, Search: search, Limit: limit, Offset: offset})
			return publisherIDs(items), -1, err
		}
	}
	publications := func(order, search string) list {
		return func(limit, offset int64) ([]int64, int64, error) {
			items, total, err := listPublications(ctx, db.DB, catalog.PublicationFilter{
				Publisher: 1, Client: 2, Order: order, Search: search, Limit: limit, Offset: offset})
			return publicationIDs(items), total, err
		}
	}
	contributors := func(desc bool, search string) list {
		return func(limit, offset int64) ([]int64, int64, error) {
			page, err := db.Contributors(ctx, catalog.ContributorQuery{Client: 2, Descending: desc, Search: search, Limit: limit, Offset: offset})
			ids := make([]int64, len(page.Contributors))
			for i, c := range page.Contributors {
				ids[i] = c.ID
			}
			return ids, page.Total, err
		}
	}
	users := func(order, search string, role int64) list {
		return func(limit, offset int64) ([]int64, int64, error) {
			page, err := db.Users(ctx, catalog.UserQuery{Order: order, Search: search, Role: role, Limit: limit, Offset: offset})
			ids := make([]int64, len(page.Users))
			for i, u := range page.Users {
				ids[i] = u.ID
			}
			return ids, page.Total, err
		}
	}
	lists := []struct {
		name string
		list list
		n    int // rows in the whole list
	}{
		{"publishers by id", publishers("", ""), 9},
		{"publishers name-asc", publishers("name-asc", ""), 9},
		{"publishers name-desc", publishers("name-desc", ""), 9},
		{"publishers added-asc", publishers("added-asc", ""), 9},
		{"publishers added-desc", publishers("added-desc", ""), 9},
		{"publishers search", publishers("name-asc", "press 1"), 3},
		{"publications by id", publications("", ""), 9},
		{"publications name-asc", publications("name-asc", ""), 9},
		{"publications name-desc", publications("name-desc", ""), 9},
		{"publications added-asc", publications("added-asc", ""), 9},
		{"publications added-desc", publications("added-desc", ""), 9},
		{"publications search", publications("added-desc", "blue"), 4},
		{"contributors", contributors(false, ""), 9},
		{"contributors descending", contributors(true, ""), 9},
		{"contributors search", contributors(true, "ben"), 5},
		{"users name-asc", users("", "", 0), 9},
		{"users name-desc", users("name-desc", "", 0), 9},
		{"users registered-asc", users("registered-asc", "", 0), 9},
		{"users registered-desc", users("registered-desc", "", 0), 9},
		{"users search", users("registered-desc", "blue", 0), 4},
		{"users of a role", users("registered-asc", "", 1), 5},
	}
	const all = 1 << 53
	for _, l := range lists {
		t.Run(l.name, func(t *testing.T) {
			whole, total, err := l.list(all, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(whole) != l.n || (total != -1 && total != int64(l.n)) {
				t.Fatalf("whole list %v (total %d), want %d rows", whole, total, l.n)
			}
			for offset := int64(0); offset <= int64(l.n)+2; offset++ {
				for _, limit := range []int64{0, 1, 2, 3, int64(l.n) - 1, int64(l.n), int64(l.n) + 1, all} {
					got, total, err := l.list(limit, offset)
					if err != nil {
						t.Fatalf("limit %d offset %d: %v", limit, offset, err)
					}
					want := whole[min(offset, int64(l.n)):min(offset+min(limit, int64(l.n)), int64(l.n))]
					if !slices.Equal(got, want) || (total != -1 && total != int64(l.n)) {
						t.Errorf("limit %d offset %d: %v total %d, want %v total %d", limit, offset, got, total, want, l.n)
					}
				}
			}
		})
	}
}

func TestReverseOrder(t *testing.T) {
	tests := []struct{ order, want string }{
		{"p.id", "p.id DESC"},
		{"sp.name, sp.series_id", "sp.name DESC, sp.series_id DESC"},
		{"sp.created_at DESC, sp.series_id DESC", "sp.created_at, sp.series_id"},
		{"c.first_name DESC, c.last_name DESC, c.id DESC", "c.first_name, c.last_name, c.id"},
		{"lower(u.username)", "lower(u.username) DESC"},
		{"u.registered ASC, u.id", "u.registered DESC, u.id DESC"},
	}
	for _, tc := range tests {
		if got := postgres.ReverseOrder(tc.order); got != tc.want {
			t.Errorf("ReverseOrder(%q) = %q, want %q", tc.order, got, tc.want)
		}
	}
}

// TestPageQueryEstimate: the planner expects a page of pageQuery to hold about limit
// rows, whichever end it is read from. A LIMIT that is an expression of the total made
// it guess a tenth of the list, and the callers' join of the page with its table then
// became a hash over the whole table (113 ms for the first page of 100k publishers).
func TestPageQueryEstimate(t *testing.T) {
	ctx := context.Background()
	db := testenv.NewDB(t)
	db.Fixture(t, `
		INSERT INTO clients (id, name) VALUES (2, 'Second');
		INSERT INTO publishers (client_id, name, slug) SELECT 2, 'Press ' || n, 'press-' || n FROM generate_series(1, 5000) n;
		ANALYZE publishers`)
	sql := `EXPLAIN (FORMAT JSON) WITH list_total AS (SELECT publisher_count AS n FROM clients WHERE id = @client) ` +
		postgres.PageQuery{Cols: "p.id", From: "publishers p", Where: "p.client_id = @client", Order: "p.name, p.id",
			Total: "(SELECT n FROM list_total)", Limit: "@limit", Offset: "@offset"}.SQL()
	const limit = 20
	for _, offset := range []int64{0, 2490, 4980, 4995} {
		var plan []struct {
			Plan struct {
				Rows float64 `json:"Plan Rows"`
			} `json:"Plan"`
		}
		if err := db.Pool.QueryRow(ctx, sql, pgx.StrictNamedArgs{"client": 2, "limit": limit, "offset": offset}).Scan(&plan); err != nil {
			t.Fatal(err)
		}
		if len(plan) != 1 || plan[0].Plan.Rows > 2*limit {
			t.Errorf("offset %d: the planner expects %+v rows, want at most %d", offset, plan, 2*limit)
		}
	}
}
