package postgres_test

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/catalog"
	"github.com/mediacatalog/service/shared/postgres"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/statements/")

// recorder is a pgx tracer that keeps the statements sent and their arguments.
type recorder struct {
	mu   sync.Mutex
	sent []string
}

func (r *recorder) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	r.mu.Lock()
	defer r.mu.Unlock()
	var args []string
	if named, ok := namedArgs(d.Args); ok {
		for _, name := range slices.Sorted(maps.Keys(named)) {
			args = append(args, fmt.Sprintf("@%s = %#v", name, named[name]))
		}
	} else {
		for i, a := range d.Args {
			args = append(args, fmt.Sprintf("$%d = %#v", i+1, a))
		}
	}
	r.sent = append(r.sent, fmt.Sprintf("%s\n-- %s", strings.TrimSpace(d.SQL), strings.Join(args, ", ")))
	return ctx
}

// namedArgs is the statement's arguments by name, if it has them so (pgx.NamedArgs).
func namedArgs(args []any) (map[string]any, bool) {
	if len(args) != 1 {
		return nil, false
	}
	switch a := args[0].(type) {
	case pgx.StrictNamedArgs:
		return a, true
	case pgx.NamedArgs:
		return a, true
	}
	return nil, false
}

func (r *recorder) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// take returns the statements sent since the last take.
func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.sent
	r.sent = nil
	return out
}

// TestPagedStatements keeps, in testdata/statements/<list>.sql, the statements each
// paged list sends for its kinds of page (first page, a deep page, each order, a
// search, a filter), so that a reader sees the SQL without assembling its fragments,
// and a change of a statement shows in review as a change of its file. After an
// intended change: go test ./shared/postgres/ -run TestPagedStatements -update
func TestPagedStatements(t *testing.T) {
	rec := &recorder{}
	db := testenv.NewDemoDB(t, postgres.WithTracer(rec))
	ctx := context.Background()
	type page struct {
		name string
		call func() error
	}
	lists := []struct {
		file  string
		pages []page
	}{
		{"users", []page{
			{"first page", func() error { _, err := db.Users(ctx, catalog.UserQuery{Order: "name-asc", Limit: 20}); return err }},
			{"a deep page", func() error {
				_, err := db.Users(ctx, catalog.UserQuery{Order: "registered-desc", Limit: 20, Offset: 2})
				return err
			}},
			{"search", func() error {
				_, err := db.Users(ctx, catalog.UserQuery{Order: "name-asc", Search: "adm", Limit: 20})
				return err
			}},
			{"role filter", func() error {
				_, err := db.Users(ctx, catalog.UserQuery{Order: "name-desc", Role: 3, Limit: 20})
				return err
			}},
		}},
		{"contributors", []page{
			{"first page", func() error {
				_, err := db.Contributors(ctx, catalog.ContributorQuery{Client: 1, Limit: 20})
				return err
			}},
			{"a deep page, descending", func() error {
				_, err := db.Contributors(ctx, catalog.ContributorQuery{Client: 1, Descending: true, Limit: 20, Offset: 3})
				return err
			}},
			{"search of two letters (kept counts)", func() error {
				_, err := db.Contributors(ctx, catalog.ContributorQuery{Client: 1, Search: "od", Limit: 20})
				return err
			}},
			{"search of three letters or more", func() error {
				_, err := db.Contributors(ctx, catalog.ContributorQuery{Client: 1, Search: "oda", Limit: 20})
				return err
			}},
		}},
		{"publishers", []page{
			{"first page", func() error { _, err := db.Publishers(ctx, catalog.PublisherFilter{Client: 1, Limit: 20}); return err }},
			{"a deep page by name", func() error {
				_, err := db.Publishers(ctx, catalog.PublisherFilter{Client: 1, Order: "name-asc", Limit: 20, Offset: 2})
				return err
			}},
			{"search", func() error {
				_, err := db.Publishers(ctx, catalog.PublisherFilter{Client: 1, Search: "media", Limit: 20})
				return err
			}},
		}},
		{"publications", []page{
			{"first page", func() error {
				_, err := db.PublisherPublications(ctx, catalog.PublicationFilter{Publisher: 1, Client: 1, Order: "name-asc", Language: "English", Limit: 20})
				return err
			}},
			{"a deep page, newest first", func() error {
				_, err := db.PublisherPublications(ctx, catalog.PublicationFilter{Publisher: 1, Client: 1, Order: "added-desc", Language: "English", Limit: 20, Offset: 2})
				return err
			}},
			{"search", func() error {
				_, err := db.PublisherPublications(ctx, catalog.PublicationFilter{Publisher: 1, Client: 1, Search: "one", Order: "name-asc", Language: "English", Limit: 20})
				return err
			}},
			{"a search's page past T, newest first", func() error {
				_, err := db.PublisherPublications(ctx, catalog.PublicationFilter{Publisher: 1, Client: 1, Search: "o", Order: "added-desc", Language: "English", Limit: 20, Offset: postgres.DefaultMaxExact})
				return err
			}},
		}},
	}
	for _, l := range lists {
		t.Run(l.file, func(t *testing.T) {
			var b strings.Builder
			fmt.Fprintf(&b, "-- The statements the %s list sends, one section a kind of page.\n", l.file)
			fmt.Fprintf(&b, "-- Written by TestPagedStatements (go test ./shared/postgres/ -run TestPagedStatements -update).\n")
			for _, p := range l.pages {
				rec.take()
				if err := p.call(); err != nil {
					t.Fatalf("%s: %v", p.name, err)
				}
				sent := rec.take()
				if len(sent) == 0 {
					t.Fatalf("%s: no statement sent", p.name)
				}
				fmt.Fprintf(&b, "\n-- %s\n", strings.Repeat("=", 76))
				fmt.Fprintf(&b, "-- %s\n", p.name)
				for _, s := range sent {
					fmt.Fprintf(&b, "\n%s\n", s)
				}
			}
			path := filepath.Join("testdata", "statements", l.file+".sql")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to write it)", err)
			}
			if string(want) != b.String() {
				t.Errorf("%s is not what the %s list sends now; if the change is intended, run\n"+
					"  go test ./shared/postgres/ -run TestPagedStatements -update\nand review the file's diff.\nsent now:\n%s",
					path, l.file, b.String())
			}
		})
	}
}

// prepares is a pgx tracer that counts the statements prepared (or described): what
// pgx does when a statement's text is not in its connection's cache.
type prepares struct{ n atomic.Int64 }

func (p *prepares) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return ctx
}
func (p *prepares) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (p *prepares) TracePrepareStart(ctx context.Context, _ *pgx.Conn, _ pgx.TracePrepareStartData) context.Context {
	p.n.Add(1)
	return ctx
}
func (p *prepares) TracePrepareEnd(context.Context, *pgx.Conn, pgx.TracePrepareEndData) {}

// TestStatementsCached: a store function that builds its statement sends one text per
// kind of call, whatever the values (they go as arguments, named ones rewritten by pgx
// to the same positional text each time), so its second call with other values finds
// the statement in the connection's cache and prepares nothing, in both of pgx's
// caching modes (QueryExecModeCacheDescribe is the one the deployed pool uses, rds.go).
// A page at or past T is a kind of its own for each offset: its count's cap is in the
// text (countCap).
func TestStatementsCached(t *testing.T) {
	ctx := context.Background()
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeCacheDescribe} {
		t.Run(mode.String(), func(t *testing.T) {
			p := &prepares{}
			db := testenv.NewDemoDB(t, postgres.WithTracer(p), postgres.WithMaxConns(1),
				func(c *pgxpool.Config) { c.ConnConfig.DefaultQueryExecMode = mode })
			for _, tc := range []struct {
				name        string
				first, next func() error
			}{
				{"users, a search's page",
					func() error { _, err := db.Users(ctx, catalog.UserQuery{Search: "adm", Limit: 20}); return err },
					func() error { _, err := db.Users(ctx, catalog.UserQuery{Search: "mod", Limit: 5}); return err }},
				{"users, a deep page of a role",
					func() error {
						_, err := db.Users(ctx, catalog.UserQuery{Order: "registered-desc", Role: 3, Limit: 20, Offset: 2})
						return err
					},
					func() error {
						_, err := db.Users(ctx, catalog.UserQuery{Order: "registered-desc", Role: 1, Limit: 2, Offset: 7})
						return err
					}},
				{"a user's detail, taking the lock",
					func() error { _, err := db.User(ctx, 1, catalog.LockRequest{}); return err },
					func() error { _, err := db.User(ctx, 2, catalog.LockRequest{By: 1, TTL: time.Minute}); return err }},
				{"contributors, a deep page of a search",
					func() error {
						_, err := db.Contributors(ctx, catalog.ContributorQuery{Client: 1, Search: "oda", Limit: 20, Offset: 1})
						return err
					},
					func() error {
						_, err := db.Contributors(ctx, catalog.ContributorQuery{Client: 1, Search: "ma", Limit: 3, Offset: 4})
						return err
					}},
				{"a contributor's detail",
					func() error {
						_, err := db.Contributor(ctx, 1, catalog.LockRequest{By: 1, TTL: time.Minute})
						return err
					},
					func() error { _, err := db.Contributor(ctx, 2, catalog.LockRequest{}); return err }},
				{"publishers, a search's page",
					func() error {
						_, err := db.Publishers(ctx, catalog.PublisherFilter{Client: 1, Search: "media", Limit: 20})
						return err
					},
					func() error {
						_, err := db.Publishers(ctx, catalog.PublisherFilter{Client: 1, Search: "press", Limit: 3})
						return err
					}},
				{"publications, a deep page of a search",
					func() error {
						_, err := db.PublisherPublications(ctx, catalog.PublicationFilter{Publisher: 1, Client: 1, Search: "o",
							Order: "added-desc", Language: "English", Limit: 20, Offset: 500})
						return err
					},
					func() error {
						_, err := db.PublisherPublications(ctx, catalog.PublicationFilter{Publisher: 2, Client: 1, Search: "e",
							Order: "added-desc", Language: "Japanese", Limit: 2, Offset: 1})
						return err
					}},
			} {
				p.n.Store(0)
				if err := tc.first(); err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
				if n := p.n.Swap(0); n == 0 {
					t.Fatalf("%s: its first call prepared nothing: the tracer sees no prepare", tc.name)
				}
				if err := tc.next(); err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
				if n := p.n.Load(); n != 0 {
					t.Errorf("%s: the call with other values prepared %d statements, want none (a text that varies with its values)", tc.name, n)
				}
			}
		})
	}
}
