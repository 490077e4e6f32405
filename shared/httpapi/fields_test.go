package httpapi

import (
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/mediacatalog/service/shared/apperr"
)

func TestText(t *testing.T) {
	const (
		tooLong   = "Invalid f: at most 5 characters"
		invisible = "Invalid f: control characters and invisible formatting characters (such as U+%s) are not allowed"
	)
	inv := func(code string) string { return strings.Replace(invisible, "%s", code, 1) }
	tests := []struct {
		name string
		s    string
		kind TextKind
		msg  string // "" accepted
	}{
		{"empty", "", Name, ""},
		{"five letters", "abcde", Name, ""},
		{"five letters of 4 bytes", "😀😀😀😀😀", Name, ""},
		{"five letters of other scripts", "Łéλ李ア", Name, ""},
		{"a space inside", "a b", Name, ""},
		{"six letters", "abcdef", Name, tooLong},
		{"six letters of 4 bytes", "😀😀😀😀😀😀", Name, tooLong},
		{"a long text is refused by its length first", strings.Repeat("\u202e", 1000), Name, tooLong},
		{"right-to-left override", "ad\u202emi", Name, inv("202E")},
		{"left-to-right override", "a\u202d", Name, inv("202D")},
		{"right-to-left isolate", "a\u2067", Name, inv("2067")},
		{"pop directional isolate", "a\u2069", Name, inv("2069")},
		{"right-to-left mark", "a\u200f", Name, inv("200F")},
		{"arabic letter mark", "a\u061c", Name, inv("061C")},
		{"zero-width space", "a\u200b", Name, inv("200B")},
		{"zero-width non-joiner", "a\u200c", Name, inv("200C")},
		{"word joiner", "a\u2060", Name, inv("2060")},
		{"byte order mark", "\ufeffa", Name, inv("FEFF")},
		{"soft hyphen", "a\u00ad", Name, inv("00AD")},
		{"tab", "a\tb", Name, inv("0009")},
		{"line feed", "a\nb", Name, inv("000A")},
		{"delete", "a\x7f", Name, inv("007F")},
		{"C1 control", "a\u0085", Name, inv("0085")},
		{"line separator", "a\u2028", Name, inv("2028")},
		{"paragraph separator", "a\u2029", Name, inv("2029")},
		{"private use", "a\ue000", Name, inv("E000")},
		{"variation selector", "a\ufe0f", Name, inv("FE0F")},
		{"Hangul filler", "\u3164", Name, inv("3164")},
		{"Hangul choseong filler", "\u115f", Name, inv("115F")},
		{"combining grapheme joiner", "a\u034f", Name, inv("034F")},
		{"tag character", "a\U000e0041", Name, inv("E0041")},
		{"prose: line breaks and a tab", "a\r\nb\t", Prose, ""},
		{"prose: zero-width joiner of an emoji", "👩\u200d💻", Prose, ""},
		{"prose: marks of direction", "a\u200fb", Prose, ""},
		{"prose: variation selector", "❤\ufe0f", Prose, ""},
		{"prose: right-to-left override", "a\u202eb", Prose, inv("202E")},
		{"prose: left-to-right embedding", "a\u202ab", Prose, inv("202A")},
		{"prose: first strong isolate", "a\u2068b", Prose, inv("2068")},
		{"prose: escape", "a\x1bb", Prose, inv("001B")},
		{"prose: private use", "a\ue000", Prose, inv("E000")},
		{"link", "http://x", Link, ""},
		{"link: javascript", "javascript:1", Link, "Invalid f: not an http or https address"},
		{"link: no scheme", "x.example", Link, "Invalid f: not an http or https address"},
		{"source: text", "Wiki", Source, ""},
		{"source: link", "http://x", Source, ""},
		{"source: data", "data:x", Source, "Invalid f: an address other than http or https"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Text("f", tc.s, 5, tc.kind)
			if tc.kind == Link || tc.kind == Source {
				err = Text("f", tc.s, 100, tc.kind)
			}
			if tc.msg == "" {
				if err != nil {
					t.Fatalf("Text(%q) = %v, want nil", tc.s, err)
				}
				return
			}
			e, ok := apperr.As(err)
			if !ok || e.Code != apperr.Invalid || e.Message != tc.msg {
				t.Fatalf("Text(%q) = %v, want 400 %q", tc.s, err, tc.msg)
			}
		})
	}
}

func TestQueryText(t *testing.T) {
	tests := []struct {
		query, want string
		ok          bool
	}{
		{"", "", true},
		{"search=%20ab%20", "ab", true},
		{"search=" + strings.Repeat("a", 100), strings.Repeat("a", 100), true},
		{"search=" + strings.Repeat("a", 101), "", false},
		{"search=" + url.QueryEscape("a\u202eb"), "", false},
		{"search=a%09b", "", false},
	}
	for _, tc := range tests {
		r := httptest.NewRequest("GET", "/x?"+tc.query, nil)
		got, err := Search(r)
		if got != tc.want || (err == nil) != tc.ok {
			t.Errorf("Search(%q) = %q, %v; want %q, ok %v", tc.query, got, err, tc.want, tc.ok)
		}
	}
}
