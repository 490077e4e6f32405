-- The links written before 00010, lowercased in batches of 10,000 series ids, each
-- batch its own transaction: a live database's writers wait for one batch at most (a
-- few seconds), never for the whole table. A rerun after an interruption takes up the
-- links still to do.
-- +goose NO TRANSACTION
-- +goose Up
-- +goose StatementBegin
DO $$
DECLARE
    lo   bigint := (SELECT min(series_id) FROM series_publishers);
    top  bigint := (SELECT max(series_id) FROM series_publishers);
    step constant bigint := 10000;
BEGIN
    SET LOCAL statement_timeout = 0;
    WHILE lo <= top LOOP
        UPDATE series_publishers SET search = lower(search)
         WHERE series_id >= lo AND series_id < lo + step AND search <> lower(search);
        COMMIT;
        SET LOCAL statement_timeout = 0;
        lo := lo + step;
    END LOOP;
END
$$;
-- +goose StatementEnd
