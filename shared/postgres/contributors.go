package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/catalog"
)

// Messages of the contributor store.
const (
	MsgContributorNotFound = "Contributor not found"
	MsgContributorExists   = "Contributor with this Name exists already."
)

const (
	contributorNameKey = "contributors_client_name_key"
	contributorSlugKey = "contributors_slug_key"
	// contributorAddAttempts bounds the retries when the chosen slug was taken meanwhile.
	contributorAddAttempts = 5
)

// Contributors returns one page of a client's contributors and the number of all that
// match, in one query: the total comes apart from the page, so that a page past the end
// still reports it. Without a search it is the client's contributor_count, kept by
// triggers (the baseline schema); a search of one or two letters reads its kept count in
// contributor_search_grams (no trigram narrows it, so counting tested every
// contributor of the client); a longer one counts its matches up to a cap (countCap: T
// before T). A total that stayed within it also tells which end of the list the page
// is nearer, to walk from there (pageQuery).
func (db *DB) Contributors(ctx context.Context, q catalog.ContributorQuery) (catalog.ContributorPage, error) {
	order := "c.first_name, c.last_name, c.id"
	if q.Descending {
		order = "c.first_name DESC, c.last_name DESC, c.id DESC"
	}
	// The search matches the kept folded full name (migration 00022: case and accents
	// ignored) with LIKE and a pattern folded by the same search_fold(), at a fraction of
	// the cost per row of folding each name, with contributors_client_search_trgm for
	// three letters or more. The kept counts are those of the folded term's letters (a
	// term can fold to more letters, "ß" to "ss", or to none, a lone accent: then it
	// matches every name, as the client's count says). Only a search of three letters
	// or more counts, and only up to the cap.
	const filter = `c.client_id = @client AND (@search = '' OR c.search LIKE search_pattern(@search))`
	limitCount := db.countCap(q.Offset)
	ids := pageQuery{cols: "c.id", from: "contributors c", where: filter, order: order, total: pageTotal("list_total"),
		limit: "@limit", offset: "@offset", forward: q.Offset == 0}
	sql := `
WITH ` + listTotal(`
	CASE WHEN search_fold(@search) = '' THEN coalesce((SELECT cl.contributor_count FROM clients cl WHERE cl.id = @client), 0)
	     WHEN length(search_fold(@search)) <= 2 THEN coalesce((SELECT g.n FROM contributor_search_grams g
	                                               WHERE g.client_id = @client AND g.gram = search_fold(@search)), 0)
	     ELSE `+boundedCount("contributors c", filter, limitCount)+` END`,
		`length(search_fold(@search)) > 2 AND n > `+strconv.FormatInt(limitCount, 10)) + `
SELECT
	(SELECT n FROM list_total) AS total,
	(SELECT capped FROM list_total) AS capped,
	coalesce((
		SELECT jsonb_agg(jsonb_build_object(
			'id', p.id, 'first_name', p.first_name, 'last_name', p.last_name, 'slug', p.slug,
			'image', coalesce(p.image, ''), 'locked_by', ` + lockHolder(contributorLocks, "p.id") + `
		) ORDER BY p.n)
		FROM (
			SELECT c.id, c.first_name, c.last_name, c.slug, c.image,
				row_number() OVER (ORDER BY ` + order + `) AS n
			FROM (
				-- The page's ids first, from contributors_client_order_search alone (an
				-- index-only scan: the skipped rows of a deep offset, and the search
				-- text tested on them, cost no row reads), walked from the nearer end.
				` + ids.sql() + `
			) k
			JOIN contributors c ON c.id = k.id
		) p
	), '[]') AS contributors`
	rows, _ := db.Pool.Query(ctx, sql, pgx.StrictNamedArgs{
		"client": q.Client, "search": q.Search, "limit": q.Limit, "offset": q.Offset})
	row, err := pgx.CollectOneRow(rows, pgx.RowToStructByName[struct {
		Total        int64
		Capped       bool
		Contributors []catalog.ContributorListItem
	}])
	if err != nil {
		return catalog.ContributorPage{}, fmt.Errorf("list contributors of client %d: %w", q.Client, err)
	}
	page := catalog.ContributorPage{Contributors: row.Contributors}
	page.Total, page.Exact = boundedTotal(row.Total, row.Capped, limitCount, q.Offset, q.Limit, len(row.Contributors))
	return page, nil
}

// Contributor returns a contributor with its links, aliases, descriptions and relations
// in one query. The same statement takes or refreshes the contributor's edit lock as
// lock asks (see lockCTE); the zero LockRequest only reads.
func (db *DB) Contributor(ctx context.Context, id int64, lock catalog.LockRequest) (catalog.Contributor, error) {
	sql := `
WITH ` + lockCTE(contributorLocks, "@id", "@lock_by", "@lock_ttl") + `
SELECT c.id, c.first_name, c.last_name, c.slug, coalesce(c.image, '') AS image,
	coalesce(c.gender, '') AS gender, coalesce(c.type, '') AS type, c.public,
	(SELECT coalesce(jsonb_agg(jsonb_build_object('url', k.url) ORDER BY k.id), '[]')
		FROM contributor_links k WHERE k.contributor_id = c.id) AS links,
	(SELECT coalesce(jsonb_agg(jsonb_build_object('id', a.id, 'title', a.title, 'language', a.language) ORDER BY a.id), '[]')
		FROM contributor_aliases a WHERE a.contributor_id = c.id) AS aliases,
	(SELECT coalesce(jsonb_agg(jsonb_build_object('id', d.id, 'description', d.description,
			'language', d.language, 'source', d.source) ORDER BY d.id), '[]')
		FROM contributor_descriptions d WHERE d.contributor_id = c.id) AS descriptions,
	(SELECT coalesce(jsonb_agg(jsonb_build_object('id', r.id, 'relation_id', r.related_id, 'type', r.type,
			'name', concat_ws(' ', o.first_name, o.last_name), 'image', coalesce(o.image, ''), 'slug', o.slug)
			ORDER BY r.id), '[]')
		FROM contributor_relations r JOIN contributors o ON o.id = r.related_id AND o.client_id = c.client_id
		WHERE r.contributor_id = c.id) AS relations
FROM contributors c
WHERE c.id = @id`
	rows, _ := db.Pool.Query(ctx, sql, pgx.StrictNamedArgs{"id": id, "lock_by": lock.By, "lock_ttl": lock.TTL})
	c, err := pgx.CollectOneRow(rows, pgx.RowToStructByName[catalog.Contributor])
	switch {
	case errors.Is(err, pgx.ErrNoRows), contributorFKViolation(err, "contributor_locks_contributor_id_fkey"):
		// A contributor deleted while its lock was being taken is gone as well.
		return catalog.Contributor{}, apperr.Wrap(apperr.NotFound, MsgContributorNotFound, err)
	case contributorFKViolation(err, "contributor_locks_locked_by_fkey"):
		// The reader was deleted while taking the lock.
		return catalog.Contributor{}, apperr.Wrap(apperr.NotFound, apperr.MsgUserNotFound, err)
	case err != nil:
		return catalog.Contributor{}, fmt.Errorf("load contributor %d: %w", id, err)
	}
	// Only links are served as links, whatever was stored (catalog.ServedLink).
	links := c.Links[:0]
	for _, l := range c.Links {
		if u := catalog.ServedLink(l.URL); u != "" {
			links = append(links, catalog.NewContributorLink(u))
		}
	}
	c.Links = links
	for i := range c.Descriptions {
		c.Descriptions[i].Source = catalog.ServedSource(c.Descriptions[i].Source)
	}
	return c, nil
}

// AddContributor adds a contributor to a client's catalog with a fresh slug made from
// c.Slug ("first-last", then "first-last-2", ...). Names are unique within a client,
// compared case-insensitively: a taken name is a conflict, also when a concurrent add
// took it first. An unknown client is invalid input.
func (db *DB) AddContributor(ctx context.Context, c catalog.NewContributor) (int64, error) {
	base := strings.ToLower(strings.TrimSpace(c.Slug))
	if base == "" {
		base = "contributor"
	}
	var id int64
	var err error
	for range contributorAddAttempts {
		err = db.inTx(ctx, func(tx pgx.Tx) error {
			var insErr error
			id, insErr = insertContributor(ctx, tx, c, base)
			return insErr
		})
		// A slug taken in between (by a writer that does not take the lock): choose again.
		if !isUniqueViolation(err, contributorSlugKey) {
			break
		}
	}
	switch {
	case isUniqueViolation(err, contributorNameKey):
		return 0, apperr.Wrap(apperr.Conflict, MsgContributorExists, err)
	case contributorFKViolation(err, "contributors_client_id_fkey"):
		return 0, apperr.Wrap(apperr.Invalid, apperr.MsgMissingParams, err)
	case err != nil:
		return 0, fmt.Errorf("add contributor to client %d: %w", c.Client, err)
	}
	return id, nil
}

// insertContributor inserts the row with the first free slug of the form base or
// base-N, N one above the largest suffix in use: every suffix of digits counts, however
// long (numeric has no bound a slug reaches), so N is never one that exists. The
// slugs "base-…" are a range in byte order, which contributors_slug_c serves whatever
// the database's collation. Adds that share a base slug take turns (a
// transaction-scoped advisory lock), so the choice sees every committed slug.
func insertContributor(ctx context.Context, tx pgx.Tx, c catalog.NewContributor, base string) (int64, error) {
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('contributors.slug:' || $1, 0))`, base); err != nil {
		return 0, err
	}
	sql := `
INSERT INTO contributors (client_id, first_name, last_name, slug)
VALUES ($1, $2, $3, CASE
	WHEN NOT EXISTS (SELECT 1 FROM contributors WHERE slug = $4) THEN $4
	ELSE $4 || '-' || (` + nextSlugSuffix + `)
	END)
RETURNING id`
	var id int64
	err := tx.QueryRow(ctx, sql, c.Client, c.FirstName, c.LastName, base).Scan(&id)
	return id, err
}

// nextSlugSuffix is the suffix a taken slug $4 gets: one above the largest number
// after "$4-" (2 when there is none). TestBoundedPlans holds its plan to the index.
const nextSlugSuffix = `SELECT coalesce(max(substring(slug FROM char_length($4) + 2)::numeric), 1) + 1
		FROM contributors
		WHERE slug COLLATE "C" >= $4 || '-' AND slug COLLATE "C" < $4 || '.'
			AND substring(slug FROM char_length($4) + 2) ~ '^[0-9]+$'`

// EditContributor applies a whole edit in one transaction, sent as one batch: the
// contributor's fields, its links (replaced), and the added, removed and modified
// aliases, descriptions and relations. A removed or modified id that is not this
// contributor's, or a relation to itself, to an unknown contributor or to another
// client's, is invalid and nothing changes. A successful edit releases editorID's lock.
func (db *DB) EditContributor(ctx context.Context, id, editorID int64, e catalog.ContributorEdit) error {
	err := db.inTx(ctx, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		queueRelationTargetsLock(b, e)
		queueContributorFields(b, id, e)
		queueContributorLinks(b, id, e.Links)
		queueContributorAliases(b, id, e)
		queueContributorDescriptions(b, id, e)
		queueContributorRelations(b, id, e)
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return err
		}
		return releaseLock(ctx, tx, contributorLocks, id, editorID)
	})
	switch {
	case err == nil:
		return nil
	case isUniqueViolation(err, contributorNameKey):
		return apperr.Wrap(apperr.Conflict, MsgContributorExists, err)
	case apperr.CodeOf(err) != apperr.Internal:
		return err
	default:
		return fmt.Errorf("edit contributor %d: %w", id, err)
	}
}

// The queueContributor* functions queue the statements of an edit, in the order
// EditContributor sends them. Each statement checks what it changed: the fields'
// update answers 404 for an unknown contributor, the others 400 when they touched
// fewer rows than they were asked to.

// queueContributorFields updates the contributor's own fields.
func queueContributorFields(b *pgx.Batch, id int64, e catalog.ContributorEdit) {
	b.Queue(`
UPDATE contributors SET first_name = $2, last_name = $3, gender = $4, type = $5, public = $6
WHERE id = $1`, id, e.FirstName, e.LastName, e.Gender, e.Type, e.Public).Exec(func(ct pgconn.CommandTag) error {
		if ct.RowsAffected() == 0 {
			return apperr.New(apperr.NotFound, MsgContributorNotFound)
		}
		return nil
	})
}

// queueContributorLinks replaces the contributor's links with links, in their order.
func queueContributorLinks(b *pgx.Batch, id int64, links []string) {
	b.Queue(`DELETE FROM contributor_links WHERE contributor_id = $1`, id)
	if len(links) > 0 {
		b.Queue(`
INSERT INTO contributor_links (contributor_id, url)
SELECT $1, t.url FROM unnest($2::text[]) WITH ORDINALITY AS t(url, n) ORDER BY t.n`, id, links)
	}
}

// queueContributorAliases removes, then adds aliases.
func queueContributorAliases(b *pgx.Batch, id int64, e catalog.ContributorEdit) {
	if ids := contributorIDs(e.RemovedAliases); len(ids) > 0 {
		b.Queue(`DELETE FROM contributor_aliases WHERE contributor_id = $1 AND id = ANY($2)`, id, ids).
			Exec(contributorRowsAffected(len(ids), "removed alias"))
	}
	if n := len(e.AddedAliases); n > 0 {
		titles, languages := make([]string, n), make([]string, n)
		for i, a := range e.AddedAliases {
			titles[i], languages[i] = a.Title, a.Language
		}
		b.Queue(`
INSERT INTO contributor_aliases (contributor_id, title, language)
SELECT $1, t.title, t.language FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS t(title, language, n)
ORDER BY t.n`, id, titles, languages)
	}
}

// queueContributorDescriptions removes, modifies, then adds descriptions.
func queueContributorDescriptions(b *pgx.Batch, id int64, e catalog.ContributorEdit) {
	if ids := contributorIDs(e.RemovedDescriptions); len(ids) > 0 {
		b.Queue(`DELETE FROM contributor_descriptions WHERE contributor_id = $1 AND id = ANY($2)`, id, ids).
			Exec(contributorRowsAffected(len(ids), "removed description"))
	}
	if n := len(e.ModifiedDescriptions); n > 0 {
		ids, texts, languages, sources := make([]int64, n), make([]string, n), make([]string, n), make([]string, n)
		for i, d := range e.ModifiedDescriptions {
			ids[i], texts[i], languages[i], sources[i] = d.ID, d.Description, d.Language, d.Source
		}
		b.Queue(`
UPDATE contributor_descriptions d
SET description = m.description, language = m.language, source = m.source
FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[]) AS m(id, description, language, source)
WHERE d.id = m.id AND d.contributor_id = $1`, id, ids, texts, languages, sources).
			Exec(contributorRowsAffected(len(contributorIDs(ids)), "modified description"))
	}
	if n := len(e.AddedDescriptions); n > 0 {
		texts, languages, sources := make([]string, n), make([]string, n), make([]string, n)
		for i, d := range e.AddedDescriptions {
			texts[i], languages[i], sources[i] = d.Description, d.Language, d.Source
		}
		b.Queue(`
INSERT INTO contributor_descriptions (contributor_id, description, language, source)
SELECT $1, t.description, t.language, t.source
FROM unnest($2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS t(description, language, source, n)
ORDER BY t.n`, id, texts, languages, sources)
	}
}

// queueRelationTargetsLock locks the contributors the edit's added and modified
// relations point at, FOR KEY SHARE (the lock of a foreign key check) and in id order,
// before anything else of the edit: a concurrent deletion of one then waits for the
// edit, or has committed before and the relation's statement finds no such target
// (400). Without it, a deletion committed between the relation's check of its target
// and the foreign key check of the row it writes would fail that check: a 500.
func queueRelationTargetsLock(b *pgx.Batch, e catalog.ContributorEdit) {
	var targets []int64
	for _, r := range e.AddedRelations {
		targets = append(targets, r.RelationID)
	}
	for _, r := range e.ModifiedRelations {
		targets = append(targets, r.RelationID)
	}
	if len(targets) > 0 {
		b.Queue(`SELECT id FROM contributors WHERE id = ANY($1) ORDER BY id FOR KEY SHARE`, targets)
	}
}

// queueContributorRelations removes, modifies, then adds relations. A relation's
// target must be another contributor of the same client.
func queueContributorRelations(b *pgx.Batch, id int64, e catalog.ContributorEdit) {
	const target = `JOIN contributors o ON o.id = t.relation_id AND o.id <> $1
	AND o.client_id = (SELECT client_id FROM contributors WHERE id = $1)`
	if ids := contributorIDs(e.RemovedRelations); len(ids) > 0 {
		b.Queue(`DELETE FROM contributor_relations WHERE contributor_id = $1 AND id = ANY($2)`, id, ids).
			Exec(contributorRowsAffected(len(ids), "removed relation"))
	}
	if n := len(e.ModifiedRelations); n > 0 {
		ids, targets, types := make([]int64, n), make([]int64, n), make([]string, n)
		for i, r := range e.ModifiedRelations {
			ids[i], targets[i], types[i] = r.ID, r.RelationID, r.Type
		}
		b.Queue(`
UPDATE contributor_relations r
SET related_id = t.relation_id, type = t.type
FROM unnest($2::bigint[], $3::bigint[], $4::text[]) AS t(id, relation_id, type) `+target+`
WHERE r.id = t.id AND r.contributor_id = $1`, id, ids, targets, types).
			Exec(contributorRowsAffected(len(contributorIDs(ids)), "modified relation"))
	}
	if n := len(e.AddedRelations); n > 0 {
		targets, types := make([]int64, n), make([]string, n)
		for i, r := range e.AddedRelations {
			targets[i], types[i] = r.RelationID, r.Type
		}
		b.Queue(`
INSERT INTO contributor_relations (contributor_id, related_id, type)
SELECT $1, t.relation_id, t.type
FROM unnest($2::bigint[], $3::text[]) WITH ORDINALITY AS t(relation_id, type, n) `+target+`
ORDER BY t.n`, id, targets, types).
			Exec(contributorRowsAffected(n, "added relation"))
	}
}

// contributorRowsAffected makes a batch callback that rejects the edit as invalid input unless the
// statement touched exactly want rows.
func contributorRowsAffected(want int, what string) func(pgconn.CommandTag) error {
	return func(ct pgconn.CommandTag) error {
		if got := ct.RowsAffected(); got != int64(want) {
			return apperr.Wrap(apperr.Invalid, apperr.MsgMissingParams,
				fmt.Errorf("%s: %d of %d ids belong to the contributor", what, got, want))
		}
		return nil
	}
}

// contributorIDs returns ids without repetitions, in their first order.
func contributorIDs(ids []int64) []int64 {
	seen := make(map[int64]bool, len(ids))
	out := make([]int64, 0, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// DeleteContributor deletes a contributor and, by the schema's cascades in the same
// statement, its links, aliases, descriptions, relations in both directions, series
// associations and edit lock. It returns the avatar's storage key ("" for none) so
// the caller can remove the stored images once the delete is committed.
func (db *DB) DeleteContributor(ctx context.Context, id int64) (string, error) {
	var image string
	err := db.inTx(ctx, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `DELETE FROM contributors WHERE id = $1 RETURNING coalesce(image, '')`, id).Scan(&image)
	})
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return "", apperr.Wrap(apperr.NotFound, MsgContributorNotFound, err)
	case err != nil:
		return "", fmt.Errorf("delete contributor %d: %w", id, err)
	}
	return image, nil
}

// contributorFKViolation reports whether err violates the named foreign key.
func contributorFKViolation(err error, name string) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23503" && pgErr.ConstraintName == name
}
