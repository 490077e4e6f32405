// Package routefacts derives from the route groups' tables (each group's Routes, one
// httpapi.Route a line) and the OpenAPI document what has to be a file: the generated
// regions of template.yaml (each function's events with their throttles and integration
// timeout, each function's alarms with its routes' 5xx, the CloudFront Functions' code),
// the cache-key function's list of catalog routes with their documented query
// parameters (functions/edge/cache-key.js), and each route's sample API Gateway event
// (events/<group>/). make generate writes them (TestGenerated -update); make test fails
// while a file differs from what Generate makes. The tools that send requests (the
// benchmarks, the soak) read the same facts through Groups, Params, Router and URLs.
//
// A region is the lines between a "BEGIN GENERATED <name>" comment and its "END
// GENERATED <name>"; everything outside the regions is written by hand.
package routefacts

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/template"

	"gopkg.in/yaml.v3"

	"github.com/mediacatalog/service/infra/tests/samtemplate"
	"github.com/mediacatalog/service/shared/app"
	"github.com/mediacatalog/service/shared/config"
	"github.com/mediacatalog/service/shared/httpapi"
	"github.com/mediacatalog/service/shared/openapi"
	"github.com/mediacatalog/service/shared/routegroups"
)

// Root is the repository's folder.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// Group is one route group's table as its function builds it.
type Group struct {
	Name   string
	Routes []httpapi.Route
}

// Groups builds every group as its function would, with every optional route (the
// file service on) and no connection made, in routegroups.All's order; what the
// building logs is dropped.
func Groups() ([]Group, error) {
	env := map[string]string{
		"DB_ENV":       "local",
		"DATABASE_URL": "postgres://nobody@127.0.0.1:1/none?sslmode=disable",
		"FILE_SERVICE": "true",
	}
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		return nil, err
	}
	a := app.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer a.Close()
	var out []Group
	for _, g := range routegroups.All() {
		rs, err := a.Routes(context.Background(), g)
		if err != nil {
			return nil, fmt.Errorf("build %s: %w", g.Name, err)
		}
		out = append(out, Group{Name: g.Name, Routes: rs})
	}
	return out, nil
}

// RouteCount is the number of routes in the route tables.
func RouteCount() (int, error) {
	groups, err := Groups()
	n := 0
	for _, g := range groups {
		n += len(g.Routes)
	}
	return n, err
}

// Param is one parameter the OpenAPI document gives an operation.
type Param struct {
	Name, In string // In: "path", "query", "header" or "cookie"
	Required bool
	// Example is a value of it: its schema's first example or enum value, or 1 for an
	// integer (the demo data's first row); "" when the schema gives none.
	Example string
}

// Params are the parameters the OpenAPI document gives each operation ("GET /tags" ->
// [client]), in the document's order: its path's common parameters first, $ref'd ones
// resolved.
func Params() (map[string][]Param, error) {
	type schema struct {
		Ref      string `yaml:"$ref"`
		Type     string `yaml:"type"`
		Examples []any  `yaml:"examples"`
		Enum     []any  `yaml:"enum"`
	}
	type param struct {
		Ref      string `yaml:"$ref"`
		Name     string `yaml:"name"`
		In       string `yaml:"in"`
		Required bool   `yaml:"required"`
		Schema   schema `yaml:"schema"`
	}
	var doc struct {
		Paths      map[string]map[string]yaml.Node `yaml:"paths"`
		Components struct {
			Parameters map[string]param  `yaml:"parameters"`
			Schemas    map[string]schema `yaml:"schemas"`
		} `yaml:"components"`
	}
	example := func(s schema) string {
		if s.Ref != "" {
			s = doc.Components.Schemas[s.Ref[strings.LastIndex(s.Ref, "/")+1:]]
		}
		switch {
		case len(s.Examples) > 0:
			return fmt.Sprint(s.Examples[0])
		case len(s.Enum) > 0:
			return fmt.Sprint(s.Enum[0])
		case s.Type == "integer":
			return "1"
		}
		return ""
	}
	if err := yaml.Unmarshal(openapi.Document, &doc); err != nil {
		return nil, err
	}
	resolve := func(p param) param {
		if p.Ref != "" {
			return doc.Components.Parameters[p.Ref[strings.LastIndex(p.Ref, "/")+1:]]
		}
		return p
	}
	out := map[string][]Param{}
	for path, item := range doc.Paths {
		var common []param
		if n, ok := item["parameters"]; ok {
			if err := n.Decode(&common); err != nil {
				return nil, err
			}
		}
		err := operations(path, item, func(pattern string, n yaml.Node) error {
			var o struct {
				Parameters []param `yaml:"parameters"`
			}
			if err := n.Decode(&o); err != nil {
				return err
			}
			ps := []Param{}
			for _, p := range append(slices.Clone(common), o.Parameters...) {
				p = resolve(p)
				ps = append(ps, Param{Name: p.Name, In: p.In, Required: p.Required, Example: example(p.Schema)})
			}
			out[pattern] = ps
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// operations calls f with each operation of a path item of the OpenAPI document, by
// its pattern ("GET /tags"); the item's other keys (its common parameters) are skipped.
func operations(path string, item map[string]yaml.Node, f func(pattern string, op yaml.Node) error) error {
	for method, n := range item {
		switch method {
		case "get", "post", "delete", "put", "patch":
			if err := f(strings.ToUpper(method)+" "+path, n); err != nil {
				return err
			}
		}
	}
	return nil
}

// Statuses are the answers' statuses the OpenAPI document gives each operation
// by its pattern, in ascending order.
func Statuses() (map[string][]int, error) {
	var doc struct {
		Paths map[string]map[string]yaml.Node `yaml:"paths"`
	}
	if err := yaml.Unmarshal(openapi.Document, &doc); err != nil {
		return nil, err
	}
	out := map[string][]int{}
	for path, item := range doc.Paths {
		err := operations(path, item, func(pattern string, n yaml.Node) error {
			var o struct {
				Responses map[string]yaml.Node `yaml:"responses"`
			}
			if err := n.Decode(&o); err != nil {
				return err
			}
			var codes []int
			for code := range o.Responses {
				if c, err := strconv.Atoi(code); err == nil {
					codes = append(codes, c)
				}
			}
			slices.Sort(codes)
			out[pattern] = codes
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// QueryParams are the names of the query parameters the OpenAPI document gives each
// operation ("GET /tags" -> [client]), sorted.
func QueryParams() (map[string][]string, error) {
	ops, err := Params()
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for op, ps := range ops {
		q := []string{}
		for _, p := range ps {
			if p.In == "query" {
				q = append(q, p.Name)
			}
		}
		slices.Sort(q)
		out[op] = q
	}
	return out, nil
}

// EventName is a route's event in its function's Events, and so the first part of the
// logical ids SAM derives from it: the method and each path segment capitalized,
// hyphens and braces dropped ("POST /admin-users/edit/{id}" -> PostAdminUsersEditId).
func EventName(rt httpapi.Route) string {
	var b strings.Builder
	b.WriteString(capitalize(strings.ToLower(rt.Method())))
	for _, seg := range strings.Split(strings.Trim(rt.Path(), "/"), "/") {
		for _, w := range strings.Split(strings.Trim(seg, "{}"), "-") {
			b.WriteString(capitalize(w))
		}
	}
	return b.String()
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// edgeFunctions: each CloudFront Function of template.yaml and the file whose code it
// carries.
var edgeFunctions = []struct{ ID, File string }{
	{"EdgeNotFoundFunction", "functions/edge/not-found.js"},
	{"AvatarCanonicalFunction", "functions/edge/avatar-canonical.js"},
	{"CatalogCacheKeyFunction", "functions/edge/cache-key.js"},
}

// Generate returns the generated files' contents as they should be, by path relative
// to root: template.yaml and functions/edge/cache-key.js with their regions written
// from the route tables, the OpenAPI document and the edge's files, and each route's
// sample event under events/ (nil for an event file of no route, which should not be).
func Generate(root string) (map[string][]byte, error) {
	groups, err := Groups()
	if err != nil {
		return nil, err
	}
	params, err := QueryParams()
	if err != nil {
		return nil, err
	}
	ops, err := Params()
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}

	// The cache key's list first: the template carries the file's code.
	keyPath := "functions/edge/cache-key.js"
	key, err := os.ReadFile(filepath.Join(root, keyPath))
	if err != nil {
		return nil, err
	}
	var routes strings.Builder
	routes.WriteString("var ROUTES = [\n")
	var lines []string
	for _, g := range groups {
		for _, rt := range g.Routes {
			if !rt.CatalogCached() || rt.Method() != "GET" {
				continue
			}
			q, ok := params[rt.Pattern]
			if !ok {
				return nil, fmt.Errorf("%s: a catalog route the OpenAPI document does not have", rt.Pattern)
			}
			quoted := make([]string, len(q))
			for i, p := range q {
				quoted[i] = "'" + p + "'"
			}
			lines = append(lines, fmt.Sprintf("  {path: '%s', params: [%s]}", rt.Path(), strings.Join(quoted, ", ")))
		}
	}
	routes.WriteString(strings.Join(lines, ",\n"))
	routes.WriteString("\n];\n")
	key, err = replaceRegion(key, "catalog routes", routes.String())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", keyPath, err)
	}
	out[keyPath] = key

	tplPath := "template.yaml"
	tb, err := os.ReadFile(filepath.Join(root, tplPath))
	if err != nil {
		return nil, err
	}
	tpl, err := samtemplate.Parse(tb)
	if err != nil {
		return nil, err
	}
	fns := map[string]*samtemplate.Function{}
	for _, f := range tpl.Functions {
		fns[f.Name] = f
	}
	for _, g := range groups {
		f := fns[g.Name]
		if f == nil {
			return nil, fmt.Errorf("template.yaml has no function named %s", g.Name)
		}
		var ev, al bytes.Buffer
		if err := eventsTmpl.Execute(&ev, g); err != nil {
			return nil, err
		}
		if tb, err = replaceRegion(tb, g.Name+" events", ev.String()); err != nil {
			return nil, fmt.Errorf("%s: %w", tplPath, err)
		}
		if f.Timeout <= 0 {
			return nil, fmt.Errorf("%s: no Timeout", f.LogicalID)
		}
		a := alarmFacts{Name: g.Name, Function: f.LogicalID, Base: strings.TrimSuffix(f.LogicalID, "Function"),
			Timeout: f.Timeout, Threshold: f.Timeout * 800, Routes: g.Routes}
		if err := alarmsTmpl.Execute(&al, a); err != nil {
			return nil, err
		}
		if tb, err = replaceRegion(tb, g.Name+" alarms", al.String()); err != nil {
			return nil, fmt.Errorf("%s: %w", tplPath, err)
		}
	}
	for _, e := range edgeFunctions {
		code := out[e.File]
		if code == nil {
			if code, err = os.ReadFile(filepath.Join(root, e.File)); err != nil {
				return nil, err
			}
		}
		var b strings.Builder
		b.WriteString("      FunctionCode: ")
		if bytes.Contains(code, []byte("${")) {
			b.WriteString("!Sub ") // its parameters filled in by CloudFormation
		}
		b.WriteString("|\n")
		for _, l := range strings.Split(strings.TrimRight(string(code), "\n"), "\n") {
			if l != "" {
				b.WriteString("        " + l)
			}
			b.WriteString("\n")
		}
		if tb, err = replaceRegion(tb, e.ID+" code", b.String()); err != nil {
			return nil, fmt.Errorf("%s: %w", tplPath, err)
		}
	}
	out[tplPath] = tb

	evs, err := events(root, groups, ops)
	if err != nil {
		return nil, err
	}
	maps.Copy(out, evs)
	return out, nil
}

// replaceRegion replaces the lines between the line holding "BEGIN GENERATED name" and
// the one holding "END GENERATED name" with body.
func replaceRegion(src []byte, name, body string) ([]byte, error) {
	lines := strings.SplitAfter(string(src), "\n")
	begin, end := -1, -1
	for i, l := range lines {
		switch {
		case strings.Contains(l, "BEGIN GENERATED "+name+" ") || strings.HasSuffix(strings.TrimSpace(l), "BEGIN GENERATED "+name):
			if begin >= 0 {
				return nil, fmt.Errorf("region %q begins twice", name)
			}
			begin = i
		case strings.HasSuffix(strings.TrimSpace(l), "END GENERATED "+name):
			if begin < 0 || end >= 0 {
				return nil, fmt.Errorf("region %q ends before it begins, or twice", name)
			}
			end = i
		}
	}
	if begin < 0 || end < 0 {
		return nil, fmt.Errorf("no region %q (a BEGIN GENERATED %s line and its END GENERATED %s)", name, name, name)
	}
	var b strings.Builder
	for _, l := range lines[:begin+1] {
		b.WriteString(l)
	}
	b.WriteString(body)
	for _, l := range lines[end:] {
		b.WriteString(l)
	}
	return []byte(b.String()), nil
}

var funcs = template.FuncMap{
	"event": EventName,
	"fill": func(rs []httpapi.Route) string {
		parts := make([]string, len(rs))
		for i := range rs {
			parts[i] = fmt.Sprintf("FILL(r%d, 0)", i)
		}
		if len(parts) == 1 {
			return parts[0]
		}
		return "(" + strings.Join(parts, " + ") + ")"
	},
}

// eventsTmpl is a function's Events: one HttpApi event per route, API Gateway waiting
// IntegrationTimeoutMillis for it; a write's or OAuth flow's own budget (the event's
// RouteSettings, which SAM merges into the API's); an Internal route behind AWS_IAM.
var eventsTmpl = template.Must(template.New("events").Funcs(funcs).Parse(`      Events:
{{- range .Routes}}
        {{- if .Internal}}
        # Internal: its callers invoke the function directly; over HTTP the route
        # requires SigV4 besides, and no principal is granted execute-api:Invoke.
        {{- end}}
        {{event .}}:
          Type: HttpApi
          Properties:
            ApiId: !Ref HttpApi
            TimeoutInMillis: !Ref IntegrationTimeoutMillis
            Method: {{.Method}}
            Path: {{.Path}}
            {{- if .Throttle}}
            RouteSettings:
              ThrottlingRateLimit: !Ref {{.Throttle}}RateLimit
              ThrottlingBurstLimit: !Ref {{.Throttle}}BurstLimit
            {{- end}}
            {{- if .Internal}}
            Auth:
              Authorizer: AWS_IAM
            {{- end}}
{{- end}}
`))

type alarmFacts struct {
	Name, Function, Base string
	Timeout, Threshold   int
	Routes               []httpapi.Route
}

// alarmsTmpl is a function's five alarms: its failed invocations (pages), its new
// version's (rolls a deployment back), its routes' 5xx (both), its throttles and its
// p99 duration against its Timeout (page).
var alarmsTmpl = template.Must(template.New("alarms").Funcs(funcs).Parse(`  {{.Base}}ErrorsAlarm:
    Type: AWS::CloudWatch::Alarm
    Properties:
      AlarmDescription: !Sub "${AWS::StackName}-{{.Name}}: share of invocations that failed (crash, timeout, out of memory) above FunctionErrorPercent in 2 of 3 minutes"
      Metrics:
        - {Id: errors, ReturnData: false, MetricStat: {Metric: {Namespace: AWS/Lambda, MetricName: Errors, Dimensions: [{Name: FunctionName, Value: !Ref {{.Function}}}]}, Period: 60, Stat: Sum}}
        - {Id: invocations, ReturnData: false, MetricStat: {Metric: {Namespace: AWS/Lambda, MetricName: Invocations, Dimensions: [{Name: FunctionName, Value: !Ref {{.Function}}}]}, Period: 60, Stat: Sum}}
        - {Id: rate, Expression: "100 * FILL(errors, 0) / IF(invocations > 0, invocations, 1)", ReturnData: true}
      EvaluationPeriods: 3
      DatapointsToAlarm: 2
      Threshold: !Ref FunctionErrorPercent
      ComparisonOperator: GreaterThanThreshold
      TreatMissingData: notBreaching
      AlarmActions: !If [HasAlarmTopic, [!Ref AlarmTopicArn], !Ref AWS::NoValue]
      OKActions: !If [HasAlarmTopic, [!Ref AlarmTopicArn], !Ref AWS::NoValue]
  # Rolls a deployment back: the failed share of the new version's invocations through
  # the alias, two minutes running. It pages no one (CodeDeploy acts, sam deploy reports).
  {{.Base}}CanaryErrorsAlarm:
    Type: AWS::CloudWatch::Alarm
    Properties:
      AlarmDescription: !Sub "${AWS::StackName}-{{.Name}}: the new version's failed invocations above CanaryErrorPercent for 2 minutes (rolls the deployment back)"
      Metrics:
        - {Id: errors, ReturnData: false, MetricStat: {Metric: {Namespace: AWS/Lambda, MetricName: Errors, Dimensions: [{Name: FunctionName, Value: !Ref {{.Function}}}, {Name: Resource, Value: !Sub "${ {{- .Function}}}:live"}, {Name: ExecutedVersion, Value: !GetAtt {{.Function}}.Version.Version}]}, Period: 60, Stat: Sum}}
        - {Id: invocations, ReturnData: false, MetricStat: {Metric: {Namespace: AWS/Lambda, MetricName: Invocations, Dimensions: [{Name: FunctionName, Value: !Ref {{.Function}}}, {Name: Resource, Value: !Sub "${ {{- .Function}}}:live"}, {Name: ExecutedVersion, Value: !GetAtt {{.Function}}.Version.Version}]}, Period: 60, Stat: Sum}}
        - {Id: rate, Expression: "100 * FILL(errors, 0) / IF(invocations > 0, invocations, 1)", ReturnData: true}
      EvaluationPeriods: 2
      DatapointsToAlarm: 2
      Threshold: !Ref CanaryErrorPercent
      ComparisonOperator: GreaterThanThreshold
      TreatMissingData: notBreaching
  # The 5xx answers of this function's routes (API Gateway's per-route metrics) as a
  # share of its alias's invocations, 2 minutes running: pages, and rolls a deployment
  # back (DeploymentPreference names it by AlarmName: no reference, no cycle).
  {{.Base}}RoutesAlarm:
    Type: AWS::CloudWatch::Alarm
    Properties:
      AlarmName: !Sub "${AWS::StackName}-{{.Name}}-routes-5xx"
      AlarmDescription: !Sub "${AWS::StackName}-{{.Name}}: 5xx answers of its routes above Api5xxPercent of its invocations for 2 minutes (rolls deployments back)"
      Metrics:
{{- range $i, $r := .Routes}}
        - {Id: r{{$i}}, ReturnData: false, MetricStat: {Metric: {Namespace: AWS/ApiGateway, MetricName: 5xx, Dimensions: [{Name: ApiId, Value: !Ref HttpApi}, {Name: Method, Value: {{$r.Method}}}, {Name: Resource, Value: "{{$r.Path}}"}, {Name: Stage, Value: $default}]}, Period: 60, Stat: Sum}}
{{- end}}
        - {Id: invocations, ReturnData: false, MetricStat: {Metric: {Namespace: AWS/Lambda, MetricName: Invocations, Dimensions: [{Name: FunctionName, Value: !Ref {{.Function}}}, {Name: Resource, Value: !Sub "${ {{- .Function}}}:live"}]}, Period: 60, Stat: Sum}}
        - {Id: rate, Expression: "100 * {{fill .Routes}} / IF(invocations > 0, invocations, 1)", ReturnData: true}
      EvaluationPeriods: 2
      DatapointsToAlarm: 2
      Threshold: !Ref Api5xxPercent
      ComparisonOperator: GreaterThanThreshold
      TreatMissingData: notBreaching
      AlarmActions: !If [HasAlarmTopic, [!Ref AlarmTopicArn], !Ref AWS::NoValue]
      OKActions: !If [HasAlarmTopic, [!Ref AlarmTopicArn], !Ref AWS::NoValue]
  {{.Base}}ThrottlesAlarm:
    Type: AWS::CloudWatch::Alarm
    Properties:
      AlarmDescription: !Sub "${AWS::StackName}-{{.Name}}: invocations refused at its reserved concurrency"
      Namespace: AWS/Lambda
      MetricName: Throttles
      Dimensions: [{Name: FunctionName, Value: !Ref {{.Function}}}]
      Statistic: Sum
      Period: 60
      EvaluationPeriods: 1
      Threshold: !Ref LambdaThrottleThreshold
      ComparisonOperator: GreaterThanOrEqualToThreshold
      TreatMissingData: notBreaching
      AlarmActions: !If [HasAlarmTopic, [!Ref AlarmTopicArn], !Ref AWS::NoValue]
      OKActions: !If [HasAlarmTopic, [!Ref AlarmTopicArn], !Ref AWS::NoValue]
  {{.Base}}DurationAlarm:
    Type: AWS::CloudWatch::Alarm
    Properties:
      AlarmDescription: !Sub "${AWS::StackName}-{{.Name}}: p99 duration above 80 % of its {{.Timeout}} s timeout"
      Namespace: AWS/Lambda
      MetricName: Duration
      Dimensions: [{Name: FunctionName, Value: !Ref {{.Function}}}]
      ExtendedStatistic: p99
      Period: 60
      EvaluationPeriods: 3
      DatapointsToAlarm: 2
      Threshold: {{.Threshold}}
      ComparisonOperator: GreaterThanThreshold
      TreatMissingData: notBreaching
      AlarmActions: !If [HasAlarmTopic, [!Ref AlarmTopicArn], !Ref AWS::NoValue]
      OKActions: !If [HasAlarmTopic, [!Ref AlarmTopicArn], !Ref AWS::NoValue]
`))
