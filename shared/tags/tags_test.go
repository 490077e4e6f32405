package tags_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/auth"
	"github.com/mediacatalog/service/shared/catalog"
	"github.com/mediacatalog/service/shared/httpapi"
	"github.com/mediacatalog/service/shared/lambdahttp"
	"github.com/mediacatalog/service/shared/postgres"
	"github.com/mediacatalog/service/shared/tags"
)

// setup returns the group's fully wrapped handler over a database with the demo data
// and a second client with one tag, and the counter of its queries.
func setup(t testing.TB) (http.Handler, *testenv.DB, *postgres.QueryCounter) {
	t.Helper()
	g := testenv.NewGroup(t, func(db *testenv.DB, _ *auth.Sessions) []httpapi.Route {
		return tags.Routes(tags.Deps{Store: db.DB})
	})
	g.DB.Exec(t, `
		INSERT INTO clients (id, name) VALUES (2, 'Second');
		INSERT INTO tags (id, client_id, name, type) VALUES (1001, 2, 'Mecha', 'theme');`)
	g.Counter.Reset()
	return g.Handler, g.DB, g.Counter
}

const missing = `{"data":"Required parameters missing","code":400}`

func TestRoutes(t *testing.T) {
	h, db, counter := setup(t)
	var actionSeries int64
	if err := db.Pool.QueryRow(context.Background(),
		`SELECT count(*) FROM series_tags WHERE tag_id = 1`).Scan(&actionSeries); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name   string
		target string
		status int
		body   string                   // exact body (JSON), when set
		check  func(*testing.T, []byte) // otherwise
	}{
		{name: "demo tags", target: "/tags?client=1", status: 200, check: func(t *testing.T, b []byte) {
			var got []catalog.Tag
			testenv.DecodeInto(t, b, &got)
			names := make([]string, len(got))
			types := map[string]bool{}
			for i, tag := range got {
				names[i] = tag.Name
				types[tag.Type] = true
				if tag.ID == 1001 {
					t.Errorf("client 1 sees client 2's tag")
				}
			}
			if len(got) < 20 || !sort.StringsAreSorted(names) || len(types) != 3 {
				t.Errorf("%d tags of %d types, sorted %v: %q", len(got), len(types), sort.StringsAreSorted(names), names)
			}
		}},
		{name: "other client", target: "/tags?client=2", status: 200, body: `[{"id":1001,"name":"Mecha","type":"theme"}]`},
		{name: "client without tags", target: "/tags?client=77", status: 200, body: `[]`},
		{name: "client missing", target: "/tags", status: 400, body: missing},
		{name: "client empty", target: "/tags?client=", status: 400, body: missing},
		{name: "client not a number", target: "/tags?client=abc", status: 400, body: missing},
		{name: "client zero", target: "/tags?client=0", status: 400, body: missing},
		{name: "client negative", target: "/tags?client=-1", status: 400, body: missing},
		{name: "client fractional", target: "/tags?client=1.5", status: 400, body: missing},
		{name: "client too large", target: "/tags?client=99999999999999999999", status: 400, body: missing},
		{name: "tag", target: "/tags/id/1", status: 200, check: func(t *testing.T, b []byte) {
			var got catalog.TagDetail
			testenv.DecodeInto(t, b, &got)
			want := catalog.TagDetail{Tag: catalog.Tag{ID: 1, Name: "Action", Type: "genre"}, SeriesCount: actionSeries}
			if got != want || actionSeries == 0 {
				t.Errorf("got %+v, want %+v", got, want)
			}
		}},
		{name: "tag without series", target: "/tags/id/1001", status: 200, body: `{"id":1001,"name":"Mecha","type":"theme","series_count":0}`},
		{name: "unknown tag", target: "/tags/id/999999", status: 404, body: `{"data":"Tag not found","code":404}`},
		{name: "id not a number", target: "/tags/id/abc", status: 400, body: missing},
		{name: "id zero", target: "/tags/id/0", status: 400, body: missing},
		{name: "id negative", target: "/tags/id/-4", status: 400, body: missing},
		{name: "id fractional", target: "/tags/id/1.0", status: 400, body: missing},
		{name: "id too large", target: "/tags/id/99999999999999999999", status: 400, body: missing},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			counter.Reset()
			rec := testenv.Do(t, h, testenv.Request(http.MethodGet, tc.target, nil))
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.status, rec.Body)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/json; charset=utf-8" {
				t.Errorf("Content-Type %q", ct)
			}
			if tc.body != "" {
				testenv.AssertJSON(t, rec.Body.Bytes(), tc.body)
			} else {
				tc.check(t, rec.Body.Bytes())
			}
			// A store call is one query; rejected input none.
			want := int64(1)
			if tc.status == 400 {
				want = 0
			}
			if n := counter.Count(); n != want {
				t.Errorf("%d queries, want %d", n, want)
			}
		})
	}
}

func TestLambdaEvents(t *testing.T) {
	h, _, _ := setup(t)
	tests := []struct {
		event string
		check func(*testing.T, []byte)
	}{
		{"tags/get-tags.json", func(t *testing.T, b []byte) {
			var got []catalog.Tag
			testenv.DecodeInto(t, b, &got)
			if len(got) < 20 {
				t.Errorf("%d tags", len(got))
			}
		}},
		{"tags/get-tag.json", func(t *testing.T, b []byte) {
			var got catalog.TagDetail
			testenv.DecodeInto(t, b, &got)
			if got.ID != 1 || got.Name != "Action" || got.SeriesCount == 0 {
				t.Errorf("tag %+v", got)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.event, func(t *testing.T) {
			resp := testenv.Invoke(t, h, testenv.Event(t, tc.event))
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, resp.Body)
			}
			tc.check(t, testenv.ResponseBody(t, resp))
		})
	}
}

// BenchmarkTagsLambda serves GET /tags?client=1 as under Lambda: the event's JSON in,
// through the API Gateway v2 adapter and the whole middleware, the response out.
func BenchmarkTagsLambda(b *testing.B) {
	h, _, _ := setup(b)
	event, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "events", "tags", "get-tags.json"))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		resp, err := lambdahttp.Invoke(ctx, h, event)
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("invoke: %d %v", resp.StatusCode, err)
		}
	}
}

// BenchmarkTagsBaseline is the same work without adapter or middleware: the store call
// and the JSON encoding.
func BenchmarkTagsBaseline(b *testing.B) {
	_, db, _ := setup(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		list, err := db.Tags(ctx, 1)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := json.Marshal(list); err != nil {
			b.Fatal(err)
		}
	}
}
