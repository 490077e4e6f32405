package postgres_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/catalog"
	"github.com/mediacatalog/service/shared/namekey"
)

// BenchmarkOAuthSignUp is one OAuth sign-up among 100k users, the name chosen up to
// case and confusable characters (createOAuthUser): with the users' name keys not
// written yet (each user's name read and keyed in Go), and
// written (make migrate's fill: the names keyed like the new one read by index). It
// reports the time of one sign-up.
//
//	go test -run '^$' -bench OAuthSignUp -benchtime 20x ./shared/postgres/
func BenchmarkOAuthSignUp(b *testing.B) {
	ctx := context.Background()
	db := testenv.NewDemoDB(b)
	for lo := 1; lo <= 100000; lo += 10000 { // in batches: each within the statement timeout
		if _, err := db.Pool.Exec(ctx, `
			INSERT INTO users (slug, username)
			SELECT 'bench-' || i, 'Bench User ' || i FROM generate_series($1::int, $1 + 9999) i`, lo); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := db.Pool.Exec(ctx, `VACUUM ANALYZE users`); err != nil {
		b.Fatal(err)
	}
	n := 0
	signUps := func(b *testing.B) {
		for range b.N {
			n++
			acct := catalog.ProviderAccount{Provider: "github", ProviderUserID: fmt.Sprint("bench-", n), Username: "Jane Doe", UsernameBase: "jane-doe"}
			if _, err := db.OAuthLogin(ctx, acct); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("keys missing", signUps)
	if _, err := namekey.Fill(ctx, db.Pool); err != nil {
		b.Fatal(err)
	}
	if _, err := db.Pool.Exec(ctx, `VACUUM ANALYZE users`); err != nil {
		b.Fatal(err)
	}
	b.Run("keys filled", signUps)
}
