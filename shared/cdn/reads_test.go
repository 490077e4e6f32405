package cdn

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mediacatalog/service/infra/local/demo"
	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/images"
	"github.com/mediacatalog/service/shared/imageset"
	"github.com/mediacatalog/service/shared/postgres"
)

// gate holds the first reference query, once it has read its row, until released; it
// counts the reference queries.
type gate struct {
	reads    atomic.Int64
	once     sync.Once
	reached  chan struct{}
	released chan struct{}
}

func (g *gate) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if strings.Contains(d.SQL, "profile_image, '') FROM users") {
		g.reads.Add(1)
		return context.WithValue(ctx, gate{}, true)
	}
	return ctx
}

func (g *gate) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryEndData) {
	if ctx.Value(gate{}) == nil {
		return
	}
	first := false
	g.once.Do(func() { first = true })
	if first {
		close(g.reached)
		<-g.released
	}
}

// TestReadAfterArrival: a request that arrives while a reference query runs does not
// take that query's answer (it may predate a change committed since); it waits for a
// query of its own, which the requests arriving meanwhile share.
func TestReadAfterArrival(t *testing.T) {
	ctx := context.Background()
	g := &gate{reached: make(chan struct{}), released: make(chan struct{})}
	db := testenv.NewDemoDB(t, postgres.WithTracer(g))
	var release sync.Once
	t.Cleanup(func() { release.Do(func() { close(g.released) }) }) // before the database closes
	ref := func() string {
		set, err := imageset.NewImageSet(imageset.Users, demo.MemberUserID, images.TypeJPEG, []byte("x"), nil)
		if err != nil {
			t.Fatal(err)
		}
		return set.Ref()
	}
	before, after := ref(), ref()
	if _, err := db.SetUserImage(ctx, demo.MemberUserID, before); err != nil {
		t.Fatal(err)
	}
	g.reads.Store(0)
	reads := newRefReads(db.DB, 0, time.Now)

	type answer struct {
		ref string
		err error
	}
	first := make(chan answer, 1)
	go func() {
		r, err := reads.userImage(ctx, demo.MemberUserID, true)
		first <- answer{r, err}
	}()
	<-g.reached // the first query has read the old reference
	if _, err := db.SetUserImage(ctx, demo.MemberUserID, after); err != nil {
		t.Fatal(err)
	}
	const later = 3
	answers := make(chan answer, later)
	for range later {
		go func() {
			r, err := reads.userImage(ctx, demo.MemberUserID, true)
			answers <- answer{r, err}
		}()
	}
	// Release the first query once a later request waits for the next one.
	for deadline := time.Now().Add(10 * time.Second); ; {
		reads.mu.Lock()
		s := reads.slots[demo.MemberUserID]
		waiting := s != nil && s.pending != nil
		reads.mu.Unlock()
		if waiting {
			break
		}
		if time.Now().After(deadline) {
			t.Error("no request waits for a query of its own")
			break
		}
		time.Sleep(time.Millisecond)
	}
	release.Do(func() { close(g.released) })
	if a := <-first; a.err != nil || a.ref != before {
		t.Errorf("the first request: %q %v, want the reference it read, %q", a.ref, a.err, before)
	}
	for range later {
		if a := <-answers; a.err != nil || a.ref != after {
			t.Errorf("a request that arrived after the change: %q %v, want %q", a.ref, a.err, after)
		}
	}
	if n := g.reads.Load(); n < 2 || n > 1+later {
		t.Errorf("%d reference queries, want 2 to %d", n, 1+later)
	}
}
