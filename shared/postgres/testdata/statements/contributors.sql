-- The statements the contributors list sends, one section a kind of page.
-- Written by TestPagedStatements (go test ./shared/postgres/ -run TestPagedStatements -update).

-- ============================================================================
-- first page

WITH list_total AS (SELECT n, length(search_fold(@search)) > 2 AND n > 1000 AS capped FROM (SELECT 
	CASE WHEN search_fold(@search) = '' THEN coalesce((SELECT cl.contributor_count FROM clients cl WHERE cl.id = @client), 0)
	     WHEN length(search_fold(@search)) <= 2 THEN coalesce((SELECT g.n FROM contributor_search_grams g
	                                               WHERE g.client_id = @client AND g.gram = search_fold(@search)), 0)
	     ELSE (SELECT count(*) FROM (SELECT 1 FROM contributors c WHERE c.client_id = @client AND (@search = '' OR c.search LIKE search_pattern(@search)) LIMIT 1001) bounded) END AS n OFFSET 0) c)
SELECT
	(SELECT n FROM list_total) AS total,
	(SELECT capped FROM list_total) AS capped,
	coalesce((
		SELECT jsonb_agg(jsonb_build_object(
			'id', p.id, 'first_name', p.first_name, 'last_name', p.last_name, 'slug', p.slug,
			'image', coalesce(p.image, ''), 'locked_by', (SELECT jsonb_build_object('id', lu.id, 'username', lu.username)
	FROM contributor_locks lk JOIN users lu ON lu.id = lk.locked_by
	WHERE lk.contributor_id = p.id AND lk.expires_at > now())
		) ORDER BY p.n)
		FROM (
			SELECT c.id, c.first_name, c.last_name, c.slug, c.image,
				row_number() OVER (ORDER BY c.first_name, c.last_name, c.id) AS n
			FROM (
				-- The page's ids first, from contributors_client_order_search alone (an
				-- index-only scan: the skipped rows of a deep offset, and the search
				-- text tested on them, cost no row reads), walked from the nearer end.
				SELECT c.id FROM contributors c WHERE c.client_id = @client AND (@search = '' OR c.search LIKE search_pattern(@search)) ORDER BY c.first_name, c.last_name, c.id LIMIT @limit OFFSET @offset
			) k
			JOIN contributors c ON c.id = k.id
		) p
	), '[]') AS contributors
-- @client = 1, @limit = 20, @offset = 0, @search = ""

-- ============================================================================
-- a deep page, descending

WITH list_total AS (SELECT n, length(search_fold(@search)) > 2 AND n > 1000 AS capped FROM (SELECT 
	CASE WHEN search_fold(@search) = '' THEN coalesce((SELECT cl.contributor_count FROM clients cl WHERE cl.id = @client), 0)
	     WHEN length(search_fold(@search)) <= 2 THEN coalesce((SELECT g.n FROM contributor_search_grams g
	                                               WHERE g.client_id = @client AND g.gram = search_fold(@search)), 0)
	     ELSE (SELECT count(*) FROM (SELECT 1 FROM contributors c WHERE c.client_id = @client AND (@search = '' OR c.search LIKE search_pattern(@search)) LIMIT 1001) bounded) END AS n OFFSET 0) c)
SELECT
	(SELECT n FROM list_total) AS total,
	(SELECT capped FROM list_total) AS capped,
	coalesce((
		SELECT jsonb_agg(jsonb_build_object(
			'id', p.id, 'first_name', p.first_name, 'last_name', p.last_name, 'slug', p.slug,
			'image', coalesce(p.image, ''), 'locked_by', (SELECT jsonb_build_object('id', lu.id, 'username', lu.username)
	FROM contributor_locks lk JOIN users lu ON lu.id = lk.locked_by
	WHERE lk.contributor_id = p.id AND lk.expires_at > now())
		) ORDER BY p.n)
		FROM (
			SELECT c.id, c.first_name, c.last_name, c.slug, c.image,
				row_number() OVER (ORDER BY c.first_name DESC, c.last_name DESC, c.id DESC) AS n
			FROM (
				-- The page's ids first, from contributors_client_order_search alone (an
				-- index-only scan: the skipped rows of a deep offset, and the search
				-- text tested on them, cost no row reads), walked from the nearer end.
				(SELECT c.id, 0::bigint AS rn FROM contributors c WHERE c.client_id = @client AND (@search = '' OR c.search LIKE search_pattern(@search)) AND NOT (greatest((SELECT CASE WHEN capped THEN 9223372036854775807 ELSE n END FROM list_total) - @offset - @limit, 0) < @offset)
		 ORDER BY c.first_name DESC, c.last_name DESC, c.id DESC LIMIT @limit OFFSET @offset)
		UNION ALL
		(SELECT * FROM (
			SELECT c.id, row_number() OVER (ORDER BY c.first_name, c.last_name, c.id) AS rn FROM contributors c WHERE c.client_id = @client AND (@search = '' OR c.search LIKE search_pattern(@search)) AND greatest((SELECT CASE WHEN capped THEN 9223372036854775807 ELSE n END FROM list_total) - @offset - @limit, 0) < @offset
			ORDER BY c.first_name, c.last_name, c.id LIMIT @limit OFFSET greatest((SELECT CASE WHEN capped THEN 9223372036854775807 ELSE n END FROM list_total) - @offset - @limit, 0)) r
		 WHERE r.rn <= (SELECT CASE WHEN capped THEN 9223372036854775807 ELSE n END FROM list_total) - @offset)
			) k
			JOIN contributors c ON c.id = k.id
		) p
	), '[]') AS contributors
-- @client = 1, @limit = 20, @offset = 3, @search = ""

-- ============================================================================
-- search of two letters (kept counts)

WITH list_total AS (SELECT n, length(search_fold(@search)) > 2 AND n > 1000 AS capped FROM (SELECT 
	CASE WHEN search_fold(@search) = '' THEN coalesce((SELECT cl.contributor_count FROM clients cl WHERE cl.id = @client), 0)
	     WHEN length(search_fold(@search)) <= 2 THEN coalesce((SELECT g.n FROM contributor_search_grams g
	                                               WHERE g.client_id = @client AND g.gram = search_fold(@search)), 0)
	     ELSE (SELECT count(*) FROM (SELECT 1 FROM contributors c WHERE c.client_id = @client AND (@search = '' OR c.search LIKE search_pattern(@search)) LIMIT 1001) bounded) END AS n OFFSET 0) c)
SELECT
	(SELECT n FROM list_total) AS total,
	(SELECT capped FROM list_total) AS capped,
	coalesce((
		SELECT jsonb_agg(jsonb_build_object(
			'id', p.id, 'first_name', p.first_name, 'last_name', p.last_name, 'slug', p.slug,
			'image', coalesce(p.image, ''), 'locked_by', (SELECT jsonb_build_object('id', lu.id, 'username', lu.username)
	FROM contributor_locks lk JOIN users lu ON lu.id = lk.locked_by
	WHERE lk.contributor_id = p.id AND lk.expires_at > now())
		) ORDER BY p.n)
		FROM (
			SELECT c.id, c.first_name, c.last_name, c.slug, c.image,
				row_number() OVER (ORDER BY c.first_name, c.last_name, c.id) AS n
			FROM (
				-- The page's ids first, from contributors_client_order_search alone (an
				-- index-only scan: the skipped rows of a deep offset, and the search
				-- text tested on them, cost no row reads), walked from the nearer end.
				SELECT c.id FROM contributors c WHERE c.client_id = @client AND (@search = '' OR c.search LIKE search_pattern(@search)) ORDER BY c.first_name, c.last_name, c.id LIMIT @limit OFFSET @offset
			) k
			JOIN contributors c ON c.id = k.id
		) p
	), '[]') AS contributors
-- @client = 1, @limit = 20, @offset = 0, @search = "od"

-- ============================================================================
-- search of three letters or more

WITH list_total AS (SELECT n, length(search_fold(@search)) > 2 AND n > 1000 AS capped FROM (SELECT 
	CASE WHEN search_fold(@search) = '' THEN coalesce((SELECT cl.contributor_count FROM clients cl WHERE cl.id = @client), 0)
	     WHEN length(search_fold(@search)) <= 2 THEN coalesce((SELECT g.n FROM contributor_search_grams g
	                                               WHERE g.client_id = @client AND g.gram = search_fold(@search)), 0)
	     ELSE (SELECT count(*) FROM (SELECT 1 FROM contributors c WHERE c.client_id = @client AND (@search = '' OR c.search LIKE search_pattern(@search)) LIMIT 1001) bounded) END AS n OFFSET 0) c)
SELECT
	(SELECT n FROM list_total) AS total,
	(SELECT capped FROM list_total) AS capped,
	coalesce((
		SELECT jsonb_agg(jsonb_build_object(
			'id', p.id, 'first_name', p.first_name, 'last_name', p.last_name, 'slug', p.slug,
			'image', coalesce(p.image, ''), 'locked_by', (SELECT jsonb_build_object('id', lu.id, 'username', lu.username)
	FROM contributor_locks lk JOIN users lu ON lu.id = lk.locked_by
	WHERE lk.contributor_id = p.id AND lk.expires_at > now())
		) ORDER BY p.n)
		FROM (
			SELECT c.id, c.first_name, c.last_name, c.slug, c.image,
				row_number() OVER (ORDER BY c.first_name, c.last_name, c.id) AS n
			FROM (
				-- The page's ids first, from contributors_client_order_search alone (an
				-- index-only scan: the skipped rows of a deep offset, and the search
				-- text tested on them, cost no row reads), walked from the nearer end.
				SELECT c.id FROM contributors c WHERE c.client_id = @client AND (@search = '' OR c.search LIKE search_pattern(@search)) ORDER BY c.first_name, c.last_name, c.id LIMIT @limit OFFSET @offset
			) k
			JOIN contributors c ON c.id = k.id
		) p
	), '[]') AS contributors
-- @client = 1, @limit = 20, @offset = 0, @search = "oda"
