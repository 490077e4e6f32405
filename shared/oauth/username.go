package oauth

import (
	"strings"

	"github.com/gosimple/slug"
)

// usernameMax bounds the generated part of a new OAuth user's username (the store
// adds a numeric suffix when it is taken).
const usernameMax = 32

// usernameBase is the slug of a provider's display name (gosimple/slug), at most
// usernameMax long, cut at a dash when it can be; "" when nothing of the name
// transliterates to letters or digits (the store then uses "<provider>-user").
func usernameBase(displayName string) string {
	s := slug.Make(displayName)
	if len(s) > usernameMax {
		s = s[:usernameMax]
		if i := strings.LastIndexByte(s, '-'); i > usernameMax/2 {
			s = s[:i]
		}
	}
	return strings.Trim(s, "-_")
}
