-- A contributor's add whose slug is taken picks the next free suffix among the slugs
-- "<slug>-<digits>": a prefix range, which only an index in byte order can serve under
-- any database collation (the unique constraint's index is in the database's own,
-- where a range over "-" is not a prefix). Built CONCURRENTLY: its lock blocks no read
-- or write.
-- +goose NO TRANSACTION
-- +goose Up
SET lock_timeout = 0;       -- a timeout would fail the build and leave an INVALID index
SET statement_timeout = 0;  -- a build takes what the table needs; nothing queues behind it
CREATE INDEX CONCURRENTLY IF NOT EXISTS contributors_slug_c ON contributors ((slug COLLATE "C"));
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

RESET lock_timeout;
RESET statement_timeout;
