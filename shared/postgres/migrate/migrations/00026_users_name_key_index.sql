-- Issue 29: the indexes of the sign-up's name check (00025): the keys, for the key of
-- the new name and the range of keys that start with it and a hyphen; and the rows
-- without a key (a partial index, empty once `make migrate`'s fill has run), which the
-- sign-up keys itself and the fill walks.
-- +goose NO TRANSACTION
-- +goose Up
SET lock_timeout = 0;       -- the build waits for older transactions; nothing queues behind it
SET statement_timeout = 0;  -- a build takes what the table needs
CREATE INDEX CONCURRENTLY IF NOT EXISTS users_name_key ON users (name_key);
CREATE INDEX CONCURRENTLY IF NOT EXISTS users_name_key_missing ON users (id) WHERE name_key IS NULL;
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
