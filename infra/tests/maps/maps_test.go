// Package maps_test holds the maps of the repository to the ground: README's layout
// block to the folders of functions/, shared/ and infra/, the functions' count that
// README and docs/architecture.md give to the folders and the route groups, and the
// import rule docs/architecture.md states to what go list finds.
package maps_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mediacatalog/service/shared/routegroups"
)

// root is the repository's top folder.
func root(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// entry is one line of the layout block naming folders, with its description (the
// continuation lines included).
type entry struct {
	folders     []string // from the repository's top, without the trailing slash
	description string
}

// layout parses README's layout block: a line holds one or more folders ("name/")
// indented two spaces a level below the folder of the line above at the lesser
// indent, then its description; a line indented past every folder continues the
// description of the line above. Lines of files (template.yaml, events/<group>/*.json)
// are not folders of code and are skipped.
func layout(t *testing.T, readme string) []entry {
	t.Helper()
	start := strings.Index(readme, "\n## Layout\n")
	if start < 0 {
		t.Fatal("README has no section Layout")
	}
	rest := readme[start:]
	open := strings.Index(rest, "\n```\n")
	if open < 0 {
		t.Fatal("README's Layout has no code block")
	}
	rest = rest[open+5:]
	block := rest[:strings.Index(rest, "\n```")]
	var entries []entry
	parents := map[int]string{} // indent -> folder path of the latest line at it
	for _, line := range strings.Split(block, "\n") {
		indent := len(line) - len(strings.TrimLeft(line, " "))
		text := strings.TrimSpace(line)
		if text == "" {
			continue
		}
		if indent > 12 { // a description's continuation
			if len(entries) == 0 {
				t.Fatalf("a continuation before any folder: %q", line)
			}
			entries[len(entries)-1].description += " " + text
			continue
		}
		if indent%2 != 0 {
			t.Fatalf("an indent of %d spaces: %q", indent, line)
		}
		parent := ""
		if indent > 0 {
			p, ok := parents[indent-2]
			if !ok {
				t.Fatalf("no folder above %q", line)
			}
			parent = p
		}
		var e entry
		fields := strings.Fields(text)
		i := 0
		for ; i < len(fields) && strings.HasSuffix(fields[i], "/") && !strings.ContainsAny(fields[i], "<*"); i++ {
			e.folders = append(e.folders, filepath.ToSlash(filepath.Join(parent, strings.TrimSuffix(fields[i], "/"))))
		}
		if len(e.folders) == 0 {
			continue // a file's line
		}
		e.description = strings.Join(fields[i:], " ")
		entries = append(entries, e)
		// A line of several folders is no parent; a folder's own line is.
		if len(e.folders) == 1 {
			parents[indent] = e.folders[0]
			for k := range parents {
				if k > indent {
					delete(parents, k)
				}
			}
		}
	}
	return entries
}

// codeFolders are the folders under functions/, shared/ and infra/ that hold Go files
// (and every folder directly under functions/), from the repository's top.
func codeFolders(t *testing.T, top string) []string {
	t.Helper()
	var out []string
	for _, base := range []string{"functions", "shared", "infra"} {
		err := filepath.WalkDir(filepath.Join(top, base), func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() {
				return nil
			}
			name := d.Name()
			if name == "node_modules" || name == "testdata" || strings.HasPrefix(name, ".") {
				return filepath.SkipDir
			}
			rel, _ := filepath.Rel(top, path)
			rel = filepath.ToSlash(rel)
			if filepath.Dir(rel) == "functions" {
				out = append(out, rel)
				return nil
			}
			if gos, _ := filepath.Glob(filepath.Join(path, "*.go")); len(gos) > 0 && rel != base {
				out = append(out, rel)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestLayout: every folder README's layout lists exists, and every folder of code is
// listed on a line of its own or named in the line of its nearest listed parent.
func TestLayout(t *testing.T) {
	top := root(t)
	b, err := os.ReadFile(filepath.Join(top, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	entries := layout(t, string(b))
	listed := map[string]string{} // folder -> its line's description
	for _, e := range entries {
		for _, f := range e.folders {
			if _, dup := listed[f]; dup {
				t.Errorf("%s/ is listed twice", f)
			}
			listed[f] = e.description
			if st, err := os.Stat(filepath.Join(top, f)); err != nil || !st.IsDir() {
				t.Errorf("the layout lists %s/, which is no folder", f)
			}
		}
	}
	word := func(desc, name string) bool {
		return regexp.MustCompile(`(^|[^\w-])` + regexp.QuoteMeta(name) + `([^\w-]|$)`).MatchString(desc)
	}
	for _, f := range codeFolders(t, top) {
		if _, ok := listed[f]; ok {
			continue
		}
		parent := filepath.ToSlash(filepath.Dir(f))
		for ; parent != "."; parent = filepath.ToSlash(filepath.Dir(parent)) {
			if _, ok := listed[parent]; ok {
				break
			}
		}
		if parent == "." || !word(listed[parent], filepath.Base(f)) {
			t.Errorf("%s/ holds code and the layout neither lists it nor names %q in the line of %s/", f, filepath.Base(f), parent)
		}
	}
}

var numberWords = map[string]int{"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
	"seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}

// TestFunctionsCount: functions/ holds one main per route group and the deploy hook's;
// README and docs/architecture.md count them so ("N route groups", "N ... functions").
func TestFunctionsCount(t *testing.T) {
	top := root(t)
	var mains, groups []string
	dirs, err := os.ReadDir(filepath.Join(top, "functions"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(top, "functions", d.Name(), "main.go")); err == nil {
			mains = append(mains, d.Name())
			if d.Name() != "deploy-hook" {
				groups = append(groups, d.Name())
			}
		}
	}
	var want []string
	for _, g := range routegroups.All() {
		want = append(want, g.Name)
	}
	slices.Sort(want)
	if !slices.Equal(groups, want) {
		t.Errorf("functions/ has the route groups' mains %v, the route groups are %v", groups, want)
	}
	count := regexp.MustCompile(`(?i)\b(\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\s+(route\s+groups\b|(?:AWS\s+)?(?:Lambda\s+)?functions\b)`)
	for _, doc := range []string{"README.md", "docs/architecture.md"} {
		f, err := os.Open(filepath.Join(top, doc))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		var text strings.Builder
		for sc.Scan() {
			text.WriteString(sc.Text() + "\n")
		}
		f.Close()
		found := 0
		for _, m := range count.FindAllStringSubmatch(text.String(), -1) {
			n, err := strconv.Atoi(m[1])
			if err != nil {
				n = numberWords[strings.ToLower(m[1])]
			}
			want := len(mains)
			if strings.HasPrefix(strings.ToLower(m[2]), "route") {
				want = len(groups)
			}
			if n != want {
				t.Errorf("%s says %q; functions/ holds %d route groups' mains and %d in all", doc, strings.Join(strings.Fields(m[0]), " "), len(groups), len(mains))
			}
			found++
		}
		if found == 0 {
			t.Errorf("%s counts no functions", doc)
		}
	}
}

// TestImportRule: the code that ships (shared/, functions/) imports nothing of infra/,
// its tests only infra's test harness and stand-ins (infra/tests/, infra/local/), never
// the operators' tools or the benchmarks.
func TestImportRule(t *testing.T) {
	top := root(t)
	goList := func(args ...string) []string {
		t.Helper()
		cmd := exec.Command("go", append([]string{"list"}, args...)...)
		cmd.Dir = top
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list %v: %v", args, err)
		}
		return strings.Fields(string(out))
	}
	const infra = "github.com/mediacatalog/service/infra/"
	for _, p := range goList("-deps", "./shared/...", "./functions/...") {
		if strings.HasPrefix(p, infra) {
			t.Errorf("the code that ships depends on %s", p)
		}
	}
	for _, p := range goList("-f", `{{join .TestImports " "}} {{join .XTestImports " "}}`, "./shared/...", "./functions/...") {
		if strings.HasPrefix(p, infra) && !strings.HasPrefix(p, infra+"tests/") && !strings.HasPrefix(p, infra+"local/") {
			t.Errorf("a test of shared/ or functions/ imports %s, neither test harness nor stand-in", p)
		}
	}
}
