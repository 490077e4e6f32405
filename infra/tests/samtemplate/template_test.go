package samtemplate_test

import (
	"context"
	"maps"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/mediacatalog/service/infra/tests/routefacts"
	"github.com/mediacatalog/service/infra/tests/samtemplate"
	"github.com/mediacatalog/service/shared/app"
	"github.com/mediacatalog/service/shared/config"
	"github.com/mediacatalog/service/shared/httpapi"
	"github.com/mediacatalog/service/shared/openapi"
	"github.com/mediacatalog/service/shared/routegroups"
)

// codeRoutes builds every group as its function would and returns its API routes. It
// registers them all on one mux, as the local server does: ServeMux panics on a
// duplicate or conflicting pattern.
func codeRoutes(t *testing.T) map[string][]string {
	t.Helper()
	env := map[string]string{
		"DB_ENV":       "local",
		"DATABASE_URL": "postgres://nobody@127.0.0.1:1/none?sslmode=disable",
		"FILE_SERVICE": "true",
	}
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	a := app.New(cfg, nil)
	defer a.Close()
	out := map[string][]string{}
	var all [][]httpapi.Route
	for _, g := range routegroups.All() {
		rs, err := a.Routes(context.Background(), g)
		if err != nil {
			t.Fatalf("build %s: %v", g.Name, err)
		}
		all = append(all, rs)
		for _, r := range rs {
			out[g.Name] = append(out[g.Name], r.Pattern)
		}
		sort.Strings(out[g.Name])
	}
	httpapi.NewMux(all...)
	return out
}

// allCodeRoutes is every group's routes as its function builds them.
func allCodeRoutes(t *testing.T) []httpapi.Route {
	t.Helper()
	groups, err := routefacts.Groups()
	if err != nil {
		t.Fatal(err)
	}
	var out []httpapi.Route
	for _, g := range groups {
		out = append(out, g.Routes...)
	}
	return out
}

func openapiRoutes(t *testing.T) []string {
	t.Helper()
	var doc struct {
		Paths map[string]map[string]any `yaml:"paths"`
	}
	if err := yaml.Unmarshal(openapi.Document, &doc); err != nil {
		t.Fatal(err)
	}
	var out []string
	for path, ops := range doc.Paths {
		for method := range ops {
			switch method {
			case "get", "post", "put", "patch", "delete":
				out = append(out, strings.ToUpper(method)+" "+path)
			}
		}
	}
	sort.Strings(out)
	return out
}

func loadTemplate(t *testing.T) *samtemplate.Template {
	t.Helper()
	tpl, err := samtemplate.Load(repoFile("template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return tpl
}

// functionOf maps group name -> the template's function for it.
func functionOf(t *testing.T, tpl *samtemplate.Template) map[string]*samtemplate.Function {
	t.Helper()
	out := map[string]*samtemplate.Function{}
	for _, f := range tpl.Functions {
		out[f.Name] = f
	}
	return out
}

// TestRoutesAgree holds the code, template.yaml and the OpenAPI document to one set of
// routes, function by function.
func TestRoutesAgree(t *testing.T) {
	code := codeRoutes(t)
	fns := functionOf(t, loadTemplate(t))
	var all []string
	for _, g := range routegroups.All() {
		t.Run(g.Name, func(t *testing.T) {
			f, ok := fns[g.Name]
			if !ok {
				t.Fatalf("template.yaml has no function named %s", g.Name)
			}
			if !slices.Equal(code[g.Name], f.Routes) {
				t.Errorf("routes differ\ncode:     %v\ntemplate: %v", code[g.Name], f.Routes)
			}
		})
		all = append(all, code[g.Name]...)
	}
	sort.Strings(all)
	if doc := openapiRoutes(t); !slices.Equal(all, doc) {
		t.Errorf("code and OpenAPI routes differ\ncode:    %v\nopenapi: %v", all, doc)
	}
	if len(all) == 0 {
		t.Error("no routes")
	}
}

// TestBuildTargets: each function's makefile target builds its own package, the
// deploy hook's included.
func TestBuildTargets(t *testing.T) {
	mk, err := os.ReadFile(repoFile("Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	tpl := loadTemplate(t)
	if tpl.Hook == nil {
		t.Fatalf("no %s in the template", samtemplate.DeployHook)
	}
	fns := maps.Clone(tpl.Functions)
	fns[samtemplate.DeployHook] = tpl.Hook
	for id, f := range fns {
		t.Run(id, func(t *testing.T) {
			re := regexp.MustCompile(`(?m)^build-` + id + `:\n\t(.*)$`)
			m := re.FindStringSubmatch(string(mk))
			if m == nil {
				t.Fatalf("Makefile has no build-%s target", id)
			}
			for _, want := range []string{"./functions/" + f.Name, "$(ARTIFACTS_DIR)/bootstrap", "$(LAMBDA_FLAGS)", "$(LAMBDA_ENV)"} {
				if !strings.Contains(m[1], want) {
					t.Errorf("build-%s: %q lacks %q", id, m[1], want)
				}
			}
			if _, err := os.Stat(repoFile("functions/" + f.Name + "/main.go")); err != nil {
				t.Errorf("no functions/%s/main.go", f.Name)
			}
		})
	}
}

// isSecret: variables that only Secrets Manager holds (the OAuth client ids travel
// with their secrets).
func isSecret(name string) bool {
	return name == "JWT_SECRET" || name == "ORIGIN_SECRET" || name == "ORIGIN_SECRET_PREVIOUS" || strings.HasPrefix(name, "OAUTH_") && (strings.HasSuffix(name, "_CLIENT_SECRET") || strings.HasSuffix(name, "_CLIENT_ID"))
}

// TestLeastPrivilege: a function's role names only resources its own configuration
// points at, never a wildcard resource or action, but its own log group's streams; the
// only managed policies it has are the template's two of what Lambda does with every
// role (network interfaces in the VPC, X-Ray uploads), which grant just that.
// (infra/tests/iamcheck's TestIAM evaluates every call against the role.)
func TestLeastPrivilege(t *testing.T) {
	tpl := loadTemplate(t)
	for id, f := range tpl.Functions {
		t.Run(id, func(t *testing.T) {
			if f.Role != id+"Role" {
				t.Errorf("role %q: want a role of the template's of its own", f.Role)
			}
			if want := []string{"!Ref FunctionNetworkInterfacesPolicy", "!Ref FunctionTracesPolicy"}; !slices.Equal(f.ManagedPolicies, want) {
				t.Errorf("managed policies %v, want %v", f.ManagedPolicies, want)
			}
			uses := map[string]bool{}
			for _, n := range f.EnvNodes {
				for _, r := range samtemplate.Refs(n) {
					uses[r] = true
				}
			}
			ownLogs := `arn:${AWS::Partition}:logs:${AWS::Region}:${AWS::AccountId}:log-group:/aws/lambda/${AWS::StackName}-` + f.Name + `:log-stream:*`
			logs := 0
			for _, p := range f.Policies {
				if p.Kind == yaml.ScalarNode {
					t.Errorf("managed policy %q is broader than the function needs", p.Value)
					continue
				}
				for _, r := range samtemplate.Refs(p) {
					if strings.Contains(r, "::") {
						continue // pseudo parameters: AWS::NoValue, AWS::Partition...
					}
					if _, isParam := tplParams(tpl)[r]; isParam {
						continue
					}
					if !uses[r] {
						t.Errorf("policy names %s, which the function's configuration does not use", r)
					}
				}
				for _, st := range samtemplate.Get(p, "Statement").Content {
					if samtemplate.Scalar(samtemplate.Get(st, "Sid")) == "OwnLogs" {
						logs++
						if r := samtemplate.Get(st, "Resource"); r.Value != ownLogs || r.Tag != "!Sub" {
							t.Errorf("OwnLogs on %s, want its own log group's streams %s", samtemplate.Scalar(r), ownLogs)
						}
						if got := list(samtemplate.Get(st, "Action")); !slices.Equal(got, []string{"logs:CreateLogStream", "logs:PutLogEvents"}) {
							t.Errorf("OwnLogs allows %v", got)
						}
						continue
					}
					walk(st, func(key string, n *yaml.Node) {
						if (key == "Resource" || key == "Action") && containsStar(n) {
							t.Errorf("wildcard %s in policy: %s", key, samtemplate.Scalar(n))
						}
					})
				}
			}
			if logs != 1 {
				t.Errorf("%d OwnLogs statements, want one", logs)
			}
		})
	}
	for id, want := range map[string][]string{
		"FunctionNetworkInterfacesPolicy": {"ec2:CreateNetworkInterface", "ec2:DescribeNetworkInterfaces", "ec2:DescribeSubnets", "ec2:DeleteNetworkInterface", "ec2:AssignPrivateIpAddresses", "ec2:UnassignPrivateIpAddresses"},
		"FunctionTracesPolicy":            {"xray:PutTraceSegments", "xray:PutTelemetryRecords"},
	} {
		sts := samtemplate.Get(resource(t, tpl, id, "AWS::IAM::ManagedPolicy"), "PolicyDocument", "Statement")
		if sts == nil || len(sts.Content) != 1 || !slices.Equal(list(samtemplate.Get(sts.Content[0], "Action")), want) ||
			samtemplate.Scalar(samtemplate.Get(sts.Content[0], "Resource")) != "*" || samtemplate.Get(sts.Content[0], "Condition") != nil {
			t.Errorf("%s grants %s, want %v on *", id, samtemplate.Scalar(sts), want)
		}
	}
}

func tplParams(tpl *samtemplate.Template) map[string]bool {
	out := map[string]bool{}
	if p := samtemplate.Get(tpl.Root, "Parameters"); p != nil {
		for i := 0; i < len(p.Content); i += 2 {
			out[p.Content[i].Value] = true
		}
	}
	return out
}

func walk(n *yaml.Node, fn func(key string, v *yaml.Node)) {
	if n == nil {
		return
	}
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			fn(n.Content[i].Value, n.Content[i+1])
			walk(n.Content[i+1], fn)
		}
		return
	}
	for _, c := range n.Content {
		walk(c, fn)
	}
}

func containsStar(n *yaml.Node) bool {
	if n.Kind == yaml.ScalarNode {
		v := n.Value
		return v == "*" || strings.HasSuffix(v, ":*") || v == "s3:*" || strings.HasSuffix(v, "/*") && !strings.Contains(v, "/users/") && !strings.Contains(v, "/contributors/")
	}
	for _, c := range n.Content {
		if containsStar(c) {
			return true
		}
	}
	return false
}
