-- The key of each username (what names equal up to case, compatibility forms
-- and confusable characters share; shared/namekey) kept on the user's row, so an OAuth
-- sign-up finds the names keyed like its own by index (00026) instead of reading and
-- keying every username.
--
-- The key is computed in Go (the Unicode confusables table is Go's): the code writes it
-- with every username it writes (sign-up, admin edit), and `make migrate` fills the
-- rows without one after the SQL migrations (namekey.Fill, batched, resumable). Until
-- then, and for rows that a writer without the key adds (the previous release during
-- a deploy), name_key is NULL and the sign-up keys those rows itself, so it is right
-- at every step. An UPDATE that changes a username without writing its key (the
-- previous release's admin edit, an operator's SQL) clears the key, so a kept key is
-- never stale.
--
-- Collation "C": the sign-up looks up the keys that start with a prefix as a range of
-- bytes, which an index in any other collation does not order that way.
--
-- Safe on a live database: a nullable column without a default (no rewrite, no scan)
-- and a trigger, in one short transaction under lock_timeout.
-- +goose Up
SET LOCAL lock_timeout = '1s';
SET LOCAL statement_timeout = '5s';

ALTER TABLE users ADD COLUMN name_key text COLLATE "C";

-- +goose StatementBegin
CREATE FUNCTION users_name_key_stale() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF NEW.username IS DISTINCT FROM OLD.username AND NEW.name_key IS NOT DISTINCT FROM OLD.name_key THEN
        NEW.name_key := NULL;
    END IF;
    RETURN NEW;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER users_name_key_stale BEFORE UPDATE OF username ON users
    FOR EACH ROW EXECUTE FUNCTION users_name_key_stale();
