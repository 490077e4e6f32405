-- Lookups that read a whole table, bounded by an index.
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
-- Then the backfill of tags.series_count (00024), in one statement that reads every
-- link once and writes one row per tag; a rerun counts only the tags still NULL. A
-- bulk load or purge of series running at the same time can leave a count it raced
-- with off (the triggers skip a NULL count, and the statement counts at its snapshot):
-- run none meanwhile, as for any migration.
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
SET statement_timeout = '60s';
-- One pass over the links and the series (sequential scans, which read through a small
-- ring of buffers and leave the service's cached pages alone; counting tag by tag
-- looked every link's series up by key, two million random reads that emptied the
-- cache under the service's reads), grouped by tag, then the tags' rows written: one
-- row per tag (about 230), not a batch of catalog rows.
UPDATE tags t SET series_count = coalesce(c.n, 0)
  FROM tags t0
  LEFT JOIN (SELECT st.tag_id, s.client_id, count(*) AS n
               FROM series_tags st JOIN series s ON s.id = st.series_id
              GROUP BY 1, 2) c ON c.tag_id = t0.id AND c.client_id = t0.client_id
 WHERE t.id = t0.id AND t.series_count IS NULL;
