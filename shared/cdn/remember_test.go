package cdn

import (
	"context"
	"testing"
	"time"

	"github.com/mediacatalog/service/infra/tests/testenv"
)

// TestRememberedBound: the reads a container keeps for reuse and stale answers stay
// within maxFresh users however many users are asked for, and the newest read is
// always among them.
func TestRememberedBound(t *testing.T) {
	ctx := context.Background()
	db := testenv.NewDemoDB(t)
	ids := make([]int64, 0, 40)
	rows, err := db.Pool.Query(ctx, `
		INSERT INTO users (slug, username)
		SELECT 'remembered-' || n, 'remembered-' || n FROM generate_series(1, 40) AS n
		RETURNING id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil || len(ids) != 40 {
		t.Fatalf("%d users made: %v", len(ids), err)
	}
	reads := newRefReads(db.DB, time.Minute, time.Now)
	reads.staleFor = time.Hour
	reads.maxFresh = 8
	for _, id := range ids {
		if _, err := reads.userImage(ctx, id, true); err != nil {
			t.Fatal(err)
		}
		reads.mu.Lock()
		n := len(reads.fresh)
		_, newest := reads.fresh[id]
		reads.mu.Unlock()
		if n > reads.maxFresh || !newest {
			t.Fatalf("after reading user %d: %d reads kept (newest among them: %v), want at most %d with it", id, n, newest, reads.maxFresh)
		}
	}
	if DefaultMaxRemembered <= 0 || newRefReads(db.DB, 0, time.Now).maxFresh != DefaultMaxRemembered {
		t.Errorf("a new refReads keeps %d reads, want DefaultMaxRemembered (%d)", newRefReads(db.DB, 0, time.Now).maxFresh, DefaultMaxRemembered)
	}
}
