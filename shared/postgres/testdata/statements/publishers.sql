-- The statements the publishers list sends, one section a kind of page.
-- Written by TestPagedStatements (go test ./shared/postgres/ -run TestPagedStatements -update).

-- ============================================================================
-- first page

WITH  page AS (SELECT p.id, p.name, p.created_at FROM publishers p WHERE p.client_id = $1 ORDER BY p.id LIMIT $2 OFFSET $3)
		SELECT p.id, p.name, p.short_name, p.slug, p.country, p.website, p.headquarter,
		       p.series_count,
		       coalesce(to_char(p.founding_date, 'YYYY-MM-DD'), '') AS founding_date,
		       p.image, p.image_source, p.client_id
		FROM page
		JOIN publishers p ON p.id = page.id
		ORDER BY page.id
-- $1 = 1, $2 = 20, $3 = 0

-- ============================================================================
-- a deep page by name

WITH list_total AS (SELECT coalesce((SELECT publisher_count FROM clients WHERE id = $1), 0) AS n), page AS ((SELECT p.id, p.name, p.created_at, 0::bigint AS rn FROM publishers p WHERE p.client_id = $1 AND NOT (greatest((SELECT n FROM list_total) - $3 - $2, 0) < $3)
		 ORDER BY p.name, p.id LIMIT $2 OFFSET $3)
		UNION ALL
		(SELECT * FROM (
			SELECT p.id, p.name, p.created_at, row_number() OVER (ORDER BY p.name DESC, p.id DESC) AS rn FROM publishers p WHERE p.client_id = $1 AND greatest((SELECT n FROM list_total) - $3 - $2, 0) < $3
			ORDER BY p.name DESC, p.id DESC LIMIT $2 OFFSET greatest((SELECT n FROM list_total) - $3 - $2, 0)) r
		 WHERE r.rn <= (SELECT n FROM list_total) - $3))
		SELECT p.id, p.name, p.short_name, p.slug, p.country, p.website, p.headquarter,
		       p.series_count,
		       coalesce(to_char(p.founding_date, 'YYYY-MM-DD'), '') AS founding_date,
		       p.image, p.image_source, p.client_id
		FROM page
		JOIN publishers p ON p.id = page.id
		ORDER BY page.name, page.id
-- $1 = 1, $2 = 20, $3 = 2

-- ============================================================================
-- search

WITH  page AS (SELECT p.id, p.name, p.created_at FROM publishers p WHERE p.client_id = $1 AND p.search LIKE search_pattern($4) ORDER BY p.id LIMIT $2 OFFSET $3)
		SELECT p.id, p.name, p.short_name, p.slug, p.country, p.website, p.headquarter,
		       p.series_count,
		       coalesce(to_char(p.founding_date, 'YYYY-MM-DD'), '') AS founding_date,
		       p.image, p.image_source, p.client_id
		FROM page
		JOIN publishers p ON p.id = page.id
		ORDER BY page.id
-- $1 = 1, $2 = 20, $3 = 0, $4 = "media"
