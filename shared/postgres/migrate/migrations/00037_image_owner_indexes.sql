-- The rows that name a stored picture, in id order: make reconcile-images walks them in
-- batches of a thousand (keyset on id) to find the pictures the bucket no longer has,
-- whatever the share of users and contributors with one. Partial indexes: only the
-- rows with a picture are in them. Built CONCURRENTLY: their locks block no read or
-- write.
-- +goose NO TRANSACTION
-- +goose Up
SET lock_timeout = 0;       -- a timeout would fail the build and leave an INVALID index
SET statement_timeout = 0;  -- a build takes what the table needs; nothing queues behind it
CREATE INDEX CONCURRENTLY IF NOT EXISTS users_with_image ON users (id) WHERE profile_image IS NOT NULL;
CREATE INDEX CONCURRENTLY IF NOT EXISTS contributors_with_image ON contributors (id) WHERE image IS NOT NULL;
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
