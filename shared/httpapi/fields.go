package httpapi

import (
	"fmt"
	"net/http"
	"strings"
	"unicode"

	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/catalog"
)

// TextKind is what a text field may hold beside its length bound.
type TextKind int

const (
	// Name is one line that shows as what it is: a username, a role, permission or
	// contributor name, a label, a language, a search. No control characters (Cc,
	// tabs and line breaks too), no format characters (Cf: bidirectional overrides,
	// embeddings and isolates, zero-width spaces and joiners, soft hyphens...), no
	// private-use characters (Co), no line or paragraph separators (Zl, Zp), no
	// variation selectors and no other default-ignorable code points (Hangul fillers,
	// the combining grapheme joiner): each can make a name display as another one
	// ("adm\u202eni" shows as "adminn" reversed) or as nothing.
	Name TextKind = iota
	// Prose is a text of several lines: tabs and line breaks are allowed, and so are
	// the format characters scripts and emoji need (zero-width joiners, marks of
	// direction), but not the other control characters, nor the bidirectional
	// embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069) that reorder
	// what follows them.
	Prose
	// Link is a Name that is a catalog.WebLink: an absolute http or https URL.
	Link
	// Source is a Name that is a catalog.SourceText: a web link or text that no
	// browser reads as an address of another scheme.
	Source
)

// Text is the one check of a text field of a request: at most max characters
// (Unicode code points) and only what kind allows. A refusal is 400 with a message
// that names the field; field is the name the API gives it (a body field, a query
// parameter, "added_aliases.title" for a field of an array's elements). Missing
// required fields stay the OpenAPI document's "Required parameters missing" (Required, Validate).
func Text(field, s string, max int, kind TextKind) error {
	// Counting stops past max, so an oversized value costs max steps, not its length.
	n := 0
	for range s {
		if n++; n > max {
			return apperr.New(apperr.Invalid, fmt.Sprintf("Invalid %s: at most %d characters", field, max))
		}
	}
	for _, r := range s {
		if !allowed(r, kind) {
			return apperr.New(apperr.Invalid, fmt.Sprintf(
				"Invalid %s: control characters and invisible formatting characters (such as U+%04X) are not allowed", field, r))
		}
	}
	switch {
	case kind == Link && !catalog.WebLink(s):
		return apperr.New(apperr.Invalid, fmt.Sprintf("Invalid %s: not an http or https address", field))
	case kind == Source && !catalog.SourceText(s):
		return apperr.New(apperr.Invalid, fmt.Sprintf("Invalid %s: an address other than http or https", field))
	}
	return nil
}

// OptionalText is Text of a field that may be absent (nil).
func OptionalText(field string, s *string, max int, kind TextKind) error {
	if s == nil {
		return nil
	}
	return Text(field, *s, max, kind)
}

// QueryText returns the trimmed query parameter name, checked by Text as a Name of at
// most max characters ("" when absent).
func QueryText(r *http.Request, name string, max int) (string, error) {
	v := strings.TrimSpace(r.URL.Query().Get(name))
	if err := Text(name, v, max, Name); err != nil {
		return "", err
	}
	return v, nil
}

// Search returns the trimmed search query parameter ("" for none), at most
// catalog.MaxSearch characters of a Name.
func Search(r *http.Request) (string, error) {
	return QueryText(r, "search", catalog.MaxSearch)
}

// allowed reports whether r may occur in a text of the kind.
func allowed(r rune, kind TextKind) bool {
	if kind == Prose {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
			return true
		case unicode.Is(unicode.Cc, r), unicode.Is(unicode.Co, r):
			return false
		case '\u202a' <= r && r <= '\u202e', '\u2066' <= r && r <= '\u2069':
			return false
		}
		return true
	}
	return !unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Zl, unicode.Zp,
		unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point)
}
