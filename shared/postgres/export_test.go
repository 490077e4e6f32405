package postgres

// LikePattern is likePattern, for the tests that compare a search with ILIKE's answer.
var LikePattern = likePattern

// ReverseOrder exposes reverseOrder to the tests.
var ReverseOrder = reverseOrder

// PageQuery exposes pageQuery to the tests of its plan.
var PageQuery = pageQuery
