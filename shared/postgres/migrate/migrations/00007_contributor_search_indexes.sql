-- The indexes of the contributor list on its kept search text (00006), built without
-- blocking writes (see 00004 on an interrupted build).
-- +goose NO TRANSACTION
-- +goose Up

-- The list in its order, with the search text beside each entry: a page of a search is
-- an index-only walk that tests the pattern on the entries it passes (a broad search
-- stops after a few dozen), and the count of a broad search reads only this index.
-- It replaces contributors_client_order (the same keys without the search text).
CREATE INDEX CONCURRENTLY IF NOT EXISTS contributors_client_order_search
    ON contributors (client_id, first_name, last_name, id) INCLUDE (search);
-- A search of three letters or more: the trigrams within the client (btree_gin, 00003),
-- so a rare name costs its matches, not the client's contributors. It replaces
-- contributors_full_name_trgm (the trigrams of the unkept full name, all clients mixed).
CREATE INDEX CONCURRENTLY IF NOT EXISTS contributors_client_search_trgm
    ON contributors USING gin (client_id, search gin_trgm_ops);

DROP INDEX CONCURRENTLY IF EXISTS contributors_client_order;
DROP INDEX CONCURRENTLY IF EXISTS contributors_full_name_trgm;
