-- Usernames unique without regard to case in every script (issue 26). users_username_key
-- (00001) is on lower(username), and lower() under the database's C locale (the local
-- stack's; RDS's default is en_US.UTF-8, where the same holds for some letters only)
-- lowers ASCII letters alone: "Émile" and "émile", "ΑDMIN" and "αdmin" could both be
-- taken, one posing as the other. This index is on the Unicode lowercase (ICU's root
-- locale, the same on every server whatever its own locale); users_username_key stays,
-- as the lists' name order walks it (a name equal under ICU's lower is equal under C's
-- lower too, so the old index never refuses what this one allows).
--
-- Existing names that differ only by case are kept, deterministically, by the oldest
-- account (the smallest id); each later one gets "-<id>" appended (its slug, id and
-- everything else stay). That is one UPDATE of the few duplicates, under a 1 s lock
-- timeout, then the index is built without blocking writes. A duplicate written
-- between the two makes the build fail and leaves an INVALID index, which a rerun
-- drops and builds again.
-- +goose NO TRANSACTION
-- +goose Up
-- +goose StatementBegin
DO $$
BEGIN
    SET LOCAL lock_timeout = '1s';
    IF EXISTS (SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
               WHERE c.relname = 'users_username_fold_key' AND NOT i.indisvalid) THEN
        DROP INDEX users_username_fold_key;
    END IF;
    UPDATE users u SET username = u.username || '-' || u.id
    FROM (SELECT id, row_number() OVER (PARTITION BY lower(username COLLATE "und-x-icu") ORDER BY id) AS n
          FROM users) d
    WHERE d.id = u.id AND d.n > 1;
END
$$;
-- +goose StatementEnd

CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS users_username_fold_key
    ON users (lower(username COLLATE "und-x-icu"));
