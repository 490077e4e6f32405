package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/mediacatalog/service/infra/local/demo"
	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/postgres"
)

// imageRefs are the image methods of one kind of row.
type imageRefs struct {
	name     string
	id       int64 // a row of the demo data
	notFound string
	set      func(ctx context.Context, id int64, ref string) (string, error)
	clear    func(ctx context.Context, id int64) (string, error)
	read     string // SQL reading the column of row $1
}

func imageKinds(db *postgres.DB) []imageRefs {
	return []imageRefs{
		{"user", demo.MemberUserID, apperr.MsgUserNotFound, db.SetUserImage, db.ClearUserImage,
			`SELECT coalesce(profile_image, '<null>') FROM users WHERE id = $1`},
		{"contributor", 1, postgres.MsgContributorNotFound, db.SetContributorImage, db.ClearContributorImage,
			`SELECT coalesce(image, '<null>') FROM contributors WHERE id = $1`},
	}
}

func TestImageReferences(t *testing.T) {
	ctx := context.Background()
	db := testenv.NewDemoDB(t)
	for _, k := range imageKinds(db.DB) {
		t.Run(k.name, func(t *testing.T) {
			column := func() string {
				var v string
				if err := db.Pool.QueryRow(ctx, k.read, k.id).Scan(&v); err != nil {
					t.Fatal(err)
				}
				return v
			}
			if _, err := k.clear(ctx, k.id); err != nil { // start without an image
				t.Fatal(err)
			}
			steps := []struct {
				name    string
				do      func() (string, error)
				wantOld string
				wantCol string
			}{
				{"clear without an image", func() (string, error) { return k.clear(ctx, k.id) }, "", "<null>"},
				{"set the first", func() (string, error) { return k.set(ctx, k.id, "a.jpg") }, "", "a.jpg"},
				{"replace it", func() (string, error) { return k.set(ctx, k.id, "b.png") }, "a.jpg", "b.png"},
				{"clear it", func() (string, error) { return k.clear(ctx, k.id) }, "b.png", "<null>"},
			}
			for _, s := range steps {
				old, err := s.do()
				if err != nil {
					t.Fatalf("%s: %v", s.name, err)
				}
				if old != s.wantOld || column() != s.wantCol {
					t.Errorf("%s: replaced %q, column %q; want %q, %q", s.name, old, column(), s.wantOld, s.wantCol)
				}
			}
			for name, call := range map[string]func() (string, error){
				"set":   func() (string, error) { return k.set(ctx, 999999, "c.jpg") },
				"clear": func() (string, error) { return k.clear(ctx, 999999) },
			} {
				_, err := call()
				if e, ok := apperr.As(err); !ok || e.Code != apperr.NotFound || e.Message != k.notFound {
					t.Errorf("%s of an unknown row: %v, want not found %q", name, err, k.notFound)
				}
			}
		})
	}
}

// Concurrent writers each get back a different replaced reference: every reference
// is replaced exactly once, so each upload's cleanup removes objects nobody else
// removes and nothing the row still points at.
func TestImageReferencesConcurrently(t *testing.T) {
	ctx := context.Background()
	db := testenv.NewDB(t)
	id := testenv.NewUser(t, db, "racer")
	const writers = 20
	olds := make([]string, writers)
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() { olds[i], errs[i] = db.SetUserImage(ctx, id, fmt.Sprintf("ref-%d", i)) })
	}
	wg.Wait()
	final, err := db.ClearUserImage(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{final: true}
	for i, old := range olds {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if seen[old] {
			t.Errorf("reference %q returned twice", old)
		}
		seen[old] = true
	}
	// Every written reference and the initial "" came back exactly once.
	if len(seen) != writers+1 || !seen[""] {
		t.Errorf("replaced references %v, want each of the %d writes and the empty start once", seen, writers)
	}
}

func TestUserImage(t *testing.T) {
	ctx := context.Background()
	counter := &postgres.QueryCounter{}
	db := testenv.NewDB(t, postgres.WithTracer(counter))
	id := testenv.NewUser(t, db, "pictured")
	if _, err := db.SetUserImage(ctx, id, "users/1/x.jpg"); err != nil {
		t.Fatal(err)
	}
	plain := testenv.NewUser(t, db, "plain")
	tests := []struct {
		id       int64
		want     string
		notFound bool
	}{
		{id, "users/1/x.jpg", false},
		{plain, "", false},
		{999999, "", true},
	}
	for _, tc := range tests {
		counter.Reset()
		got, err := db.UserImage(ctx, tc.id)
		if tc.notFound {
			if e, ok := apperr.As(err); !ok || e.Code != apperr.NotFound || e.Message != apperr.MsgUserNotFound {
				t.Errorf("UserImage(%d): %v, want User not found", tc.id, err)
			}
		} else if err != nil || got != tc.want {
			t.Errorf("UserImage(%d) = %q, %v; want %q", tc.id, got, err, tc.want)
		}
		if n := counter.Count(); n != 1 {
			t.Errorf("UserImage(%d) took %d queries, want 1", tc.id, n)
		}
	}
}
