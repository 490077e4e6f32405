package samtemplate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
)

// CFN is a CloudFormation template as the SAM transform leaves it (JSON, long-form
// intrinsics): what CloudFormation creates, and what the tests look at.
type CFN struct {
	Parameters map[string]map[string]any
	Conditions map[string]any
	Resources  map[string]Resource
	Outputs    map[string]any
}

// Resource is one resource of a CFN.
type Resource struct {
	Type                string
	Condition           string
	Properties          map[string]any
	DependsOn           any
	UpdatePolicy        map[string]any
	CreationPolicy      map[string]any
	DeletionPolicy      string
	UpdateReplacePolicy string
	Metadata            map[string]any
}

// Dir is this package's directory (transform.py and the parameter sets live there).
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// InstallHint is what make lint and the tests print when the tools are missing.
const InstallHint = "install the validators: pip install cfn-lint==1.51.0 aws-sam-translator==1.110.0 (Python 3.11)"

// Transform runs the SAM transform (transform.py: aws-sam-translator, the code of
// CloudFormation's AWS::Serverless-2016-10-31) on the template with the parameter set
// in paramsPath, and returns the result and the path of its JSON file in dir.
func Transform(templatePath, paramsPath, dir string) (*CFN, string, error) {
	out := filepath.Join(dir, strings.TrimSuffix(filepath.Base(paramsPath), ".json")+".transformed.json")
	cfns, err := transform(dir, Job{Template: templatePath, Params: paramsPath, Out: out})
	if err != nil {
		return nil, "", err
	}
	return cfns[0], out, nil
}

// Job is one template and parameter set to transform (TransformAll).
type Job struct {
	Template, Params string
	Out              string // the result's path; TransformAll names it in its dir when empty
}

// TransformAll is Transform of each job, in one Python process (its imports are most of
// a transform's time), the results in jobs' order.
func TransformAll(dir string, jobs ...Job) ([]*CFN, error) {
	for i := range jobs {
		if jobs[i].Out == "" {
			jobs[i].Out = filepath.Join(dir, fmt.Sprintf("%d-%s.transformed.json", i, strings.TrimSuffix(filepath.Base(jobs[i].Params), ".json")))
		}
	}
	return transform(dir, jobs...)
}

func transform(dir string, jobs ...Job) ([]*CFN, error) {
	args := []string{filepath.Join(Dir(), "transform.py")}
	for _, j := range jobs {
		args = append(args, j.Template, j.Params, j.Out)
	}
	cmd := exec.Command("python3", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if _, lookErr := exec.LookPath("python3"); lookErr != nil {
			return nil, fmt.Errorf("no python3: %s", InstallHint)
		}
		var sets []string
		for _, j := range jobs {
			sets = append(sets, filepath.Base(j.Params))
		}
		return nil, fmt.Errorf("transform with %s: %v\n%s", strings.Join(sets, ", "), err, stderr.String())
	}
	out := make([]*CFN, len(jobs))
	for i, j := range jobs {
		b, err := os.ReadFile(j.Out)
		if err != nil {
			return nil, err
		}
		var c CFN
		if err := json.Unmarshal(b, &c); err != nil {
			return nil, fmt.Errorf("read %s: %w", j.Out, err)
		}
		out[i] = &c
	}
	return out, nil
}

// Lint runs cfn-lint on a template and returns its findings (empty when clean).
// ignore lists rule ids the caller has a stated reason to skip.
func Lint(path string, ignore ...string) (string, error) {
	if _, err := exec.LookPath("cfn-lint"); err != nil {
		return "", fmt.Errorf("no cfn-lint: %s", InstallHint)
	}
	args := []string{"--format", "parseable"}
	if len(ignore) > 0 {
		args = append(args, "--ignore-checks")
		args = append(args, ignore...)
	}
	args = append(args, "--", path)
	out, err := exec.Command("cfn-lint", args...).CombinedOutput()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() != 0 {
			return strings.TrimSpace(string(out)), nil
		}
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// Deps returns the resources r depends on as CloudFormation orders them: references
// (Ref, Fn::GetAtt, ${X} in Fn::Sub) anywhere in its Properties, UpdatePolicy and
// CreationPolicy (an alias's UpdatePolicy names its deployment group), and DependsOn.
// Names that are not resources (parameters, pseudo parameters) are left out.
func (c *CFN) Deps(id string) []string {
	r := c.Resources[id]
	seen := map[string]bool{}
	add := func(name string) {
		if _, ok := c.Resources[name]; ok && name != "" {
			seen[name] = true
		}
	}
	var walk func(v any, local map[string]bool)
	walk = func(v any, local map[string]bool) {
		switch v := v.(type) {
		case map[string]any:
			if len(v) == 1 {
				if ref, ok := v["Ref"].(string); ok {
					add(ref)
					return
				}
				if ga, ok := v["Fn::GetAtt"]; ok {
					switch ga := ga.(type) {
					case []any:
						if len(ga) > 0 {
							if s, ok := ga[0].(string); ok {
								add(s)
							}
						}
					case string:
						add(strings.SplitN(ga, ".", 2)[0])
					}
					return
				}
				if sub, ok := v["Fn::Sub"]; ok {
					vars := map[string]bool{}
					str := ""
					switch sub := sub.(type) {
					case string:
						str = sub
					case []any:
						if len(sub) > 0 {
							str, _ = sub[0].(string)
						}
						if len(sub) > 1 {
							if m, ok := sub[1].(map[string]any); ok {
								for k, val := range m {
									vars[k] = true
									walk(val, local)
								}
							}
						}
					}
					for _, name := range SubNames(str) {
						if !vars[name] {
							add(name)
						}
					}
					return
				}
			}
			for _, x := range v {
				walk(x, local)
			}
		case []any:
			for _, x := range v {
				walk(x, local)
			}
		}
	}
	walk(r.Properties, nil)
	walk(map[string]any(r.UpdatePolicy), nil)
	walk(map[string]any(r.CreationPolicy), nil)
	switch d := r.DependsOn.(type) {
	case string:
		add(d)
	case []any:
		for _, x := range d {
			if s, ok := x.(string); ok {
				add(s)
			}
		}
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// SubNames returns the names a Fn::Sub string substitutes (${X} and ${X.Attr} give X;
// ${!Literal} is text).
func SubNames(s string) []string {
	var out []string
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			return out
		}
		j := strings.Index(s[i:], "}")
		if j < 0 {
			return out
		}
		name := s[i+2 : i+j]
		if !strings.HasPrefix(name, "!") {
			out = append(out, strings.SplitN(name, ".", 2)[0])
		}
		s = s[i+j+1:]
	}
}

// Cycle returns one dependency cycle of the resource graph (first resource repeated at
// the end), or nil when CloudFormation can order every resource.
func (c *CFN) Cycle() []string {
	const (
		white = iota
		grey
		black
	)
	colour := map[string]int{}
	var stack []string
	var found []string
	var visit func(string) bool
	visit = func(id string) bool {
		colour[id] = grey
		stack = append(stack, id)
		for _, d := range c.Deps(id) {
			switch colour[d] {
			case grey:
				for i, s := range stack {
					if s == d {
						found = append(append([]string{}, stack[i:]...), d)
					}
				}
				return true
			case white:
				if visit(d) {
					return true
				}
			}
		}
		stack = stack[:len(stack)-1]
		colour[id] = black
		return false
	}
	ids := make([]string, 0, len(c.Resources))
	for id := range c.Resources {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if colour[id] == white && visit(id) {
			return found
		}
	}
	return nil
}

// OfType returns the ids of the resources of one type, sorted.
func (c *CFN) OfType(typ string) []string {
	var out []string
	for id, r := range c.Resources {
		if r.Type == typ {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

// Decode reads a plain CloudFormation template (no transform; functions/edge/us-east-1.yaml)
// as CloudFormation does, short tags as their long forms (!Ref X as {"Ref": "X"}), with
// cfn-lint's decoder, which refuses a key given twice.
func Decode(templatePath string) (*CFN, error) {
	const script = `import json, sys
from cfnlint.decode import decode
t, m = decode(sys.argv[1])
if m:
    sys.exit("\n".join(str(x) for x in m))
json.dump(t, sys.stdout, default=str)`
	cmd := exec.Command("python3", "-c", script, templatePath)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if _, lookErr := exec.LookPath("python3"); lookErr != nil {
			return nil, fmt.Errorf("no python3: %s", InstallHint)
		}
		return nil, fmt.Errorf("decode %s: %v\n%s", filepath.Base(templatePath), err, stderr.String())
	}
	var c CFN
	if err := json.Unmarshal(out, &c); err != nil {
		return nil, fmt.Errorf("decode %s: %w", templatePath, err)
	}
	return &c, nil
}
