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
						SELECT u.id FROM users u WHERE TRUE ORDER BY lower(u.username) LIMIT $1 OFFSET $2
					) k
					JOIN users u ON u.id = k.id
				) p
			), '[]') AS users
-- $1 = 20, $2 = 0

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
						(SELECT u.id, 0::bigint AS rn FROM users u WHERE TRUE AND NOT (greatest((SELECT CASE WHEN capped THEN 9223372036854775807 ELSE n END FROM list_total) - $2 - $1, 0) < $2)
		 ORDER BY u.registered DESC, u.id DESC LIMIT $1 OFFSET $2)
		UNION ALL
		(SELECT * FROM (
			SELECT u.id, row_number() OVER (ORDER BY u.registered, u.id) AS rn FROM users u WHERE TRUE AND greatest((SELECT CASE WHEN capped THEN 9223372036854775807 ELSE n END FROM list_total) - $2 - $1, 0) < $2
			ORDER BY u.registered, u.id LIMIT $1 OFFSET greatest((SELECT CASE WHEN capped THEN 9223372036854775807 ELSE n END FROM list_total) - $2 - $1, 0)) r
		 WHERE r.rn <= (SELECT CASE WHEN capped THEN 9223372036854775807 ELSE n END FROM list_total) - $2)
					) k
					JOIN users u ON u.id = k.id
				) p
			), '[]') AS users
-- $1 = 20, $2 = 2

-- ============================================================================
-- search

WITH matches AS MATERIALIZED (
			SELECT u.id, u.search, u.registered FROM users u WHERE u.search LIKE search_pattern($1)), list_total AS (SELECT n, n > 1000 AS capped FROM (SELECT (SELECT count(*) FROM (SELECT 1 FROM matches u WHERE TRUE LIMIT 1001) bounded) AS n OFFSET 0) c)
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
						SELECT u.id FROM matches u WHERE TRUE ORDER BY u.search, u.id LIMIT $2 OFFSET $3
					) k
					JOIN users u ON u.id = k.id
				) p
			), '[]') AS users
-- $1 = "adm", $2 = 20, $3 = 0

-- ============================================================================
-- role filter

WITH  list_total AS (SELECT n, n > 1000 AS capped FROM (SELECT (SELECT count(*) FROM (SELECT 1 FROM users u WHERE EXISTS (SELECT 1 FROM user_roles f WHERE f.user_id = u.id AND f.role_id = $1) LIMIT 1001) bounded) AS n OFFSET 0) c)
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
						SELECT u.id FROM users u WHERE EXISTS (SELECT 1 FROM user_roles f WHERE f.user_id = u.id AND f.role_id = $1) ORDER BY lower(u.username) DESC LIMIT $2 OFFSET $3
					) k
					JOIN users u ON u.id = k.id
				) p
			), '[]') AS users
-- $1 = 3, $2 = 20, $3 = 0
