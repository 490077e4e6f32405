-- The trigram index of the publishers list's folded search (00027, 00028): a client's
-- publishers whose search contains a rare term, found without walking the client's
-- list (btree_gin for client_id, as contributors_client_search_trgm). Built
-- CONCURRENTLY: its lock blocks no read or write. publishers_name_trgm stays: the
-- previous release searches p.name ILIKE until the new code is deployed; a later
-- release drops it (contract).
-- +goose NO TRANSACTION
-- +goose Up
SET lock_timeout = 0;       -- a timeout would fail the build and leave an INVALID index
SET statement_timeout = 0;  -- a build takes what the table needs; nothing queues behind it
CREATE INDEX CONCURRENTLY IF NOT EXISTS publishers_client_search_trgm
    ON publishers USING gin (client_id, search gin_trgm_ops);
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

-- The planner's statistics of the new column: until the next autoanalyze it would plan
-- searches on publishers.search as if the column were empty. ANALYZE takes a lock that
-- blocks no read or write.
ANALYZE publishers;

RESET lock_timeout;
RESET statement_timeout;
