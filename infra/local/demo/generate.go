package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mediacatalog/service/shared/namekey"
	"github.com/mediacatalog/service/shared/postgres"
)

// GeneratedPublisherSlug is the slug of the n-th generated publisher of a client
// (counting from 1). Publisher 1 is the largest: it publishes every tenth series (100k
// links at a million series); publishers 2 to 10 share a fifth of the series; the
// others share the rest, a handful each.
func GeneratedPublisherSlug(client int64, n int) string {
	return fmt.Sprintf("%spublisher-%d", generatedPrefix(client), n)
}

func generatedPrefix(client int64) string { return fmt.Sprintf("g%d-", client) }

// GeneratedCounts are the numbers of rows Generate makes for a scale.
type GeneratedCounts struct {
	Series, Publishers, Contributors, Users, Tags int
}

// CountsFor returns how many rows Generate makes for scale: scale series (with 1 or 2
// volumes, an English alias and for every fourth a Japanese one, an English description
// and for every tenth a Japanese one, 2 tags, a publisher and for every tenth a second
// one, publisher 1), a publisher, a contributor and a user per ten series, and a tag per
// 100 series, between 10 and 200.
func CountsFor(scale int) GeneratedCounts {
	return GeneratedCounts{
		Series:       scale,
		Publishers:   max(1, scale/10),
		Contributors: max(1, scale/10),
		Users:        max(1, scale/10),
		Tags:         min(200, max(10, scale/100)),
	}
}

// generateSteps fill a client with a synthetic catalog in SQL (generate_series, no
// round trip per row; only the users' names come from Go, see copyUsers). Rows carry their number in their slug or name
// (g<client>-series-<n>), and the steps join on those numbers. Names draw from small
// vocabularies, so a search for a word ("Blue", "Press", "Tanaka") matches many rows.
var generateSteps = []struct{ name, sql string }{
	{"client", `
		INSERT INTO clients (id, name) VALUES (@client, 'Generated catalog ' || @client::bigint)
		ON CONFLICT DO NOTHING`},
	{"tags", `
		INSERT INTO tags (client_id, name, type)
		SELECT @client, 'Generated tag ' || n, (ARRAY['genre', 'theme', 'demographic'])[1 + n % 3]
		FROM generate_series(1, @tags::int) n`},
	// The search text is the folded name, as the publishers' trigger keeps it (migration
	// 00027); before that version the table has no such column and the load leaves it
	// out (schemaMarkers).
	{"publishers", `
		INSERT INTO publishers (client_id, name, short_name, slug, country, website, headquarter,
		                        founding_date, image, image_source, created_at/*search column*/)
		SELECT @client, q.name,
		       'GP' || n, @prefix::text || 'publisher-' || n,
		       (ARRAY['Japan', 'United States', 'France', 'South Korea'])[1 + n % 4],
		       'https://www.publisher-' || n || '.example', 'City ' || n,
		       CASE WHEN n % 5 = 0 THEN NULL ELSE date '1950-01-01' + n % 20000 END,
		       'publishers/generated.png', 'generated',
		       timestamptz '2020-01-01 00:00:00+00' + n * interval '1 minute'/*search value*/
		FROM generate_series(1, @publishers::int) n
		CROSS JOIN LATERAL (SELECT
		       (ARRAY['Blue', 'Silent', 'Iron', 'Crimson', 'Hidden', 'Golden', 'Northern', 'Paper'])[1 + n % 8] || ' ' ||
		       (ARRAY['Lantern', 'Tide', 'Summit', 'Garden', 'River', 'Harbor', 'Crane', 'Maple'])[1 + (n / 8) % 8] || ' ' ||
		       (ARRAY['Publisher', 'Press', 'Books', 'Comics'])[1 + (n / 64) % 4] || ' ' || n AS name) q`},
	{"publisher descriptions", `
		INSERT INTO publisher_descriptions (publisher_id, description, language, source)
		SELECT p.id, p.name || ' is a synthetic publisher made for benchmarks.', 'English', 'generated'
		FROM publishers p
		WHERE p.client_id = @client AND p.slug LIKE @prefix::text || 'publisher-%'`},
	{"publisher aliases", `
		INSERT INTO publisher_aliases (publisher_id, title, language)
		SELECT p.id, p.short_name, 'English'
		FROM publishers p
		WHERE p.client_id = @client AND p.slug LIKE @prefix::text || 'publisher-%'`},
	{"series", `
		INSERT INTO series (client_id, name, slug, type, origin, created_at)
		SELECT @client,
		       (ARRAY['Blue', 'Silent', 'Iron', 'Crimson', 'Hidden', 'Last', 'Wandering', 'Golden'])[1 + n % 8] || ' ' ||
		       (ARRAY['Lock', 'Voice', 'Garden', 'Blade', 'Tide', 'Summit', 'Lantern', 'Frontier'])[1 + (n / 8) % 8] || ' ' || n,
		       @prefix::text || 'series-' || n,
		       CASE WHEN n % 7 = 0 THEN 'Light Novel' ELSE 'Manga' END,
		       (ARRAY['Japan', 'South Korea', 'China', 'France'])[1 + n % 4],
		       timestamptz '2020-01-01 00:00:00+00' + (n::bigint * 7919 % @scale::int) * interval '1 minute'
		FROM generate_series(1, @scale::int) n`},
	// The planner's statistics of the tables just filled: without them it sees a client
	// of one row and plans the steps below as nested loops over the whole catalog.
	// ANALYZE samples the transaction's own new rows.
	{"analyze", `ANALYZE tags, publishers, series`},
	{"series aliases", `
		INSERT INTO series_aliases (series_id, title, language)
		SELECT g.id, a.title, a.language
		FROM (SELECT s.id, split_part(s.slug, '-', 3)::int AS n FROM series s
		      WHERE s.client_id = @client AND s.slug LIKE @prefix::text || 'series-%'
		      ORDER BY s.id) g
		CROSS JOIN LATERAL (VALUES (1, 'Generated Series ' || g.n, 'English'),
		                           (2, 'ジェネレーテッド・シリーズ ' || g.n, 'Japanese')) AS a(k, title, language)
		WHERE a.k = 1 OR g.n % 4 = 0
		ORDER BY g.id, a.k`},
	{"series descriptions", `
		INSERT INTO series_descriptions (series_id, language, description)
		SELECT g.id, d.language, d.description
		FROM (SELECT s.id, split_part(s.slug, '-', 3)::int AS n FROM series s
		      WHERE s.client_id = @client AND s.slug LIKE @prefix::text || 'series-%') g
		CROSS JOIN LATERAL (VALUES ('English', 'Synthetic series number ' || g.n || ', made for benchmarks.'),
		                           ('Japanese', 'ベンチマーク用の架空のシリーズ ' || g.n || '。')) AS d(language, description)
		WHERE d.language = 'English' OR g.n % 10 = 0`},
	{"volumes", `
		INSERT INTO volumes (series_id, number, title, cover_path, aspect_ratio, nsfw, nsfw18, created_at)
		SELECT g.id, v, 'Volume ' || v, 'covers/' || g.slug || '/' || v || '.jpg', 0.7,
		       CASE WHEN g.n % 50 = 0 THEN 1 ELSE 0 END, 0, g.created_at + v * interval '1 second'
		FROM (SELECT s.id, s.slug, s.created_at, split_part(s.slug, '-', 3)::int AS n FROM series s
		      WHERE s.client_id = @client AND s.slug LIKE @prefix::text || 'series-%') g
		CROSS JOIN LATERAL generate_series(1, 1 + g.n % 2) AS v`},
	// Tags and publishers are numbered 1 to n without gaps, so an array of their ids
	// ordered by number maps a number to its id without a join.
	{"series tags", `
		WITH t AS MATERIALIZED (
			SELECT array_agg(id ORDER BY split_part(name, ' ', 3)::int) AS ids
			FROM tags
			WHERE client_id = @client AND name LIKE 'Generated tag %')
		INSERT INTO series_tags (series_id, tag_id)
		SELECT s.id, t.ids[(split_part(s.slug, '-', 3)::int * 7 + k * (@tags::int / 2)) % @tags::int + 1]
		FROM series s
		CROSS JOIN t
		CROSS JOIN generate_series(0, 1) AS k
		WHERE s.client_id = @client AND s.slug LIKE @prefix::text || 'series-%'`},
	// Each series has one publisher: for a fifth of them one of publishers 2 to 10, for
	// the rest one of the others (by a multiplicative hash of its number), and every
	// tenth series also publisher 1. The links carry the series' columns that the
	// publication list sorts and searches on (the migration's trigger would look them up
	// one link at a time); the search text is the name and the aliases made above, in
	// their id order, folded, as series_search_text builds it. They go in series
	// order, as a catalog's links are written when its series are added: a large
	// publisher's links lie scattered over the table, not in one run of pages that would
	// make its searches look cheaper than they are.
	{"series publishers", `
		WITH p AS MATERIALIZED (
			SELECT array_agg(id ORDER BY split_part(slug, '-', 3)::int) AS ids
			FROM publishers
			WHERE client_id = @client AND slug LIKE @prefix::text || 'publisher-%'),
		g AS (
			SELECT s.id, s.client_id, s.name, s.created_at, split_part(s.slug, '-', 3)::int AS n
			FROM series s
			WHERE s.client_id = @client AND s.slug LIKE @prefix::text || 'series-%'),
		l AS (
			SELECT g.*, CASE
			         WHEN @publishers::int < 11 THEN (g.n - 1) % @publishers::int + 1
			         WHEN g.n % 100 < 20 THEN 2 + g.n % 9
			         ELSE 11 + ((g.n::bigint * 2654435761) % (@publishers::int - 10))::int
			       END AS pn
			FROM g
			UNION ALL
			SELECT g.*, 1 FROM g WHERE g.n % 10 = 0 AND (@publishers::int >= 11 OR (g.n - 1) % @publishers::int <> 0))
		INSERT INTO series_publishers (series_id, publisher_id, client_id, name, created_at, search)
		SELECT l.id, p.ids[l.pn], l.client_id, l.name, l.created_at,
		       search_fold(l.name || chr(31) || 'Generated Series ' || l.n ||
		                   CASE WHEN l.n % 4 = 0 THEN chr(31) || 'ジェネレーテッド・シリーズ ' || l.n ELSE '' END)
		FROM l CROSS JOIN p
		ORDER BY l.id, l.pn`},
	{"contributors", `
		INSERT INTO contributors (client_id, first_name, last_name, search, slug, gender, type, public, created_at)
		SELECT @client, c.first_name, c.last_name, contributor_search_text(c.first_name, c.last_name),
		       @prefix::text || 'contributor-' || n,
		       CASE WHEN n % 2 = 0 THEN 'female' ELSE 'male' END,
		       (ARRAY['author', 'artist', 'translator'])[1 + n % 3],
		       n % 3 <> 0,
		       timestamptz '2020-01-01 00:00:00+00' + n * interval '1 minute'
		FROM generate_series(1, @contributors::int) n
		CROSS JOIN LATERAL (SELECT
		       (ARRAY['Akira', 'Naoko', 'Hiro', 'Yuki', 'Kenji', 'Mika', 'Taro', 'Rumiko'])[1 + n % 8] AS first_name,
		       (ARRAY['Tanaka', 'Suzuki', 'Takahashi', 'Watanabe', 'Ito', 'Yamamoto', 'Nakamura', 'Kobayashi'])[1 + (n / 8) % 8]
		           || ' ' || n AS last_name) c`},
	// Users are global: they take ids past the demo users', loaded before or after.
	{"user ids", `
		SELECT setval(pg_get_serial_sequence('users', 'id'),
		              greatest((SELECT coalesce(max(id), 0) FROM users), @demoUsers::bigint))`},
	// The users come from generated_users (copied in by copyUsers, with their name keys
	// computed in Go); the search text is the folded username, as the users' trigger
	// keeps it.
	{"users", `
		INSERT INTO users (slug, username, search, age_verified, registered/*name key column*/)
		SELECT @prefix::text || 'user-' || g.n, g.username, search_fold(g.username),
		       g.n % 4 = 0,
		       timestamptz '2021-01-01 00:00:00+00' + (g.n::bigint * 7919 % @users::int) * interval '1 minute'
		       /*name key value*/
		FROM generated_users g
		ORDER BY g.n`},
	{"user roles", `
		INSERT INTO user_roles (user_id, role_id)
		SELECT u.id, r.id
		FROM users u CROSS JOIN (SELECT id FROM roles WHERE is_default) r
		WHERE u.slug LIKE @prefix::text || 'user-%'`},
	// What the users' count trigger keeps (see the step below).
	{"user count", `UPDATE user_count SET n = (SELECT count(*) FROM users)`},
	// What the contributors' count trigger keeps (see the step below).
	{"client contributor count", `
		UPDATE clients c SET contributor_count = (SELECT count(*) FROM contributors WHERE client_id = c.id)
		WHERE c.id = @client`},
	// What the contributors' search substring trigger keeps (the baseline schema): set,
	// not added, so the step is right with the triggers on as well.
	{"contributor search grams", `
		INSERT INTO contributor_search_grams AS s (client_id, gram, n)
		SELECT c.client_id, g.gram, count(*)
		FROM contributors c, search_grams(c.search) g(gram)
		WHERE c.client_id = @client
		GROUP BY 1, 2
		ON CONFLICT (client_id, gram) DO UPDATE SET n = EXCLUDED.n`},
	// What the publishers' count trigger keeps (the baseline schema).
	{"client publisher count", `
		UPDATE clients c SET publisher_count = (SELECT count(*) FROM publishers WHERE client_id = c.id)
		WHERE c.id = @client`},
	// What the links' count trigger keeps (it is off during a bulk load, see Generate):
	// set, not added, so the step is right with the triggers on as well.
	{"publisher series counts", `
		UPDATE publishers p SET series_count = c.n
		FROM (SELECT sp.publisher_id, count(*) AS n FROM series_publishers sp
		      WHERE sp.client_id = @client GROUP BY sp.publisher_id) c
		WHERE p.id = c.publisher_id AND p.client_id = @client AND p.series_count <> c.n`},
}

// bulkLoad turns off, for the generating transaction, the triggers of every table
// (foreign key checks included), which would run a query or more per inserted row. The
// steps supply what the triggers would compute (the links' columns, the contributors'
// and users' search text, the client's contributor and publisher counts and its
// contributors' search substrings, the number of users, the publishers' series counts),
// Generate sets the tags' series counts, and checkReferences then checks every foreign
// key of the generated tables in one set-based query each. With it the secondary
// indexes are dropped and built after the load (dropIndexes). It takes a superuser (the
// local stack's role); for any other role Generate runs with the triggers and indexes
// on, row by row, more slowly, to the same rows.
const bulkLoad = `SET LOCAL session_replication_role = replica`

// checkReferences counts, for each single-column foreign key of the generated tables,
// the rows whose reference has no target, and fails on any.
func checkReferences(ctx context.Context, tx pgx.Tx) error {
	rows, err := tx.Query(ctx, `
		SELECT c.conrelid::regclass::text, a.attname, c.confrelid::regclass::text, fa.attname
		FROM pg_constraint c
		JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
		JOIN pg_attribute fa ON fa.attrelid = c.confrelid AND fa.attnum = c.confkey[1]
		WHERE c.contype = 'f' AND cardinality(c.conkey) = 1
		  AND c.conrelid::regclass::text = ANY ($1)
		ORDER BY 1, 2`, generatedTables)
	if err != nil {
		return fmt.Errorf("references: %w", err)
	}
	type fk struct{ Table, Column, Target, TargetColumn string }
	fks, err := pgx.CollectRows(rows, pgx.RowToStructByPos[fk])
	if err != nil {
		return fmt.Errorf("references: %w", err)
	}
	if len(fks) == 0 {
		return errors.New("references: no foreign keys found to check")
	}
	for _, k := range fks {
		ident := func(s string) string { return pgx.Identifier{s}.Sanitize() }
		var dangling int64
		q := fmt.Sprintf(`SELECT count(*) FROM %s t WHERE t.%s IS NOT NULL
			AND NOT EXISTS (SELECT 1 FROM %s f WHERE f.%s = t.%s)`,
			ident(k.Table), ident(k.Column), ident(k.Target), ident(k.TargetColumn), ident(k.Column))
		if err := tx.QueryRow(ctx, q).Scan(&dangling); err != nil {
			return fmt.Errorf("references %s.%s: %w", k.Table, k.Column, err)
		}
		if dangling > 0 {
			return fmt.Errorf("references: %d rows of %s.%s point at no %s", dangling, k.Table, k.Column, k.Target)
		}
	}
	return nil
}

// generatedTables are analyzed and vacuumed after a generation (the planner sees the
// catalog's real size, and the visibility map lets the list queries use index-only
// scans), and their foreign keys checked after a bulk load (checkReferences).
var generatedTables = []string{"tags", "publishers", "publisher_descriptions", "publisher_aliases",
	"series", "series_aliases", "series_descriptions", "volumes", "series_tags", "series_publishers",
	"contributors", "users", "user_roles"}

// Benchmark loads what a benchmark's catalog holds: the demo data, then a generated
// catalog of scale series in client (Generate, its steps printed to out), and prints how
// long the generation took.
func Benchmark(ctx context.Context, db *postgres.DB, client int64, scale int, out io.Writer) error {
	if err := Load(ctx, db); err != nil {
		return err
	}
	start := time.Now()
	if err := Generate(ctx, db, client, scale, Progress(out)); err != nil {
		return err
	}
	fmt.Fprintf(out, "catalog of %d series ready in %s\n", scale, time.Since(start).Round(time.Millisecond))
	return nil
}

// Generate fills client with a synthetic catalog of scale series for benchmarks (see
// CountsFor), in one transaction, in SQL. It runs once per client: when the client
// already holds a generated catalog of that scale it does nothing, of another scale it
// fails (generate into another client, or start from a fresh database). The client row
// is created when missing. Use a client of its own (the seed command's default is 2): the
// demo catalog is client 1. Generated rows never take the fixed ids of the demo data,
// whether it is loaded before or after.
func Generate(ctx context.Context, db *postgres.DB, client int64, scale int, opts ...GenerateOption) error {
	var o generateOptions
	for _, opt := range opts {
		opt(&o)
	}
	if client <= 0 || scale <= 0 {
		return errors.New("demo: generate: client and scale must be positive")
	}
	tables, err := catalogTables()
	if err != nil {
		return fmt.Errorf("demo: generate: %w", err)
	}
	counts := CountsFor(scale)
	prefix := generatedPrefix(client)
	args := pgx.NamedArgs{
		"client":       client,
		"prefix":       prefix,
		"scale":        counts.Series,
		"publishers":   counts.Publishers,
		"contributors": counts.Contributors,
		"users":        counts.Users,
		"tags":         counts.Tags,
		"demoUsers":    maxDemoUserID(),
	}
	done := false
	err = pgx.BeginFunc(ctx, db.Pool, func(tx pgx.Tx) error {
		// A bulk load: no statement timeout, a commit that need not wait for the disk,
		// memory for the index builds (a trigram index built in one pass rather than in
		// several), and, for a load with the indexes on, trigram (GIN) entries gathered
		// in the indexes' pending lists, merged in bulk by the VACUUM at the end rather
		// than inserted one by one.
		for _, set := range []string{`SET LOCAL statement_timeout = 0`, `SET LOCAL synchronous_commit = off`,
			`SET LOCAL work_mem = '256MB'`, `SET LOCAL maintenance_work_mem = '1GB'`,
			`SET LOCAL gin_pending_list_limit = '1GB'`} {
			if _, err := tx.Exec(ctx, set); err != nil {
				return fmt.Errorf("settings: %w", err)
			}
		}
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(loadLock)); err != nil {
			return fmt.Errorf("lock: %w", err)
		}
		var have int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM series WHERE client_id = $1 AND slug LIKE $2`,
			client, prefix+"series-%").Scan(&have); err != nil {
			return fmt.Errorf("count: %w", err)
		}
		switch {
		case have == scale:
			done = true
			return nil
		case have != 0:
			return fmt.Errorf("client %d already holds a generated catalog of %d series", client, have)
		}
		if err := advanceSequences(ctx, tx, tables); err != nil {
			return err
		}
		var superuser bool
		if err := tx.QueryRow(ctx, `SELECT current_setting('is_superuser') = 'on'`).Scan(&superuser); err != nil {
			return fmt.Errorf("role: %w", err)
		}
		var indexes []index
		if superuser {
			if _, err := tx.Exec(ctx, bulkLoad); err != nil {
				return fmt.Errorf("bulk load: %w", err)
			}
			if indexes, err = dropIndexes(ctx, tx); err != nil {
				return err
			}
		}
		fold, err := searchFold(ctx, tx)
		if err != nil {
			return err
		}
		markers, nameKeys, err := schemaMarkers(ctx, tx)
		if err != nil {
			return err
		}
		start := time.Now()
		if err := copyUsers(ctx, tx, client, counts.Users, nameKeys); err != nil {
			return err
		}
		o.step("user names", start)
		for _, step := range generateSteps {
			start := time.Now()
			if _, err := tx.Exec(ctx, markers.Replace(strings.ReplaceAll(step.sql, "search_fold(", fold+"(")), args); err != nil {
				return fmt.Errorf("%s: %w", step.name, err)
			}
			o.step(step.name, start)
		}
		start = time.Now()
		if err := countKept(ctx, tx, client); err != nil {
			return err
		}
		o.step("tag and role counts", start)
		if superuser {
			start := time.Now()
			if err := buildIndexes(ctx, tx, indexes); err != nil {
				return err
			}
			o.step("indexes built", start)
		}
		if superuser {
			start := time.Now()
			if err := checkReferences(ctx, tx); err != nil {
				return err
			}
			o.step("foreign keys checked", start)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("demo: generate client %d at scale %d: %w", client, scale, err)
	}
	if done {
		return nil
	}
	start := time.Now()
	defer o.step("vacuum and analyze", start)
	if err := vacuum(ctx, db); err != nil {
		return fmt.Errorf("demo: generate client %d: %w", client, err)
	}
	return nil
}

// searchFold names the function that folds the kept search texts at the database's
// schema version: search_fold from migration 00022 on, lower before it (the rehearsal
// generates its catalog at the previous release's version, with this code).
func searchFold(ctx context.Context, tx pgx.Tx) (string, error) {
	var folds bool
	if err := tx.QueryRow(ctx, `SELECT to_regprocedure('search_fold(text)') IS NOT NULL`).Scan(&folds); err != nil {
		return "", fmt.Errorf("search fold: %w", err)
	}
	if folds {
		return "search_fold", nil
	}
	return "lower", nil
}

// keptCounts are the counts migration 00024 keeps by triggers, which do not run during
// a bulk load with triggers off: the series count of the client's tags, in one pass over
// the links (tag_series_count, which the triggers use, looks up each link's series one
// by one), and the user count of every role. Set, not added, so they are right with the
// triggers on as well; a database before that migration has neither.
var keptCounts = []struct{ table, column, sql string }{
	{"tags", "series_count", `
		UPDATE tags t SET series_count = coalesce(c.n, 0)
		FROM tags t2
		LEFT JOIN (SELECT st.tag_id, count(*) AS n FROM series_tags st
		           JOIN series s ON s.id = st.series_id AND s.client_id = $1
		           GROUP BY st.tag_id) c ON c.tag_id = t2.id
		WHERE t.id = t2.id AND t.client_id = $1`},
	{"roles", "user_count", `
		UPDATE roles r SET user_count = c.n
		FROM (SELECT r2.id, (SELECT count(*) FROM user_roles ur WHERE ur.role_id = r2.id) AS n FROM roles r2) c
		WHERE r.id = c.id AND r.user_count <> c.n AND $1::bigint IS NOT NULL`},
}

// countKept sets the keptCounts the database's schema has.
func countKept(ctx context.Context, tx pgx.Tx, client int64) error {
	for _, k := range keptCounts {
		var has bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_attribute
			WHERE attrelid = to_regclass($1) AND attname = $2 AND NOT attisdropped)`, k.table, k.column).Scan(&has); err != nil {
			return fmt.Errorf("%s.%s: %w", k.table, k.column, err)
		}
		if !has {
			continue
		}
		if _, err := tx.Exec(ctx, k.sql, client); err != nil {
			return fmt.Errorf("%s.%s: %w", k.table, k.column, err)
		}
	}
	return nil
}

// schemaMarkers fills the steps' markers at the database's schema version: the kept
// publishers.search from migration 00027 on, users.name_key from 00025 on (nameKeys
// reports it); before those versions the load leaves the columns out (the rehearsal
// generates its catalog at the previous release's version, with this code).
func schemaMarkers(ctx context.Context, tx pgx.Tx) (markers *strings.Replacer, nameKeys bool, err error) {
	var pubSearch bool
	if err := tx.QueryRow(ctx, `SELECT
		EXISTS (SELECT 1 FROM pg_attribute
		        WHERE attrelid = to_regclass('publishers') AND attname = 'search' AND NOT attisdropped),
		EXISTS (SELECT 1 FROM pg_attribute
		        WHERE attrelid = to_regclass('users') AND attname = 'name_key' AND NOT attisdropped)`).
		Scan(&pubSearch, &nameKeys); err != nil {
		return nil, false, fmt.Errorf("schema version: %w", err)
	}
	var pairs []string
	if pubSearch {
		pairs = append(pairs, "/*search column*/", ", search", "/*search value*/", ", search_fold(q.name)")
	} else {
		pairs = append(pairs, "/*search column*/", "", "/*search value*/", "")
	}
	if nameKeys {
		pairs = append(pairs, "/*name key column*/", ", name_key", "/*name key value*/", ", g.name_key")
	} else {
		pairs = append(pairs, "/*name key column*/", "", "/*name key value*/", "")
	}
	return strings.NewReplacer(pairs...), nameKeys, nil
}

// userWords name the generated users: a search for one ("otaku") matches an eighth.
var userWords = []string{"reader", "collector", "otaku", "bookworm", "critic", "fan", "librarian", "editor"}

// copyUsers copies the generated users' numbers, names and name keys into the
// transaction's temporary table generated_users, which the users step reads. The name
// key is computed in Go (shared/namekey), so the users are written with it rather than
// updated after. Users are global: their names carry the client so that two generated
// catalogs do not collide.
func copyUsers(ctx context.Context, tx pgx.Tx, client int64, users int, nameKeys bool) error {
	if _, err := tx.Exec(ctx, `CREATE TEMPORARY TABLE generated_users (n int, username text, name_key text) ON COMMIT DROP`); err != nil {
		return fmt.Errorf("user names: %w", err)
	}
	n := 0
	_, err := tx.CopyFrom(ctx, pgx.Identifier{"generated_users"}, []string{"n", "username", "name_key"},
		pgx.CopyFromFunc(func() ([]any, error) {
			if n == users {
				return nil, nil
			}
			n++
			name := fmt.Sprintf("%s_%d_%d", userWords[n%len(userWords)], client, n)
			var key *string
			if nameKeys {
				k := namekey.Key(name)
				key = &k
			}
			return []any{n, name, key}, nil
		}))
	if err != nil {
		return fmt.Errorf("user names: %w", err)
	}
	return nil
}

// index is a secondary index of a generated table, dropped for a bulk load and built
// again from its definition after it.
type index struct{ Name, Definition string }

// dropIndexes drops the generated tables' indexes that back no constraint and returns
// their definitions. A bulk load into tables without them, and a build of each from
// the loaded rows after (one sort per index), is several times faster than inserting
// every row into every index: at a million series the links' seven indexes were most
// of the load's time. The primary keys and unique constraints stay (the foreign keys
// and the checks need them). The drop is in the generating transaction: a failed load
// leaves the indexes as they were.
func dropIndexes(ctx context.Context, tx pgx.Tx) ([]index, error) {
	rows, err := tx.Query(ctx, `
		SELECT i.indexrelid::regclass::text, pg_get_indexdef(i.indexrelid)
		FROM pg_index i
		WHERE i.indrelid = ANY (SELECT to_regclass(t) FROM unnest($1::text[]) t)
		  AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)
		ORDER BY i.indrelid, 1`, generatedTables)
	if err != nil {
		return nil, fmt.Errorf("indexes: %w", err)
	}
	indexes, err := pgx.CollectRows(rows, pgx.RowToStructByPos[index])
	if err != nil {
		return nil, fmt.Errorf("indexes: %w", err)
	}
	for _, ix := range indexes {
		if _, err := tx.Exec(ctx, `DROP INDEX `+ix.Name); err != nil {
			return nil, fmt.Errorf("drop index %s: %w", ix.Name, err)
		}
	}
	return indexes, nil
}

// buildIndexes builds the indexes dropIndexes dropped, from their definitions.
func buildIndexes(ctx context.Context, tx pgx.Tx, indexes []index) error {
	for _, ix := range indexes {
		if _, err := tx.Exec(ctx, ix.Definition); err != nil {
			return fmt.Errorf("build index %s: %w", ix.Name, err)
		}
	}
	return nil
}

// GenerateOption adjusts Generate.
type GenerateOption func(*generateOptions)

type generateOptions struct{ progress io.Writer }

// Progress has Generate write each step's duration to w.
func Progress(w io.Writer) GenerateOption { return func(o *generateOptions) { o.progress = w } }

func (o generateOptions) step(name string, start time.Time) {
	if o.progress != nil {
		fmt.Fprintf(o.progress, "  %-24s %s\n", name, time.Since(start).Round(time.Millisecond))
	}
}

// vacuum runs VACUUM (ANALYZE) on the generated tables, outside a transaction (VACUUM
// cannot run in one) and without the pool's statement timeout.
func vacuum(ctx context.Context, db *postgres.DB) error {
	conn, err := db.Pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("vacuum: %w", err)
	}
	defer conn.Release()
	for _, sql := range []string{`SET statement_timeout = 0`, `SET maintenance_work_mem = '256MB'`,
		`VACUUM (ANALYZE) ` + strings.Join(generatedTables, ", "), `RESET statement_timeout`, `RESET maintenance_work_mem`} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			return fmt.Errorf("vacuum: %w", err)
		}
	}
	return nil
}

func maxDemoUserID() int64 {
	var m int64
	for _, u := range demoUsers {
		m = max(m, u.id)
	}
	return m
}
