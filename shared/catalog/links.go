package catalog

import (
	"net/url"
	"strings"
	"unicode"
)

// The one rule of the links the API takes and serves (contributor links, publisher
// websites, the source of a description or an image): a frontend puts them in href
// attributes, where javascript:, data: and other schemes run or show content of the
// attacker's choosing. The requests that write them are checked with it (httpapi's
// text checks) and the stores pass what they read through it, so a row written before
// the check, by an import or by SQL is not served as a link either (migration 00019
// cleans the stored values once).

// WebLink reports whether s is served as a link: an absolute http or https URL with a
// host (url.Parse refuses control characters and spaces in the host).
func WebLink(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.Opaque == ""
}

// ServedLink is what the API serves for a stored link: s when it is a WebLink; an
// address without a scheme that starts with a host name ("twitter.com/oda",
// "//www.viz.com") with https:// before it, as its domain has always been read
// (WebsiteDomain); "" for anything else. Requests cannot store the second kind (they
// must send WebLinks), imports and SQL could (migration 00019 rewrites those stored).
func ServedLink(s string) string {
	if WebLink(s) {
		return s
	}
	if s == "" || hasScheme(s) || strings.ContainsFunc(s, unicode.IsSpace) {
		return ""
	}
	u := "https://" + strings.TrimPrefix(s, "//")
	if p, err := url.Parse(u); err != nil || !strings.Contains(strings.Trim(p.Hostname(), "."), ".") || !WebLink(u) {
		return ""
	}
	return u
}

// SourceText reports whether s may be served as a source: "", a WebLink, or text that
// a browser would not read as an address with a scheme ("Wikipedia", not
// "javascript:alert(1)", nor "Source: Wikipedia", which a browser reads as an address
// of the scheme "source").
func SourceText(s string) bool {
	return s == "" || WebLink(s) || !hasScheme(s)
}

// ServedSource is s when it is SourceText, "" otherwise.
func ServedSource(s string) string {
	if SourceText(s) {
		return s
	}
	return ""
}

// hasScheme reports whether a browser's URL parser (WHATWG URL) would find a scheme
// in s: after it strips leading and trailing C0 controls and spaces and removes tabs
// and line breaks anywhere, an ASCII letter, then letters, digits, "+", "-" or ".",
// then ":".
func hasScheme(s string) bool {
	s = strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
	s = strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(s)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		case i > 0 && c == ':':
			return true
		default:
			return false
		}
	}
	return false
}
