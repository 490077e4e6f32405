-- The indexes of the contributor list on its kept search text (00006), built without
-- blocking writes (see 00004 on an interrupted build).
-- +goose NO TRANSACTION
-- +goose Up

-- The list in its order, with the search text beside each entry: a page of a search is
-- an index-only walk that tests the pattern on the entries it passes (a broad search
-- stops after a few dozen), and a broad search can be counted from this index alone
-- (the planner reads the table instead when the client holds most of it). It replaces
-- contributors_client_order (the same keys without the search text).
CREATE INDEX CONCURRENTLY IF NOT EXISTS contributors_client_order_search
    ON contributors (client_id, first_name, last_name, id) INCLUDE (search);
-- A search of three letters or more: the trigrams within the client (btree_gin, 00003),
-- so a rare name costs its matches, not the client's contributors.
CREATE INDEX CONCURRENTLY IF NOT EXISTS contributors_client_search_trgm
    ON contributors USING gin (client_id, search gin_trgm_ops);

-- The running release's list pages on the same keys, so the new index serves it too.
DROP INDEX CONCURRENTLY IF EXISTS contributors_client_order;
-- contributors_full_name_trgm (the trigrams of "first last", all clients mixed) stays:
-- migrations run before the deploy, and the running release (or one rolled back to)
-- searches with ILIKE on that expression; without the index its searches would read
-- every contributor of the client. A migration of a later release, once no release in
-- use searches that way, can drop it.
