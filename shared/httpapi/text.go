package httpapi

import (
	"bytes"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/mediacatalog/service/shared/apperr"
)

// ValidText reports whether s is text the service stores and passes on: valid UTF-8
// without NUL. PostgreSQL refuses both in text columns (SQLSTATE 22021), so text that
// is not valid is refused at the door with 400, before any store sees it.
func ValidText(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}

// invalidText is the 400 of text that is not valid UTF-8 or holds NUL.
func invalidText() *apperr.Error { return apperr.New(apperr.Invalid, apperr.MsgInvalidText) }

// checkText refuses requests whose path or query (names and values, as decoded) hold
// text that is not ValidText. It runs before the routes, so no handler reads such text,
// except an OwnText route's: one whose contract has it answer every request in a form
// of its own (the OAuth callbacks always redirect to the frontend), which checks the
// text it reads itself.
func checkText(next http.Handler, _ *Options) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !requestTextValid(r) && !routedToOwnText(next, r) {
			Error(w, r, invalidText())
			return
		}
		next.ServeHTTP(w, r)
	})
}

// ownText is the handler of an OwnText route (Route.Served).
type ownText struct{ http.Handler }

// routedToOwnText reports whether next serves r through an OwnText route: next is the
// route's handler itself (the local server routes before the middleware) or the mux of
// a function's routes (NewMux), asked which handler it would take. Asked only of a
// request already refused, so valid requests are routed once.
func routedToOwnText(next http.Handler, r *http.Request) bool {
	if mux, ok := next.(*http.ServeMux); ok {
		next, _ = mux.Handler(r)
	}
	_, ok := next.(ownText)
	return ok
}

func requestTextValid(r *http.Request) bool {
	if !ValidText(r.URL.Path) {
		return false
	}
	raw := r.URL.RawQuery
	if raw == "" {
		return true
	}
	if !strings.Contains(raw, "%") {
		// Without escapes each name and value is a piece of the raw query (a '+' read
		// as a space): the raw query is valid text exactly when they all are, and no
		// map of them need be built.
		return ValidText(raw)
	}
	for k, vs := range r.URL.Query() {
		if !ValidText(k) {
			return false
		}
		for _, v := range vs {
			if !ValidText(v) {
				return false
			}
		}
	}
	return true
}

// validJSONText reports whether a JSON document's strings are all ValidText: the bytes
// are valid UTF-8 (encoding/json would silently turn invalid bytes into U+FFFD) and no
// string spells NUL as \u0000 (a raw NUL is not valid JSON). A backslash occurs only
// inside strings, and each escape is skipped whole, so "\\u0000" (a backslash and
// "u0000") is text, not NUL.
func validJSONText(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for {
		i := bytes.IndexByte(b, '\\')
		if i < 0 || i+1 >= len(b) {
			return true
		}
		if b[i+1] == 'u' && i+6 <= len(b) && string(b[i+2:i+6]) == "0000" {
			return false
		}
		b = b[i+2:]
	}
}
