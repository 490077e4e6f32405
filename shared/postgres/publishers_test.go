package postgres_test

import (
	"context"
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/catalog"
	"github.com/mediacatalog/service/shared/postgres"
)

// publisherFixture adds clients 2 and 3 beside the demo catalog: three publishers of
// client 2 whose names exercise the search's wildcards, and four series of publisher
// 1001 with every shape of localized metadata, plus a series of client 3 linked to it.
const publisherFixture = `
	INSERT INTO clients (id, name) VALUES (2, 'Second'), (3, 'Third');
	INSERT INTO publishers (id, client_id, name, short_name, slug, country, website, headquarter,
	                        founding_date, image, image_source, created_at) VALUES
		(1001, 2, '100% Manga', 'Hundred', 'hundred-percent', 'France', 'http://WWW.Hundred.example:8080/path',
		 'Paris', '2001-02-03', 'p/1001.png', 'own', '2020-03-01Z'),
		(1002, 2, 'Studio_Works', 'SW', 'studio-works', 'Japan', '', '', NULL, '', '', '2020-01-01Z'),
		(1003, 2, 'Radio Works', 'RW', 'radio-works', 'Japan', 'radioworks.example', '', NULL, '', '', '2020-02-01Z'),
		(1004, 3, 'Third Press', 'TP', 'third-press', 'Japan', '', '', NULL, '', '', '2020-01-01Z');
	INSERT INTO series (id, client_id, name, slug, type, origin, created_at) VALUES
		(1001, 2, 'Alpha Story', 'alpha-story', 'Manga', 'Japan', '2020-03-01Z'),
		(1002, 2, 'Beta_Tale', 'beta-tale', 'Manga', 'South Korea', '2020-04-01Z'),
		(1003, 2, 'Delta', 'delta', 'Light Novel', 'Japan', '2020-01-01Z'),
		(1004, 2, 'Gamma 100%', 'gamma-100', 'Manga', 'France', '2020-02-01Z'),
		(1005, 3, 'Other Client Series', 'other-client-series', 'Manga', 'Japan', '2020-01-01Z');
	INSERT INTO series_publishers (series_id, publisher_id) VALUES
		(1001, 1001), (1002, 1001), (1003, 1001), (1004, 1001), (1005, 1001), (1003, 1003);
	INSERT INTO series_aliases (id, series_id, title, language) VALUES
		(1001, 1001, 'The First', 'English'), (1002, 1001, 'アルファ', 'Japanese'),
		(1003, 1001, 'Premier', 'English'), (1004, 1003, 'Hidden Omega', 'German');
	INSERT INTO series_descriptions (series_id, language, description) VALUES
		(1001, 'English', 'Alpha in English'), (1001, 'Japanese', 'アルファの説明'),
		(1002, 'Japanese', 'ベータの説明'),
		(1004, 'German', 'Gamma auf Deutsch'), (1004, 'English', 'Gamma in English');
	INSERT INTO tags (id, client_id, name, type) VALUES (1001, 2, 'Drama', 'genre'), (1002, 2, 'Action', 'genre');
	INSERT INTO series_tags (series_id, tag_id) VALUES (1001, 1001), (1001, 1002);
	INSERT INTO volumes (id, series_id, number, cover_path, aspect_ratio, nsfw, nsfw18) VALUES
		(1003, 1001, 3, 'c/3.jpg', 0.7, 0, 0), (1001, 1001, 1, 'c/1.jpg', 0.65, 1, 0),
		(1002, 1001, 2, 'c/2.jpg', 0.7, 0, 0), (1004, 1003, 2, 'd/2.jpg', 0.7, 0, 1);`

func publisherIDs(items []catalog.PublisherListItem) []int64 {
	ids := make([]int64, len(items))
	for i, p := range items {
		ids[i] = p.ID
	}
	return ids
}

func TestPublishersList(t *testing.T) {
	ctx := context.Background()
	counter := &postgres.QueryCounter{}
	db := catalogDB(t, counter)
	catalogExec(t, db, publisherFixture)

	all := catalog.PublisherFilter{Client: 2, Limit: 1 << 53}
	with := func(change func(*catalog.PublisherFilter)) catalog.PublisherFilter {
		f := all
		change(&f)
		return f
	}
	tests := []struct {
		name string
		f    catalog.PublisherFilter
		want []int64
	}{
		{"no order: by id", all, []int64{1001, 1002, 1003}},
		{"name-asc", with(func(f *catalog.PublisherFilter) { f.Order = "name-asc" }), []int64{1001, 1003, 1002}},
		{"name-desc", with(func(f *catalog.PublisherFilter) { f.Order = "name-desc" }), []int64{1002, 1003, 1001}},
		{"added-asc", with(func(f *catalog.PublisherFilter) { f.Order = "added-asc" }), []int64{1002, 1003, 1001}},
		{"added-desc", with(func(f *catalog.PublisherFilter) { f.Order = "added-desc" }), []int64{1001, 1003, 1002}},
		{"search is case-insensitive", with(func(f *catalog.PublisherFilter) { f.Search = "MANGA" }), []int64{1001}},
		{"search substring", with(func(f *catalog.PublisherFilter) { f.Search = "works" }), []int64{1002, 1003}},
		{"literal percent", with(func(f *catalog.PublisherFilter) { f.Search = "%" }), []int64{1001}},
		{"literal underscore", with(func(f *catalog.PublisherFilter) { f.Search = "_" }), []int64{1002}},
		{"underscore is not a wildcard", with(func(f *catalog.PublisherFilter) { f.Search = "o_w" }), []int64{1002}},
		{"no match", with(func(f *catalog.PublisherFilter) { f.Search = "nothing like it" }), []int64{}},
		{"limit and offset", with(func(f *catalog.PublisherFilter) { f.Limit, f.Offset = 1, 1 }), []int64{1002}},
		{"offset past the end", with(func(f *catalog.PublisherFilter) { f.Offset = 10 }), []int64{}},
		{"zero limit", with(func(f *catalog.PublisherFilter) { f.Limit = 0 }), []int64{}},
		{"other client", with(func(f *catalog.PublisherFilter) { f.Client = 3 }), []int64{1004}},
		{"unknown client", with(func(f *catalog.PublisherFilter) { f.Client = 99 }), []int64{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			counter.Reset()
			got, err := db.Publishers(ctx, tc.f)
			if err != nil {
				t.Fatal(err)
			}
			catalogQueries(t, counter, 1)
			if got == nil {
				t.Fatal("nil slice: would encode as null")
			}
			if ids := publisherIDs(got); !slices.Equal(ids, tc.want) {
				t.Errorf("ids %v, want %v", ids, tc.want)
			}
		})
	}

	t.Run("fields", func(t *testing.T) {
		got, err := db.Publishers(ctx, catalog.PublisherFilter{Client: 2, Limit: 10, Order: "name-asc"})
		if err != nil {
			t.Fatal(err)
		}
		want := []catalog.PublisherListItem{
			{ID: 1001, Name: "100% Manga", ShortName: "Hundred", Slug: "hundred-percent", Country: "France",
				Website: "http://WWW.Hundred.example:8080/path", Headquarter: "Paris", SeriesCount: 4,
				FoundingDate: "2001-02-03", Image: "p/1001.png", ImageSource: "own", Client: 2},
			{ID: 1003, Name: "Radio Works", ShortName: "RW", Slug: "radio-works", Country: "Japan",
				Website: "https://radioworks.example", SeriesCount: 1, Client: 2},
			{ID: 1002, Name: "Studio_Works", ShortName: "SW", Slug: "studio-works", Country: "Japan", Client: 2},
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("got  %+v\nwant %+v", got, want)
		}
		b, _ := json.Marshal(got[0])
		var keys map[string]any
		_ = json.Unmarshal(b, &keys)
		for _, k := range []string{"id", "name", "short-name", "slug", "country", "website", "headquarter",
			"series_count", "founding_date", "image", "image_source", "client"} {
			if _, ok := keys[k]; !ok {
				t.Errorf("JSON lacks %q: %s", k, b)
			}
		}
	})

	t.Run("demo publishers", func(t *testing.T) {
		got, err := db.Publishers(ctx, catalog.PublisherFilter{Client: 1, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 10 {
			t.Fatalf("%d demo publishers, want 10", len(got))
		}
		for _, p := range got {
			if p.Client != 1 || p.SeriesCount == 0 {
				t.Errorf("publisher %s: client %d, %d series", p.Slug, p.Client, p.SeriesCount)
			}
		}
	})

	t.Run("unknown order", func(t *testing.T) {
		_, err := db.Publishers(ctx, with(func(f *catalog.PublisherFilter) { f.Order = "random" }))
		if apperr.CodeOf(err) != apperr.Invalid {
			t.Errorf("error %v, want invalid", err)
		}
	})
}

// TestPublisherCount: clients.publisher_count (the baseline schema), which tells the
// publishers list which end a page is nearer, follows every write that adds, removes or
// moves publishers, a truncate included. (TestCatalogColumnsFollowWrites checks it
// beside the other kept columns.)
func TestPublisherCount(t *testing.T) {
	ctx := context.Background()
	db := catalogDB(t, &postgres.QueryCounter{})
	catalogExec(t, db, publisherFixture)
	steps := []struct{ name, sql string }{
		{"fixture", ``},
		{"added", `INSERT INTO publishers (client_id, name, slug) VALUES (2, 'A', 'a'), (3, 'B', 'b'), (3, 'C', 'c')`},
		{"series count changed only", `INSERT INTO series_publishers (series_id, publisher_id) VALUES (1004, 1003)`},
		{"moved", `UPDATE publishers SET client_id = 3 WHERE id = 1002`},
		{"deleted", `DELETE FROM publishers WHERE client_id = 3`},
		{"truncated", `TRUNCATE publishers CASCADE`},
		{"added after truncate", `INSERT INTO publishers (client_id, name, slug) VALUES (2, 'D', 'd')`},
	}
	for _, step := range steps {
		if step.sql != "" {
			catalogExec(t, db, step.sql)
		}
		var off int64
		if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM clients c
			WHERE c.publisher_count <> (SELECT count(*) FROM publishers p WHERE p.client_id = c.id)`).Scan(&off); err != nil {
			t.Fatal(err)
		}
		if off != 0 {
			t.Errorf("after %s: %d clients with a stale publisher_count", step.name, off)
		}
	}
}

func TestPublisherBySlug(t *testing.T) {
	ctx := context.Background()
	counter := &postgres.QueryCounter{}
	db := catalogDB(t, counter)
	catalogExec(t, db, publisherFixture)

	t.Run("demo publisher with everything", func(t *testing.T) {
		counter.Reset()
		got, err := db.PublisherBySlug(ctx, "shueisha")
		if err != nil {
			t.Fatal(err)
		}
		catalogQueries(t, counter, 1)
		if got.ID != 2 || got.Name != "Shueisha" || got.Domain != "shueisha.co.jp" || got.Country != "Japan" {
			t.Errorf("publisher %+v", got)
		}
		langs := map[string]bool{}
		for _, d := range got.Descriptions {
			langs[d.Language] = true
			if d.ID == 0 || d.Description == "" {
				t.Errorf("description %+v", d)
			}
		}
		if !langs["English"] || len(langs) < 2 {
			t.Errorf("description languages %v, want English and another", langs)
		}
		if len(got.Aliases) == 0 || got.Aliases[0].Title != "集英社" || got.Aliases[0].Language != "Japanese" {
			t.Errorf("aliases %+v", got.Aliases)
		}
		var viz *catalog.PublisherRelation
		for i, r := range got.Relations {
			if r.Slug == "viz-media" {
				viz = &got.Relations[i]
			}
		}
		if viz == nil || viz.RelationID != 4 || viz.Name != "Viz Media" || viz.Type != "Subsidiary" || viz.ID == 0 || viz.Image == "" {
			t.Errorf("relation to Viz Media: %+v in %+v", viz, got.Relations)
		}
	})

	tests := []struct {
		slug string
		want catalog.Publisher
	}{
		{"hundred-percent", catalog.Publisher{ID: 1001, Name: "100% Manga", Slug: "hundred-percent", Image: "p/1001.png",
			Website: "http://WWW.Hundred.example:8080/path", Country: "France", Domain: "hundred.example",
			Descriptions: []catalog.PublisherDescription{}, Aliases: []catalog.PublisherAlias{}, Relations: []catalog.PublisherRelation{}}},
		{"radio-works", catalog.Publisher{ID: 1003, Name: "Radio Works", Slug: "radio-works", Website: "https://radioworks.example",
			Country: "Japan", Domain: "radioworks.example",
			Descriptions: []catalog.PublisherDescription{}, Aliases: []catalog.PublisherAlias{}, Relations: []catalog.PublisherRelation{}}},
		{"studio-works", catalog.Publisher{ID: 1002, Name: "Studio_Works", Slug: "studio-works", Country: "Japan",
			Descriptions: []catalog.PublisherDescription{}, Aliases: []catalog.PublisherAlias{}, Relations: []catalog.PublisherRelation{}}},
	}
	for _, tc := range tests {
		t.Run(tc.slug, func(t *testing.T) {
			counter.Reset()
			got, err := db.PublisherBySlug(ctx, tc.slug)
			if err != nil {
				t.Fatal(err)
			}
			catalogQueries(t, counter, 1)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}

	t.Run("unknown slug", func(t *testing.T) {
		counter.Reset()
		_, err := db.PublisherBySlug(ctx, "no-such-publisher")
		catalogQueries(t, counter, 1)
		e, ok := apperr.As(err)
		if !ok || e.Code != apperr.NotFound || e.Message != "Publisher not found" {
			t.Errorf("error %v, want not found", err)
		}
	})
}

func TestRandomPublisherSlug(t *testing.T) {
	ctx := context.Background()
	counter := &postgres.QueryCounter{}
	db := catalogDB(t, counter)
	catalogExec(t, db, publisherFixture)

	demoSlugs := map[string]bool{}
	rows, err := db.Pool.Query(ctx, `SELECT slug FROM publishers WHERE client_id = 1`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		demoSlugs[s] = true
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}

	t.Run("demo client", func(t *testing.T) {
		seen := map[string]bool{}
		for range 200 {
			counter.Reset()
			s, err := db.RandomPublisherSlug(ctx, 1)
			if err != nil {
				t.Fatal(err)
			}
			catalogQueries(t, counter, 1)
			if !demoSlugs[s] {
				t.Fatalf("slug %q is not one of client 1's", s)
			}
			seen[s] = true
		}
		// 200 uniform draws from 10 publishers all landing on one: probability 10^-199.
		if len(seen) < 2 {
			t.Errorf("200 draws gave only %v", seen)
		}
	})
	t.Run("client with one publisher", func(t *testing.T) {
		s, err := db.RandomPublisherSlug(ctx, 3)
		if err != nil || s != "third-press" {
			t.Errorf("got %q, %v; want third-press", s, err)
		}
	})
	// Uniform however the client's ids are spread: interleaved with another client's
	// (the random ids find them), and two ids a million apart (every random id misses,
	// the pick falls back to skipping). 8 standard deviations of slack: a false failure
	// is below 10^-14.
	catalogExec(t, db, `
		INSERT INTO clients (id, name) VALUES (4, 'Interleaved'), (5, 'Other'), (6, 'Sparse');
		INSERT INTO publishers (id, client_id, name, short_name, slug, country)
		SELECT n, CASE WHEN n % 2 = 0 THEN 4 ELSE 5 END, 'P' || n, 'P', 'p-' || n, 'Japan'
		FROM generate_series(5000, 5009) n;
		INSERT INTO publishers (id, client_id, name, short_name, slug, country) VALUES
			(6000, 6, 'Early', 'E', 'early', 'Japan'), (1006000, 6, 'Late', 'L', 'late', 'Japan');`)
	uniform := []struct {
		name   string
		client int64
		slugs  []string
	}{
		{"interleaved ids", 4, []string{"p-5000", "p-5002", "p-5004", "p-5006", "p-5008"}},
		{"ids a million apart", 6, []string{"early", "late"}},
	}
	for _, tc := range uniform {
		t.Run(tc.name, func(t *testing.T) {
			const perSlug = 200
			draws := perSlug * len(tc.slugs)
			got := map[string]int{}
			for range draws {
				s, err := db.RandomPublisherSlug(ctx, tc.client)
				if err != nil {
					t.Fatal(err)
				}
				got[s]++
			}
			sd := math.Sqrt(float64(draws) / float64(len(tc.slugs)) * (1 - 1/float64(len(tc.slugs))))
			for _, slug := range tc.slugs {
				if d := math.Abs(float64(got[slug] - perSlug)); d > 8*sd {
					t.Errorf("%s drawn %d times of %d, want about %d", slug, got[slug], draws, perSlug)
				}
			}
			if len(got) != len(tc.slugs) {
				t.Errorf("drew %v, want only %v", got, tc.slugs)
			}
		})
	}
	t.Run("client without publishers", func(t *testing.T) {
		counter.Reset()
		_, err := db.RandomPublisherSlug(ctx, 99)
		catalogQueries(t, counter, 1)
		e, ok := apperr.As(err)
		if !ok || e.Code != apperr.NotFound || e.Message != "Publisher not found" {
			t.Errorf("error %v, want not found", err)
		}
	})
}

// TestPublicationSearchFolded: a publication search (LIKE on the folded search text,
// migration 00022) matches exactly the series whose folded name or a folded alias
// contains the folded term as a literal substring, for any term: case and accents
// ignored ("pokemon" finds "Pokémon", "e" finds "é").
func TestPublicationSearchFolded(t *testing.T) {
	ctx := context.Background()
	db := catalogDB(t, &postgres.QueryCounter{})
	catalogExec(t, db, publisherFixture)
	catalogExec(t, db, `
		INSERT INTO series (id, client_id, name, slug, type, origin) VALUES
			(1010, 2, 'Élan VITAL', 'elan-vital', 'Manga', 'France'), (1011, 2, 'ÜBER Alles', 'uber', 'Manga', 'Germany'),
			(1012, 2, 'Pokémon Adventures', 'pokemon-adventures', 'Manga', 'Japan'),
			(1013, 2, 'POKÉMON ' || U&'ZE\0301RO', 'pokemon-zero', 'Manga', 'Japan'),
			(1014, 2, 'Ｐｏｋéｍｏｎ Ｗｉｄｅ', 'pokemon-wide', 'Manga', 'Japan');
		INSERT INTO series_aliases (series_id, title, language) VALUES (1010, 'Ça Va', 'French'),
			(1012, 'ポケットモンスター', 'Japanese'), (1013, 'Die Straße', 'German'), (1011, 'Œuvre', 'French');
		INSERT INTO series_publishers (series_id, publisher_id) VALUES (1010, 1001), (1011, 1001),
			(1012, 1001), (1013, 1001), (1014, 1001);`)
	for _, search := range []string{"a", "ALPHA", "alpha", "アルファ", "élan", "ÉLAN", "Vital", "über", "ÜBER", "ça", "100%", "a_t", "t f", "\\", "zz",
		"pokemon", "POKEMON", "Pokémon", "POKÉMON", "pokémon", "Poke\u0301mon", "e", "é", "zero", "zéro", "elan", "uber", "ca va",
		"strasse", "STRASSE", "ß", "oeuvre", "Œ", "ポケット", "ﾎﾟｹｯﾄ", "ｐｏｋｅｍｏｎ", "wide", "％", "＿", "\u0301", "n\x1fa"} {
		t.Run(search, func(t *testing.T) {
			rows, err := db.Pool.Query(ctx, `
				SELECT s.id FROM series s JOIN series_publishers sp ON sp.series_id = s.id
				WHERE sp.publisher_id = 1001 AND s.client_id = 2 AND strpos($1, chr(31)) = 0
				  AND (strpos(search_fold(s.name), search_fold($1)) > 0
				       OR EXISTS (SELECT 1 FROM series_aliases a
				                  WHERE a.series_id = s.id AND strpos(search_fold(a.title), search_fold($1)) > 0))
				ORDER BY s.id`, search)
			if err != nil {
				t.Fatal(err)
			}
			want, err := pgx.CollectRows(rows, pgx.RowTo[int64])
			if err != nil {
				t.Fatal(err)
			}
			pubs, total, err := listPublications(ctx, db.DB, catalog.PublicationFilter{Publisher: 1001, Client: 2, Search: search, Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			if want == nil {
				want = []int64{}
			}
			if got := publicationIDs(pubs); !slices.Equal(got, want) || total != int64(len(want)) {
				t.Errorf("ids %v total %d, want %v (the folded titles containing the folded term)", got, total, want)
			}
			if must, ok := foldedPublications[search]; ok && !slices.Equal(want, must) {
				t.Errorf("the rule gives %v, want %v", want, must)
			}
		})
	}
}

// foldedPublications are the folding's examples, stated: each search and the fixture's
// series it finds.
var foldedPublications = map[string][]int64{
	"pokemon": {1012, 1013, 1014},
	"POKÉMON": {1012, 1013, 1014},
	"pokémon": {1012, 1013, 1014},
	"zero":    {1013},
	"elan":    {1010},
	"strasse": {1013},
	"oeuvre":  {1011},
	"ﾎﾟｹｯﾄ":   {1012},
	"ｐｏｋｅｍｏｎ": {1012, 1013, 1014},
}

func publicationIDs(pubs []catalog.Publication) []int64 {
	ids := make([]int64, len(pubs))
	for i, p := range pubs {
		ids[i] = p.ID
	}
	return ids
}

func TestPublisherPublications(t *testing.T) {
	ctx := context.Background()
	counter := &postgres.QueryCounter{}
	db := catalogDB(t, counter)
	catalogExec(t, db, publisherFixture)

	base := catalog.PublicationFilter{Publisher: 1001, Client: 2, Order: "name-asc", Language: "English", Limit: 1 << 53}
	with := func(change func(*catalog.PublicationFilter)) catalog.PublicationFilter {
		f := base
		change(&f)
		return f
	}
	tests := []struct {
		name    string
		f       catalog.PublicationFilter
		want    []int64
		total   int64
		queries int64
	}{
		{"name-asc", base, []int64{1001, 1002, 1003, 1004}, 4, 1},
		{"name-desc", with(func(f *catalog.PublicationFilter) { f.Order = "name-desc" }), []int64{1004, 1003, 1002, 1001}, 4, 1},
		{"added-asc", with(func(f *catalog.PublicationFilter) { f.Order = "added-asc" }), []int64{1003, 1004, 1001, 1002}, 4, 1},
		{"added-desc", with(func(f *catalog.PublicationFilter) { f.Order = "added-desc" }), []int64{1002, 1001, 1004, 1003}, 4, 1},
		{"first page", with(func(f *catalog.PublicationFilter) { f.Limit = 2 }), []int64{1001, 1002}, 4, 1},
		{"second page", with(func(f *catalog.PublicationFilter) { f.Limit, f.Offset = 2, 2 }), []int64{1003, 1004}, 4, 1},
		{"last partial page", with(func(f *catalog.PublicationFilter) { f.Limit, f.Offset = 2, 3 }), []int64{1004}, 4, 1},
		{"past the end counts apart", with(func(f *catalog.PublicationFilter) { f.Offset = 10 }), []int64{}, 4, 2},
		{"zero limit counts apart", with(func(f *catalog.PublicationFilter) { f.Limit = 0 }), []int64{}, 4, 2},
		{"search name, case-insensitive", with(func(f *catalog.PublicationFilter) { f.Search = "ALPHA" }), []int64{1001}, 1, 1},
		{"search alias", with(func(f *catalog.PublicationFilter) { f.Search = "first" }), []int64{1001}, 1, 1},
		{"search alias in any language", with(func(f *catalog.PublicationFilter) { f.Search = "omega" }), []int64{1003}, 1, 1},
		{"literal percent", with(func(f *catalog.PublicationFilter) { f.Search = "%" }), []int64{1004}, 1, 1},
		{"literal underscore", with(func(f *catalog.PublicationFilter) { f.Search = "_" }), []int64{1002}, 1, 1},
		{"underscore is not a wildcard", with(func(f *catalog.PublicationFilter) { f.Search = "a_s" }), []int64{}, 0, 1},
		{"search past the end", with(func(f *catalog.PublicationFilter) { f.Search, f.Offset = "a", 50 }), []int64{}, 4, 2},
		{"unknown publisher", with(func(f *catalog.PublicationFilter) { f.Publisher = 99999 }), []int64{}, 0, 1},
		{"publisher of another client", with(func(f *catalog.PublicationFilter) { f.Client = 1 }), []int64{}, 0, 1},
		{"client scoping of links", with(func(f *catalog.PublicationFilter) { f.Client = 3 }), []int64{1005}, 1, 1},
		{"other publisher", with(func(f *catalog.PublicationFilter) { f.Publisher = 1003 }), []int64{1003}, 1, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			counter.Reset()
			got, total, err := listPublications(ctx, db.DB, tc.f)
			if err != nil {
				t.Fatal(err)
			}
			catalogQueries(t, counter, tc.queries)
			if got == nil {
				t.Fatal("nil slice: would encode as null")
			}
			if ids := publicationIDs(got); !slices.Equal(ids, tc.want) || total != tc.total {
				t.Errorf("ids %v total %d, want %v total %d", ids, total, tc.want, tc.total)
			}
		})
	}

	alpha := catalog.Publication{
		ID: 1001, Name: "Alpha Story", Slug: "alpha-story", Type: "Manga", Origin: "Japan",
		Alias: "The First",
		Aliases: []catalog.PublicationAlias{
			{ID: 1001, Title: "The First", Language: "English"},
			{ID: 1002, Title: "アルファ", Language: "Japanese"},
			{ID: 1003, Title: "Premier", Language: "English"},
		},
		Description: "Alpha in English",
		Tags:        []catalog.Tag{{ID: 1002, Name: "Action", Type: "genre"}, {ID: 1001, Name: "Drama", Type: "genre"}},
		Volume:      &catalog.PreviewVolume{ID: 1001, CoverPath: "c/1.jpg", AspectRatio: 0.65, NSFW: 1, NSFW18: 0},
	}
	beta := catalog.Publication{
		ID: 1002, Name: "Beta_Tale", Slug: "beta-tale", Type: "Manga", Origin: "South Korea",
		Aliases: []catalog.PublicationAlias{}, Tags: []catalog.Tag{},
	}
	delta := catalog.Publication{
		ID: 1003, Name: "Delta", Slug: "delta", Type: "Light Novel", Origin: "Japan",
		Aliases: []catalog.PublicationAlias{{ID: 1004, Title: "Hidden Omega", Language: "German"}},
		Tags:    []catalog.Tag{},
		Volume:  &catalog.PreviewVolume{ID: 1004, CoverPath: "d/2.jpg", AspectRatio: 0.7, NSFW: 0, NSFW18: 1},
	}
	gamma := catalog.Publication{
		ID: 1004, Name: "Gamma 100%", Slug: "gamma-100", Type: "Manga", Origin: "France",
		Aliases: []catalog.PublicationAlias{}, Description: "Gamma in English", Tags: []catalog.Tag{},
	}
	localized := func(p catalog.Publication, alias, description string) catalog.Publication {
		p.Alias, p.Description = alias, description
		return p
	}
	languages := []struct {
		lang string
		want []catalog.Publication
	}{
		{"English", []catalog.Publication{alpha, beta, delta, gamma}},
		{"Japanese", []catalog.Publication{
			localized(alpha, "アルファ", "アルファの説明"),
			localized(beta, "", "ベータの説明"),
			delta,
			gamma, // no Japanese description: the English one
		}},
		{"German", []catalog.Publication{
			localized(alpha, "", "Alpha in English"),
			beta,
			localized(delta, "Hidden Omega", ""),
			localized(gamma, "", "Gamma auf Deutsch"),
		}},
		{"", []catalog.Publication{alpha, beta, delta, gamma}}, // the default: English
	}
	for _, tc := range languages {
		t.Run("metadata in "+tc.lang, func(t *testing.T) {
			got, _, err := listPublications(ctx, db.DB, with(func(f *catalog.PublicationFilter) { f.Language = tc.lang }))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				gb, _ := json.MarshalIndent(got, "", " ")
				wb, _ := json.MarshalIndent(tc.want, "", " ")
				t.Errorf("got  %s\nwant %s", gb, wb)
			}
		})
	}

	t.Run("volume null in JSON", func(t *testing.T) {
		b, _ := json.Marshal(beta)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		if v, ok := m["volume"]; !ok || v != nil {
			t.Errorf("volume %v, want null", v)
		}
	})

	t.Run("unknown order", func(t *testing.T) {
		_, _, err := listPublications(ctx, db.DB, with(func(f *catalog.PublicationFilter) { f.Order = "bogus" }))
		if apperr.CodeOf(err) != apperr.Invalid {
			t.Errorf("error %v, want invalid", err)
		}
	})

	t.Run("demo publisher", func(t *testing.T) {
		counter.Reset()
		got, total, err := listPublications(ctx, db.DB, catalog.PublicationFilter{
			Publisher: 2, Client: 1, Order: "name-asc", Language: "Japanese", Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		catalogQueries(t, counter, 1)
		if len(got) != 5 || total < 20 {
			t.Fatalf("%d publications of %d", len(got), total)
		}
		for _, p := range got {
			if p.Volume == nil || len(p.Tags) == 0 || p.Description == "" || p.Alias == "" {
				t.Errorf("demo publication missing metadata: %+v", p)
			}
		}
	})
}

// listPublications is PublisherPublications with the page taken apart, as the tests
// of the rows and the total read it.
func listPublications(ctx context.Context, db *postgres.DB, f catalog.PublicationFilter) ([]catalog.Publication, int64, error) {
	p, err := db.PublisherPublications(ctx, f)
	return p.Publications, p.Total, err
}

// TestPublicationTagsOfItsClient: a series linked to another client's tag (a state the
// kept counts allow: such a link counts for neither client) lists only its own
// client's tags in that client's publications.
func TestPublicationTagsOfItsClient(t *testing.T) {
	ctx := context.Background()
	db := catalogDB(t, &postgres.QueryCounter{})
	catalogExec(t, db, publisherFixture)
	catalogExec(t, db, `INSERT INTO tags (id, client_id, name, type) VALUES (3001, 3, 'Another client''s tag', 'genre');
		INSERT INTO series_tags (series_id, tag_id) VALUES (1002, 3001)`)
	p, err := db.PublisherPublications(ctx, catalog.PublicationFilter{Publisher: 1001, Client: 2, Order: "name-asc", Language: "English", Limit: 1 << 53})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Publications) == 0 {
		t.Fatal("no publications")
	}
	for _, s := range p.Publications {
		for _, tg := range s.Tags {
			if tg.ID == 3001 {
				t.Errorf("client 2's publication %d lists tag %d %q of client 3", s.ID, tg.ID, tg.Name)
			}
		}
	}
}
