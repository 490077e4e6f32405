-- The public publishers list's search ignores case and accents, as the other searches
-- do since 00022: expand. publishers gets a kept search text,
-- search_fold(name), written by a trigger on every insert and rename, whichever release
-- writes. The column is nullable without a default, so adding it rewrites nothing;
-- 00028 fills the rows written before, 00029 builds its trigram index, and the new code
-- matches it (p.search LIKE search_pattern(term)). The running release still matches
-- p.name ILIKE over publishers_name_trgm, which stays (docs/queries.md,
-- "Operating the indexes and kept texts").
-- +goose Up
SET LOCAL lock_timeout = '1s';
SET LOCAL statement_timeout = '5s';

ALTER TABLE publishers ADD COLUMN search text;

-- +goose StatementBegin
CREATE FUNCTION publishers_fill_search() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    NEW.search := search_fold(NEW.name);
    RETURN NEW;
END
$$;
-- +goose StatementEnd

-- Also on an update of search itself, as the users' and contributors' triggers: the text
-- is always the name's fold, whatever a statement writes to it.
CREATE TRIGGER publishers_fill_search BEFORE INSERT OR UPDATE OF name, search ON publishers
    FOR EACH ROW EXECUTE FUNCTION publishers_fill_search();
