package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/catalog"
	"github.com/mediacatalog/service/shared/postgres"
)

// boundedList reads one page of a list on db: its ids, its total and whether the
// total is exact.
type boundedList func(db *postgres.DB, limit, offset int64) ([]int64, int64, bool, error)

func boundedPublications(order, search string) boundedList {
	return func(db *postgres.DB, limit, offset int64) ([]int64, int64, bool, error) {
		p, err := db.PublisherPublications(context.Background(), catalog.PublicationFilter{
			Publisher: 1, Client: 2, Order: order, Search: search, Limit: limit, Offset: offset})
		return publicationIDs(p.Publications), p.Total, p.Exact, err
	}
}

func boundedContributors(desc bool, search string) boundedList {
	return func(db *postgres.DB, limit, offset int64) ([]int64, int64, bool, error) {
		p, err := db.Contributors(context.Background(), catalog.ContributorQuery{
			Client: 2, Descending: desc, Search: search, Limit: limit, Offset: offset})
		ids := make([]int64, len(p.Contributors))
		for i, c := range p.Contributors {
			ids[i] = c.ID
		}
		return ids, p.Total, p.Exact, err
	}
}

func boundedUsers(order, search string, role int64) boundedList {
	return func(db *postgres.DB, limit, offset int64) ([]int64, int64, bool, error) {
		p, err := db.Users(context.Background(), catalog.UserQuery{
			Order: order, Search: search, Role: role, Limit: limit, Offset: offset})
		ids := make([]int64, len(p.Users))
		for i, u := range p.Users {
			ids[i] = u.ID
		}
		return ids, p.Total, p.Exact, err
	}
}

// TestBoundedTotals: with a threshold T, a list's search or filter reports an exact
// total up to T matches and a lower bound past it (at least T and at least the end of
// the page, max_exact false), unless the page is shorter than its limit (the end of
// the list: exact); a page at or past T counts up to offset+T. Every page holds the
// same rows as with no threshold, on both sides of T and whichever end it is read
// from; lists without a search or filter keep their exact totals.
func TestBoundedTotals(t *testing.T) {
	ctx := context.Background()
	db := testenv.NewDB(t)
	if _, err := db.Pool.Exec(ctx, pagingFixture); err != nil {
		t.Fatalf("fixture: %v", err)
	}
	lists := []struct {
		name     string
		list     boundedList
		n        int64 // rows in the whole list
		filtered bool  // a search or filter: its total is bounded by T
	}{
		{"publications", boundedPublications("name-asc", ""), 9, false},
		{"publications search", boundedPublications("added-desc", "blue"), 4, true},
		{"publications search by id", boundedPublications("", "e"), 9, true},
		{"contributors", boundedContributors(false, ""), 9, false},
		{"contributors search of three letters", boundedContributors(true, "ben"), 5, true},
		{"contributors search of two letters (kept counts: exact)", boundedContributors(false, "ak"), 4, false},
		{"users", boundedUsers("", "", 0), 9, false},
		{"users registered-desc", boundedUsers("registered-desc", "", 0), 9, false},
		{"users search", boundedUsers("registered-desc", "blue", 0), 4, true},
		{"users search name-asc", boundedUsers("", "e", 0), 9, true},
		{"users of a role", boundedUsers("registered-asc", "", 1), 5, true},
		{"users of a role with a search", boundedUsers("name-desc", "red", 1), 5, true},
	}
	const all = 1 << 53
	for _, l := range lists {
		// The whole list with the default threshold, far above these lists: exact.
		whole, total, exact, err := l.list(db.DB, all, 0)
		if err != nil {
			t.Fatalf("%s: %v", l.name, err)
		}
		if int64(len(whole)) != l.n || total != l.n || !exact {
			t.Fatalf("%s: whole list %v (total %d, exact %t), want %d rows, exact", l.name, whole, total, exact, l.n)
		}
		for _, threshold := range []int64{1, 2, l.n - 1, l.n, l.n + 1} {
			bounded := *db.DB
			bounded.MaxExact = threshold
			t.Run(fmt.Sprintf("%s/T=%d", l.name, threshold), func(t *testing.T) {
				for offset := int64(0); offset <= l.n+2; offset++ {
					for _, limit := range []int64{0, 1, 2, 3, l.n - 1, l.n, l.n + 1, all} {
						got, total, exact, err := l.list(&bounded, limit, offset)
						if err != nil {
							t.Fatalf("limit %d offset %d: %v", limit, offset, err)
						}
						want := whole[min(offset, l.n):min(offset+min(limit, l.n), l.n)]
						to := offset + int64(len(got))
						wantTotal, wantExact := l.n, true
						limitCount := threshold // the count's cap: T before T, offset+T past it
						if offset >= threshold {
							limitCount = offset + threshold
						}
						if l.filtered && l.n > limitCount && int64(len(got)) == limit {
							wantTotal, wantExact = max(limitCount, to), false
						}
						if !slices.Equal(got, want) || total != wantTotal || exact != wantExact {
							t.Errorf("limit %d offset %d: %v total %d exact %t, want %v total %d exact %t",
								limit, offset, got, total, exact, want, wantTotal, wantExact)
						}
						if !exact && (total < threshold || total < to || total > l.n) {
							t.Errorf("limit %d offset %d: bound %d, want at least T %d and to %d, at most %d",
								limit, offset, total, threshold, to, l.n)
						}
					}
				}
			})
		}
	}
}

// TestBoundedTotalAtDefault: at the default threshold, a search matching more users
// than it reports the threshold as a lower bound on its first page, and the exact
// total from the threshold on.
func TestBoundedTotalAtDefault(t *testing.T) {
	ctx := context.Background()
	db := testenv.NewDB(t)
	n := postgres.DefaultMaxExact + 30
	if _, err := db.Pool.Exec(ctx, fmt.Sprintf(`
		INSERT INTO users (slug, username) SELECT 'u-' || k, 'reader' || k FROM generate_series(1, %d) k;
		ANALYZE users`, n)); err != nil {
		t.Fatalf("fixture: %v", err)
	}
	tests := []struct {
		name          string
		limit, offset int64
		total         int64
		exact         bool
	}{
		{"first page", 20, 0, postgres.DefaultMaxExact, false},
		{"page across T", 20, postgres.DefaultMaxExact - 10, postgres.DefaultMaxExact + 10, false},
		{"page at T", 20, postgres.DefaultMaxExact, n, true},
		{"last page", 20, n - 20, n, true},
		{"the whole list", n + 1, 0, n, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := db.Users(ctx, catalog.UserQuery{Search: "reader", Order: catalog.UserOrderRegisteredAsc, Limit: tc.limit, Offset: tc.offset})
			if err != nil {
				t.Fatal(err)
			}
			if p.Total != tc.total || p.Exact != tc.exact || int64(len(p.Users)) != min(tc.limit, n-tc.offset) {
				t.Errorf("%d users, total %d exact %t; want total %d exact %t", len(p.Users), p.Total, p.Exact, tc.total, tc.exact)
			}
		})
	}
}
