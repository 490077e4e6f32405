-- The statements the publications list sends, one section a kind of page.
-- Written by TestPagedStatements (go test ./shared/postgres/ -run TestPagedStatements -update).

-- ============================================================================
-- first page

WITH list_total AS (SELECT n, false AND n > 1000 AS capped FROM (SELECT coalesce((SELECT CASE WHEN p.client_id = $2 THEN p.series_count
		             ELSE (SELECT count(*) FROM series_publishers sp
		                   WHERE sp.publisher_id = $1 AND sp.client_id = $2) END
		 FROM publishers p WHERE p.id = $1), 0) AS n OFFSET 0) c),
		page AS (SELECT sp.series_id FROM series_publishers sp WHERE sp.publisher_id = $1 AND sp.client_id = $2  ORDER BY sp.name, sp.series_id LIMIT $3 OFFSET $4)
		SELECT s.id, s.name, s.slug, s.type, s.origin, (SELECT n FROM list_total) AS total,
		       (SELECT capped FROM list_total) AS capped,
		       coalesce((SELECT a.title FROM series_aliases a
		                 WHERE a.series_id = s.id AND a.language = $5
		                 ORDER BY a.id LIMIT 1), '') AS alias,
		       coalesce((SELECT jsonb_agg(jsonb_build_object(
		                        'id', a.id, 'title', a.title, 'language', a.language) ORDER BY a.id)
		                 FROM series_aliases a
		                 WHERE a.series_id = s.id), '[]') AS aliases,
		       coalesce((SELECT d.description FROM series_descriptions d
		                 WHERE d.series_id = s.id AND d.language IN ($5, 'English')
		                 ORDER BY d.language = $5 DESC LIMIT 1), '') AS description,
		       coalesce((SELECT jsonb_agg(jsonb_build_object(
		                        'id', t.id, 'name', t.name, 'type', t.type) ORDER BY t.name, t.id)
		                 FROM series_tags st
		                 JOIN tags t ON t.id = st.tag_id
		                 WHERE st.series_id = s.id), '[]') AS tags,
		       (SELECT jsonb_build_object(
		                   'id', v.id, 'cover_path', v.cover_path, 'aspect_ratio', v.aspect_ratio,
		                   'nsfw', v.nsfw, 'nsfw18', v.nsfw18)
		        FROM volumes v
		        WHERE v.series_id = s.id
		        ORDER BY v.number, v.id LIMIT 1) AS volume
		FROM page
		JOIN series s ON s.id = page.series_id
		ORDER BY s.name, s.id
-- $1 = 1, $2 = 1, $3 = 20, $4 = 0, $5 = "English"

-- ============================================================================
-- a deep page, newest first

WITH list_total AS (SELECT n, false AND n > 1000 AS capped FROM (SELECT coalesce((SELECT CASE WHEN p.client_id = $2 THEN p.series_count
		             ELSE (SELECT count(*) FROM series_publishers sp
		                   WHERE sp.publisher_id = $1 AND sp.client_id = $2) END
		 FROM publishers p WHERE p.id = $1), 0) AS n OFFSET 0) c),
		page AS ((SELECT sp.series_id, 0::bigint AS rn FROM series_publishers sp WHERE sp.publisher_id = $1 AND sp.client_id = $2  AND NOT (greatest((SELECT CASE WHEN capped THEN 9223372036854775807 ELSE n END FROM list_total) - $4 - $3, 0) < $4)
		 ORDER BY sp.created_at DESC, sp.series_id DESC LIMIT $3 OFFSET $4)
		UNION ALL
		(SELECT * FROM (
			SELECT sp.series_id, row_number() OVER (ORDER BY sp.created_at, sp.series_id) AS rn FROM series_publishers sp WHERE sp.publisher_id = $1 AND sp.client_id = $2  AND greatest((SELECT CASE WHEN capped THEN 9223372036854775807 ELSE n END FROM list_total) - $4 - $3, 0) < $4
			ORDER BY sp.created_at, sp.series_id LIMIT $3 OFFSET greatest((SELECT CASE WHEN capped THEN 9223372036854775807 ELSE n END FROM list_total) - $4 - $3, 0)) r
		 WHERE r.rn <= (SELECT CASE WHEN capped THEN 9223372036854775807 ELSE n END FROM list_total) - $4))
		SELECT s.id, s.name, s.slug, s.type, s.origin, (SELECT n FROM list_total) AS total,
		       (SELECT capped FROM list_total) AS capped,
		       coalesce((SELECT a.title FROM series_aliases a
		                 WHERE a.series_id = s.id AND a.language = $5
		                 ORDER BY a.id LIMIT 1), '') AS alias,
		       coalesce((SELECT jsonb_agg(jsonb_build_object(
		                        'id', a.id, 'title', a.title, 'language', a.language) ORDER BY a.id)
		                 FROM series_aliases a
		                 WHERE a.series_id = s.id), '[]') AS aliases,
		       coalesce((SELECT d.description FROM series_descriptions d
		                 WHERE d.series_id = s.id AND d.language IN ($5, 'English')
		                 ORDER BY d.language = $5 DESC LIMIT 1), '') AS description,
		       coalesce((SELECT jsonb_agg(jsonb_build_object(
		                        'id', t.id, 'name', t.name, 'type', t.type) ORDER BY t.name, t.id)
		                 FROM series_tags st
		                 JOIN tags t ON t.id = st.tag_id
		                 WHERE st.series_id = s.id), '[]') AS tags,
		       (SELECT jsonb_build_object(
		                   'id', v.id, 'cover_path', v.cover_path, 'aspect_ratio', v.aspect_ratio,
		                   'nsfw', v.nsfw, 'nsfw18', v.nsfw18)
		        FROM volumes v
		        WHERE v.series_id = s.id
		        ORDER BY v.number, v.id LIMIT 1) AS volume
		FROM page
		JOIN series s ON s.id = page.series_id
		ORDER BY s.created_at DESC, s.id DESC
-- $1 = 1, $2 = 1, $3 = 20, $4 = 2, $5 = "English"

-- ============================================================================
-- search

WITH list_total AS (SELECT n, true AND n > 1000 AS capped FROM (SELECT coalesce((SELECT count(*) FROM (SELECT 1 FROM series_publishers sp WHERE sp.publisher_id = $1 AND sp.client_id = $2 AND sp.search LIKE search_pattern($6) LIMIT 1001) bounded), 0) AS n OFFSET 0) c),
		page AS (SELECT sp.series_id FROM series_publishers sp WHERE sp.publisher_id = $1 AND sp.client_id = $2 AND sp.search LIKE search_pattern($6) ORDER BY sp.name, sp.series_id LIMIT $3 OFFSET $4)
		SELECT s.id, s.name, s.slug, s.type, s.origin, (SELECT n FROM list_total) AS total,
		       (SELECT capped FROM list_total) AS capped,
		       coalesce((SELECT a.title FROM series_aliases a
		                 WHERE a.series_id = s.id AND a.language = $5
		                 ORDER BY a.id LIMIT 1), '') AS alias,
		       coalesce((SELECT jsonb_agg(jsonb_build_object(
		                        'id', a.id, 'title', a.title, 'language', a.language) ORDER BY a.id)
		                 FROM series_aliases a
		                 WHERE a.series_id = s.id), '[]') AS aliases,
		       coalesce((SELECT d.description FROM series_descriptions d
		                 WHERE d.series_id = s.id AND d.language IN ($5, 'English')
		                 ORDER BY d.language = $5 DESC LIMIT 1), '') AS description,
		       coalesce((SELECT jsonb_agg(jsonb_build_object(
		                        'id', t.id, 'name', t.name, 'type', t.type) ORDER BY t.name, t.id)
		                 FROM series_tags st
		                 JOIN tags t ON t.id = st.tag_id
		                 WHERE st.series_id = s.id), '[]') AS tags,
		       (SELECT jsonb_build_object(
		                   'id', v.id, 'cover_path', v.cover_path, 'aspect_ratio', v.aspect_ratio,
		                   'nsfw', v.nsfw, 'nsfw18', v.nsfw18)
		        FROM volumes v
		        WHERE v.series_id = s.id
		        ORDER BY v.number, v.id LIMIT 1) AS volume
		FROM page
		JOIN series s ON s.id = page.series_id
		ORDER BY s.name, s.id
-- $1 = 1, $2 = 1, $3 = 20, $4 = 0, $5 = "English", $6 = "one"

-- ============================================================================
-- a search's page past T, newest first

WITH page AS (SELECT w.series_id, count(*) OVER () AS n
		FROM (SELECT sp.series_id, sp.created_at FROM series_publishers sp WHERE sp.publisher_id = $1 AND sp.client_id = $2 AND sp.search LIKE search_pattern($6)
		      ORDER BY sp.created_at DESC, sp.series_id DESC LIMIT greatest(2001, $4::bigint + $3::bigint)) w
		ORDER BY w.created_at DESC, w.series_id DESC LIMIT $3 OFFSET $4),
		list_total AS (SELECT n, true AND n > 2000 AS capped FROM (SELECT coalesce((SELECT max(n) FROM page), 0) AS n OFFSET 0) c)
		SELECT s.id, s.name, s.slug, s.type, s.origin, (SELECT n FROM list_total) AS total,
		       (SELECT capped FROM list_total) AS capped,
		       coalesce((SELECT a.title FROM series_aliases a
		                 WHERE a.series_id = s.id AND a.language = $5
		                 ORDER BY a.id LIMIT 1), '') AS alias,
		       coalesce((SELECT jsonb_agg(jsonb_build_object(
		                        'id', a.id, 'title', a.title, 'language', a.language) ORDER BY a.id)
		                 FROM series_aliases a
		                 WHERE a.series_id = s.id), '[]') AS aliases,
		       coalesce((SELECT d.description FROM series_descriptions d
		                 WHERE d.series_id = s.id AND d.language IN ($5, 'English')
		                 ORDER BY d.language = $5 DESC LIMIT 1), '') AS description,
		       coalesce((SELECT jsonb_agg(jsonb_build_object(
		                        'id', t.id, 'name', t.name, 'type', t.type) ORDER BY t.name, t.id)
		                 FROM series_tags st
		                 JOIN tags t ON t.id = st.tag_id
		                 WHERE st.series_id = s.id), '[]') AS tags,
		       (SELECT jsonb_build_object(
		                   'id', v.id, 'cover_path', v.cover_path, 'aspect_ratio', v.aspect_ratio,
		                   'nsfw', v.nsfw, 'nsfw18', v.nsfw18)
		        FROM volumes v
		        WHERE v.series_id = s.id
		        ORDER BY v.number, v.id LIMIT 1) AS volume
		FROM page
		JOIN series s ON s.id = page.series_id
		ORDER BY s.created_at DESC, s.id DESC
-- $1 = 1, $2 = 1, $3 = 20, $4 = 1000, $5 = "English", $6 = "o"

SELECT coalesce((SELECT count(*) FROM (SELECT 1 FROM series_publishers sp WHERE sp.publisher_id = $1 AND sp.client_id = $2 AND sp.search LIKE search_pattern($3) LIMIT 2001) bounded), 0)
-- $1 = 1, $2 = 1, $3 = "o"
