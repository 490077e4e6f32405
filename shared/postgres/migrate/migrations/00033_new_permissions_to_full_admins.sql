-- A new built-in permission is granted to every full-admin role by the trigger that
-- sees it come, so a migration that adds one keeps every full admin a full admin
-- (a full-admin role grants every built-in permission: without this, the new one
-- would leave no role full admin until a migration granted it, and every full admin
-- would lose the protection of the access rules at once). A permission given a key
-- later (a built-in permission made of an added one) is granted the same way.
--
-- The roles' flags are read before they are recounted (the statement's AFTER trigger
-- runs before the recount below), so the full-admin roles are those of before the
-- change; the grants' own trigger then keeps them full admin.
--
-- Safe on a live database: replaces one function, in one short transaction under
-- lock_timeout.
-- +goose Up
SET LOCAL lock_timeout = '1s';
SET LOCAL statement_timeout = '5s';

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION permissions_full_admin() RETURNS trigger
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
        INSERT INTO role_permissions (role_id, permission_id)
        SELECT r.id, n.id FROM roles r, new_rows n
         WHERE r.full_admin AND n.key IS NOT NULL
         ORDER BY r.id, n.id
        ON CONFLICT DO NOTHING;
    ELSIF TG_OP = 'DELETE' THEN
        keyed := EXISTS (SELECT 1 FROM old_rows WHERE key IS NOT NULL);
    ELSE
        keyed := EXISTS (SELECT 1 FROM new_rows n FULL JOIN old_rows o ON o.id = n.id
                         WHERE n.key IS DISTINCT FROM o.key);
        INSERT INTO role_permissions (role_id, permission_id)
        SELECT r.id, n.id FROM roles r, new_rows n JOIN old_rows o ON o.id = n.id
         WHERE r.full_admin AND n.key IS NOT NULL AND o.key IS NULL
         ORDER BY r.id, n.id
        ON CONFLICT DO NOTHING;
    END IF;
    IF keyed THEN
        UPDATE roles r SET full_admin = role_is_full_admin(r.id)
         WHERE r.full_admin IS DISTINCT FROM role_is_full_admin(r.id);
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
