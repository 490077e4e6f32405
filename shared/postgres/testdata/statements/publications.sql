-- The statements the publications list sends, one section a kind of page.
-- Written by TestPagedStatements (go test ./shared/postgres/ -run TestPagedStatements -update).

-- ============================================================================
-- first page

WITH list_total AS (SELECT n, false AND n > 1000 AS capped FROM (SELECT coalesce((SELECT CASE WHEN p.client_id = @client THEN p.series_count
		             ELSE (SELECT count(*) FROM series_publishers sp
		                   WHERE sp.publisher_id = @publisher AND sp.client_id = @client) END
		 FROM publishers p WHERE p.id = @publisher), 0) AS n OFFSET 0) c),
		page AS (SELECT sp.series_id FROM series_publishers sp WHERE sp.publisher_id = @publisher AND sp.client_id = @client  ORDER BY sp.name, sp.series_id LIMIT @limit OFFSET @offset)
		SELECT s.id, s.name, s.slug, s.type, s.origin, (SELECT n FROM list_total) AS total,
		       (SELECT capped FROM list_total) AS capped,
		       coalesce((SELECT a.title FROM series_aliases a
		                 WHERE a.series_id = s.id AND a.language = @language
		                 ORDER BY a.id LIMIT 1), '') AS alias,
		       coalesce((SELECT jsonb_agg(jsonb_build_object(
		                        'id', a.id, 'title', a.title, 'language', a.language) ORDER BY a.id)
		                 FROM series_aliases a
		                 WHERE a.series_id = s.id), '[]') AS aliases,
		       coalesce((SELECT d.description FROM series_descriptions d
		                 WHERE d.series_id = s.id AND d.language IN (@language, 'English')
		                 ORDER BY d.language = @language DESC LIMIT 1), '') AS description,
		       coalesce((SELECT jsonb_agg(jsonb_build_object(
		                        'id', t.id, 'name', t.name, 'type', t.type) ORDER BY t.name, t.id)
		                 FROM series_tags st
		                 JOIN tags t ON t.id = st.tag_id AND t.client_id = s.client_id
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
-- @client = 1, @language = "English", @limit = 20, @offset = 0, @publisher = 1

-- ============================================================================
-- a deep page, newest first

WITH list_total AS (SELECT n, false AND n > 1000 AS capped FROM (SELECT coalesce((SELECT CASE WHEN p.client_id = @client THEN p.series_count
		             ELSE (SELECT count(*) FROM series_publishers sp
		                   WHERE sp.publisher_id = @publisher AND sp.client_id = @client) END
		 FROM publishers p WHERE p.id = @publisher), 0) AS n OFFSET 0) c),
		page AS ((SELECT sp.series_id, 0::bigint AS rn FROM series_publishers sp WHERE sp.publisher_id = @publisher AND sp.client_id = @client  AND NOT (greatest((SELECT CASE WHEN capped THEN 9223372036854775807 ELSE n END FROM list_total) - @offset - @limit, 0) < @offset)
		 ORDER BY sp.created_at DESC, sp.series_id DESC LIMIT @limit OFFSET @offset)
		UNION ALL
		(SELECT * FROM (
			SELECT sp.series_id, row_number() OVER (ORDER BY sp.created_at, sp.series_id) AS rn FROM series_publishers sp WHERE sp.publisher_id = @publisher AND sp.client_id = @client  AND greatest((SELECT CASE WHEN capped THEN 9223372036854775807 ELSE n END FROM list_total) - @offset - @limit, 0) < @offset
			ORDER BY sp.created_at, sp.series_id LIMIT @limit OFFSET greatest((SELECT CASE WHEN capped THEN 9223372036854775807 ELSE n END FROM list_total) - @offset - @limit, 0)) r
		 WHERE r.rn <= (SELECT CASE WHEN capped THEN 9223372036854775807 ELSE n END FROM list_total) - @offset))
		SELECT s.id, s.name, s.slug, s.type, s.origin, (SELECT n FROM list_total) AS total,
		       (SELECT capped FROM list_total) AS capped,
		       coalesce((SELECT a.title FROM series_aliases a
		                 WHERE a.series_id = s.id AND a.language = @language
		                 ORDER BY a.id LIMIT 1), '') AS alias,
		       coalesce((SELECT jsonb_agg(jsonb_build_object(
		                        'id', a.id, 'title', a.title, 'language', a.language) ORDER BY a.id)
		                 FROM series_aliases a
		                 WHERE a.series_id = s.id), '[]') AS aliases,
		       coalesce((SELECT d.description FROM series_descriptions d
		                 WHERE d.series_id = s.id AND d.language IN (@language, 'English')
		                 ORDER BY d.language = @language DESC LIMIT 1), '') AS description,
		       coalesce((SELECT jsonb_agg(jsonb_build_object(
		                        'id', t.id, 'name', t.name, 'type', t.type) ORDER BY t.name, t.id)
		                 FROM series_tags st
		                 JOIN tags t ON t.id = st.tag_id AND t.client_id = s.client_id
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
-- @client = 1, @language = "English", @limit = 20, @offset = 2, @publisher = 1

-- ============================================================================
-- search

WITH list_total AS (SELECT n, true AND n > 1000 AS capped FROM (SELECT coalesce((SELECT count(*) FROM (SELECT 1 FROM series_publishers sp WHERE sp.publisher_id = @publisher AND sp.client_id = @client AND sp.search LIKE search_pattern(@search) LIMIT 1001) bounded), 0) AS n OFFSET 0) c),
		page AS (SELECT sp.series_id FROM series_publishers sp WHERE sp.publisher_id = @publisher AND sp.client_id = @client AND sp.search LIKE search_pattern(@search) ORDER BY sp.name, sp.series_id LIMIT @limit OFFSET @offset)
		SELECT s.id, s.name, s.slug, s.type, s.origin, (SELECT n FROM list_total) AS total,
		       (SELECT capped FROM list_total) AS capped,
		       coalesce((SELECT a.title FROM series_aliases a
		                 WHERE a.series_id = s.id AND a.language = @language
		                 ORDER BY a.id LIMIT 1), '') AS alias,
		       coalesce((SELECT jsonb_agg(jsonb_build_object(
		                        'id', a.id, 'title', a.title, 'language', a.language) ORDER BY a.id)
		                 FROM series_aliases a
		                 WHERE a.series_id = s.id), '[]') AS aliases,
		       coalesce((SELECT d.description FROM series_descriptions d
		                 WHERE d.series_id = s.id AND d.language IN (@language, 'English')
		                 ORDER BY d.language = @language DESC LIMIT 1), '') AS description,
		       coalesce((SELECT jsonb_agg(jsonb_build_object(
		                        'id', t.id, 'name', t.name, 'type', t.type) ORDER BY t.name, t.id)
		                 FROM series_tags st
		                 JOIN tags t ON t.id = st.tag_id AND t.client_id = s.client_id
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
-- @client = 1, @language = "English", @limit = 20, @offset = 0, @publisher = 1, @search = "one"

-- ============================================================================
-- a search's page past T, newest first

WITH page AS (SELECT w.series_id, count(*) OVER () AS n
		FROM (SELECT sp.series_id, sp.created_at FROM series_publishers sp WHERE sp.publisher_id = @publisher AND sp.client_id = @client AND sp.search LIKE search_pattern(@search)
		      ORDER BY sp.created_at DESC, sp.series_id DESC LIMIT greatest(2001, @offset::bigint + @limit::bigint)) w
		ORDER BY w.created_at DESC, w.series_id DESC LIMIT @limit OFFSET @offset),
		list_total AS (SELECT n, true AND n > 2000 AS capped FROM (SELECT coalesce((SELECT max(n) FROM page), 0) AS n OFFSET 0) c)
		SELECT s.id, s.name, s.slug, s.type, s.origin, (SELECT n FROM list_total) AS total,
		       (SELECT capped FROM list_total) AS capped,
		       coalesce((SELECT a.title FROM series_aliases a
		                 WHERE a.series_id = s.id AND a.language = @language
		                 ORDER BY a.id LIMIT 1), '') AS alias,
		       coalesce((SELECT jsonb_agg(jsonb_build_object(
		                        'id', a.id, 'title', a.title, 'language', a.language) ORDER BY a.id)
		                 FROM series_aliases a
		                 WHERE a.series_id = s.id), '[]') AS aliases,
		       coalesce((SELECT d.description FROM series_descriptions d
		                 WHERE d.series_id = s.id AND d.language IN (@language, 'English')
		                 ORDER BY d.language = @language DESC LIMIT 1), '') AS description,
		       coalesce((SELECT jsonb_agg(jsonb_build_object(
		                        'id', t.id, 'name', t.name, 'type', t.type) ORDER BY t.name, t.id)
		                 FROM series_tags st
		                 JOIN tags t ON t.id = st.tag_id AND t.client_id = s.client_id
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
-- @client = 1, @language = "English", @limit = 20, @offset = 1000, @publisher = 1, @search = "o"

SELECT coalesce((SELECT count(*) FROM (SELECT 1 FROM series_publishers sp WHERE sp.publisher_id = @publisher AND sp.client_id = @client AND sp.search LIKE search_pattern(@search) LIMIT 2001) bounded), 0)
-- @client = 1, @publisher = 1, @search = "o"
