package postgres

import (
	"testing"

	"github.com/gosimple/slug"
)

// slugify makes the slugs gosimple/slug's Make makes, which the service used before
// and whose slugs are stored.
func TestSlugifyMatchesGosimpleSlug(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"Jane Doe", "jane-doe"},
		{"  Zoë Åberg  ", "zoe-aberg"},
		{"jane.doe", "jane-doe"},
		{"a_b", "a_b"},
		{"_a__b_", "a__b"},
		{"🙂", ""},
		{"", ""},
		{"★", ""},
		{"Naoki Urasawa", "naoki-urasawa"},
		{"Same  Slug!", "same-slug"},
		{"Same-Slug", "same-slug"},
		{"--Same---Slug--", "same-slug"},
		{"Tom & Jerry", "tom-and-jerry"},
		{"me@example.com", "meatexample-com"},
		{"O'Brien \"Bob\" ’Rob’", "obrien-bob-rob"},
		{"pre—post–dash‒bar―x", "pre-post-dash-bar-x"},
		{"尾田栄一郎", "wei-tian-rong-lang"},
		{"Москва", "moskva"},
		{"Straße Ærø Łódź", "strasse-aero-lodz"},
		{"ÉCOLE 42", "ecole-42"},
		{"Ranma ½", "ranma-1-2"},
		{"tab\tand\nnewline", "tab-and-newline"},
		{"Maximilian Alexander Montgomery Worthington", "maximilian-alexander-montgomery-worthington"},
		{"İstanbul ǅemal", "istanbul-dzemal"},
	} {
		got := slugify(tt.in)
		if got != tt.want {
			t.Errorf("slugify(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if old := slug.Make(tt.in); got != old {
			t.Errorf("slugify(%q) = %q, gosimple/slug makes %q", tt.in, got, old)
		}
	}
}
