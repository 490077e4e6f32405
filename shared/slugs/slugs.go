// Package slugs makes the ASCII slugs of names (gosimple/slug) at most a given length,
// for the contributor slugs and the usernames of OAuth sign-ups. Only the functions
// that make them (admin-contributors, oauth) link it.
package slugs

import (
	"strings"

	"github.com/gosimple/slug"
)

// Make is the slug of name, at most max bytes long, cut at a dash when one falls in
// the second half (so that a word is not cut in two), without leading or trailing
// dashes; "" when nothing of name transliterates to letters or digits.
func Make(name string, max int) string {
	s := slug.Make(name)
	if len(s) > max {
		s = s[:max]
		if i := strings.LastIndexByte(s, '-'); i > max/2 {
			s = s[:i]
		}
	}
	return strings.Trim(s, "-_")
}
