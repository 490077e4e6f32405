// Package httpapitest holds the checks the route groups' fuzz tests share: each group
// fuzzes the JSON decoding of its own request bodies with it.
package httpapitest

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/httpapi"
)

// FuzzDecode fuzzes httpapi's decoding of a T body from the seeds: whatever the bytes,
// decoding never panics, refuses only with a 400 (apperr.Invalid), and what it accepts
// holds only valid text (valid UTF-8 without NUL), nested strings included.
func FuzzDecode[T any](f *testing.F, seeds ...string) {
	for _, s := range append(seeds, "", "null", "{}", "[]", `{"a":"\u0000"}`, "{\"a\":\"\xff\xfe\"}", `{} {}`, `"x"`) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		v, err := httpapi.DecodeBytes[T](body)
		if err != nil {
			if c := apperr.CodeOf(err); c != apperr.Invalid {
				t.Fatalf("body %q: error %v has code %s, want %s (400)", body, err, c, apperr.Invalid)
			}
			return
		}
		out, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("body %q: accepted value does not encode: %v", body, err)
		}
		if !utf8.Valid(out) || bytes.Contains(out, []byte(`\u0000`)) {
			t.Fatalf("body %q accepted with invalid text: %s", body, out)
		}
	})
}
