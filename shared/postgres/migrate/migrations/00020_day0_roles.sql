-- Day 0: a new database can be used at once. Sign-ups receive the default
-- role (shared/postgres/connections.go gives a new user the role marked is_default, and
-- none existed), and there is an `admin` role holding every built-in permission for the
-- operator to give the first administrator (make grant-role USER_ID=<id> ROLE_ID=1).
--
-- On a new database (no role at all) the two roles take the ids 1 and 3, those the demo
-- data (infra/local/demo, which adds `editor` as 2) and the sample events give them, so the
-- demo loads on top unchanged. On a database that has roles, only what is missing is
-- added, with the next ids: an `admin` role when no role has that name, a `member`
-- default role when no role is the default (and the name is free). Roles an operator
-- made are never changed.
--
-- Forward-only. Safe on a live database: two tiny tables, inserts only, lock_timeout so that a long
-- transaction on roles fails this migration (to be retried) instead of queueing every
-- request behind it.
-- +goose Up
SET LOCAL lock_timeout = '1s';
SET LOCAL statement_timeout = '5s';

INSERT INTO roles (id, name, description, is_default)
SELECT v.id, v.name, v.description, v.is_default
FROM (VALUES
    (1, 'admin', 'Full access to the administration', false),
    (3, 'member', 'Every user''s role; grants no administration', true)
) AS v (id, name, description, is_default)
WHERE NOT EXISTS (SELECT 1 FROM roles);

INSERT INTO roles (name, description, is_default)
SELECT 'admin', 'Full access to the administration', false
WHERE NOT EXISTS (SELECT 1 FROM roles WHERE name = 'admin');

INSERT INTO roles (name, description, is_default)
SELECT 'member', 'Every user''s role; grants no administration', true
WHERE NOT EXISTS (SELECT 1 FROM roles WHERE is_default)
  AND NOT EXISTS (SELECT 1 FROM roles WHERE name = 'member');

-- The admin role holds every built-in permission (those with a key, 00002) when it
-- holds none: the one made above; an `admin` role an operator made and gave
-- permissions keeps exactly those.
INSERT INTO role_permissions (role_id, permission_id)
SELECT r.id, p.id
FROM roles r, permissions p
WHERE r.name = 'admin' AND p.key IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM role_permissions rp WHERE rp.role_id = r.id)
ON CONFLICT DO NOTHING;

-- Later roles take ids past the fixed ones.
SELECT setval(pg_get_serial_sequence('roles', 'id'), (SELECT max(id) FROM roles));
