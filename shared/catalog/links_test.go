package catalog_test

import (
	"testing"

	"github.com/mediacatalog/service/shared/catalog"
)

func TestLinkRule(t *testing.T) {
	tests := []struct {
		s            string
		link, source bool
	}{
		{"https://en.wikipedia.org/wiki/Eiichiro_Oda", true, true},
		{"http://x.example", true, true},
		{"HTTPS://X.EXAMPLE/a?b#c", true, true},
		{"https://user@x.example:8443/a b", true, true},
		{"", false, true},
		{"Wikipedia", false, true},
		{"Wikipedia (2024), page 3", false, true},
		{"Oda, E. 1997. One Piece", false, true},
		{"javascript:alert(document.cookie)", false, false},
		{"JavaScript:alert(1)", false, false},
		{" javascript:alert(1)", false, false},
		{"\x01javascript:alert(1)", false, false},
		{"java\tscript:alert(1)", false, false},
		{"java\nscript:alert(1)", false, false},
		{"jav\rascript:alert(1)", false, false},
		{"vbscript:msgbox(1)", false, false},
		{"data:text/html,<script>alert(1)</script>", false, false},
		{"ftp://x.example/file", false, false},
		{"Source: Wikipedia", false, false},
		{"https:evil.example", false, false},
		{"https:///path", false, false},
		{"https://exa mple.com", false, false},
		{"https://x.example/\x7f", false, false},
		{"//evil.example/x", false, true}, // no scheme: a browser resolves it against the page, which is http(s)
		{"x.example/a", false, true},
		{"1password:x", false, true}, // a scheme starts with a letter
		{"Wikipedia/page", false, true},
		{"not a link.example", false, true},
		{"localhost/x", false, true},
	}
	// What ServedLink makes of a stored address without a scheme that starts with a
	// host name; every other value that is not a WebLink is served as "".
	normalized := map[string]string{
		"//evil.example/x": "https://evil.example/x",
		"x.example/a":      "https://x.example/a",
	}
	for _, tc := range tests {
		if got := catalog.WebLink(tc.s); got != tc.link {
			t.Errorf("WebLink(%q) = %v, want %v", tc.s, got, tc.link)
		}
		if got := catalog.SourceText(tc.s); got != tc.source {
			t.Errorf("SourceText(%q) = %v, want %v", tc.s, got, tc.source)
		}
		wantLink, wantSource := normalized[tc.s], ""
		if tc.link {
			wantLink = tc.s
		}
		if tc.source {
			wantSource = tc.s
		}
		if got := catalog.ServedLink(tc.s); got != wantLink {
			t.Errorf("ServedLink(%q) = %q, want %q", tc.s, got, wantLink)
		}
		if got := catalog.ServedSource(tc.s); got != wantSource {
			t.Errorf("ServedSource(%q) = %q, want %q", tc.s, got, wantSource)
		}
	}
}
