-- The indexes of the paged lists (issue 13), built without blocking writes. CREATE
-- INDEX CONCURRENTLY cannot run in a transaction; IF NOT EXISTS makes a rerun after an
-- interrupted build skip what was built (an interrupted build leaves an INVALID index:
-- drop it and migrate again).
-- +goose NO TRANSACTION
-- +goose Up

-- The publication list of a publisher within a client, one range per order (default:
-- series id; name; creation time), so that a page is an index range and not a sort of
-- every link.
CREATE INDEX CONCURRENTLY IF NOT EXISTS series_publishers_list_id
    ON series_publishers (publisher_id, client_id, series_id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS series_publishers_list_name
    ON series_publishers (publisher_id, client_id, name, series_id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS series_publishers_list_created
    ON series_publishers (publisher_id, client_id, created_at, series_id);
-- Publication search: the trigrams of name and aliases within the publisher (btree_gin
-- puts the publisher's id in the same GIN index, so a search reads the publisher's
-- matches and not the whole catalog's); the client is checked on the row.
CREATE INDEX CONCURRENTLY IF NOT EXISTS series_publishers_search_trgm
    ON series_publishers USING gin (publisher_id, search gin_trgm_ops);

-- The publishers list in its default order (id) within a client.
CREATE INDEX CONCURRENTLY IF NOT EXISTS publishers_client_id
    ON publishers (client_id, id);
