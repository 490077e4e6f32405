-- +goose Up
-- search_grams (the one- and two-letter substrings the contributor search counts keep)
-- in time linear in the text: substr(t, i, k) walks a multibyte text from its start
-- for every i, so the old body was quadratic, and a long name kept the database busy
-- on every insert. The text is now split into its letters once. The set it returns is
-- the same (TestSearchGramsLinear compares both), so the kept counts stay right.
-- Replacing a function takes no lock on any table.
SET LOCAL lock_timeout = '1s';
SET LOCAL statement_timeout = '5s';
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION search_grams(t text) RETURNS SETOF text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    SELECT DISTINCT g
    FROM (SELECT c, lead(c) OVER (ORDER BY i) AS next
          FROM unnest(string_to_array(t, NULL)) WITH ORDINALITY AS u(c, i)) s,
         LATERAL (VALUES (c), (c || next)) v(g)
    WHERE g IS NOT NULL
$$;
-- +goose StatementEnd
