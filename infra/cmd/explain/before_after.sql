-- The statements issue 29 changed, each before (the code of main before issue 29) and
-- after, at 1M series (docs/queries.md). Run on a migrated copy of the 1M catalog:
--   psql "$DATABASE_URL" -f infra/cmd/explain/before_after.sql
-- Each is run twice; the second (warm) run's Execution Time is the figure.
\set user 100002
\set tag 30
\pset pager off
\o /dev/null
SELECT 1;
\o
\echo '== GET /admin-roles user_count: before'
EXPLAIN (ANALYZE, BUFFERS) SELECT r.id, (SELECT count(*) FROM user_roles ur WHERE ur.role_id = r.id) FROM roles r ORDER BY lower(r.name), r.id;
EXPLAIN (ANALYZE, BUFFERS) SELECT r.id, (SELECT count(*) FROM user_roles ur WHERE ur.role_id = r.id) FROM roles r ORDER BY lower(r.name), r.id;
\echo '== GET /admin-roles user_count: after'
EXPLAIN (ANALYZE, BUFFERS) SELECT r.id, r.user_count FROM roles r ORDER BY lower(r.name), r.id;
EXPLAIN (ANALYZE, BUFFERS) SELECT r.id, r.user_count FROM roles r ORDER BY lower(r.name), r.id;
\echo '== lockAccess / keepAFullAdmin (how many full admins): before'
EXPLAIN (ANALYZE, BUFFERS) SELECT count(*) FROM (SELECT ur.user_id FROM user_roles ur JOIN role_permissions rp ON rp.role_id = ur.role_id JOIN permissions p ON p.id = rp.permission_id AND p.key IS NOT NULL GROUP BY ur.user_id HAVING count(DISTINCT p.id) = (SELECT count(*) FROM permissions WHERE key IS NOT NULL)) f;
EXPLAIN (ANALYZE, BUFFERS) SELECT count(*) FROM (SELECT ur.user_id FROM user_roles ur JOIN role_permissions rp ON rp.role_id = ur.role_id JOIN permissions p ON p.id = rp.permission_id AND p.key IS NOT NULL GROUP BY ur.user_id HAVING count(DISTINCT p.id) = (SELECT count(*) FROM permissions WHERE key IS NOT NULL)) f;
\echo '== lockAccess / keepAFullAdmin (is there a full admin): after'
EXPLAIN (ANALYZE, BUFFERS) SELECT EXISTS (SELECT 1 FROM roles WHERE full_admin AND user_count > 0);
EXPLAIN (ANALYZE, BUFFERS) SELECT EXISTS (SELECT 1 FROM roles WHERE full_admin AND user_count > 0);
\echo '== isFullAdmin(user): before'
EXPLAIN (ANALYZE, BUFFERS) SELECT :user IN (SELECT ur.user_id FROM user_roles ur JOIN role_permissions rp ON rp.role_id = ur.role_id JOIN permissions p ON p.id = rp.permission_id AND p.key IS NOT NULL GROUP BY ur.user_id HAVING count(DISTINCT p.id) = (SELECT count(*) FROM permissions WHERE key IS NOT NULL));
EXPLAIN (ANALYZE, BUFFERS) SELECT :user IN (SELECT ur.user_id FROM user_roles ur JOIN role_permissions rp ON rp.role_id = ur.role_id JOIN permissions p ON p.id = rp.permission_id AND p.key IS NOT NULL GROUP BY ur.user_id HAVING count(DISTINCT p.id) = (SELECT count(*) FROM permissions WHERE key IS NOT NULL));
\echo '== isFullAdmin(user): after'
EXPLAIN (ANALYZE, BUFFERS) SELECT EXISTS (SELECT 1 FROM user_roles ur JOIN roles r ON r.id = ur.role_id WHERE ur.user_id = :user AND r.full_admin);
EXPLAIN (ANALYZE, BUFFERS) SELECT EXISTS (SELECT 1 FROM user_roles ur JOIN roles r ON r.id = ur.role_id WHERE ur.user_id = :user AND r.full_admin);
\echo '== role 3 (default) held by a full admin: before'
EXPLAIN (ANALYZE, BUFFERS) SELECT EXISTS (SELECT 1 FROM user_roles WHERE role_id = 3 AND user_id IN (SELECT ur.user_id FROM user_roles ur JOIN role_permissions rp ON rp.role_id = ur.role_id JOIN permissions p ON p.id = rp.permission_id AND p.key IS NOT NULL GROUP BY ur.user_id HAVING count(DISTINCT p.id) = (SELECT count(*) FROM permissions WHERE key IS NOT NULL)));
EXPLAIN (ANALYZE, BUFFERS) SELECT EXISTS (SELECT 1 FROM user_roles WHERE role_id = 3 AND user_id IN (SELECT ur.user_id FROM user_roles ur JOIN role_permissions rp ON rp.role_id = ur.role_id JOIN permissions p ON p.id = rp.permission_id AND p.key IS NOT NULL GROUP BY ur.user_id HAVING count(DISTINCT p.id) = (SELECT count(*) FROM permissions WHERE key IS NOT NULL)));
\echo '== role 3 (default) held by a full admin: after (protectedRole, its two statements)'
EXPLAIN (ANALYZE, BUFFERS) SELECT coalesce(bool_or(id = 3), false), coalesce(array_agg(id) FILTER (WHERE user_count > 0), '{}') FROM roles WHERE full_admin;
EXPLAIN (ANALYZE, BUFFERS) SELECT EXISTS (SELECT 1 FROM user_roles fa JOIN user_roles ur ON ur.user_id = fa.user_id AND ur.role_id = 3 WHERE fa.role_id = ANY ('{1}'));
EXPLAIN (ANALYZE, BUFFERS) SELECT EXISTS (SELECT 1 FROM user_roles fa JOIN user_roles ur ON ur.user_id = fa.user_id AND ur.role_id = 3 WHERE fa.role_id = ANY ('{1}'));
\echo '== GET /tags/id/{id} series_count: before'
EXPLAIN (ANALYZE, BUFFERS) SELECT t.id, (SELECT count(*) FROM series_tags st JOIN series s ON s.id = st.series_id AND s.client_id = t.client_id WHERE st.tag_id = t.id) FROM tags t WHERE t.id = :tag;
EXPLAIN (ANALYZE, BUFFERS) SELECT t.id, (SELECT count(*) FROM series_tags st JOIN series s ON s.id = st.series_id AND s.client_id = t.client_id WHERE st.tag_id = t.id) FROM tags t WHERE t.id = :tag;
\echo '== GET /tags/id/{id} series_count: after'
EXPLAIN (ANALYZE, BUFFERS) SELECT t.id, coalesce(t.series_count, tag_series_count(t.id, t.client_id)) FROM tags t WHERE t.id = :tag;
EXPLAIN (ANALYZE, BUFFERS) SELECT t.id, coalesce(t.series_count, tag_series_count(t.id, t.client_id)) FROM tags t WHERE t.id = :tag;
\echo '== OAuth sign-up, the names compared: before (every username, keyed in Go after)'
EXPLAIN (ANALYZE, BUFFERS) SELECT username FROM users;
EXPLAIN (ANALYZE, BUFFERS) SELECT username FROM users;
\echo '== OAuth sign-up, the names compared: after (key of "reader")'
EXPLAIN (ANALYZE, BUFFERS) SELECT coalesce(name_key, ''), CASE WHEN name_key IS NULL THEN username ELSE '' END FROM users WHERE name_key = 'reader' OR (name_key >= 'reader-' AND name_key < 'reader.') OR name_key IS NULL;
EXPLAIN (ANALYZE, BUFFERS) SELECT coalesce(name_key, ''), CASE WHEN name_key IS NULL THEN username ELSE '' END FROM users WHERE name_key = 'reader' OR (name_key >= 'reader-' AND name_key < 'reader.') OR name_key IS NULL;
\echo '== the full admins, when the role of every user grants a built-in permission (the default role given view-contributors, rolled back): before'
BEGIN;
INSERT INTO role_permissions SELECT 3, id FROM permissions WHERE key = 'view-contributors';
ANALYZE role_permissions;
EXPLAIN (ANALYZE, BUFFERS) SELECT count(*) FROM (SELECT ur.user_id FROM user_roles ur JOIN role_permissions rp ON rp.role_id = ur.role_id JOIN permissions p ON p.id = rp.permission_id AND p.key IS NOT NULL GROUP BY ur.user_id HAVING count(DISTINCT p.id) = (SELECT count(*) FROM permissions WHERE key IS NOT NULL)) f;
EXPLAIN (ANALYZE, BUFFERS) SELECT count(*) FROM (SELECT ur.user_id FROM user_roles ur JOIN role_permissions rp ON rp.role_id = ur.role_id JOIN permissions p ON p.id = rp.permission_id AND p.key IS NOT NULL GROUP BY ur.user_id HAVING count(DISTINCT p.id) = (SELECT count(*) FROM permissions WHERE key IS NOT NULL)) f;
\echo '== the same: after'
EXPLAIN (ANALYZE, BUFFERS) SELECT EXISTS (SELECT 1 FROM roles WHERE full_admin AND user_count > 0);
ROLLBACK;
\echo '== DELETE /admin-users/delete/{id}, the cascade to sessions, with two sessions per user (rolled back): before (sessions_user_live only) and after'
BEGIN;
INSERT INTO sessions (user_id, expires_at, revoked_at) SELECT id, now(), now() FROM users, generate_series(1, 2);
ANALYZE sessions;
DROP INDEX sessions_user;
EXPLAIN (ANALYZE, BUFFERS) DELETE FROM sessions WHERE user_id = :user;
ROLLBACK;
BEGIN;
INSERT INTO sessions (user_id, expires_at, revoked_at) SELECT id, now(), now() FROM users, generate_series(1, 2);
ANALYZE sessions;
EXPLAIN (ANALYZE, BUFFERS) DELETE FROM sessions WHERE user_id = :user;
ROLLBACK;
