package demo

// CheckReferences is checkReferences, for the tests.
var CheckReferences = checkReferences
