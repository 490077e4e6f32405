-- The total of a one- or two-letter contributor search (issue 13), kept by triggers.
-- No trigram narrows a pattern that short, so its count tested the search text of
-- every contributor of the client: 36 ms at p95 for search=ta at 100k contributors
-- (45k of them match), against 4 ms at 10k. A contributor's search text (00006)
-- contains a pattern of one or two letters exactly when the pattern is one of its
-- distinct substrings of that length, so the number of the client's contributors
-- having each such substring is the exact total of that search, one row to read. The
-- page itself walks the list's index and stops when it is full (00007). Searches of
-- three letters or more keep counting the matches that the trigram index finds.
--
-- Writes: a statement that adds, removes or renames contributors updates the rows of
-- the substrings of their old and new search texts (about 40 for a name of 20
-- letters) in one upsert. Writers that add or remove contributors of a client already
-- queue on its row in clients (00008's trigger, which fires first, by name); renames
-- lock the counts row by row, in key order, so two of them wait for each other rather
-- than deadlock.
--
-- Forward-only and safe on a live database: creating the triggers locks contributors
-- against writes until this transaction commits, so the backfill below counts exactly
-- what the triggers take over from (about 4 s at 100k contributors).
-- +goose Up

-- The distinct substrings of one and two letters of t: what a search of one or two
-- letters can match.
-- +goose StatementBegin
CREATE FUNCTION search_grams(t text) RETURNS SETOF text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT DISTINCT substr(t, i, k)
    FROM generate_series(1, length(t)) i, generate_series(1, 2) k
    WHERE i + k - 1 <= length(t)
$$;
-- +goose StatementEnd

CREATE TABLE contributor_search_grams (
    client_id bigint NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    gram      text   NOT NULL,
    n         bigint NOT NULL,
    PRIMARY KEY (client_id, gram)
);

-- Per statement, the net change of each (client, substring) count: +1 for each new row
-- having it, -1 for each old one, added in one upsert in key order (a CHECK on n would
-- test the proposed row of a fall before the upsert adds it). A count that falls
-- always has its row (its contributors were counted when written), so n never goes
-- below zero; rows that reach zero stay (there are a few hundred per client, one per
-- substring of its names). Transition tables cannot go with UPDATE OF a column list,
-- so every UPDATE runs it; one that changes no search text or client nets to nothing.
-- +goose StatementBegin
CREATE FUNCTION contributors_search_grams() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        DELETE FROM contributor_search_grams;
    ELSIF TG_OP = 'INSERT' THEN
        INSERT INTO contributor_search_grams AS s (client_id, gram, n)
        SELECT r.client_id, g.gram, count(*) FROM new_rows r, search_grams(r.search) g(gram)
        GROUP BY 1, 2 ORDER BY 1, 2
        ON CONFLICT (client_id, gram) DO UPDATE SET n = s.n + EXCLUDED.n;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO contributor_search_grams AS s (client_id, gram, n)
        SELECT r.client_id, g.gram, -count(*) FROM old_rows r, search_grams(r.search) g(gram)
        GROUP BY 1, 2 ORDER BY 1, 2
        ON CONFLICT (client_id, gram) DO UPDATE SET n = s.n + EXCLUDED.n;
    ELSE
        INSERT INTO contributor_search_grams AS s (client_id, gram, n)
        SELECT m.client_id, m.gram, sum(m.d)
        FROM (SELECT r.client_id, g.gram, 1 AS d FROM new_rows r, search_grams(r.search) g(gram)
              UNION ALL
              SELECT r.client_id, g.gram, -1 FROM old_rows r, search_grams(r.search) g(gram)) m
        GROUP BY 1, 2 HAVING sum(m.d) <> 0 ORDER BY 1, 2
        ON CONFLICT (client_id, gram) DO UPDATE SET n = s.n + EXCLUDED.n;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER contributors_search_grams_ins AFTER INSERT ON contributors
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION contributors_search_grams();
CREATE TRIGGER contributors_search_grams_upd AFTER UPDATE ON contributors
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION contributors_search_grams();
CREATE TRIGGER contributors_search_grams_del AFTER DELETE ON contributors
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION contributors_search_grams();
CREATE TRIGGER contributors_search_grams_truncate AFTER TRUNCATE ON contributors
    FOR EACH STATEMENT EXECUTE FUNCTION contributors_search_grams();

INSERT INTO contributor_search_grams (client_id, gram, n)
SELECT c.client_id, g, count(*) FROM contributors c, search_grams(c.search) g GROUP BY 1, 2;
