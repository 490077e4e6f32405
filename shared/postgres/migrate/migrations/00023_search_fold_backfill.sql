-- Folds the search texts written before 00022, in batches, each its own
-- transaction: the links of a thousand series ids, a thousand contributors, a thousand
-- users, walked in key order (the order the service's writes lock them).
--
-- Only a text that folding changes is written, and only a text with a character
-- outside ASCII can change: the old texts are lower() of the names, which for ASCII is
-- the fold already. So a batch tests each row's kept text with a regular expression,
-- folds the few that are not ASCII, and rewrites those whose fold differs, from their
-- source: the links' from series_search_text (name and aliases), the contributors' and
-- users' through their fill triggers, from the names. It reads only the table it
-- folds (not the series and aliases of every link), and after each batch it pauses as
-- long as the batch took, so that it takes at most half of one core and the service's
-- statements keep the rest (the rehearsal's probes waited over 1 s behind a walk that
-- recomputed every link's text without pause).
-- The grams trigger (contributors_search_grams) takes each changed contributor's old
-- grams off and adds the folded ones, so contributor_search_grams ends as it would be
-- built from the folded texts (TestSearchFoldBackfill checks).
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
    t0 timestamptz;
BEGIN
    SELECT min(series_id), max(series_id) INTO lo, top FROM series_publishers;
    WHILE lo <= top LOOP
        t0 := clock_timestamp();
        UPDATE series_publishers sp SET search = series_search_text(sp.series_id)
         WHERE sp.series_id >= lo AND sp.series_id < lo + 1000
           AND sp.search ~ '[^\x01-\x7f]' AND sp.search IS DISTINCT FROM search_fold(sp.search);
        COMMIT;
        PERFORM pg_sleep(extract(epoch FROM clock_timestamp() - t0));
        lo := lo + 1000;
    END LOOP;

    SELECT min(id), max(id) INTO lo, top FROM contributors;
    WHILE lo <= top LOOP
        t0 := clock_timestamp();
        UPDATE contributors c SET search = contributor_search_text(c.first_name, c.last_name)
         WHERE c.id >= lo AND c.id < lo + 1000
           AND c.search ~ '[^\x01-\x7f]' AND c.search IS DISTINCT FROM search_fold(c.search);
        COMMIT;
        PERFORM pg_sleep(extract(epoch FROM clock_timestamp() - t0));
        lo := lo + 1000;
    END LOOP;

    SELECT min(id), max(id) INTO lo, top FROM users;
    WHILE lo <= top LOOP
        t0 := clock_timestamp();
        UPDATE users u SET search = search_fold(u.username)
         WHERE u.id >= lo AND u.id < lo + 1000
           AND u.search ~ '[^\x01-\x7f]' AND u.search IS DISTINCT FROM search_fold(u.search);
        COMMIT;
        PERFORM pg_sleep(extract(epoch FROM clock_timestamp() - t0));
        lo := lo + 1000;
    END LOOP;
END $$;
-- +goose StatementEnd

-- The runner applies the next migrations on the same connection: back to its defaults.
RESET lock_timeout;
RESET statement_timeout;
