-- The statements the users list sends, one section a kind of page.
-- Written by TestPagedStatements (go test ./shared/postgres/ -run TestPagedStatements -update).

-- ============================================================================
-- first page

WITH  list_total AS (SELECT n, FALSE AS capped FROM (SELECT (SELECT n FROM user_count) AS n OFFSET 0) c)
		SELECT
			(SELECT n FROM list_total) AS total,
			(SELECT capped FROM list_total) AS capped,
			coalesce((
				SELECT jsonb_agg(jsonb_build_object(
					'id', p.id, 'slug', p.slug, 'username', p.username, 'age_verified', p.age_verified,
					'profile_image', coalesce(p.profile_image, ''), 'registered', p.registered,
					'roles', (SELECT coalesce(jsonb_agg(jsonb_build_object('id', r.id, 'name', r.name,
					                                     'description', coalesce(r.description, ''))
					                  ORDER BY r.name, r.id), '[]')
					          FROM user_roles ur JOIN roles r ON r.id = ur.role_id
					          WHERE ur.user_id = p.id),
					'lock', (SELECT jsonb_build_object('id', lu.id, 'username', lu.username)
	FROM user_locks lk JOIN users lu ON lu.id = lk.locked_by
	WHERE lk.user_id = p.id AND lk.expires_at > now())
				) ORDER BY p.n)
				FROM (
					SELECT u.id, u.slug, u.username, u.age_verified, u.profile_image, u.registered,
					       row_number() OVER (ORDER BY lower(u.username)) AS n
					FROM (
						-- The page's ids first (registration order: an index-only scan of
						-- users_registered), walked from the nearer end, then only the
						-- page's rows.
						SELECT u.id FROM users u WHERE TRUE ORDER BY lower(u.username) LIMIT @limit OFFSET @offset
					) k
					JOIN users u ON u.id = k.id
				) p
			), '[]') AS users
-- @limit = 20, @offset = 0

-- ============================================================================
-- a deep page

WITH  list_total AS (SELECT n, FALSE AS capped FROM (SELECT (SELECT n FROM user_count) AS n OFFSET 0) c)
		SELECT
			(SELECT n FROM list_total) AS total,
			(SELECT capped FROM list_total) AS capped,
			coalesce((
				SELECT jsonb_agg(jsonb_build_object(
					'id', p.id, 'slug', p.slug, 'username', p.username, 'age_verified', p.age_verified,
					'profile_image', coalesce(p.profile_image, ''), 'registered', p.registered,
					'roles', (SELECT coalesce(jsonb_agg(jsonb_build_object('id', r.id, 'name', r.name,
					                                     'description', coalesce(r.description, ''))
					                  ORDER BY r.name, r.id), '[]')
					          FROM user_roles ur JOIN roles r ON r.id = ur.role_id
					          WHERE ur.user_id = p.id),
					'lock', (SELECT jsonb_build_object('id', lu.id, 'username', lu.username)
	FROM user_locks lk JOIN users lu ON lu.id = lk.locked_by
	WHERE lk.user_id = p.id AND lk.expires_at > now())
				) ORDER BY p.n)
				FROM (
					SELECT u.id, u.slug, u.username, u.age_verified, u.profile_image, u.registered,
					       row_number() OVER (ORDER BY u.registered DESC, u.id DESC) AS n
					FROM (
						-- The page's ids first (registration order: an index-only scan of
						-- users_registered), walked from the nearer end, then only the
						-- page's rows.
						(SELECT u.id, 0::bigint AS rn FROM users u WHERE TRUE AND NOT (greatest((SELECT CASE WHEN capped THEN 9223372036854775807 ELSE n END FROM list_total) - @offset - @limit, 0) < @offset)
		 ORDER BY u.registered DESC, u.id DESC LIMIT @limit OFFSET @offset)
		UNION ALL
		(SELECT * FROM (
			SELECT u.id, row_number() OVER (ORDER BY u.registered, u.id) AS rn FROM users u WHERE TRUE AND greatest((SELECT CASE WHEN capped THEN 9223372036854775807 ELSE n END FROM list_total) - @offset - @limit, 0) < @offset
			ORDER BY u.registered, u.id LIMIT @limit OFFSET greatest((SELECT CASE WHEN capped THEN 9223372036854775807 ELSE n END FROM list_total) - @offset - @limit, 0)) r
		 WHERE r.rn <= (SELECT CASE WHEN capped THEN 9223372036854775807 ELSE n END FROM list_total) - @offset)
					) k
					JOIN users u ON u.id = k.id
				) p
			), '[]') AS users
-- @limit = 20, @offset = 2

-- ============================================================================
-- search

WITH matches AS MATERIALIZED (
			SELECT u.id, u.search, u.registered FROM users u WHERE u.search LIKE search_pattern(@search)), list_total AS (SELECT n, n > 1000 AS capped FROM (SELECT (SELECT count(*) FROM (SELECT 1 FROM matches u WHERE TRUE LIMIT 1001) bounded) AS n OFFSET 0) c)
		SELECT
			(SELECT n FROM list_total) AS total,
			(SELECT capped FROM list_total) AS capped,
			coalesce((
				SELECT jsonb_agg(jsonb_build_object(
					'id', p.id, 'slug', p.slug, 'username', p.username, 'age_verified', p.age_verified,
					'profile_image', coalesce(p.profile_image, ''), 'registered', p.registered,
					'roles', (SELECT coalesce(jsonb_agg(jsonb_build_object('id', r.id, 'name', r.name,
					                                     'description', coalesce(r.description, ''))
					                  ORDER BY r.name, r.id), '[]')
					          FROM user_roles ur JOIN roles r ON r.id = ur.role_id
					          WHERE ur.user_id = p.id),
					'lock', (SELECT jsonb_build_object('id', lu.id, 'username', lu.username)
	FROM user_locks lk JOIN users lu ON lu.id = lk.locked_by
	WHERE lk.user_id = p.id AND lk.expires_at > now())
				) ORDER BY p.n)
				FROM (
					SELECT u.id, u.slug, u.username, u.age_verified, u.profile_image, u.registered,
					       row_number() OVER (ORDER BY u.search, u.id) AS n
					FROM (
						-- The page's ids first (registration order: an index-only scan of
						-- users_registered), walked from the nearer end, then only the
						-- page's rows.
						SELECT u.id FROM matches u WHERE TRUE ORDER BY u.search, u.id LIMIT @limit OFFSET @offset
					) k
					JOIN users u ON u.id = k.id
				) p
			), '[]') AS users
-- @limit = 20, @offset = 0, @search = "adm"

-- ============================================================================
-- role filter

WITH  list_total AS (SELECT n, n > 1000 AS capped FROM (SELECT (SELECT count(*) FROM (SELECT 1 FROM users u WHERE EXISTS (SELECT 1 FROM user_roles f WHERE f.user_id = u.id AND f.role_id = @role) LIMIT 1001) bounded) AS n OFFSET 0) c)
		SELECT
			(SELECT n FROM list_total) AS total,
			(SELECT capped FROM list_total) AS capped,
			coalesce((
				SELECT jsonb_agg(jsonb_build_object(
					'id', p.id, 'slug', p.slug, 'username', p.username, 'age_verified', p.age_verified,
					'profile_image', coalesce(p.profile_image, ''), 'registered', p.registered,
					'roles', (SELECT coalesce(jsonb_agg(jsonb_build_object('id', r.id, 'name', r.name,
					                                     'description', coalesce(r.description, ''))
					                  ORDER BY r.name, r.id), '[]')
					          FROM user_roles ur JOIN roles r ON r.id = ur.role_id
					          WHERE ur.user_id = p.id),
					'lock', (SELECT jsonb_build_object('id', lu.id, 'username', lu.username)
	FROM user_locks lk JOIN users lu ON lu.id = lk.locked_by
	WHERE lk.user_id = p.id AND lk.expires_at > now())
				) ORDER BY p.n)
				FROM (
					SELECT u.id, u.slug, u.username, u.age_verified, u.profile_image, u.registered,
					       row_number() OVER (ORDER BY lower(u.username) DESC) AS n
					FROM (
						-- The page's ids first (registration order: an index-only scan of
						-- users_registered), walked from the nearer end, then only the
						-- page's rows.
						SELECT u.id FROM users u WHERE EXISTS (SELECT 1 FROM user_roles f WHERE f.user_id = u.id AND f.role_id = @role) ORDER BY lower(u.username) DESC LIMIT @limit OFFSET @offset
					) k
					JOIN users u ON u.id = k.id
				) p
			), '[]') AS users
-- @limit = 20, @offset = 0, @role = 3
