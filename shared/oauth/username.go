package oauth

import "github.com/mediacatalog/service/shared/slugs"

// usernameMax bounds the generated part of a new OAuth user's username (the store
// adds a numeric suffix when it is taken).
const usernameMax = 32

// usernameBase is the slug of a provider's display name (slugs.Make), at most
// usernameMax long; "" when nothing of the name transliterates to letters or digits
// (the store then uses "<provider>-user").
func usernameBase(displayName string) string { return slugs.Make(displayName, usernameMax) }
