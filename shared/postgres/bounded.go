package postgres

import "strconv"

// DefaultMaxExact is T, the number of matches up to which the total of a paged list's
// search or filter is exact. Past it the total is a lower bound and the envelope says
// so (max_exact false): counting every match of a broad search costs the matches, not
// the page, and grows with the catalog. T is the largest number of matches for which
// the counted routes still meet their targets at a million series (docs/queries.md).
const DefaultMaxExact int64 = 1000

// maxExact is the DB's T: DefaultMaxExact unless MaxExact sets another (tests set a
// small one to reach both of its sides with a few rows).
func (db *DB) maxExact() int64 {
	if db.MaxExact > 0 {
		return db.MaxExact
	}
	return DefaultMaxExact
}

// countCap is the most matches a list's search or filter counts for a page at offset:
// T for a page that starts before T; offset+T for one at or past T, whose walk to its
// first row costs at least offset matches anyway, so that such a page still counts
// exactly a list that ends within T of it (its last pages then read from the nearer
// end, pageQuery) without counting every match of a longer one.
func (db *DB) countCap(offset int64) int64 {
	t := db.maxExact()
	if offset < t {
		return t
	}
	return offset + t
}

// boundedCount is the SQL of the number of rows of from (a FROM list) matching where,
// counted up to limit+1 only: one more than limit tells that it is passed.
func boundedCount(from, where string, limit int64) string {
	return `(SELECT count(*) FROM (SELECT 1 FROM ` + from + ` WHERE ` + where + ` LIMIT ` +
		strconv.FormatInt(limit+1, 10) + `) bounded)`
}

// pageTotal is the total pageQuery goes by, from the CTE list (columns n, the count,
// and capped, whether it passed its cap): a capped count leaves the end of the list
// unknown, so the page is read from the start, as a total no page can be nearer the
// end of (the largest bigint) makes it.
func pageTotal(list string) string {
	return `(SELECT CASE WHEN capped THEN 9223372036854775807 ELSE n END FROM ` + list + `)`
}

// boundedTotal is the total of a page and whether it is exact, from n, the matches a
// statement counted, and capped, whether n passed limit, the count's cap (countCap).
// Past it the total is a lower bound, at least the cap (so at least T) and at least the
// end of the page; but a page shorter than the limit ends the list, whose total is then
// the end of the page. offset and pageLimit are the page's, returned its number of rows,
// all from the statement that counted (one snapshot).
func boundedTotal(n int64, capped bool, limit, offset, pageLimit int64, returned int) (int64, bool) {
	if !capped {
		return n, true
	}
	to := offset + int64(returned)
	if int64(returned) < pageLimit {
		return to, true
	}
	return max(limit, to), false
}

// listTotal is the CTE list_total of a paged statement: n, the total (the SQL total),
// and capped (the SQL capped, an expression of n). The subquery of n is kept from being
// pulled up into the CTE (OFFSET 0): pulled up, each mention of n in capped is replaced
// by a copy of total, and a search's bounded count then runs once per mention.
func listTotal(total, capped string) string {
	return `list_total AS (SELECT n, ` + capped + ` AS capped FROM (SELECT ` + total + ` AS n OFFSET 0) c)`
}
