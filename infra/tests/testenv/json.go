package testenv

import (
	"encoding/json"
	"testing"
)

// DecodeInto unmarshals the JSON body into v, failing the test when it cannot.
func DecodeInto(t testing.TB, body []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
}

// Decode is the JSON body as a T, failing the test when it is not one.
func Decode[T any](t testing.TB, body []byte) T {
	t.Helper()
	var v T
	DecodeInto(t, body, &v)
	return v
}

// AssertJSON fails the test unless got and want are the same JSON document, whatever
// their formatting and the order of their keys.
func AssertJSON(t testing.TB, got []byte, want string) {
	t.Helper()
	var g, w any
	DecodeInto(t, got, &g)
	DecodeInto(t, []byte(want), &w)
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if string(gb) != string(wb) {
		t.Errorf("body %s\nwant %s", gb, wb)
	}
}
