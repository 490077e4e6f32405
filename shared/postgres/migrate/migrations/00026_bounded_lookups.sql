-- Issue 29: lookups that read a whole table, bounded by an index.
--
-- users_name_key, users_name_key_missing: the sign-up's name check (00025) reads the
-- keys equal to the new name's and the range of those that start with it and a hyphen;
-- and the rows without a key (a partial index, empty once `make migrate`'s fill has
-- run), which the sign-up keys itself and the fill walks.
--
-- sessions_user: deleting a user cascades to their sessions, and the only index on
-- sessions.user_id (sessions_user_live) holds the live ones alone, so the cascade read
-- every session of every user (sessions are kept after they expire or are revoked).
--
-- Then the backfill of tags.series_count (00024), five tags a transaction, resumable
-- (it counts the tags still NULL). A bulk load or purge of series running at the same
-- time can leave a count it raced with off (the triggers skip a NULL count, and a
-- batch counts at its snapshot): run none meanwhile, as for any migration.
-- +goose NO TRANSACTION
-- +goose Up
SET lock_timeout = 0;       -- the build waits for older transactions; nothing queues behind it
SET statement_timeout = 0;  -- a build takes what the table needs
CREATE INDEX CONCURRENTLY IF NOT EXISTS users_name_key ON users (name_key);
CREATE INDEX CONCURRENTLY IF NOT EXISTS users_name_key_missing ON users (id) WHERE name_key IS NULL;
CREATE INDEX CONCURRENTLY IF NOT EXISTS sessions_user ON sessions (user_id);
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

SET lock_timeout = '1s';
SET statement_timeout = 0;  -- one statement of many short transactions
-- +goose StatementBegin
DO $$
DECLARE
    n int;
    started timestamptz;
BEGIN
    LOOP
        started := clock_timestamp();
        UPDATE tags t SET series_count = tag_series_count(t.id, t.client_id)
         WHERE t.id IN (SELECT id FROM tags WHERE series_count IS NULL ORDER BY id LIMIT 5 FOR UPDATE);
        GET DIAGNOSTICS n = ROW_COUNT;
        COMMIT;
        EXIT WHEN n = 0;
        -- As long a pause as the batch took: the service's reads get the database half
        -- of the time meanwhile.
        PERFORM pg_sleep(least(extract(epoch FROM clock_timestamp() - started), 1));
    END LOOP;
END $$;
-- +goose StatementEnd
