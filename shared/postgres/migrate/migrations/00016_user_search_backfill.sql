-- The users written before 00015, their search text filled in batches of 10,000 ids,
-- each batch its own transaction (as 00011): a live database's writers wait for one
-- batch at most, never for the whole table. A rerun after an interruption takes up the
-- users still to do. Then the trigrams of that text, built without blocking writes
-- (see 00004 on an interrupted build).
-- +goose NO TRANSACTION
-- +goose Up
-- +goose StatementBegin
DO $$
DECLARE
    lo   bigint := (SELECT min(id) FROM users);
    top  bigint := (SELECT max(id) FROM users);
    step constant bigint := 10000;
BEGIN
    SET LOCAL statement_timeout = 0;
    WHILE lo <= top LOOP
        UPDATE users SET search = lower(username)
         WHERE id >= lo AND id < lo + step AND search IS DISTINCT FROM lower(username);
        COMMIT;
        SET LOCAL statement_timeout = 0;
        lo := lo + step;
    END LOOP;
END
$$;
-- +goose StatementEnd

-- The search of the users list (a bitmap of the pattern's trigrams, each match
-- rechecked with LIKE on the kept text).
CREATE INDEX CONCURRENTLY IF NOT EXISTS users_search_trgm ON users USING gin (search gin_trgm_ops);

-- users_username_trgm (the trigrams of username) stays: migrations run before the
-- deploy, and the running release (or one rolled back to) searches with ILIKE on
-- username; without the index its searches would read every user. A migration of a
-- later release, once no release in use searches that way, can drop it.
