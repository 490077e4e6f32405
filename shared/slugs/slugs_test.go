package slugs_test

import (
	"testing"

	"github.com/mediacatalog/service/shared/slugs"
)

func TestMake(t *testing.T) {
	tests := []struct {
		name string
		max  int
		want string
	}{
		{"Eiichiro Oda", 32, "eiichiro-oda"},
		{"Émile Zola", 32, "emile-zola"},
		{"a very long name that goes past the bound", 20, "a-very-long-name"},
		{"abcdefghijklmnopqrstuvwxyz", 10, "abcdefghij"},
		{"進撃", 32, "jin-ji"},
		{"!!!", 32, ""},
		{"-a-", 32, "a"},
	}
	for _, tt := range tests {
		if got := slugs.Make(tt.name, tt.max); got != tt.want {
			t.Errorf("Make(%q, %d) = %q, want %q", tt.name, tt.max, got, tt.want)
		}
	}
}
