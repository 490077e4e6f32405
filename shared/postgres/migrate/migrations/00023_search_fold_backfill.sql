-- Folds the search texts written before 00022 (issue 29), in batches, each its own
-- transaction: the links of a thousand series, a thousand contributors, a thousand
-- users, walked in key order (the order the service's writes lock them). A row is
-- written only when its text changes, so a catalog without accents or capitals outside
-- ASCII is only read; the triggers recompute what they keep per batch:
-- contributors_fill_search and users_fill_search the text itself, from the names, and
-- contributors_search_grams the client's one- and two-letter counts (the old grams of
-- each changed row taken off, the folded ones added), so contributor_search_grams ends
-- as it would be built from the folded texts (TestSearchFoldBackfill checks).
--
-- Resumable: a rerun (after an interruption or a lock timeout) walks again from the
-- start and writes only the rows still unfolded (search_fold is idempotent). Rows
-- written meanwhile are folded by the triggers of 00022 already. The trigram indexes are
-- on the columns and stay valid; run VACUUM (ANALYZE) on the three tables after a large
-- catalog changed much (docs/migrations.md).
--
-- The DO block is one statement for statement_timeout, however many batches it
-- commits, so the timeout is off for it; each batch is short (a thousand rows by an
-- index range), and lock_timeout bounds each lock it waits for.
-- +goose NO TRANSACTION
-- +goose Up
SET lock_timeout = '1s';
SET statement_timeout = 0;

-- +goose StatementBegin
DO $$
DECLARE
    lo bigint;
    top bigint;
BEGIN
    SELECT min(id), max(id) INTO lo, top FROM series;
    WHILE lo <= top LOOP
        UPDATE series_publishers sp SET search = t.search
          FROM (SELECT s.id, series_search_text(s.id) AS search
                  FROM series s WHERE s.id >= lo AND s.id < lo + 1000) t
         WHERE sp.series_id = t.id AND sp.search IS DISTINCT FROM t.search;
        COMMIT;
        lo := lo + 1000;
    END LOOP;

    SELECT min(id), max(id) INTO lo, top FROM contributors;
    WHILE lo <= top LOOP
        UPDATE contributors c SET search = contributor_search_text(c.first_name, c.last_name)
         WHERE c.id >= lo AND c.id < lo + 1000
           AND c.search IS DISTINCT FROM contributor_search_text(c.first_name, c.last_name);
        COMMIT;
        lo := lo + 1000;
    END LOOP;

    SELECT min(id), max(id) INTO lo, top FROM users;
    WHILE lo <= top LOOP
        UPDATE users u SET search = search_fold(u.username)
         WHERE u.id >= lo AND u.id < lo + 1000
           AND u.search IS DISTINCT FROM search_fold(u.username);
        COMMIT;
        lo := lo + 1000;
    END LOOP;
END $$;
-- +goose StatementEnd
