package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/catalog"
)

// publisherOrderBy maps the list orders to ORDER BY clauses over a relation aliased
// p or s with name, created_at and id columns. Ties break on id, so pages are stable.
func publisherOrderBy(alias, order string) (string, error) {
	switch order {
	case "":
		return alias + ".id", nil
	case catalog.PublisherOrderNameAsc:
		return alias + ".name, " + alias + ".id", nil
	case catalog.PublisherOrderNameDesc:
		return alias + ".name DESC, " + alias + ".id DESC", nil
	case catalog.PublisherOrderAddedAsc:
		return alias + ".created_at, " + alias + ".id", nil
	case catalog.PublisherOrderAddedDesc:
		return alias + ".created_at DESC, " + alias + ".id DESC", nil
	default:
		return "", apperr.MissingParams()
	}
}

// Publishers returns a page of the client's publishers, each with its number of series
// in the client's catalog (the total of its publication list). Search is a
// case-insensitive substring of the name; an empty Order orders by id.
func (db *DB) Publishers(ctx context.Context, f catalog.PublisherFilter) ([]catalog.PublisherListItem, error) {
	order, err := publisherOrderBy("p", f.Order)
	if err != nil {
		return nil, err
	}
	args := []any{f.Client, f.Limit, f.Offset}
	match := ""
	if f.Search != "" {
		args = append(args, likePattern(f.Search))
		match = "AND p.name ILIKE $4"
	}
	// Page first, then count the series of the page's publishers only.
	rows, err := db.Pool.Query(ctx, fmt.Sprintf(`
		WITH page AS (
			SELECT p.*
			FROM publishers p
			WHERE p.client_id = $1 %[1]s
			ORDER BY %[2]s
			LIMIT $2 OFFSET $3
		)
		SELECT p.id, p.name, p.short_name, p.slug, p.country, p.website, p.headquarter,
		       (SELECT count(*) FROM series_publishers sp
		        JOIN series s ON s.id = sp.series_id AND s.client_id = p.client_id
		        WHERE sp.publisher_id = p.id) AS series_count,
		       coalesce(to_char(p.founding_date, 'YYYY-MM-DD'), '') AS founding_date,
		       p.image, p.image_source, p.client_id
		FROM page p
		ORDER BY %[2]s`, match, order), args...)
	if err != nil {
		return nil, fmt.Errorf("list publishers of client %d: %w", f.Client, err)
	}
	pubs, err := pgx.CollectRows(rows, pgx.RowToStructByName[catalog.PublisherListItem])
	if err != nil {
		return nil, fmt.Errorf("list publishers of client %d: %w", f.Client, err)
	}
	return pubs, nil
}

// PublisherBySlug returns a publisher with its descriptions, aliases and relations,
// in one query; apperr.NotFound when no publisher has the slug.
func (db *DB) PublisherBySlug(ctx context.Context, slug string) (catalog.Publisher, error) {
	rows, err := db.Pool.Query(ctx, `
		SELECT p.id, p.name, p.slug, p.image, p.website, p.country,
		       coalesce((SELECT jsonb_agg(jsonb_build_object(
		                        'id', d.id, 'description', d.description,
		                        'language', d.language, 'source', d.source) ORDER BY d.id)
		                 FROM publisher_descriptions d
		                 WHERE d.publisher_id = p.id), '[]') AS descriptions,
		       coalesce((SELECT jsonb_agg(jsonb_build_object(
		                        'id', a.id, 'title', a.title, 'language', a.language) ORDER BY a.id)
		                 FROM publisher_aliases a
		                 WHERE a.publisher_id = p.id), '[]') AS aliases,
		       coalesce((SELECT jsonb_agg(jsonb_build_object(
		                        'id', r.id, 'relation_id', o.id, 'type', r.type,
		                        'name', o.name, 'image', o.image, 'slug', o.slug) ORDER BY r.id)
		                 FROM publisher_relations r
		                 JOIN publishers o ON o.id = r.related_id
		                 WHERE r.publisher_id = p.id), '[]') AS relations
		FROM publishers p
		WHERE p.slug = $1`, slug)
	if err != nil {
		return catalog.Publisher{}, fmt.Errorf("load publisher %q: %w", slug, err)
	}
	pub, err := pgx.CollectOneRow(rows, pgx.RowToStructByName[catalog.Publisher])
	if errors.Is(err, pgx.ErrNoRows) {
		return catalog.Publisher{}, apperr.New(apperr.NotFound, catalog.MsgPublisherNotFound)
	}
	if err != nil {
		return catalog.Publisher{}, fmt.Errorf("load publisher %q: %w", slug, err)
	}
	pub.Domain = catalog.WebsiteDomain(pub.Website)
	return pub, nil
}

// RandomPublisherSlug returns the slug of a publisher of the client picked uniformly
// at random; apperr.NotFound when the client has none. It skips a random number of
// entries of the (client_id, name, id) index instead of sorting the table by random().
func (db *DB) RandomPublisherSlug(ctx context.Context, client int64) (string, error) {
	rows, err := db.Pool.Query(ctx, `
		SELECT slug
		FROM publishers
		WHERE id = (
			SELECT id
			FROM publishers
			WHERE client_id = $1
			ORDER BY client_id, name, id
			OFFSET (SELECT floor(random() * count(*))::bigint FROM publishers WHERE client_id = $1)
			LIMIT 1)`, client)
	if err != nil {
		return "", fmt.Errorf("pick a publisher of client %d: %w", client, err)
	}
	slug, err := pgx.CollectOneRow(rows, pgx.RowTo[string])
	if errors.Is(err, pgx.ErrNoRows) {
		return "", apperr.New(apperr.NotFound, catalog.MsgPublisherNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("pick a publisher of client %d: %w", client, err)
	}
	return slug, nil
}

// publicationMatch is the condition on series s that a publication search adds, with
// param the placeholder of the search pattern: the name or any alias contains it.
func publicationMatch(search, param string) string {
	if search == "" {
		return ""
	}
	return fmt.Sprintf(`AND (s.name ILIKE %[1]s OR EXISTS (
		SELECT 1 FROM series_aliases a WHERE a.series_id = s.id AND a.title ILIKE %[1]s))`, param)
}

type publicationRow struct {
	catalog.Publication
	Total int64 `db:"total"`
}

// PublisherPublications returns a page of the series of a publisher within a client,
// each with its aliases, tags, preview volume and the alias and description in
// f.Language (the description falling back to English), and the number of all
// matching series. A publisher that does not exist has no publications. One query,
// and a second one only to count when the page is empty but need not be the end.
func (db *DB) PublisherPublications(ctx context.Context, f catalog.PublicationFilter) ([]catalog.Publication, int64, error) {
	order, err := publisherOrderBy("s", f.Order)
	if err != nil {
		return nil, 0, err
	}
	lang := f.Language
	if lang == "" {
		lang = catalog.DefaultLanguage
	}
	args := []any{f.Publisher, f.Client, f.Limit, f.Offset, lang}
	if f.Search != "" {
		args = append(args, likePattern(f.Search))
	}
	// The total needs every matching series anyway, so the plan starts from the
	// publisher's links (materialized: otherwise the planner may walk the client's whole
	// name index hoping to stop early) and sorts only those; the per-series metadata is
	// looked up for the page's rows only.
	rows, err := db.Pool.Query(ctx, fmt.Sprintf(`
		WITH linked AS MATERIALIZED (
			SELECT series_id FROM series_publishers WHERE publisher_id = $1
		),
		page AS (
			SELECT s.id, s.name, s.slug, s.type, s.origin, s.created_at, count(*) OVER () AS total
			FROM linked l
			JOIN series s ON s.id = l.series_id
			WHERE s.client_id = $2 %[1]s
			ORDER BY %[2]s
			LIMIT $3 OFFSET $4
		)
		SELECT s.id, s.name, s.slug, s.type, s.origin, s.total,
		       coalesce((SELECT a.title FROM series_aliases a
		                 WHERE a.series_id = s.id AND a.language = $5
		                 ORDER BY a.id LIMIT 1), '') AS alias,
		       coalesce((SELECT jsonb_agg(jsonb_build_object(
		                        'id', a.id, 'title', a.title, 'language', a.language) ORDER BY a.id)
		                 FROM series_aliases a
		                 WHERE a.series_id = s.id), '[]') AS aliases,
		       coalesce((SELECT d.description FROM series_descriptions d
		                 WHERE d.series_id = s.id AND d.language IN ($5, 'English')
		                 ORDER BY d.language = $5 DESC LIMIT 1), '') AS description,
		       coalesce((SELECT jsonb_agg(jsonb_build_object(
		                        'id', t.id, 'name', t.name, 'type', t.type) ORDER BY t.name, t.id)
		                 FROM series_tags st
		                 JOIN tags t ON t.id = st.tag_id
		                 WHERE st.series_id = s.id), '[]') AS tags,
		       (SELECT jsonb_build_object(
		                   'id', v.id, 'cover_path', v.cover_path, 'aspect_ratio', v.aspect_ratio,
		                   'nsfw', v.nsfw, 'nsfw18', v.nsfw18)
		        FROM volumes v
		        WHERE v.series_id = s.id
		        ORDER BY v.number, v.id LIMIT 1) AS volume
		FROM page s
		ORDER BY %[2]s`, publicationMatch(f.Search, "$6"), order), args...)
	if err != nil {
		return nil, 0, fmt.Errorf("list publications of publisher %d: %w", f.Publisher, err)
	}
	page, err := pgx.CollectRows(rows, pgx.RowToStructByName[publicationRow])
	if err != nil {
		return nil, 0, fmt.Errorf("list publications of publisher %d: %w", f.Publisher, err)
	}
	pubs := make([]catalog.Publication, len(page))
	for i, p := range page {
		pubs[i] = p.Publication
	}
	if len(page) > 0 {
		return pubs, page[0].Total, nil
	}
	if f.Offset == 0 && f.Limit > 0 {
		return pubs, 0, nil // an empty first page: nothing matches
	}
	// Past the end, or a zero limit: the page says nothing about the total.
	total, err := db.countPublications(ctx, f)
	if err != nil {
		return nil, 0, err
	}
	return pubs, total, nil
}

func (db *DB) countPublications(ctx context.Context, f catalog.PublicationFilter) (int64, error) {
	args := []any{f.Publisher, f.Client}
	if f.Search != "" {
		args = append(args, likePattern(f.Search))
	}
	var total int64
	err := db.Pool.QueryRow(ctx, `
		WITH linked AS MATERIALIZED (
			SELECT series_id FROM series_publishers WHERE publisher_id = $1
		)
		SELECT count(*)
		FROM linked l
		JOIN series s ON s.id = l.series_id
		WHERE s.client_id = $2 `+publicationMatch(f.Search, "$3"), args...).Scan(&total)
	if err != nil {
		return 0, fmt.Errorf("count publications of publisher %d: %w", f.Publisher, err)
	}
	return total, nil
}
