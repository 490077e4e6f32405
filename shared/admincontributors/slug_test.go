package admincontributors

import (
	"strings"
	"testing"
)

func TestContributorSlug(t *testing.T) {
	str := func(s string) *string { return &s }
	long := strings.Repeat("word ", 30)
	for _, tt := range []struct {
		first string
		last  *string
		want  string
	}{
		{"Hirohiko", str("Araki"), "hirohiko-araki"},
		{"ONE", nil, "one"},
		{"Naoki", str("Urasawa!"), "naoki-urasawa"},
		{"Éric", str("Ölçer"), "eric-olcer"},
		{"Same--Slug", nil, "same-slug"},
		{"★", nil, ""},
		{long, nil, strings.TrimSuffix(strings.Repeat("word-", 20), "-")},
	} {
		if got := contributorSlug(tt.first, tt.last); got != tt.want {
			t.Errorf("contributorSlug(%q, %v) = %q, want %q", tt.first, tt.last, got, tt.want)
		}
	}
}
