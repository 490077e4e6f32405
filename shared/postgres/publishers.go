package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

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
// in the client's catalog (the total of its publication list). Search is a substring
// of the name ignoring case and accents (publishers.search, the name's search_fold,
// docs/queries.md); an empty Order orders by id.
//
// The page's ids come from an index in the list's order (publishers_client_id,
// publishers_client_name, publishers_client_created: an index-only scan, from the end
// nearer the page when there is no search, filtered on the search text for a search,
// or a trigram bitmap of publishers_client_search_trgm when the planner expects few
// matches), then only the page's rows are
// read. series_count is a column kept by triggers (the baseline schema),
// not a count per request.
func (db *DB) Publishers(ctx context.Context, f catalog.PublisherFilter) ([]catalog.PublisherListItem, error) {
	order, err := publisherOrderBy("p", f.Order)
	if err != nil {
		return nil, err
	}
	args := pgx.StrictNamedArgs{"client": f.Client, "limit": f.Limit, "offset": f.Offset}
	where := "p.client_id = @client"
	if f.Search != "" {
		// The term is folded and escaped in SQL (search_pattern, migration 00022), as
		// publishers.search is folded by its trigger (00027); the migrations run before
		// the deploy, so 00028 has filled the rows written before the column.
		args["search"] = f.Search
		where += " AND p.search LIKE search_pattern(@search)"
	}
	// Past the first page without a search, the client's publisher_count (kept by
	// triggers) tells which end of the list the page is nearer
	// (pageQuery). A search has no total to show, and counting its matches would cost
	// more than the walk it saves.
	with, forward := "", f.Offset == 0 || f.Search != ""
	if !forward {
		with = `list_total AS (SELECT coalesce((SELECT publisher_count FROM clients WHERE id = @client), 0) AS n),`
	}
	pageIDs := pageQuery{cols: "p.id, p.name, p.created_at", from: "publishers p", where: where, order: order,
		total: "(SELECT n FROM list_total)", limit: "@limit", offset: "@offset", forward: forward}
	rows, _ := db.Pool.Query(ctx, fmt.Sprintf(`
		WITH %[1]s page AS (%[2]s)
		SELECT p.id, p.name, p.short_name, p.slug, p.country, p.website, p.headquarter,
		       p.series_count,
		       coalesce(to_char(p.founding_date, 'YYYY-MM-DD'), '') AS founding_date,
		       p.image, p.image_source, p.client_id
		FROM page
		JOIN publishers p ON p.id = page.id
		ORDER BY %[3]s`, with, pageIDs.sql(), strings.ReplaceAll(order, "p.", "page.")), args)
	pubs, err := pgx.CollectRows(rows, pgx.RowToStructByName[catalog.PublisherListItem])
	if err != nil {
		return nil, fmt.Errorf("list publishers of client %d: %w", f.Client, err)
	}
	// Only links are served as links, whatever was stored (catalog.ServedLink).
	for i := range pubs {
		pubs[i].Website = catalog.ServedLink(pubs[i].Website)
		pubs[i].ImageSource = catalog.ServedSource(pubs[i].ImageSource)
	}
	return pubs, nil
}

// PublisherBySlug returns a publisher with its descriptions, aliases and relations,
// in one query; apperr.NotFound when no publisher has the slug.
func (db *DB) PublisherBySlug(ctx context.Context, slug string) (catalog.Publisher, error) {
	rows, _ := db.Pool.Query(ctx, `
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
	pub, err := pgx.CollectOneRow(rows, pgx.RowToStructByName[catalog.Publisher])
	if errors.Is(err, pgx.ErrNoRows) {
		return catalog.Publisher{}, apperr.New(apperr.NotFound, catalog.MsgPublisherNotFound)
	}
	if err != nil {
		return catalog.Publisher{}, fmt.Errorf("load publisher %q: %w", slug, err)
	}
	// Only links are served as links, whatever was stored (catalog.ServedLink).
	pub.Website = catalog.ServedLink(pub.Website)
	pub.Domain = catalog.WebsiteDomain(pub.Website)
	for i := range pub.Descriptions {
		pub.Descriptions[i].Source = catalog.ServedSource(pub.Descriptions[i].Source)
	}
	return pub, nil
}

// RandomPublisherSlug returns the slug of a publisher of the client picked uniformly
// at random; apperr.NotFound when the client has none.
//
// It draws ids uniformly between the client's smallest and largest publisher id and
// takes the first draw that is one of the client's publishers (rejection sampling:
// every publisher is equally likely), each draw one lookup in publishers_client_id, so
// the pick costs O(log n) and not the client's size. When all randomProbes draws miss
// (ids so sparse among other clients' that fewer than about one in four is the
// client's), it falls back to skipping a random number of entries of the client's name
// index, which is exact for any spread and costs the skipped entries. COALESCE
// evaluates the fallback only when the draws found nothing.
//
// Both ways find an id from the index alone (index-only scans); only the winner's row
// is read for its slug. In a large catalog the publishers' rows are mostly out of
// PostgreSQL's buffers, so reading the slug of every hit cost a read per draw.
func (db *DB) RandomPublisherSlug(ctx context.Context, client int64) (string, error) {
	rows, _ := db.Pool.Query(ctx, `
		SELECT (SELECT slug FROM publishers WHERE id = coalesce(
			(SELECT p.id
			 FROM (SELECT b.lo + floor(random() * (b.hi - b.lo + 1))::bigint AS id, k
			       FROM (SELECT min(id) AS lo, max(id) AS hi FROM publishers WHERE client_id = $1) b,
			            generate_series(1, $2::int) k) r
			 JOIN publishers p ON p.client_id = $1 AND p.id = r.id
			 ORDER BY r.k
			 LIMIT 1),
			(SELECT id
			 FROM publishers
			 WHERE client_id = $1
			 ORDER BY client_id, name, id
			 OFFSET (SELECT floor(random() * count(*))::bigint FROM publishers WHERE client_id = $1)
			 LIMIT 1)))`, client, randomProbes)
	slug, err := pgx.CollectOneRow(rows, pgx.RowTo[*string])
	if err != nil {
		return "", fmt.Errorf("pick a publisher of client %d: %w", client, err)
	}
	if slug == nil {
		return "", apperr.New(apperr.NotFound, catalog.MsgPublisherNotFound)
	}
	return *slug, nil
}

// randomProbes is how many random ids RandomPublisherSlug tries before it falls back
// to skipping: with a quarter of the id range the client's, all 16 miss 1 time in 100.
const randomProbes = 16

// linkOrderBy maps the publication orders to ORDER BY clauses over series_publishers
// sp, whose name and created_at are the series' (see the baseline schema): each is the key
// order of one index after (publisher_id, client_id), so a page is an index range.
func linkOrderBy(order string) (string, error) {
	switch order {
	case "":
		return "sp.series_id", nil
	case catalog.PublisherOrderNameAsc:
		return "sp.name, sp.series_id", nil
	case catalog.PublisherOrderNameDesc:
		return "sp.name DESC, sp.series_id DESC", nil
	case catalog.PublisherOrderAddedAsc:
		return "sp.created_at, sp.series_id", nil
	case catalog.PublisherOrderAddedDesc:
		return "sp.created_at DESC, sp.series_id DESC", nil
	default:
		return "", apperr.MissingParams()
	}
}

// searchSeparator separates the name and the alias titles in series_publishers.search
// (U+001F, see series_search_text). A search containing it could match across two
// titles, so it matches nothing (no title contains it).
const searchSeparator = "\x1f"

// publicationMatch is the condition on the link sp that a publication search adds, of
// the statement's argument @search: the series' name or one of its aliases
// contains it, case and accents ignored. The search text holds them all, folded
// (migration 00022), so a rare name is found through one trigram index within the
// publisher (series_publishers_search_trgm) and a broad one's page by walking the list's
// order index until the page is full; LIKE with the term folded by the same
// search_fold() (search_pattern) matches without folding every candidate row.
func publicationMatch(search string) string {
	if search == "" {
		return ""
	}
	return "AND sp.search LIKE search_pattern(@search)"
}

// publicationTotal is the number of the series of publisher @publisher in client
// @client matching the search (@search): without a search the publisher's
// series_count when the client is its own (the only case with links), else a count on
// series_publishers_list_id; with one, a count the planner takes from the trigram index
// for a rare name, or index-only from series_publishers_list_id_search for a broad one,
// of at most limit+1 matches (boundedCount). Only the branch taken runs.
func publicationTotal(search string, limit int64) string {
	if search != "" {
		return boundedCount("series_publishers sp",
			`sp.publisher_id = @publisher AND sp.client_id = @client `+publicationMatch(search), limit)
	}
	return `(SELECT CASE WHEN p.client_id = @client THEN p.series_count
		             ELSE (SELECT count(*) FROM series_publishers sp
		                   WHERE sp.publisher_id = @publisher AND sp.client_id = @client) END
		 FROM publishers p WHERE p.id = @publisher)`
}

// deepSearchPage is the CTE page of a searched page at or past T: one walk of the
// list's order index (series_publishers_list_name_search or _created_search, which
// hold the search text: the pattern is tested on the index entries) up to limit+1
// matches (the count's cap, countCap; or to the page's end, if further), numbering and
// counting them, of which the page keeps its rows, each with n, the matches walked
// (more than limit only if the list is longer: capped either way). A page past T walks at least offset
// matches to its first row anyway; the bounded count then walked up to offset+T
// matches again, on another index, and read the page from the nearer end only after
// both. The count and the page see the same matches, as in one statement before.
func deepSearchPage(where, order string, limit int64) string {
	outer := strings.NewReplacer("sp.series_id", "w.series_id", "sp.", "w.").Replace(order)
	cols := "sp.series_id"
	for _, k := range strings.Split(order, ",") {
		if c, _, _ := strings.Cut(strings.TrimSpace(k), " "); c != "sp.series_id" {
			cols += ", " + c
		}
	}
	// OFFSET and LIMIT rather than a filter on a row number: the planner then expects
	// the page's limit rows, not a share of the walk (an estimate of thousands made the
	// statement's cost pass jit_above_cost, and compiling it cost more than the walk).
	return `page AS (SELECT w.series_id, count(*) OVER () AS n
		FROM (SELECT ` + cols + ` FROM series_publishers sp WHERE ` + where + `
		      ORDER BY ` + order + ` LIMIT greatest(` + strconv.FormatInt(limit+1, 10) + `, @offset::bigint + @limit::bigint)) w
		ORDER BY ` + outer + ` LIMIT @limit OFFSET @offset)`
}

type publicationRow struct {
	catalog.Publication
	Total  int64 `db:"total"`
	Capped bool  `db:"capped"`
}

// PublisherPublications returns a page of the series of a publisher within a client,
// each with its aliases, tags, preview volume and the alias and description in
// f.Language (the description falling back to English), and the number of all
// matching series. A publisher that does not exist has no publications. One query,
// and a second one only to count when the page is empty but need not be the end.
//
// The page is a range of one index of series_publishers in the list's order (the links
// carry the series' name and creation time), so a page reads its own rows and the
// skipped offset's index entries, not every link of the publisher, walked from the
// nearer end of the list (pageQuery); the per-series metadata is looked up for the
// page's rows only; the total is a kept count or a count on an index
// (publicationTotal), taken first in the same statement: a search's count stops at a cap
// (countCap: T before T), and a capped count leaves the page read from the start. A
// search's page at or past T is instead one walk that counts and pages (deepSearchPage).
func (db *DB) PublisherPublications(ctx context.Context, f catalog.PublicationFilter) (catalog.PublicationPage, error) {
	order, err := linkOrderBy(f.Order)
	if err != nil {
		return catalog.PublicationPage{}, err
	}
	if strings.Contains(f.Search, searchSeparator) {
		return catalog.PublicationPage{Publications: []catalog.Publication{}, Exact: true}, nil
	}
	limitCount := db.countCap(f.Offset)
	lang := f.Language
	if lang == "" {
		lang = catalog.DefaultLanguage
	}
	args := pgx.StrictNamedArgs{"publisher": f.Publisher, "client": f.Client, "limit": f.Limit, "offset": f.Offset,
		"language": lang}
	if f.Search != "" {
		args["search"] = f.Search
	}
	outer := strings.NewReplacer("sp.series_id", "s.id", "sp.", "s.").Replace(order)
	where := "sp.publisher_id = @publisher AND sp.client_id = @client " + publicationMatch(f.Search)
	cappedSQL := fmt.Sprintf("%t AND n > %d", f.Search != "", limitCount)
	ids := pageQuery{cols: "sp.series_id", from: "series_publishers sp", where: where, order: order,
		total: pageTotal("list_total"), limit: "@limit", offset: "@offset", forward: f.Offset == 0}
	ctes := listTotal("coalesce("+publicationTotal(f.Search, limitCount)+", 0)", cappedSQL) +
		",\n\t\tpage AS (" + ids.sql() + ")"
	if f.Search != "" && f.Offset >= db.maxExact() {
		ctes = deepSearchPage(where, order, limitCount) + ",\n\t\t" +
			listTotal("coalesce((SELECT max(n) FROM page), 0)", cappedSQL)
	}
	rows, _ := db.Pool.Query(ctx, fmt.Sprintf(`
		WITH %[1]s
		SELECT s.id, s.name, s.slug, s.type, s.origin, (SELECT n FROM list_total) AS total,
		       (SELECT capped FROM list_total) AS capped,
		       coalesce((SELECT a.title FROM series_aliases a
		                 WHERE a.series_id = s.id AND a.language = @language
		                 ORDER BY a.id LIMIT 1), '') AS alias,
		       coalesce((SELECT jsonb_agg(jsonb_build_object(
		                        'id', a.id, 'title', a.title, 'language', a.language) ORDER BY a.id)
		                 FROM series_aliases a
		                 WHERE a.series_id = s.id), '[]') AS aliases,
		       coalesce((SELECT d.description FROM series_descriptions d
		                 WHERE d.series_id = s.id AND d.language IN (@language, 'English')
		                 ORDER BY d.language = @language DESC LIMIT 1), '') AS description,
		       coalesce((SELECT jsonb_agg(jsonb_build_object(
		                        'id', t.id, 'name', t.name, 'type', t.type) ORDER BY t.name, t.id)
		                 FROM series_tags st
		                 JOIN tags t ON t.id = st.tag_id AND t.client_id = s.client_id
		                 WHERE st.series_id = s.id), '[]') AS tags,
		       (SELECT jsonb_build_object(
		                   'id', v.id, 'cover_path', v.cover_path, 'aspect_ratio', v.aspect_ratio,
		                   'nsfw', v.nsfw, 'nsfw18', v.nsfw18)
		        FROM volumes v
		        WHERE v.series_id = s.id
		        ORDER BY v.number, v.id LIMIT 1) AS volume
		FROM page
		JOIN series s ON s.id = page.series_id
		ORDER BY %[2]s`, ctes, outer), args)
	rowsRead, err := pgx.CollectRows(rows, pgx.RowToStructByName[publicationRow])
	if err != nil {
		return catalog.PublicationPage{}, fmt.Errorf("list publications of publisher %d: %w", f.Publisher, err)
	}
	page := catalog.PublicationPage{Publications: make([]catalog.Publication, len(rowsRead)), Exact: true}
	for i, p := range rowsRead {
		page.Publications[i] = p.Publication
	}
	var n int64
	var capped bool
	switch {
	case len(rowsRead) > 0:
		n, capped = rowsRead[0].Total, rowsRead[0].Capped
	case f.Offset == 0 && f.Limit > 0:
		return page, nil // an empty first page: nothing matches
	default:
		// Past the end, or a zero limit: the page says nothing about the total.
		if n, err = db.countPublications(ctx, f, limitCount); err != nil {
			return catalog.PublicationPage{}, err
		}
		capped = f.Search != "" && n > limitCount // a kept count is exact
	}
	page.Total, page.Exact = boundedTotal(n, capped, limitCount, f.Offset, f.Limit, len(page.Publications))
	return page, nil
}

// countPublications counts the publications f's list has, at most limit+1 of them
// (publicationTotal).
func (db *DB) countPublications(ctx context.Context, f catalog.PublicationFilter, limit int64) (int64, error) {
	args := pgx.StrictNamedArgs{"publisher": f.Publisher, "client": f.Client}
	if f.Search != "" {
		args["search"] = f.Search
	}
	var total int64
	err := db.Pool.QueryRow(ctx, `SELECT coalesce(`+publicationTotal(f.Search, limit)+`, 0)`, args).Scan(&total)
	if err != nil {
		return 0, fmt.Errorf("count publications of publisher %d: %w", f.Publisher, err)
	}
	return total, nil
}
