-- Usernames unique without regard to case in every script. users_username_key
-- (the baseline) is on lower(username), and lower() under the database's C locale (the
-- local stack's) lowers ASCII letters alone: "Émile" and "émile", "ΑDMIN" and "αdmin"
-- could both be taken, one posing as the other. This index is on the Unicode lowercase
-- (ICU's root locale, the same on every server whatever its own locale);
-- users_username_key stays, as the lists' name order walks it (a name equal under
-- ICU's lower is equal under C's lower too, so the old index never refuses what this
-- one allows).
--
-- Existing names that differ only by case are kept, deterministically, by the oldest
-- account (the smallest id); each later one gets "-<id>" appended (its slug, id and
-- everything else stay): one UPDATE of the few duplicates under a lock timeout, then
-- the index, built without blocking writes. A duplicate written between the two fails
-- the build; the check at the end refuses an INVALID index left by a failed or
-- interrupted build (DROP INDEX CONCURRENTLY users_username_fold_key, then migrate
-- again: the UPDATE renames the new duplicate).
-- +goose NO TRANSACTION
-- +goose Up
-- +goose StatementBegin
DO $$
BEGIN
    SET LOCAL lock_timeout = '1s';
    SET LOCAL statement_timeout = '60s';
    UPDATE users u SET username = u.username || '-' || u.id
    FROM (SELECT id, row_number() OVER (PARTITION BY lower(username COLLATE "und-x-icu") ORDER BY id) AS n
          FROM users) d
    WHERE d.id = u.id AND d.n > 1;
END
$$;
-- +goose StatementEnd

SET lock_timeout = 0;       -- a CONCURRENTLY build waits for older transactions; a timeout would fail it
SET statement_timeout = 0;  -- the build takes what the table needs; nothing queues behind it
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS users_username_fold_key
    ON users (lower(username COLLATE "und-x-icu"));
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
