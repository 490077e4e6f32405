-- The statements the publishers list sends, one section a kind of page.
-- Written by TestPagedStatements (go test ./shared/postgres/ -run TestPagedStatements -update).

-- ============================================================================
-- first page

WITH  page AS (SELECT p.id, p.name, p.created_at FROM publishers p WHERE p.client_id = @client ORDER BY p.id LIMIT @limit OFFSET @offset)
		SELECT p.id, p.name, p.short_name, p.slug, p.country, p.website, p.headquarter,
		       p.series_count,
		       coalesce(to_char(p.founding_date, 'YYYY-MM-DD'), '') AS founding_date,
		       p.image, p.image_source, p.client_id
		FROM page
		JOIN publishers p ON p.id = page.id
		ORDER BY page.id
-- @client = 1, @limit = 20, @offset = 0

-- ============================================================================
-- a deep page by name

WITH list_total AS (SELECT coalesce((SELECT publisher_count FROM clients WHERE id = @client), 0) AS n), page AS ((SELECT p.id, p.name, p.created_at, 0::bigint AS rn FROM publishers p WHERE p.client_id = @client AND NOT (greatest((SELECT n FROM list_total) - @offset - @limit, 0) < @offset)
		 ORDER BY p.name, p.id LIMIT @limit OFFSET @offset)
		UNION ALL
		(SELECT * FROM (
			SELECT p.id, p.name, p.created_at, row_number() OVER (ORDER BY p.name DESC, p.id DESC) AS rn FROM publishers p WHERE p.client_id = @client AND greatest((SELECT n FROM list_total) - @offset - @limit, 0) < @offset
			ORDER BY p.name DESC, p.id DESC LIMIT @limit OFFSET greatest((SELECT n FROM list_total) - @offset - @limit, 0)) r
		 WHERE r.rn <= (SELECT n FROM list_total) - @offset))
		SELECT p.id, p.name, p.short_name, p.slug, p.country, p.website, p.headquarter,
		       p.series_count,
		       coalesce(to_char(p.founding_date, 'YYYY-MM-DD'), '') AS founding_date,
		       p.image, p.image_source, p.client_id
		FROM page
		JOIN publishers p ON p.id = page.id
		ORDER BY page.name, page.id
-- @client = 1, @limit = 20, @offset = 2

-- ============================================================================
-- search

WITH  page AS (SELECT p.id, p.name, p.created_at FROM publishers p WHERE p.client_id = @client AND p.search LIKE search_pattern(@search) ORDER BY p.id LIMIT @limit OFFSET @offset)
		SELECT p.id, p.name, p.short_name, p.slug, p.country, p.website, p.headquarter,
		       p.series_count,
		       coalesce(to_char(p.founding_date, 'YYYY-MM-DD'), '') AS founding_date,
		       p.image, p.image_source, p.client_id
		FROM page
		JOIN publishers p ON p.id = page.id
		ORDER BY page.id
-- @client = 1, @limit = 20, @offset = 0, @search = "media"
