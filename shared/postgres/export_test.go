package postgres

// LikePattern is likePattern, for the tests that compare a search with ILIKE's answer.
var LikePattern = likePattern

// ReverseOrder exposes reverseOrder to the tests.
var ReverseOrder = reverseOrder
