-- User search at scale (issue 13): the lowercased username, kept in a column and
-- matched with LIKE, as the contributor (00006) and publication (00010) searches are.
-- ILIKE lowercases every candidate row the trigram bitmap hands it: at 100k users a
-- search matching 12.5k of them (read once for its total and its page) took 21.6 ms
-- on average against 15.6 ms with LIKE on a kept lowercase text, whose matches also
-- sort without lowering each one (it equals lower(username), the list's name order).
-- Forward-only and safe on a live database: the column has no default (no rewrite),
-- and the trigger keeps it from the moment this transaction commits. The users written
-- before are filled in batches by 00016, which also builds its index.
-- +goose Up
ALTER TABLE users ADD COLUMN search text;

-- lower() here is the one ILIKE applied (the column's collation), so a pattern
-- lowercased by the same lower() matches what ILIKE matched on username.
-- +goose StatementBegin
CREATE FUNCTION users_fill_search() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.search := lower(NEW.username);
    RETURN NEW;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER users_fill_search BEFORE INSERT OR UPDATE OF username, search
    ON users FOR EACH ROW EXECUTE FUNCTION users_fill_search();
