package admincontributors

import "github.com/mediacatalog/service/shared/slugs"

// slugMax bounds a contributor slug's base; the store adds a numeric suffix when it
// is taken.
const slugMax = 100

// contributorSlug is the slug of a contributor's name (slugs.Make), at most slugMax
// long; "" when the name has no letters or digits that transliterate (the store then
// uses "contributor").
func contributorSlug(first string, last *string) string {
	name := first
	if last != nil {
		name += " " + *last
	}
	return slugs.Make(name, slugMax)
}
