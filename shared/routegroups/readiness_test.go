package routegroups_test

import (
	"context"
	"log/slog"
	"os"
	"slices"
	"testing"

	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/app"
	"github.com/mediacatalog/service/shared/config"
	"github.com/mediacatalog/service/shared/readiness"
	"github.com/mediacatalog/service/shared/routegroups"
)

// TestReadinessChecks builds each route group as its function does (one App, one
// group) with the origin secret set, and answers the readiness probe: the dependencies
// checked are exactly the group's readiness.Dependencies, every route probe is served
// (with the origin secret, which the function refuses requests without), and the hook's
// judgment finds the group ready.
func TestReadinessChecks(t *testing.T) {
	db := testenv.NewDemoDB(t)
	_, stateTable, rateTable := testenv.DynamoTables(t)
	env := map[string]string{
		"DB_ENV":            "test",
		"JWT_SECRET":        "readiness-test-secret-0123456789abcdef",
		"ORIGIN_SECRET":     "readiness-test-origin-secret-0123456789abcdef",
		"DATABASE_URL":      db.URL,
		"DYNAMODB_ENDPOINT": testenv.DynamoEndpoint(t),
		"OAUTH_STATE_TABLE": stateTable,
		"RATE_LIMIT_TABLE":  rateTable,
		"S3_ENDPOINT":       testenv.S3Endpoint(t),
		"S3_BUCKET":         os.Getenv("S3_BUCKET"),
		"FILE_SERVICE":      "true",
	}
	getenv := func(k string) string { return env[k] }
	cfg, err := config.Load(getenv)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	groups := routegroups.All()
	if len(groups) != len(readiness.Dependencies) || len(groups) != len(readiness.Probes) {
		t.Errorf("%d route groups, readiness checks for %d and probes for %d", len(groups), len(readiness.Dependencies), len(readiness.Probes))
	}
	for _, g := range groups {
		t.Run(g.Name, func(t *testing.T) {
			a := app.New(cfg, slog.New(slog.DiscardHandler))
			a.Getenv = getenv
			a.SetDB(db.DB)
			h, err := a.Handler(ctx, g)
			if err != nil {
				t.Fatal(err)
			}
			res := a.Readiness(g, h)(ctx)
			var deps []string
			probes := map[string]bool{}
			for _, p := range readiness.Probes[g.Name] {
				probes[p.Name()] = true
			}
			for _, c := range res.Checks {
				if !probes[c.Name] {
					deps = append(deps, c.Name)
				}
			}
			if want := readiness.Dependencies[g.Name]; !slices.Equal(slices.Sorted(slices.Values(deps)), slices.Sorted(slices.Values(want))) {
				t.Errorf("checks %v, want %v", deps, want)
			}
			if err := readiness.Judge(g.Name, res); err != nil {
				t.Errorf("not ready: %v\n%+v", err, res)
			}
		})
	}
}
