-- Search ignores case and accents: "pokemon" finds "Pokémon", "e" finds "é".
-- The kept search texts (series_publishers.search, contributors.search and, through it,
-- contributor_search_grams, users.search) hold the folded form, and the queries fold the
-- term with the same function (search_pattern), so term and text are folded by the
-- same code. docs/queries.md ("The fold") has the design.
--
-- search_fold(t) is
--   lower(unaccent(lower(normalize(t, NFKC))))   with lower() under ICU's root locale:
-- - NFKC first: a decomposed "é" (e + U+0301) and the composed one, fullwidth and
--   halfwidth forms ("Ｐｏｋéｍｏｎ", "ﾎﾟｹﾓﾝ"), ligatures ("ﬁ") become one form, and
--   Japanese text keeps its composed kana (unaccent would strip a separate U+309A);
-- - lower() under "und-x-icu": the database's own lower() under the C locale lowers
--   ASCII letters alone (see 00018), so "É", "Ł", Greek and Cyrillic capitals stay;
-- - unaccent (the contrib extension, trusted, on RDS too): é→e, ß→ss, œ→oe, Ł→l, ...;
-- - lower() again: a few capitals have an unaccent rule but no lowercase one ("Ɩ"),
--   and one rule gives a capital ("℃"→"°C"); with it the fold is idempotent over every
--   character of the BMP (TestSearchFold checks), which the batched backfill needs.
--
-- IMMUTABLE though unaccent() is STABLE (its dictionary could be changed): the known
-- idiom, naming the dictionary by its schema so that no search_path is read. No index
-- is built on it; the marking lets the planner fold a query's term to a constant once,
-- so the trigram indexes' estimates see the pattern.
--
-- Only functions are replaced here: no table is locked or rewritten. The triggers write
-- folded texts from the moment this commits; 00023 folds the existing rows.
-- +goose Up
SET LOCAL lock_timeout = '1s';
SET LOCAL statement_timeout = '5s';

CREATE EXTENSION IF NOT EXISTS unaccent WITH SCHEMA public;

-- +goose StatementBegin
CREATE FUNCTION search_fold(t text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$
    SELECT lower(public.unaccent('public.unaccent'::regdictionary,
                                 lower(normalize(t, NFKC) COLLATE "und-x-icu")) COLLATE "und-x-icu")
$$;
-- +goose StatementEnd

-- The LIKE pattern of a search term: folded, then LIKE's wildcards and escape character
-- escaped. In that order, because folding makes wildcards of fullwidth characters
-- ("％"→"%", "＿"→"_", "＼"→"\").
-- +goose StatementBegin
CREATE FUNCTION search_pattern(term text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$
    SELECT '%' || replace(replace(replace(search_fold(term), '\', '\\'), '%', '\%'), '_', '\_') || '%'
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION contributor_search_text(first_name text, last_name text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    SELECT search_fold(first_name || ' ' || coalesce(last_name, ''))
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION series_search_text(sid bigint) RETURNS text
    LANGUAGE sql STABLE
    AS $$
    SELECT search_fold(s.name || coalesce((SELECT string_agg(chr(31) || a.title, '' ORDER BY a.id)
                                           FROM series_aliases a WHERE a.series_id = s.id), ''))
    FROM series s WHERE s.id = sid
$$;
-- +goose StatementEnd

-- A link inserted with its columns supplied (the generator's bulk load) gets its text
-- folded here, whichever release wrote it.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION series_publishers_fill() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF TG_OP = 'INSERT' AND NEW.client_id IS NOT NULL AND NEW.name IS NOT NULL
       AND NEW.created_at IS NOT NULL AND NEW.search IS NOT NULL THEN
        NEW.search := search_fold(NEW.search);
        RETURN NEW;
    END IF;
    SELECT s.client_id, s.name, s.created_at, series_search_text(s.id)
      INTO NEW.client_id, NEW.name, NEW.created_at, NEW.search
      FROM series s WHERE s.id = NEW.series_id;
    RETURN NEW;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION users_fill_search() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    NEW.search := search_fold(NEW.username);
    RETURN NEW;
END
$$;
-- +goose StatementEnd
