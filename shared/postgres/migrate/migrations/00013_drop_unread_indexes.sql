-- Indexes that no query of this release, or of the release it follows, reads. Every
-- write of their tables kept them up to date, and they took memory from the indexes
-- that are read. Dropped without blocking writes (goose NO TRANSACTION, CONCURRENTLY;
-- IF EXISTS makes a rerun after an interruption skip what is gone).
-- +goose NO TRANSACTION
-- +goose Up

-- The trigrams of the series' names: the publication search read them until 00004
-- moved it to series_publishers.search. At 1M series it was 424 MB (more than the
-- table) and the benchmark's traffic never scanned it.
DROP INDEX CONCURRENTLY IF EXISTS series_name_trgm;

-- The trigrams of the contributors' "first last": the contributor search before 00006
-- read them, and 00007 kept them for the release then running. The release since
-- (the one this one follows) searches contributors.search with the indexes of 00007.
DROP INDEX CONCURRENTLY IF EXISTS contributors_full_name_trgm;

-- The links by publisher alone: every index of 00004 begins with publisher_id, so a
-- lookup by publisher (the foreign key's ON DELETE CASCADE, the recount of
-- series_count) takes series_publishers_list_id instead.
DROP INDEX CONCURRENTLY IF EXISTS series_publishers_publisher;
