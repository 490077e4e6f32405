package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/catalog"
)

// acctLock returns the live lock holder of user id as the list shows it.
func acctLock(t *testing.T, db *testenv.DB, id int64) *catalog.LockHolder {
	t.Helper()
	page, err := db.Users(context.Background(), catalog.UserQuery{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range page.Users {
		if u.ID == id {
			return u.Lock
		}
	}
	t.Fatalf("user %d not in the list", id)
	return nil
}

func TestUserEditLock(t *testing.T) {
	ctx := context.Background()
	db := acctDB(t, nil)
	const target = 3
	admin := catalog.LockRequest{By: 1, TTL: time.Hour}
	editor := catalog.LockRequest{By: 2, TTL: time.Hour}
	open := func(lock catalog.LockRequest) {
		t.Helper()
		if _, err := db.User(ctx, target, lock); err != nil {
			t.Fatal(err)
		}
	}
	expiresAt := func() time.Time {
		var at time.Time
		if err := db.Pool.QueryRow(ctx, `SELECT expires_at FROM user_locks WHERE user_id = $1`, target).Scan(&at); err != nil {
			t.Fatal(err)
		}
		return at
	}
	holder := func(want int64) {
		t.Helper()
		got := acctLock(t, db, target)
		switch {
		case want == 0 && got != nil:
			t.Fatalf("lock held by %+v, want none", got)
		case want != 0 && (got == nil || got.ID != want):
			t.Fatalf("lock held by %+v, want user %d", got, want)
		}
	}

	steps := []struct {
		name   string
		do     func()
		holder int64
	}{
		{"a reader without edit permission takes nothing", func() { open(catalog.LockRequest{}) }, 0},
		{"an editor takes the lock", func() { open(admin) }, 1},
		{"another editor does not take a live lock", func() { open(editor) }, 1},
		{"the holder refreshes it", func() {
			before := expiresAt()
			acctExec(t, db, `UPDATE user_locks SET expires_at = now() + interval '1 minute' WHERE user_id = $1`, target)
			open(admin)
			if after := expiresAt(); !after.After(before.Add(-2 * time.Minute)) {
				t.Errorf("lock not refreshed: expires %v", after)
			}
		}, 1},
		{"an expired lock counts as absent", func() {
			acctExec(t, db, `UPDATE user_locks SET expires_at = now() - interval '1 second' WHERE user_id = $1`, target)
		}, 0},
		{"another editor takes an expired lock", func() { open(editor) }, 2},
		{"an edit by someone else keeps the lock", func() {
			if _, err := db.EditUser(ctx, target, 1, catalog.UserEdit{Username: "member"}); err != nil {
				t.Fatal(err)
			}
		}, 2},
		{"an edit by the holder releases it", func() {
			if _, err := db.EditUser(ctx, target, 2, catalog.UserEdit{Username: "member"}); err != nil {
				t.Fatal(err)
			}
		}, 0},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			s.do()
			holder(s.holder)
		})
	}
}
