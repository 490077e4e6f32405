-- The deep pages of a publication search in added order. The
-- page walks series_publishers_list_created (publisher_id, client_id, created_at, series_id),
-- which holds no search text, so every entry it skips costs a heap fetch to test the
-- pattern. This index is the same one with the search text as a payload: the walk
-- tests the pattern on the index entry (an index-only scan). series_publishers_list_created
-- stays: the running release's pages without a search use it, and this one serves them
-- as well; it is dropped by a later release once no deployed code names it
-- (docs/queries.md, "Operating the indexes and kept texts").
--
-- Built without blocking writes; the check at the end refuses an INVALID index left by
-- a failed or interrupted build (DROP INDEX CONCURRENTLY series_publishers_list_created_search,
-- then migrate again).
-- +goose NO TRANSACTION
-- +goose Up
SET lock_timeout = 0;       -- a CONCURRENTLY build waits for older transactions; a timeout would fail it
SET statement_timeout = 0;  -- the build takes what the table needs; nothing queues behind it
CREATE INDEX CONCURRENTLY IF NOT EXISTS series_publishers_list_created_search
    ON series_publishers (publisher_id, client_id, created_at, series_id) INCLUDE (search);
-- +goose StatementBegin
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
               JOIN pg_namespace n ON n.oid = c.relnamespace
               WHERE n.nspname = current_schema() AND NOT i.indisvalid) THEN
        RAISE EXCEPTION 'an INVALID index is left by an interrupted concurrent build: drop it concurrently, then migrate again';
    END IF;
END $$;
-- +goose StatementEnd

-- The runner applies the next migrations on the same connection: back to its defaults.
RESET lock_timeout;
RESET statement_timeout;
