package admincontributors

import (
	"strings"

	"github.com/gosimple/slug"
)

// slugMax bounds a contributor slug's base; the store adds a numeric suffix when it
// is taken.
const slugMax = 100

// contributorSlug is the slug of a contributor's name (gosimple/slug), at most slugMax
// long, cut at a dash when it can be; "" when the name has no letters or digits that
// transliterate (the store then uses "contributor").
func contributorSlug(first string, last *string) string {
	name := first
	if last != nil {
		name += " " + *last
	}
	s := slug.Make(name)
	if len(s) > slugMax {
		s = s[:slugMax]
		if i := strings.LastIndexByte(s, '-'); i > slugMax/2 {
			s = s[:i]
		}
	}
	return strings.Trim(s, "-_")
}
