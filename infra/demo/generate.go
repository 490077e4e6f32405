package demo

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/mediacatalog/service/shared/postgres"
)

// GeneratedPublisherSlug is the slug of the n-th generated publisher of a client
// (counting from 1). Publisher 1 is the large one: besides its share it publishes every
// tenth series, so its publication list is the one to page through in benchmarks.
func GeneratedPublisherSlug(client int64, n int) string {
	return fmt.Sprintf("%spublisher-%d", generatedPrefix(client), n)
}

func generatedPrefix(client int64) string { return fmt.Sprintf("g%d-", client) }

// GeneratedCounts are the numbers of rows Generate makes for a scale.
type GeneratedCounts struct {
	Series, Publishers, Tags int
}

// CountsFor returns how many series, publishers and tags Generate makes for scale:
// scale series (with 1 to 5 volumes, 1 or 2 aliases, an English description and for
// every third a Japanese one, 3 tags and 1 or 2 publishers each), a publisher per 25
// series, and a tag per 100 series, between 10 and 200.
func CountsFor(scale int) GeneratedCounts {
	return GeneratedCounts{
		Series:     scale,
		Publishers: max(1, scale/25),
		Tags:       min(200, max(10, scale/100)),
	}
}

// generateSteps fill a client with a synthetic catalog, entirely in SQL. Each step
// skips what exists, so running them again for the same client and scale changes
// nothing. Series and publishers carry their number in their slug (g<client>-series-<n>),
// tags in their name, and the steps join on those numbers.
var generateSteps = []struct{ name, sql string }{
	{"client", `
		INSERT INTO clients (id, name) VALUES (@client, 'Generated catalog ' || @client::bigint)
		ON CONFLICT DO NOTHING`},
	{"tags", `
		INSERT INTO tags (client_id, name, type)
		SELECT @client, 'Generated tag ' || n, (ARRAY['genre', 'theme', 'demographic'])[1 + n % 3]
		FROM generate_series(1, @tags::int) n
		WHERE NOT EXISTS (SELECT 1 FROM tags t
		                  WHERE t.client_id = @client AND lower(t.name) = lower('Generated tag ' || n))
		ON CONFLICT DO NOTHING`},
	{"publishers", `
		INSERT INTO publishers (client_id, name, short_name, slug, country, website, headquarter,
		                        founding_date, image, image_source, created_at)
		SELECT @client, 'Generated Publisher ' || n, 'GP' || n, @prefix::text || 'publisher-' || n,
		       (ARRAY['Japan', 'United States', 'France', 'South Korea'])[1 + n % 4],
		       'https://www.publisher-' || n || '.example', 'City ' || n,
		       CASE WHEN n % 5 = 0 THEN NULL ELSE date '1950-01-01' + n END,
		       'publishers/generated.png', 'generated',
		       timestamptz '2020-01-01 00:00:00+00' + n * interval '1 minute'
		FROM generate_series(1, @publishers::int) n
		WHERE NOT EXISTS (SELECT 1 FROM publishers p WHERE p.slug = @prefix::text || 'publisher-' || n)
		ON CONFLICT DO NOTHING`},
	{"publisher descriptions", `
		INSERT INTO publisher_descriptions (publisher_id, description, language, source)
		SELECT p.id, p.name || ' is a synthetic publisher made for benchmarks.', 'English', 'generated'
		FROM publishers p
		WHERE p.client_id = @client AND p.slug LIKE @prefix::text || 'publisher-%'
		  AND NOT EXISTS (SELECT 1 FROM publisher_descriptions d WHERE d.publisher_id = p.id)`},
	{"publisher aliases", `
		INSERT INTO publisher_aliases (publisher_id, title, language)
		SELECT p.id, p.short_name, 'English'
		FROM publishers p
		WHERE p.client_id = @client AND p.slug LIKE @prefix::text || 'publisher-%'
		  AND NOT EXISTS (SELECT 1 FROM publisher_aliases a WHERE a.publisher_id = p.id)`},
	{"series", `
		INSERT INTO series (client_id, name, slug, type, origin, created_at)
		SELECT @client,
		       (ARRAY['Blue', 'Silent', 'Iron', 'Crimson', 'Hidden', 'Last', 'Wandering', 'Golden'])[1 + n % 8] || ' ' ||
		       (ARRAY['Lock', 'Voice', 'Garden', 'Blade', 'Tide', 'Summit', 'Lantern', 'Frontier'])[1 + (n / 8) % 8] || ' ' || n,
		       @prefix::text || 'series-' || n,
		       CASE WHEN n % 7 = 0 THEN 'Light Novel' ELSE 'Manga' END,
		       (ARRAY['Japan', 'South Korea', 'China', 'France'])[1 + n % 4],
		       timestamptz '2020-01-01 00:00:00+00' + n * interval '1 minute'
		FROM generate_series(1, @scale::int) n
		WHERE NOT EXISTS (SELECT 1 FROM series s WHERE s.slug = @prefix::text || 'series-' || n)
		ON CONFLICT DO NOTHING`},
	{"series aliases", `
		WITH g AS (
			SELECT s.id, split_part(s.slug, '-', 3)::int AS n
			FROM series s
			WHERE s.client_id = @client AND s.slug LIKE @prefix::text || 'series-%'
			  AND NOT EXISTS (SELECT 1 FROM series_aliases a WHERE a.series_id = s.id))
		INSERT INTO series_aliases (series_id, title, language)
		SELECT g.id, a.title, a.language
		FROM g
		CROSS JOIN LATERAL (VALUES ('Generated Series ' || g.n, 'English'),
		                           ('ジェネレーテッド・シリーズ ' || g.n, 'Japanese')) AS a(title, language)
		WHERE a.language = 'English' OR g.n % 2 = 0`},
	{"series descriptions", `
		WITH g AS (
			SELECT s.id, split_part(s.slug, '-', 3)::int AS n
			FROM series s
			WHERE s.client_id = @client AND s.slug LIKE @prefix::text || 'series-%')
		INSERT INTO series_descriptions (series_id, language, description)
		SELECT g.id, d.language, d.description
		FROM g
		CROSS JOIN LATERAL (VALUES ('English', 'Synthetic series number ' || g.n || ', made for benchmarks.'),
		                           ('Japanese', 'ベンチマーク用の架空のシリーズ ' || g.n || '。')) AS d(language, description)
		WHERE (d.language = 'English' OR g.n % 3 = 0)
		  AND NOT EXISTS (SELECT 1 FROM series_descriptions x WHERE x.series_id = g.id AND x.language = d.language)
		ON CONFLICT DO NOTHING`},
	{"volumes", `
		WITH g AS (
			SELECT s.id, s.slug, s.created_at, split_part(s.slug, '-', 3)::int AS n
			FROM series s
			WHERE s.client_id = @client AND s.slug LIKE @prefix::text || 'series-%')
		INSERT INTO volumes (series_id, number, title, cover_path, aspect_ratio, nsfw, nsfw18, created_at)
		SELECT g.id, v, 'Volume ' || v, 'covers/' || g.slug || '/' || v || '.jpg', 0.7,
		       CASE WHEN g.n % 50 = 0 THEN 1 ELSE 0 END, 0, g.created_at + v * interval '1 second'
		FROM g
		CROSS JOIN LATERAL generate_series(1, 1 + g.n % 5) AS v
		WHERE NOT EXISTS (SELECT 1 FROM volumes x WHERE x.series_id = g.id AND x.number = v)
		ON CONFLICT DO NOTHING`},
	// Tags and publishers are numbered 1 to n without gaps, so an array of their ids
	// ordered by number maps a number to its id without a join.
	{"series tags", `
		WITH t AS (
			SELECT array_agg(id ORDER BY split_part(name, ' ', 3)::int) AS ids
			FROM tags
			WHERE client_id = @client AND name LIKE 'Generated tag %')
		INSERT INTO series_tags (series_id, tag_id)
		SELECT s.id, t.ids[(split_part(s.slug, '-', 3)::int * 7 + k * (@tags::int / 3)) % @tags::int + 1]
		FROM series s
		CROSS JOIN t
		CROSS JOIN generate_series(0, 2) AS k
		WHERE s.client_id = @client AND s.slug LIKE @prefix::text || 'series-%'
		ON CONFLICT DO NOTHING`},
	{"series publishers", `
		WITH p AS (
			SELECT array_agg(id ORDER BY split_part(slug, '-', 3)::int) AS ids
			FROM publishers
			WHERE client_id = @client AND slug LIKE @prefix::text || 'publisher-%'),
		g AS (
			SELECT s.id, split_part(s.slug, '-', 3)::int AS n
			FROM series s
			WHERE s.client_id = @client AND s.slug LIKE @prefix::text || 'series-%')
		INSERT INTO series_publishers (series_id, publisher_id)
		SELECT g.id, p.ids[(g.n - 1) % @publishers::int + 1] FROM g CROSS JOIN p
		UNION ALL
		SELECT g.id, p.ids[1] FROM g CROSS JOIN p WHERE g.n % 10 = 0
		ON CONFLICT DO NOTHING`},
}

// analyzeGenerated refreshes the planner's statistics after a bulk load, so the first
// benchmark queries are planned for the catalog's real size.
const analyzeGenerated = `ANALYZE tags, publishers, publisher_descriptions, publisher_aliases, series,
	series_aliases, series_descriptions, volumes, series_tags, series_publishers`

// Generate fills client with a synthetic catalog of scale series for benchmarks (see
// CountsFor), in one transaction, in SQL. It is idempotent per client and scale: run
// again, it adds nothing. It never deletes; a larger scale adds to what is there. The
// client row is created when missing. Use a client of its own (the seed command's
// default is 2): the demo catalog is client 1. Generated rows never take the fixed ids
// of the demo catalog, whether it is loaded before or after.
func Generate(ctx context.Context, db *postgres.DB, client int64, scale int) error {
	if client <= 0 || scale <= 0 {
		return errors.New("demo: generate: client and scale must be positive")
	}
	tables, err := catalogTables()
	if err != nil {
		return fmt.Errorf("demo: generate: %w", err)
	}
	counts := CountsFor(scale)
	args := pgx.NamedArgs{
		"client":     client,
		"prefix":     generatedPrefix(client),
		"scale":      counts.Series,
		"publishers": counts.Publishers,
		"tags":       counts.Tags,
	}
	err = pgx.BeginFunc(ctx, db.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(loadLock)); err != nil {
			return fmt.Errorf("lock: %w", err)
		}
		if err := advanceSequences(ctx, tx, tables); err != nil {
			return err
		}
		for _, step := range generateSteps {
			if _, err := tx.Exec(ctx, step.sql, args); err != nil {
				return fmt.Errorf("%s: %w", step.name, err)
			}
		}
		if _, err := tx.Exec(ctx, analyzeGenerated); err != nil {
			return fmt.Errorf("analyze: %w", err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("demo: generate client %d at scale %d: %w", client, scale, err)
	}
	return nil
}
