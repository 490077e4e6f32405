package postgres

import "github.com/mediacatalog/service/shared/namekey"

// ReverseOrder exposes reverseOrder to the tests.
var ReverseOrder = reverseOrder

// PageQuery exposes pageQuery to the tests of its plan.
var PageQuery = pageQuery

// NameKey and UnicodeNameKey expose the sign-up's name comparison (the ASCII fast path
// and the general one) to the test that holds them equal.
var (
	NameKey        = namekey.Key
	UnicodeNameKey = namekey.UnicodeKey
)

// PrefixEnd exposes prefixEnd to the test of the sign-up's key range.
var PrefixEnd = prefixEnd
