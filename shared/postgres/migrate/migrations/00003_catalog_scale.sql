-- The catalog at scale (issue 13): what the paged lists need to cost one page, not the
-- whole catalog. Forward-only and safe on a live database: the new columns have no
-- default that rewrites a table (series_count's constant default is metadata only), the
-- triggers keep them true from the moment this transaction commits, and the backfill
-- runs in the same transaction. The indexes that use them come in 00004, built
-- CONCURRENTLY.
-- +goose Up
CREATE EXTENSION IF NOT EXISTS btree_gin;

-- publishers.series_count: the links of the publisher to series of its own client (the
-- total of its publication list and the series_count of the publishers list).
ALTER TABLE publishers ADD COLUMN series_count bigint NOT NULL DEFAULT 0;

-- series_publishers carries, for each link, what the publication list filters and sorts
-- on, so that one index range of the publisher answers a page in the list's order:
-- the series' client, name and creation time, and its search text (the name and every
-- alias title, separated by U+001F, which no name contains).
ALTER TABLE series_publishers
    ADD COLUMN client_id  bigint,
    ADD COLUMN name       text,
    ADD COLUMN created_at timestamptz,
    ADD COLUMN search     text;

-- +goose StatementBegin
CREATE FUNCTION series_search_text(sid bigint) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT s.name || coalesce((SELECT string_agg(chr(31) || a.title, '' ORDER BY a.id)
                               FROM series_aliases a WHERE a.series_id = s.id), '')
    FROM series s WHERE s.id = sid
$$;
-- +goose StatementEnd

-- A new link (or one moved to another series) copies the series' columns. A bulk
-- loader may supply them itself (the benchmark generator does): the trigger only fills
-- a link whose columns are missing.
-- +goose StatementBegin
CREATE FUNCTION series_publishers_fill() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' AND NEW.client_id IS NOT NULL AND NEW.name IS NOT NULL
       AND NEW.created_at IS NOT NULL AND NEW.search IS NOT NULL THEN
        RETURN NEW;
    END IF;
    SELECT s.client_id, s.name, s.created_at, series_search_text(s.id)
      INTO NEW.client_id, NEW.name, NEW.created_at, NEW.search
      FROM series s WHERE s.id = NEW.series_id;
    RETURN NEW;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER series_publishers_fill BEFORE INSERT OR UPDATE OF series_id ON series_publishers
    FOR EACH ROW EXECUTE FUNCTION series_publishers_fill();

-- A series' name, creation time or client changes: its links follow.
-- +goose StatementBegin
CREATE FUNCTION series_sync_links() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE series_publishers sp
       SET client_id = n.client_id, name = n.name, created_at = n.created_at,
           search = series_search_text(n.id)
      FROM new_series n JOIN old_series o ON o.id = n.id
     WHERE sp.series_id = n.id
       AND (n.client_id, n.name, n.created_at) IS DISTINCT FROM (o.client_id, o.name, o.created_at);
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER series_sync_links AFTER UPDATE ON series
    REFERENCING OLD TABLE AS old_series NEW TABLE AS new_series
    FOR EACH STATEMENT EXECUTE FUNCTION series_sync_links();

-- An alias added, changed or removed: the search text of the series' links follows.
-- +goose StatementBegin
CREATE FUNCTION series_aliases_sync_links() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        UPDATE series_publishers sp SET search = series_search_text(sp.series_id)
         WHERE sp.series_id IN (SELECT series_id FROM new_aliases);
    END IF;
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        UPDATE series_publishers sp SET search = series_search_text(sp.series_id)
         WHERE sp.series_id IN (SELECT series_id FROM old_aliases);
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER series_aliases_sync_links_ins AFTER INSERT ON series_aliases
    REFERENCING NEW TABLE AS new_aliases
    FOR EACH STATEMENT EXECUTE FUNCTION series_aliases_sync_links();
CREATE TRIGGER series_aliases_sync_links_upd AFTER UPDATE ON series_aliases
    REFERENCING OLD TABLE AS old_aliases NEW TABLE AS new_aliases
    FOR EACH STATEMENT EXECUTE FUNCTION series_aliases_sync_links();
CREATE TRIGGER series_aliases_sync_links_del AFTER DELETE ON series_aliases
    REFERENCING OLD TABLE AS old_aliases
    FOR EACH STATEMENT EXECUTE FUNCTION series_aliases_sync_links();

-- publishers.series_count follows the links: increments per statement on insert and
-- delete (row locks on the publisher serialize concurrent writers); on update, a recount
-- of only the publishers whose links changed series, publisher or client (not of those
-- whose links only took a new name or search text).
-- +goose StatementBegin
CREATE FUNCTION series_publishers_count() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        UPDATE publishers p SET series_count = p.series_count + d.n
          FROM (SELECT publisher_id, client_id, count(*) AS n FROM new_links
                GROUP BY publisher_id, client_id) d
         WHERE p.id = d.publisher_id AND p.client_id = d.client_id;
    ELSIF TG_OP = 'DELETE' THEN
        UPDATE publishers p SET series_count = p.series_count - d.n
          FROM (SELECT publisher_id, client_id, count(*) AS n FROM old_links
                GROUP BY publisher_id, client_id) d
         WHERE p.id = d.publisher_id AND p.client_id = d.client_id;
    ELSE
        UPDATE publishers p
           SET series_count = (SELECT count(*) FROM series_publishers sp
                               WHERE sp.publisher_id = p.id AND sp.client_id = p.client_id)
         WHERE p.id IN (SELECT d.publisher_id FROM (
                            (SELECT series_id, publisher_id, client_id FROM old_links
                             EXCEPT SELECT series_id, publisher_id, client_id FROM new_links)
                            UNION ALL
                            (SELECT series_id, publisher_id, client_id FROM new_links
                             EXCEPT SELECT series_id, publisher_id, client_id FROM old_links)) d);
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER series_publishers_count_ins AFTER INSERT ON series_publishers
    REFERENCING NEW TABLE AS new_links
    FOR EACH STATEMENT EXECUTE FUNCTION series_publishers_count();
CREATE TRIGGER series_publishers_count_upd AFTER UPDATE ON series_publishers
    REFERENCING OLD TABLE AS old_links NEW TABLE AS new_links
    FOR EACH STATEMENT EXECUTE FUNCTION series_publishers_count();
CREATE TRIGGER series_publishers_count_del AFTER DELETE ON series_publishers
    REFERENCING OLD TABLE AS old_links
    FOR EACH STATEMENT EXECUTE FUNCTION series_publishers_count();

-- A publisher moved to another client counts its links to that client's series.
-- +goose StatementBegin
CREATE FUNCTION publishers_recount() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.series_count := (SELECT count(*) FROM series_publishers sp
                         WHERE sp.publisher_id = NEW.id AND sp.client_id = NEW.client_id);
    RETURN NEW;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER publishers_recount BEFORE UPDATE OF client_id ON publishers
    FOR EACH ROW WHEN (OLD.client_id IS DISTINCT FROM NEW.client_id)
    EXECUTE FUNCTION publishers_recount();

-- Backfill what was there before the triggers.
UPDATE series_publishers sp
   SET client_id = s.client_id, name = s.name, created_at = s.created_at,
       search = series_search_text(s.id)
  FROM series s
 WHERE s.id = sp.series_id;
UPDATE publishers p
   SET series_count = (SELECT count(*) FROM series_publishers sp
                       WHERE sp.publisher_id = p.id AND sp.client_id = p.client_id);
