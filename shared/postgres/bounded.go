package postgres

import "strconv"

// DefaultMaxExact is T, the number of matches up to which the total of a paged list's
// search or filter is exact. Past it the total is a lower bound and the envelope says
// so (max_exact false): counting every match of a broad search costs the matches, not
// the page, and grows with the catalog. T is the largest number of matches for which
// the counted routes still meet their targets at a million series (docs/search.md).
const DefaultMaxExact int64 = 1000

// maxExact is the DB's T: DefaultMaxExact unless MaxExact sets another (tests set a
// small one to reach both of its sides with a few rows).
func (db *DB) maxExact() int64 {
	if db.MaxExact > 0 {
		return db.MaxExact
	}
	return DefaultMaxExact
}

// countsBounded reports whether a page of a list with a search or filter at offset
// counts at most T+1 matches (and reads its page from the start of the list): a page
// that starts before T. A page at or past T counts every match instead and is read
// from the nearer end (pageQuery): its total is exact, and reading forward to it
// would walk at least T matches anyway.
func (db *DB) countsBounded(offset int64) bool {
	return offset < db.maxExact()
}

// boundedCount is the SQL of the number of rows of from (a FROM list) matching where,
// counted up to maxExact+1 only: one more than T tells that T is passed.
func boundedCount(from, where string, maxExact int64) string {
	return `(SELECT count(*) FROM (SELECT 1 FROM ` + from + ` WHERE ` + where + ` LIMIT ` +
		strconv.FormatInt(maxExact+1, 10) + `) bounded)`
}

// boundedTotal is the total of a page and whether it is exact, from n, the matches a
// statement counted, capped when it counted more than T of them (so n is T+1, a
// bounded count). Past T the total is a lower bound, at least T and at least the end
// of the page; but a page shorter than the limit ends the list, whose total is then
// the end of the page. offset and limit are the page's, returned its number of rows,
// all from the statement that counted (one snapshot).
func boundedTotal(n int64, capped bool, maxExact, offset, limit int64, returned int) (int64, bool) {
	if !capped {
		return n, true
	}
	to := offset + int64(returned)
	if int64(returned) < limit {
		return to, true
	}
	return max(maxExact, to), false
}
