package postgres_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/mediacatalog/service/infra/testenv"
	"github.com/mediacatalog/service/shared/catalog"
)

// BenchmarkOAuthSignUp is one OAuth sign-up among 100k users: the name choice reads
// every username once to compare it up to case and confusable characters
// (createOAuthUser). It reports the time of one sign-up.
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
	b.ResetTimer()
	for i := range b.N {
		acct := catalog.ProviderAccount{Provider: "github", ProviderUserID: fmt.Sprint("bench-", i), Username: "Jane Doe", UsernameBase: "jane-doe"}
		if _, err := db.OAuthLogin(ctx, acct); err != nil {
			b.Fatal(err)
		}
	}
}
