package publishers_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/auth"
	"github.com/mediacatalog/service/shared/catalog"
	"github.com/mediacatalog/service/shared/httpapi"
	"github.com/mediacatalog/service/shared/postgres"
	"github.com/mediacatalog/service/shared/publishers"
)

// setup returns the group's fully wrapped handler over a database with the demo data
// and a second client with one publisher of one series, and the counter of its queries.
func setup(t testing.TB) (http.Handler, *testenv.DB, *postgres.QueryCounter) {
	t.Helper()
	g := testenv.NewGroup(t, func(db *testenv.DB, _ *auth.Sessions) []httpapi.Route {
		return publishers.Routes(publishers.Deps{Store: db.DB})
	})
	g.DB.Exec(t, `
		INSERT INTO clients (id, name) VALUES (2, 'Second');
		INSERT INTO publishers (id, client_id, name, slug, website) VALUES (1001, 2, 'Second Press', 'second-press', 'press.example');
		INSERT INTO series (id, client_id, name, slug, type) VALUES (1001, 2, 'Lonely Series', 'lonely-series', 'Manga');
		INSERT INTO series_publishers (series_id, publisher_id) VALUES (1001, 1001);
		INSERT INTO clients (id, name) VALUES (3, 'Third');
		INSERT INTO publishers (id, client_id, name, slug, website, image_source)
		     VALUES (1002, 3, 'Script Press', 'script-press', 'javascript:alert(document.cookie)', 'javascript:alert(1)');
		INSERT INTO publisher_descriptions (id, publisher_id, description, language, source) VALUES
		     (1002, 1002, 'a', 'English', 'javascript:alert(1)'), (1003, 1002, 'b', 'English', 'data:text/html,x'),
		     (1004, 1002, 'c', 'English', 'Wikipedia');`)
	g.Counter.Reset()
	return g.Handler, g.DB, g.Counter
}

const missing = `{"data":"Required parameters missing","code":400}`

type page struct {
	Publications []catalog.Publication `json:"publications"`
	Max          int64                 `json:"max"`
	MaxExact     bool                  `json:"max_exact"`
	From         int64                 `json:"from"`
	To           int64                 `json:"to"`
}

func TestRoutes(t *testing.T) {
	h, db, counter := setup(t)
	ctx := context.Background()

	var shueishaSeries int64
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM series_publishers WHERE publisher_id = 2`).Scan(&shueishaSeries); err != nil {
		t.Fatal(err)
	}
	demoSlugs := []string{}
	for _, p := range mustList(t, h, "/publishers?client=1") {
		demoSlugs = append(demoSlugs, p.Slug)
	}
	if len(demoSlugs) != 10 {
		t.Fatalf("%d demo publishers", len(demoSlugs))
	}

	listOf := func(check func(*testing.T, []catalog.PublisherListItem)) func(*testing.T, []byte) {
		return func(t *testing.T, b []byte) {
			var got []catalog.PublisherListItem
			testenv.DecodeInto(t, b, &got)
			check(t, got)
		}
	}
	pageOf := func(check func(*testing.T, page)) func(*testing.T, []byte) {
		return func(t *testing.T, b []byte) {
			var got page
			testenv.DecodeInto(t, b, &got)
			if got.Publications == nil {
				t.Fatalf("publications is not an array: %s", b)
			}
			check(t, got)
		}
	}
	envelope := func(max, from, to int64, n int) func(*testing.T, page) {
		return func(t *testing.T, p page) {
			if p.Max != max || !p.MaxExact || p.From != from || p.To != to || len(p.Publications) != n {
				t.Errorf("max %d from %d to %d with %d publications; want %d %d %d with %d",
					p.Max, p.From, p.To, len(p.Publications), max, from, to, n)
			}
		}
	}
	slugs := func(want ...string) func(*testing.T, []catalog.PublisherListItem) {
		return func(t *testing.T, got []catalog.PublisherListItem) {
			s := make([]string, len(got))
			for i, p := range got {
				s[i] = p.Slug
			}
			if !slices.Equal(s, want) {
				t.Errorf("slugs %q, want %q", s, want)
			}
		}
	}

	tests := []struct {
		name   string
		target string
		status int
		body   string                   // exact body (JSON), when set
		check  func(*testing.T, []byte) // otherwise
	}{
		// GET /publishers
		{name: "list by id without order", target: "/publishers?client=1", status: 200, check: listOf(func(t *testing.T, got []catalog.PublisherListItem) {
			if got[0].Slug != "kodansha" || got[1].Slug != "shueisha" || len(got) != 10 {
				t.Errorf("first %q, %q of %d", got[0].Slug, got[1].Slug, len(got))
			}
			for i := 1; i < len(got); i++ {
				if got[i].ID <= got[i-1].ID {
					t.Errorf("not in id order at %d", i)
				}
			}
		})},
		{name: "list name-asc", target: "/publishers?client=1&order=name-asc", status: 200, check: listOf(func(t *testing.T, got []catalog.PublisherListItem) {
			names := make([]string, len(got))
			for i, p := range got {
				names[i] = p.Name
			}
			if !sort.StringsAreSorted(names) {
				t.Errorf("not by name: %q", names)
			}
		})},
		{name: "list name-desc", target: "/publishers?client=1&order=name-desc&limit=1", status: 200, check: listOf(slugs("yen-press"))},
		{name: "list added-asc", target: "/publishers?client=1&order=added-asc&limit=2", status: 200, check: listOf(slugs("kodansha", "shueisha"))},
		{name: "list added-desc", target: "/publishers?client=1&order=added-desc&limit=2", status: 200, check: listOf(slugs("akita-shoten", "hakusensha"))},
		{name: "list search, case-insensitive", target: "/publishers?client=1&search=sHoTeN", status: 200, check: listOf(slugs("akita-shoten"))},
		{name: "list search with a literal percent", target: "/publishers?client=1&search=%25", status: 200, body: `[]`},
		{name: "list search with a literal underscore", target: "/publishers?client=1&search=a_a", status: 200, body: `[]`},
		{name: "list paging", target: "/publishers?client=1&limit=3&offset=2", status: 200, check: listOf(slugs("shogakukan", "viz-media", "yen-press"))},
		{name: "list offset past the end", target: "/publishers?client=1&offset=50", status: 200, body: `[]`},
		{name: "list lang is accepted and ignored", target: "/publishers?client=1&lang=Klingon&limit=1", status: 200, check: listOf(slugs("kodansha"))},
		{name: "list fields", target: "/publishers?client=1&limit=1", status: 200, check: func(t *testing.T, b []byte) {
			var got []map[string]any
			testenv.DecodeInto(t, b, &got)
			want := map[string]any{"id": 1.0, "name": "Kodansha", "short-name": "Kodansha", "slug": "kodansha",
				"country": "Japan", "website": "https://www.kodansha.co.jp", "headquarter": "Bunkyō, Tokyo",
				"founding_date": "1909-11-01", "image": "publishers/kodansha.png", "image_source": "Wikimedia Commons", "client": 1.0}
			for k, v := range want {
				if got[0][k] != v {
					t.Errorf("%s = %v, want %v", k, got[0][k], v)
				}
			}
			if n, _ := got[0]["series_count"].(float64); n < 5 {
				t.Errorf("series_count %v", got[0]["series_count"])
			}
		}},
		{name: "list unknown founding date", target: "/publishers?client=1&search=viz", status: 200, check: listOf(func(t *testing.T, got []catalog.PublisherListItem) {
			if len(got) != 1 || got[0].FoundingDate != "" {
				t.Errorf("got %+v", got)
			}
		})},
		{name: "list of another client", target: "/publishers?client=2", status: 200,
			body: `[{"id":1001,"name":"Second Press","short-name":"","slug":"second-press","country":"","website":"https://press.example",
				"headquarter":"","series_count":1,"founding_date":"","image":"","image_source":"","client":2}]`},
		{name: "list of a client without publishers", target: "/publishers?client=55", status: 200, body: `[]`},
		{name: "list client missing", target: "/publishers", status: 400, body: missing},
		{name: "list client not a number", target: "/publishers?client=one", status: 400, body: missing},
		{name: "list client zero", target: "/publishers?client=0", status: 400, body: missing},
		{name: "list limit not a number", target: "/publishers?client=1&limit=ten", status: 400, body: missing},
		{name: "list limit negative", target: "/publishers?client=1&limit=-1", status: 400, body: missing},
		{name: "list offset not a number", target: "/publishers?client=1&offset=x", status: 400, body: missing},
		{name: "list offset negative", target: "/publishers?client=1&offset=-3", status: 400, body: missing},
		{name: "list order unknown", target: "/publishers?client=1&order=random", status: 400, body: missing},
		{name: "list order is case-sensitive", target: "/publishers?client=1&order=NAME-ASC", status: 400, body: missing},

		// GET /publisher/slug/{slug}
		{name: "detail", target: "/publisher/slug/viz-media", status: 200, check: func(t *testing.T, b []byte) {
			var got catalog.Publisher
			testenv.DecodeInto(t, b, &got)
			if got.ID != 4 || got.Name != "Viz Media" || got.Domain != "viz.com" || got.Website != "https://www.viz.com" ||
				len(got.Descriptions) != 2 || len(got.Aliases) != 2 || len(got.Relations) != 2 {
				t.Errorf("detail %+v", got)
			}
			for _, r := range got.Relations {
				if r.Type != "Parent company" || (r.Slug != "shueisha" && r.Slug != "shogakukan") || r.RelationID == 4 {
					t.Errorf("relation %+v", r)
				}
			}
		}},
		{name: "detail of another client's publisher", target: "/publisher/slug/second-press", status: 200,
			body: `{"id":1001,"name":"Second Press","slug":"second-press","image":"","website":"https://press.example","country":"",
				"domain":"press.example","descriptions":[],"aliases":[],"relations":[]}`},
		// What was stored past the request checks (an import, SQL) is served as a
		// link only when it is one; a plain-text source stays.
		{name: "list of stored links that are not links", target: "/publishers?client=3", status: 200,
			body: `[{"id":1002,"name":"Script Press","short-name":"","slug":"script-press","country":"","website":"",
				"headquarter":"","series_count":0,"founding_date":"","image":"","image_source":"","client":3}]`},
		{name: "detail of stored links that are not links", target: "/publisher/slug/script-press", status: 200,
			body: `{"id":1002,"name":"Script Press","slug":"script-press","image":"","website":"","country":"","domain":"",
				"descriptions":[{"id":1002,"description":"a","language":"English","source":""},
				{"id":1003,"description":"b","language":"English","source":""},
				{"id":1004,"description":"c","language":"English","source":"Wikipedia"}],"aliases":[],"relations":[]}`},
		// Bounded, printable query text.
		{name: "list search of 101 characters", target: "/publishers?client=1&search=" + strings.Repeat("a", 101), status: 400,
			body: `{"data":"Invalid search: at most 100 characters","code":400}`},
		{name: "list search of 100 characters", target: "/publishers?client=1&search=" + strings.Repeat("a", 100), status: 200, body: `[]`},
		{name: "list lang of 33 characters", target: "/publishers?client=1&lang=" + strings.Repeat("a", 33), status: 400,
			body: `{"data":"Invalid lang: at most 32 characters","code":400}`},
		{name: "publications search with a right-to-left override", target: "/publisher/publications/2?client=1&search=a%E2%80%AEb", status: 400,
			body: `{"data":"Invalid search: control characters and invisible formatting characters (such as U+202E) are not allowed","code":400}`},
		{name: "publications user_lang of 33 characters", target: "/publisher/publications/2?client=1&user_lang=" + strings.Repeat("a", 33), status: 400,
			body: `{"data":"Invalid user_lang: at most 32 characters","code":400}`},
		{name: "detail unknown slug", target: "/publisher/slug/no-such-press", status: 404, body: `{"data":"Publisher not found","code":404}`},
		{name: "detail blank slug", target: "/publisher/slug/%20", status: 400, body: missing},

		// GET /publisher/random
		{name: "random", target: "/publisher/random?client=1", status: 200, check: func(t *testing.T, b []byte) {
			var s string
			testenv.DecodeInto(t, b, &s)
			if !slices.Contains(demoSlugs, s) {
				t.Errorf("%q is not a demo publisher", s)
			}
		}},
		{name: "random of a client with one publisher", target: "/publisher/random?client=2", status: 200, body: `"second-press"`},
		{name: "random of a client without publishers", target: "/publisher/random?client=55", status: 404, body: `{"data":"Publisher not found","code":404}`},
		{name: "random client missing", target: "/publisher/random", status: 400, body: missing},
		{name: "random client not a number", target: "/publisher/random?client=x1", status: 400, body: missing},

		// GET /publisher/publications/{id}
		{name: "publications", target: "/publisher/publications/2?client=1", status: 200,
			check: pageOf(envelope(shueishaSeries, 0, shueishaSeries, int(shueishaSeries)))},
		{name: "publications page", target: "/publisher/publications/2?client=1&limit=5&offset=3", status: 200,
			check: pageOf(envelope(shueishaSeries, 3, 8, 5))},
		{name: "publications last page", target: fmt.Sprintf("/publisher/publications/2?client=1&limit=5&offset=%d", shueishaSeries-2), status: 200,
			check: pageOf(envelope(shueishaSeries, shueishaSeries-2, shueishaSeries, 2))},
		{name: "publications past the end", target: "/publisher/publications/2?client=1&offset=500", status: 200,
			check: pageOf(envelope(shueishaSeries, 500, 500, 0))},
		{name: "publications zero limit", target: "/publisher/publications/2?client=1&limit=0&offset=4", status: 200,
			check: pageOf(envelope(shueishaSeries, 4, 4, 0))},
		{name: "publications unknown publisher", target: "/publisher/publications/99999?client=1", status: 200,
			body: `{"publications":[],"max":0,"max_exact":true,"from":0,"to":0}`},
		{name: "publications scoped by client", target: "/publisher/publications/2?client=2", status: 200,
			body: `{"publications":[],"max":0,"max_exact":true,"from":0,"to":0}`},
		{name: "publications of another client", target: "/publisher/publications/1001?client=2&user_lang=Japanese", status: 200,
			body: `{"publications":[{"id":1001,"name":"Lonely Series","slug":"lonely-series","type":"Manga","origin":"",
				"alias":"","aliases":[],"description":"","tags":[],"volume":null}],"max":1,"max_exact":true,"from":0,"to":1}`},
		{name: "publications search by alias, case-insensitive", target: "/publisher/publications/1?client=1&search=SHINGEKI", status: 200,
			check: pageOf(func(t *testing.T, p page) {
				if len(p.Publications) != 1 || p.Publications[0].Slug != "attack-on-titan" || p.Max != 1 {
					t.Errorf("page %+v", p)
				}
			})},
		{name: "publications search with a literal percent", target: "/publisher/publications/2?client=1&search=%25", status: 200,
			body: `{"publications":[],"max":0,"max_exact":true,"from":0,"to":0}`},
		{name: "publications in Japanese", target: "/publisher/publications/1?client=1&user_lang=Japanese&search=titan", status: 200,
			check: pageOf(func(t *testing.T, p page) {
				if len(p.Publications) != 1 {
					t.Fatalf("page %+v", p)
				}
				a := p.Publications[0]
				if a.Alias != "進撃の巨人" || a.Description == "" || a.Volume == nil || a.Volume.CoverPath != "covers/attack-on-titan/1.jpg" || len(a.Tags) == 0 {
					t.Errorf("publication %+v", a)
				}
			})},
		{name: "publications name-desc", target: "/publisher/publications/2?client=1&order=name-desc&limit=1", status: 200,
			check: pageOf(func(t *testing.T, p page) {
				if len(p.Publications) != 1 || p.Publications[0].Name != "Tokyo Ghoul" {
					t.Errorf("first %+v", p.Publications)
				}
			})},
		{name: "publications added-desc", target: "/publisher/publications/2?client=1&order=added-desc&limit=1", status: 200,
			check: pageOf(func(t *testing.T, p page) {
				if len(p.Publications) != 1 || p.Publications[0].Name != "Sakamoto Days" {
					t.Errorf("first %+v", p.Publications)
				}
			})},
		{name: "publications id not a number", target: "/publisher/publications/abc?client=1", status: 400, body: missing},
		{name: "publications id zero", target: "/publisher/publications/0?client=1", status: 400, body: missing},
		{name: "publications client missing", target: "/publisher/publications/2", status: 400, body: missing},
		{name: "publications client not a number", target: "/publisher/publications/2?client=abc", status: 400, body: missing},
		{name: "publications limit not a number", target: "/publisher/publications/2?client=1&limit=all", status: 400, body: missing},
		{name: "publications offset negative", target: "/publisher/publications/2?client=1&offset=-1", status: 400, body: missing},
		{name: "publications order unknown", target: "/publisher/publications/2?client=1&order=popular", status: 400, body: missing},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			counter.Reset()
			rec := testenv.Do(t, h, testenv.Request(http.MethodGet, tc.target, nil))
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.status, rec.Body)
			}
			if tc.body != "" {
				testenv.AssertJSON(t, rec.Body.Bytes(), tc.body)
			} else {
				tc.check(t, rec.Body.Bytes())
			}
			// At most two round trips per request; rejected input none.
			n := counter.Count()
			if tc.status == 400 && n != 0 || n > 2 {
				t.Errorf("%d queries", n)
			}
		})
	}
}

// TestPublicationsPastThreshold: with a threshold T of 2, a search matching more of a
// publisher's series reports max as a lower bound (at least T and to, max_exact false)
// on a full page, and exactly on a page shorter than its limit or within T of the end
// (a page at or past T counts up to offset+T); every page holds the same series as
// with the default threshold.
func TestPublicationsPastThreshold(t *testing.T) {
	_, db, _ := setup(t)
	store := *db.DB
	store.MaxExact = 2
	h := httpapi.Wrap(httpapi.NewMux(publishers.Routes(publishers.Deps{Store: &store})),
		httpapi.Options{Log: slog.New(slog.DiscardHandler)})
	get := func(t *testing.T, handler http.Handler, query string) page {
		t.Helper()
		rec := testenv.Do(t, handler, testenv.Request(http.MethodGet, "/publisher/publications/2?client=1&search=a"+query, nil))
		if rec.Code != http.StatusOK {
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
		var p page
		testenv.DecodeInto(t, rec.Body.Bytes(), &p)
		return p
	}
	all := get(t, httpapi.Wrap(httpapi.NewMux(publishers.Routes(publishers.Deps{Store: db.DB})),
		httpapi.Options{Log: slog.New(slog.DiscardHandler)}), "")
	n := int64(len(all.Publications))
	if n < 5 || all.Max != n || !all.MaxExact {
		t.Fatalf("the whole search: %d series, max %d exact %t; want at least 5, exact", n, all.Max, all.MaxExact)
	}
	tests := []struct {
		limit, offset int64
		max           int64
		exact         bool
	}{
		{1, 0, 2, false},
		{2, 1, 3, false},
		{3, 1, 4, false},
		{n, 0, n, false}, // a full page that happens to end the list: the end is not known
		{n + 1, 0, n, true},
		{n, 1, n, true},
		{1, 2, 4, false}, // at T: counted up to offset+T
		{1, n - 2, n, true},
		{2, n - 2, n, true},
		{2, n + 5, n, true},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("limit %d offset %d", tc.limit, tc.offset), func(t *testing.T) {
			p := get(t, h, fmt.Sprintf("&limit=%d&offset=%d", tc.limit, tc.offset))
			want := all.Publications[min(tc.offset, n):min(tc.offset+tc.limit, n)]
			if p.Max != tc.max || p.MaxExact != tc.exact || p.From != tc.offset || p.To != tc.offset+int64(len(want)) ||
				!slices.EqualFunc(p.Publications, want, func(a, b catalog.Publication) bool { return a.ID == b.ID }) {
				t.Errorf("%d series, max %d exact %t from %d to %d; want %d series, max %d exact %t",
					len(p.Publications), p.Max, p.MaxExact, p.From, p.To, len(want), tc.max, tc.exact)
			}
		})
	}
}

func TestQueryCounts(t *testing.T) {
	h, _, counter := setup(t)
	tests := []struct {
		target string
		want   int64
	}{
		{"/publishers?client=1&search=a&order=name-asc&limit=5", 1},
		{"/publisher/slug/shueisha", 1},
		{"/publisher/random?client=1", 1},
		{"/publisher/publications/2?client=1&search=o&limit=5", 1},
		{"/publisher/publications/99999?client=1", 1},
		// An empty page past the end cannot tell the total: a second query counts.
		{"/publisher/publications/2?client=1&offset=500", 2},
	}
	for _, tc := range tests {
		t.Run(tc.target, func(t *testing.T) {
			counter.Reset()
			rec := testenv.Do(t, h, testenv.Request(http.MethodGet, tc.target, nil))
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			if n := counter.Count(); n != tc.want {
				t.Errorf("%d queries, want %d", n, tc.want)
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
		{"publishers/get-publishers.json", func(t *testing.T, b []byte) {
			var got []catalog.PublisherListItem
			testenv.DecodeInto(t, b, &got)
			if len(got) != 9 || got[0].Slug != "akita-shoten" {
				t.Errorf("%d publishers, first %+v", len(got), got)
			}
		}},
		{"publishers/get-publisher.json", func(t *testing.T, b []byte) {
			var got catalog.Publisher
			testenv.DecodeInto(t, b, &got)
			if got.Slug != "shueisha" || got.Domain != "shueisha.co.jp" || len(got.Relations) == 0 {
				t.Errorf("publisher %+v", got)
			}
		}},
		{"publishers/get-random-publisher.json", func(t *testing.T, b []byte) {
			var s string
			testenv.DecodeInto(t, b, &s)
			if s == "" {
				t.Errorf("slug %q", s)
			}
		}},
		{"publishers/get-publications.json", func(t *testing.T, b []byte) {
			var got page
			testenv.DecodeInto(t, b, &got)
			if len(got.Publications) != 9 || got.From != 0 || got.To != 9 || got.Max < 9 {
				t.Errorf("page of %d: max %d from %d to %d", len(got.Publications), got.Max, got.From, got.To)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.event, func(t *testing.T) {
			resp := testenv.Invoke(t, h, testenv.Event(t, tc.event))
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, resp.Body)
			}
			if ct := resp.Headers["Content-Type"]; ct != "application/json; charset=utf-8" {
				t.Errorf("Content-Type %q", ct)
			}
			tc.check(t, testenv.ResponseBody(t, resp))
		})
	}
}

func TestWebsiteDomain(t *testing.T) {
	tests := []struct{ website, want string }{
		{"", ""},
		{"   ", ""},
		{"https://www.kodansha.co.jp", "kodansha.co.jp"},
		{"https://www.kodansha.co.jp/en/", "kodansha.co.jp"},
		{"http://viz.com", "viz.com"},
		{"HTTPS://WWW.Viz.COM/manga", "viz.com"},
		{"https://www.example.com:8443/path?q=1#top", "example.com"},
		{"yenpress.com", "yenpress.com"},
		{"www.yenpress.com/about", "yenpress.com"},
		{"//www.hakusensha.co.jp", "hakusensha.co.jp"},
		{"https://shop.www.example.com", "shop.www.example.com"},
		{"https://wwwexample.com", "wwwexample.com"},
		{"https://www.example.com.", "example.com"},
		{"https://user:secret@www.example.com/", "example.com"},
		{"https://[::1]:8080/", "::1"},
		{"http://%zz", ""},
	}
	for _, tc := range tests {
		t.Run(tc.website, func(t *testing.T) {
			if got := catalog.WebsiteDomain(tc.website); got != tc.want {
				t.Errorf("WebsiteDomain(%q) = %q, want %q", tc.website, got, tc.want)
			}
		})
	}
}

func mustList(t *testing.T, h http.Handler, target string) []catalog.PublisherListItem {
	t.Helper()
	rec := testenv.Do(t, h, testenv.Request(http.MethodGet, target, nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", target, rec.Code, rec.Body)
	}
	var got []catalog.PublisherListItem
	testenv.DecodeInto(t, rec.Body.Bytes(), &got)
	return got
}
