-- Counts and facts kept on a row instead of recounted on every request.
--
-- roles.user_count: how many users hold the role. GET /admin-roles counted every grant
-- of every role on each request (a cost that grows with the users); it now reads the
-- column. Kept by statement-level triggers on user_roles with transition tables, like
-- user_count and clients.contributor_count (the baseline schema).
--
-- roles.full_admin: whether the role alone grants every built-in permission (every
-- permission with a key, and there is at least one). A full admin is a user who holds
-- such a role (docs/access-rules.md), so the no-escalation checks are an indexed EXISTS
-- over user_roles instead of a GROUP BY over every user's grants. Kept by triggers on
-- role_permissions (the changed roles) and on permissions (every role, when a keyed
-- permission comes, goes or changes its key: a new built-in permission makes no role
-- full admin until it is granted to it).
--
-- tags.series_count: the number of series of the tag's client that carry the tag.
-- GET /tags/id/{id} counted them on every request (about 1/230 of the catalog per tag
-- at 1M series). Kept by triggers: on series_tags (the rows whose series is visible;
-- a series deleted with its links is counted out by its own BEFORE DELETE trigger,
-- since the links' cascade runs once the series row is gone), on a series moved to
-- another client and on a tag moved (a recount of the tags concerned). NULL until
-- 00026's batched backfill counts it (NULL + n stays NULL, so the triggers leave it
-- alone until then); the code counts a NULL one itself. New tags start at 0.
--
-- Safe on a live database, in one short transaction: the triggers are created first,
-- which takes SHARE ROW EXCLUSIVE on user_roles, role_permissions and permissions (the
-- children, before the parent, as the service's writes lock them), so no grant changes
-- between the backfill's count and the commit; then the columns are added to roles
-- (no rewrite: constant defaults) and filled from one read of user_roles (a few roles
-- updated, not a batch of users: the backfill writes one row per role). The triggers
-- on series_tags and series (SHARE ROW EXCLUSIVE: no API route writes either) come
-- before the column of tags (ACCESS EXCLUSIVE, held for the rest of this short
-- transaction, which then reads and writes nothing of tags).
-- +goose Up
SET LOCAL lock_timeout = '1s';
SET LOCAL statement_timeout = '5s';

-- +goose StatementBegin
CREATE FUNCTION role_is_full_admin(rid bigint) RETURNS boolean
    LANGUAGE sql STABLE
    AS $$
    SELECT k.n > 0 AND k.n = (SELECT count(*) FROM role_permissions rp
                               JOIN permissions p ON p.id = rp.permission_id AND p.key IS NOT NULL
                               WHERE rp.role_id = rid)
    FROM (SELECT count(*) AS n FROM permissions WHERE key IS NOT NULL) k
$$;
-- +goose StatementEnd

-- The roles' rows are locked in id order before they are written, so two writes that
-- change several roles' counts never wait for each other in opposite orders.
-- +goose StatementBegin
CREATE FUNCTION user_roles_count() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        UPDATE roles SET user_count = 0 WHERE user_count <> 0;
    ELSIF TG_OP = 'INSERT' THEN
        PERFORM 1 FROM roles WHERE id IN (SELECT role_id FROM new_rows) ORDER BY id FOR NO KEY UPDATE;
        UPDATE roles r SET user_count = r.user_count + d.n
          FROM (SELECT role_id, count(*) AS n FROM new_rows GROUP BY role_id) d
         WHERE r.id = d.role_id;
    ELSIF TG_OP = 'DELETE' THEN
        PERFORM 1 FROM roles WHERE id IN (SELECT role_id FROM old_rows) ORDER BY id FOR NO KEY UPDATE;
        UPDATE roles r SET user_count = r.user_count - d.n
          FROM (SELECT role_id, count(*) AS n FROM old_rows GROUP BY role_id) d
         WHERE r.id = d.role_id;
    ELSE
        PERFORM 1 FROM roles
         WHERE id IN (SELECT role_id FROM new_rows UNION SELECT role_id FROM old_rows)
         ORDER BY id FOR NO KEY UPDATE;
        UPDATE roles r SET user_count = r.user_count + d.n
          FROM (SELECT role_id, sum(n) AS n
                  FROM (SELECT role_id, 1 AS n FROM new_rows
                        UNION ALL SELECT role_id, -1 FROM old_rows) m
                 GROUP BY role_id HAVING sum(n) <> 0) d
         WHERE r.id = d.role_id;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION role_permissions_full_admin() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        UPDATE roles SET full_admin = false WHERE full_admin;
    ELSIF TG_OP = 'INSERT' THEN
        UPDATE roles r SET full_admin = role_is_full_admin(r.id)
         WHERE r.id IN (SELECT role_id FROM new_rows) AND r.full_admin IS DISTINCT FROM role_is_full_admin(r.id);
    ELSIF TG_OP = 'DELETE' THEN
        UPDATE roles r SET full_admin = role_is_full_admin(r.id)
         WHERE r.id IN (SELECT role_id FROM old_rows) AND r.full_admin IS DISTINCT FROM role_is_full_admin(r.id);
    ELSE
        UPDATE roles r SET full_admin = role_is_full_admin(r.id)
         WHERE r.id IN (SELECT role_id FROM new_rows UNION SELECT role_id FROM old_rows)
           AND r.full_admin IS DISTINCT FROM role_is_full_admin(r.id);
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- A permission without a key (one added through the API) changes no role's flag.
-- +goose StatementBegin
CREATE FUNCTION permissions_full_admin() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    keyed boolean;
BEGIN
    -- Each transition table is named only in the branch of the operations that have it.
    IF TG_OP = 'TRUNCATE' THEN
        keyed := true;
    ELSIF TG_OP = 'INSERT' THEN
        keyed := EXISTS (SELECT 1 FROM new_rows WHERE key IS NOT NULL);
    ELSIF TG_OP = 'DELETE' THEN
        keyed := EXISTS (SELECT 1 FROM old_rows WHERE key IS NOT NULL);
    ELSE
        keyed := EXISTS (SELECT 1 FROM new_rows n FULL JOIN old_rows o ON o.id = n.id
                         WHERE n.key IS DISTINCT FROM o.key);
    END IF;
    IF keyed THEN
        UPDATE roles r SET full_admin = role_is_full_admin(r.id)
         WHERE r.full_admin IS DISTINCT FROM role_is_full_admin(r.id);
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER user_roles_count_ins AFTER INSERT ON user_roles
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION user_roles_count();
CREATE TRIGGER user_roles_count_del AFTER DELETE ON user_roles
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION user_roles_count();
CREATE TRIGGER user_roles_count_upd AFTER UPDATE ON user_roles
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION user_roles_count();
CREATE TRIGGER user_roles_count_truncate AFTER TRUNCATE ON user_roles
    FOR EACH STATEMENT EXECUTE FUNCTION user_roles_count();

CREATE TRIGGER role_permissions_full_admin_ins AFTER INSERT ON role_permissions
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION role_permissions_full_admin();
CREATE TRIGGER role_permissions_full_admin_del AFTER DELETE ON role_permissions
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION role_permissions_full_admin();
CREATE TRIGGER role_permissions_full_admin_upd AFTER UPDATE ON role_permissions
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION role_permissions_full_admin();
CREATE TRIGGER role_permissions_full_admin_truncate AFTER TRUNCATE ON role_permissions
    FOR EACH STATEMENT EXECUTE FUNCTION role_permissions_full_admin();

CREATE TRIGGER permissions_full_admin_ins AFTER INSERT ON permissions
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION permissions_full_admin();
CREATE TRIGGER permissions_full_admin_del AFTER DELETE ON permissions
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION permissions_full_admin();
CREATE TRIGGER permissions_full_admin_upd AFTER UPDATE ON permissions
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION permissions_full_admin();
CREATE TRIGGER permissions_full_admin_truncate AFTER TRUNCATE ON permissions
    FOR EACH STATEMENT EXECUTE FUNCTION permissions_full_admin();

-- The tag's series count, each link looked up by the series' primary key (a join lets
-- the planner read every series of the client to hash them).
-- +goose StatementBegin
CREATE FUNCTION tag_series_count(tid bigint, client bigint) RETURNS bigint
    LANGUAGE sql STABLE
    AS $$
    SELECT count(*) FROM series_tags st
    WHERE st.tag_id = tid AND (SELECT s.client_id FROM series s WHERE s.id = st.series_id) = client
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION series_tags_count() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        UPDATE tags SET series_count = 0 WHERE series_count <> 0;
    ELSIF TG_OP = 'INSERT' THEN
        UPDATE tags t SET series_count = t.series_count + d.n
          FROM (SELECT r.tag_id, s.client_id, count(*) AS n FROM new_rows r JOIN series s ON s.id = r.series_id
                GROUP BY 1, 2) d
         WHERE t.id = d.tag_id AND t.client_id = d.client_id;
    ELSIF TG_OP = 'DELETE' THEN
        UPDATE tags t SET series_count = t.series_count - d.n
          FROM (SELECT r.tag_id, s.client_id, count(*) AS n FROM old_rows r JOIN series s ON s.id = r.series_id
                GROUP BY 1, 2) d
         WHERE t.id = d.tag_id AND t.client_id = d.client_id;
    ELSE
        UPDATE tags t SET series_count = t.series_count + d.n
          FROM (SELECT m.tag_id, s.client_id, sum(m.n) AS n
                  FROM (SELECT tag_id, series_id, 1 AS n FROM new_rows
                        UNION ALL SELECT tag_id, series_id, -1 FROM old_rows) m
                  JOIN series s ON s.id = m.series_id
                 GROUP BY 1, 2 HAVING sum(m.n) <> 0) d
         WHERE t.id = d.tag_id AND t.client_id = d.client_id;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION series_gone_tags_count() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    UPDATE tags t SET series_count = t.series_count - 1
     WHERE t.id IN (SELECT tag_id FROM series_tags WHERE series_id = OLD.id) AND t.client_id = OLD.client_id;
    RETURN OLD;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION series_moved_tags_recount() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    UPDATE tags t SET series_count = tag_series_count(t.id, t.client_id)
     WHERE t.id IN (SELECT tag_id FROM series_tags WHERE series_id = NEW.id) AND t.series_count IS NOT NULL;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION tags_recount() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    NEW.series_count := tag_series_count(NEW.id, NEW.client_id);
    RETURN NEW;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER series_tags_count_ins AFTER INSERT ON series_tags
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION series_tags_count();
CREATE TRIGGER series_tags_count_del AFTER DELETE ON series_tags
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION series_tags_count();
CREATE TRIGGER series_tags_count_upd AFTER UPDATE ON series_tags
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION series_tags_count();
CREATE TRIGGER series_tags_count_truncate AFTER TRUNCATE ON series_tags
    FOR EACH STATEMENT EXECUTE FUNCTION series_tags_count();
CREATE TRIGGER series_gone_tags_count BEFORE DELETE ON series
    FOR EACH ROW EXECUTE FUNCTION series_gone_tags_count();
CREATE TRIGGER series_moved_tags_recount AFTER UPDATE OF client_id ON series
    FOR EACH ROW WHEN (OLD.client_id IS DISTINCT FROM NEW.client_id) EXECUTE FUNCTION series_moved_tags_recount();
CREATE TRIGGER tags_recount BEFORE UPDATE OF client_id ON tags
    FOR EACH ROW WHEN (OLD.client_id IS DISTINCT FROM NEW.client_id) EXECUTE FUNCTION tags_recount();

ALTER TABLE roles ADD COLUMN user_count bigint NOT NULL DEFAULT 0;
ALTER TABLE roles ADD COLUMN full_admin boolean NOT NULL DEFAULT false;

UPDATE roles r SET user_count = c.n
  FROM (SELECT role_id, count(*) AS n FROM user_roles GROUP BY role_id) c
 WHERE r.id = c.role_id;
UPDATE roles SET full_admin = true WHERE role_is_full_admin(id);

ALTER TABLE tags ADD COLUMN series_count bigint;
ALTER TABLE tags ALTER COLUMN series_count SET DEFAULT 0;
