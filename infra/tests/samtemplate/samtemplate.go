// Package samtemplate reads template.yaml, CloudFormation short tags (!Ref, !Sub,
// !GetAtt, !If...) included, into the facts the tests hold true: each function's
// routes, build target, environment and policies.
package samtemplate

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Function is one AWS::Serverless::Function of the template.
type Function struct {
	LogicalID   string
	Name        string // FunctionName's suffix after the stack name, e.g. "admin-users"
	BuildMethod string
	Handler     string
	Runtime     string
	Arch        []string
	Routes      []string          // each event's method and path, as a route table's pattern
	Env         map[string]string // variable -> its value as written (short tags kept as text)
	EnvNodes    map[string]*yaml.Node
	Props       *yaml.Node // the Properties mapping
	// Policies are the function's policies: with a Role of the template (!GetAtt
	// <Role>.Arn), each PolicyDocument of the role's Policies; otherwise SAM's Policies
	// entries (a managed policy's name, or a document with its Statement).
	Policies []*yaml.Node
	// Role is the logical id of the function's role when the template makes it, and
	// ManagedPolicies that role's ManagedPolicyArns as written ("!Ref X").
	Role            string
	ManagedPolicies []string
	Memory          int
	Timeout         int
}

// DeployHook is the logical id of CodeDeploy's PreTraffic hook (shared/deployhook): a
// function of the template that is no route group, so it is Template.Hook, not one of
// Template.Functions.
const DeployHook = "DeployHookFunction"

// Template is the parsed template.
type Template struct {
	Root      *yaml.Node
	Resources map[string]*yaml.Node
	Functions map[string]*Function // the route groups' functions, by logical id
	Hook      *Function            // DeployHook
	GlobalEnv map[string]string
	// GlobalEnvNodes are Globals' variables as nodes.
	GlobalEnvNodes map[string]*yaml.Node
}

// Load parses the template at path.
func Load(path string) (*Template, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(b)
}

// Parse parses template bytes.
func Parse(b []byte) (*Template, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("parse template: %w", err)
	}
	if len(doc.Content) == 0 {
		return nil, fmt.Errorf("parse template: empty document")
	}
	root := doc.Content[0]
	if err := noDuplicateKeys(root); err != nil {
		return nil, fmt.Errorf("parse template: %w", err)
	}
	t := &Template{Root: root, Resources: map[string]*yaml.Node{}, Functions: map[string]*Function{}, GlobalEnv: map[string]string{}, GlobalEnvNodes: map[string]*yaml.Node{}}
	res := Get(root, "Resources")
	if res == nil {
		return nil, fmt.Errorf("parse template: no Resources")
	}
	for i := 0; i+1 < len(res.Content); i += 2 {
		t.Resources[res.Content[i].Value] = res.Content[i+1]
	}
	defaults := &Function{}
	if g := Get(root, "Globals", "Function"); g != nil {
		t.GlobalEnv = scalarMap(Get(g, "Environment", "Variables"))
		t.GlobalEnvNodes = nodeMap(Get(g, "Environment", "Variables"))
		defaults.Handler = Scalar(Get(g, "Handler"))
		defaults.Runtime = Scalar(Get(g, "Runtime"))
		defaults.Arch = scalars(Get(g, "Architectures"))
	}
	for id, r := range t.Resources {
		if Scalar(Get(r, "Type")) != "AWS::Serverless::Function" {
			continue
		}
		p := Get(r, "Properties")
		f := &Function{
			LogicalID:   id,
			BuildMethod: Scalar(Get(r, "Metadata", "BuildMethod")),
			Handler:     or(Scalar(Get(p, "Handler")), defaults.Handler),
			Runtime:     or(Scalar(Get(p, "Runtime")), defaults.Runtime),
			Arch:        scalars(Get(p, "Architectures")),
			Env:         map[string]string{},
			EnvNodes:    map[string]*yaml.Node{},
			Props:       p,
		}
		if len(f.Arch) == 0 {
			f.Arch = defaults.Arch
		}
		name := Scalar(Get(p, "FunctionName"))
		if i := strings.LastIndex(name, "}-"); i >= 0 {
			name = name[i+2:]
		}
		f.Name = name
		fmt.Sscan(Scalar(Get(p, "MemorySize")), &f.Memory)
		fmt.Sscan(Scalar(Get(p, "Timeout")), &f.Timeout)
		for k, v := range t.GlobalEnv {
			f.Env[k] = v
		}
		for k, v := range scalarMap(Get(p, "Environment", "Variables")) {
			f.Env[k] = v
		}
		for k, v := range t.GlobalEnvNodes {
			f.EnvNodes[k] = v
		}
		for k, v := range nodeMap(Get(p, "Environment", "Variables")) {
			f.EnvNodes[k] = v
		}
		if pol := Get(p, "Policies"); pol != nil {
			f.Policies = pol.Content
		}
		if role := Get(p, "Role"); role != nil && role.Tag == "!GetAtt" && strings.HasSuffix(role.Value, ".Arn") {
			id := strings.TrimSuffix(role.Value, ".Arn")
			if r := t.Resources[id]; Scalar(Get(r, "Type")) == "AWS::IAM::Role" {
				f.Role = id
				f.ManagedPolicies = scalars(Get(r, "Properties", "ManagedPolicyArns"))
				f.Policies = nil
				if pols := Get(r, "Properties", "Policies"); pols != nil {
					for _, pol := range pols.Content {
						if doc := Get(pol, "PolicyDocument"); doc != nil {
							f.Policies = append(f.Policies, doc)
						}
					}
				}
			}
		}
		if ev := Get(p, "Events"); ev != nil {
			for i := 1; i < len(ev.Content); i += 2 {
				e := ev.Content[i]
				if Scalar(Get(e, "Type")) != "HttpApi" {
					continue
				}
				f.Routes = append(f.Routes, Scalar(Get(e, "Properties", "Method"))+" "+Scalar(Get(e, "Properties", "Path")))
			}
		}
		sort.Strings(f.Routes)
		if id == DeployHook {
			t.Hook = f
			continue
		}
		t.Functions[id] = f
	}
	return t, nil
}

// noDuplicateKeys reads YAML as CloudFormation and cfn-lint do: a key twice in one
// mapping is an error (yaml.v3 keeps both in a Node and would let the last win).
func noDuplicateKeys(n *yaml.Node) error {
	if n.Kind == yaml.MappingNode {
		seen := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if line, dup := seen[k.Value]; dup {
				return fmt.Errorf("line %d: key %q already defined at line %d", k.Line, k.Value, line)
			}
			seen[k.Value] = k.Line
		}
	}
	for _, c := range n.Content {
		if err := noDuplicateKeys(c); err != nil {
			return err
		}
	}
	return nil
}

// Get walks mapping keys from n; nil when a key is absent.
func Get(n *yaml.Node, keys ...string) *yaml.Node {
	for _, k := range keys {
		if n == nil || n.Kind != yaml.MappingNode {
			return nil
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == k {
				next = n.Content[i+1]
				break
			}
		}
		n = next
	}
	return n
}

// Scalar is a node's text: a scalar's value, with its short tag kept ("!Ref X").
func Scalar(n *yaml.Node) string {
	if n == nil {
		return ""
	}
	if n.Kind == yaml.ScalarNode {
		if strings.HasPrefix(n.Tag, "!") && !strings.HasPrefix(n.Tag, "!!") {
			return n.Tag + " " + n.Value
		}
		return n.Value
	}
	out, _ := yaml.Marshal(n)
	return strings.TrimSpace(string(out))
}

func scalars(n *yaml.Node) []string {
	if n == nil {
		return nil
	}
	var out []string
	for _, c := range n.Content {
		out = append(out, Scalar(c))
	}
	return out
}

func scalarMap(n *yaml.Node) map[string]string {
	m := map[string]string{}
	if n == nil {
		return m
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		m[n.Content[i].Value] = Scalar(n.Content[i+1])
	}
	return m
}

func nodeMap(n *yaml.Node) map[string]*yaml.Node {
	m := map[string]*yaml.Node{}
	if n == nil {
		return m
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		m[n.Content[i].Value] = n.Content[i+1]
	}
	return m
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Refs returns every resource name a node refers to: !Ref X, !GetAtt X.Attr, and
// ${X} / ${X.Attr} inside !Sub strings.
func Refs(n *yaml.Node) []string {
	var out []string
	var walk func(*yaml.Node)
	walk = func(n *yaml.Node) {
		if n == nil {
			return
		}
		switch n.Tag {
		case "!Ref":
			out = append(out, n.Value)
		case "!GetAtt":
			if n.Kind == yaml.ScalarNode {
				out = append(out, strings.SplitN(n.Value, ".", 2)[0])
			}
		case "!Sub":
			s := n.Value
			for {
				i := strings.Index(s, "${")
				if i < 0 {
					break
				}
				j := strings.Index(s[i:], "}")
				if j < 0 {
					break
				}
				name := strings.SplitN(s[i+2:i+j], ".", 2)[0]
				if !strings.Contains(name, "::") {
					out = append(out, name)
				}
				s = s[i+j+1:]
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(n)
	return out
}
