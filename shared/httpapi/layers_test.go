package httpapi

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestLayersDocumented: docs/architecture.md lists the middleware's layers by the
// names and in the order of layers.
func TestLayersDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "3. **The shared middleware**")
	if !ok {
		t.Fatal(`docs/architecture.md has no "3. **The shared middleware**" step`)
	}
	section, _, _ = strings.Cut(section, "\n4. ")
	var documented, code []string
	for _, m := range regexp.MustCompile("(?m)^   - `([a-z]+)`:").FindAllStringSubmatch(section, -1) {
		documented = append(documented, m[1])
	}
	for _, l := range layers {
		code = append(code, l.name)
	}
	if !slices.Equal(documented, code) {
		t.Errorf("docs/architecture.md lists the layers %q; middleware.go's layers are %q", documented, code)
	}
}
