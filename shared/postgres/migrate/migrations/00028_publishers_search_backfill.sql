-- Fills publishers.search (00027) for the publishers written before it, in batches, each
-- its own transaction: a thousand publisher ids, walked in key order (the order the
-- service's writes lock them). The trigger computes the text (search_fold(name)); a
-- batch writes only the rows still without one, and after each batch it pauses as long
-- as the batch took, so that it takes at most half of one core and the service's
-- statements keep the rest (as 00023).
--
-- Resumable: a rerun (after an interruption or a lock timeout) walks again from the
-- start and writes only the rows still NULL. Rows written meanwhile get their text from
-- the trigger. Run VACUUM (ANALYZE) publishers after it on a large catalog
-- (docs/migrations.md): the planner's estimates of the searches read the new column's
-- statistics.
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
    SELECT min(id), max(id) INTO lo, top FROM publishers;
    WHILE lo <= top LOOP
        t0 := clock_timestamp();
        UPDATE publishers p SET search = search_fold(p.name)
         WHERE p.id >= lo AND p.id < lo + 1000 AND p.search IS NULL;
        COMMIT;
        PERFORM pg_sleep(extract(epoch FROM clock_timestamp() - t0));
        lo := lo + 1000;
    END LOOP;
END $$;
-- +goose StatementEnd

-- The runner applies the next migrations on the same connection: back to its defaults.
RESET lock_timeout;
RESET statement_timeout;
