package postgres

import "github.com/mediacatalog/service/shared/namekey"

// ReverseOrder exposes reverseOrder to the tests.
var ReverseOrder = reverseOrder

// PageQuery exposes pageQuery to the tests of its plan: the query of a page of the
// list SELECT Cols FROM From WHERE Where ORDER BY Order of Total rows, with Limit and
// Offset its named arguments, read from the nearer end unless Forward.
type PageQuery struct {
	Cols, From, Where, Order, Total, Limit, Offset string
	Forward                                        bool
}

// SQL is the query's text.
func (q PageQuery) SQL() string {
	return pageQuery{cols: q.Cols, from: q.From, where: q.Where, order: q.Order, total: q.Total,
		limit: q.Limit, offset: q.Offset, forward: q.Forward}.sql()
}

// NameKey and UnicodeNameKey expose the sign-up's name comparison (the ASCII fast path
// and the general one) to the test that holds them equal.
var (
	NameKey        = namekey.Key
	UnicodeNameKey = namekey.UnicodeKey
)

// PrefixEnd exposes prefixEnd to the test of the sign-up's key range.
var PrefixEnd = prefixEnd

// NextSlugSuffix exposes nextSlugSuffix to the test of its plan ($4 the taken slug).
const NextSlugSuffix = nextSlugSuffix
