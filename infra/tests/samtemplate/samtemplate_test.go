package samtemplate_test

import (
	"path/filepath"
	"runtime"
	"testing"

	"github.com/mediacatalog/service/infra/tests/routefacts"
	"github.com/mediacatalog/service/infra/tests/samtemplate"
)

func repoFile(name string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", name)
}

func TestParseTemplate(t *testing.T) {
	tpl, err := samtemplate.Load(repoFile("template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if got := len(tpl.Functions); got != 8 {
		t.Fatalf("functions = %d, want 8", got)
	}
	routes := 0
	for id, f := range tpl.Functions {
		t.Run(id, func(t *testing.T) {
			if f.Runtime != "provided.al2023" || f.Handler != "bootstrap" || len(f.Arch) != 1 || f.Arch[0] != "arm64" {
				t.Errorf("runtime %q handler %q arch %v", f.Runtime, f.Handler, f.Arch)
			}
			if f.BuildMethod != "makefile" {
				t.Errorf("BuildMethod = %q", f.BuildMethod)
			}
			if len(f.Routes) == 0 {
				t.Error("no routes")
			}
		})
		routes += len(f.Routes)
	}
	want, err := routefacts.RouteCount()
	if err != nil {
		t.Fatal(err)
	}
	if routes != want {
		t.Errorf("routes = %d, want the route tables' %d", routes, want)
	}
}
