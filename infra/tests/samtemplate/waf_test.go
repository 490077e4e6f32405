package samtemplate_test

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/mediacatalog/service/infra/tests/samtemplate"
	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/openapi"
)

// The web ACL of functions/edge/us-east-1.yaml (CloudFront takes a CLOUDFRONT-scoped ACL
// from us-east-1 only), read as CloudFormation reads it.

func edgeTemplate(t *testing.T) *samtemplate.CFN {
	t.Helper()
	c, err := samtemplate.Decode(repoFile("functions/edge/us-east-1.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// wafRequest is what the rules' statements look at.
type wafRequest struct {
	Method, Path string
	Labels       []string
}

// wafMatch evaluates the statements the web ACL's own rules use, as WAF does (no text
// transformation is used: each statement says NONE).
func wafMatch(t *testing.T, st map[string]any, r wafRequest) bool {
	t.Helper()
	field := func(s map[string]any) string {
		f := s["FieldToMatch"].(map[string]any)
		switch {
		case f["Method"] != nil:
			return r.Method
		case f["UriPath"] != nil:
			return r.Path
		}
		t.Fatalf("field %v is not read here", f)
		return ""
	}
	for _, s := range s2(st["TextTransformations"]) {
		if s.(map[string]any)["Type"] != "NONE" {
			t.Fatalf("text transformation %v is not evaluated here", s)
		}
	}
	switch {
	case st["ByteMatchStatement"] != nil:
		s := st["ByteMatchStatement"].(map[string]any)
		for _, tt := range s2(s["TextTransformations"]) {
			if tt.(map[string]any)["Type"] != "NONE" {
				t.Fatalf("text transformation %v is not evaluated here", tt)
			}
		}
		v, want := field(s), fmt.Sprint(s["SearchString"])
		switch s["PositionalConstraint"] {
		case "EXACTLY":
			return v == want
		case "STARTS_WITH":
			return strings.HasPrefix(v, want)
		case "CONTAINS":
			return strings.Contains(v, want)
		}
		t.Fatalf("positional constraint %v", s["PositionalConstraint"])
	case st["RegexMatchStatement"] != nil:
		s := st["RegexMatchStatement"].(map[string]any)
		return regexp.MustCompile(fmt.Sprint(s["RegexString"])).MatchString(field(s))
	case st["LabelMatchStatement"] != nil:
		s := st["LabelMatchStatement"].(map[string]any)
		return s["Scope"] == "LABEL" && slices.Contains(r.Labels, fmt.Sprint(s["Key"]))
	case st["OrStatement"] != nil:
		for _, s := range s2(st["OrStatement"].(map[string]any)["Statements"]) {
			if wafMatch(t, s.(map[string]any), r) {
				return true
			}
		}
		return false
	case st["AndStatement"] != nil:
		for _, s := range s2(st["AndStatement"].(map[string]any)["Statements"]) {
			if !wafMatch(t, s.(map[string]any), r) {
				return false
			}
		}
		return true
	case st["NotStatement"] != nil:
		return !wafMatch(t, st["NotStatement"].(map[string]any)["Statement"].(map[string]any), r)
	}
	t.Fatalf("statement %v is not evaluated here", st)
	return false
}

func s2(v any) []any {
	l, _ := v.([]any)
	return l
}

// paramDefault is a parameter's default of the edge template, with its allowed values.
func paramDefault(t *testing.T, c *samtemplate.CFN, ref any) (float64, []string) {
	t.Helper()
	name := fmt.Sprint(ref.(map[string]any)["Ref"])
	p, ok := c.Parameters[name]
	if !ok {
		t.Fatalf("no parameter %s", name)
	}
	n, err := strconv.ParseFloat(fmt.Sprint(p["Default"]), 64)
	if err != nil {
		t.Fatalf("%s's default %v", name, p["Default"])
	}
	var allowed []string
	for _, a := range s2(p["AllowedValues"]) {
		allowed = append(allowed, fmt.Sprint(a))
	}
	return n, allowed
}

// largeBodyRoutes: the operations whose documented body may exceed the common rule
// set's 8 KB: a string field without a bound (the images), or bounded at 2,048
// characters or more (4 bytes each at most in UTF-8).
func largeBodyRoutes(t *testing.T) []string {
	t.Helper()
	var doc map[string]any
	if err := yaml.Unmarshal(openapi.Document, &doc); err != nil {
		t.Fatal(err)
	}
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	var large func(s map[string]any) bool
	large = func(s map[string]any) bool {
		if ref, ok := s["$ref"].(string); ok {
			return large(schemas[ref[strings.LastIndex(ref, "/")+1:]].(map[string]any))
		}
		for _, k := range []string{"allOf", "oneOf", "anyOf"} {
			for _, sub := range s2(s[k]) {
				if large(sub.(map[string]any)) {
					return true
				}
			}
		}
		if props, ok := s["properties"].(map[string]any); ok {
			for _, p := range props {
				if large(p.(map[string]any)) {
					return true
				}
			}
		}
		if items, ok := s["items"].(map[string]any); ok && large(items) {
			return true
		}
		if s["type"] == "string" || slices.Contains(s2(s["type"]), any("string")) {
			n, bounded := s["maxLength"].(int)
			return !bounded || n*4 >= 8192
		}
		return false
	}
	var out []string
	for path, item := range doc["paths"].(map[string]any) {
		for method, op := range item.(map[string]any) {
			o, ok := op.(map[string]any)
			if !ok || o["requestBody"] == nil {
				continue
			}
			content := o["requestBody"].(map[string]any)["content"].(map[string]any)
			if large(content["application/json"].(map[string]any)["schema"].(map[string]any)) {
				out = append(out, strings.ToUpper(method)+" "+path)
			}
		}
	}
	sort.Strings(out)
	return out
}

// TestEdgeWebACL: the us-east-1 template lints clean and its web ACL, scoped to
// CloudFront, has the three AWS managed rule groups (IP reputation, known bad inputs,
// the common rule set) and three rate-based rules keyed on the client's address: every
// route of the API is counted as a read or a write, and the /auth/oauth routes also by
// their own, lower limit; each blocks with a 429 Response Model, over one of WAF's
// windows; the common set's 8 KB body rule only counts, and a rule blocks what it
// labelled outside the routes whose documented bodies exceed 8 KB. No sample or log WAF
// keeps holds a credential (TestEdgeWebACLKeepsNoCredential).
func TestEdgeWebACL(t *testing.T) {
	if out, err := samtemplate.Lint(repoFile("functions/edge/us-east-1.yaml")); err != nil || out != "" {
		t.Errorf("cfn-lint functions/edge/us-east-1.yaml: %v\n%s", err, out)
	}
	c := edgeTemplate(t)
	acl := c.Resources["WebAcl"]
	if acl.Type != "AWS::WAFv2::WebACL" || acl.Properties["Scope"] != "CLOUDFRONT" {
		t.Fatalf("WebAcl: %s scope %v", acl.Type, acl.Properties["Scope"])
	}
	// template.yaml's dashboard takes the metrics' WebACL dimension from the ARN's name.
	vc := acl.Properties["VisibilityConfig"].(map[string]any)
	if fmt.Sprint(acl.Properties["Name"]) != fmt.Sprint(vc["MetricName"]) || vc["CloudWatchMetricsEnabled"] != true {
		t.Errorf("web ACL name %v, metric name %v", acl.Properties["Name"], vc["MetricName"])
	}
	if fmt.Sprint(acl.Properties["DefaultAction"]) != "map[Allow:map[]]" {
		t.Errorf("default action %v", acl.Properties["DefaultAction"])
	}
	bodies := acl.Properties["CustomResponseBodies"].(map[string]any)

	rules := map[string]map[string]any{}
	priorities := map[float64]string{}
	for _, r := range s2(acl.Properties["Rules"]) {
		r := r.(map[string]any)
		name := fmt.Sprint(r["Name"])
		rules[name] = r
		if other, dup := priorities[r["Priority"].(float64)]; dup {
			t.Errorf("%s and %s share priority %v", name, other, r["Priority"])
		}
		priorities[r["Priority"].(float64)] = name
		if m := r["VisibilityConfig"].(map[string]any)["MetricName"]; m != name {
			t.Errorf("rule %s's metric is named %v", name, m)
		}
	}
	managed := map[string]map[string]any{}
	for _, r := range rules {
		if m, ok := r["Statement"].(map[string]any)["ManagedRuleGroupStatement"].(map[string]any); ok {
			managed[fmt.Sprint(m["Name"])] = m
			if fmt.Sprint(r["OverrideAction"]) != "map[None:map[]]" || m["VendorName"] != "AWS" {
				t.Errorf("managed group %v: override %v (Count would only watch)", m["Name"], r["OverrideAction"])
			}
		}
	}
	for _, g := range []string{"AWSManagedRulesCommonRuleSet", "AWSManagedRulesKnownBadInputsRuleSet", "AWSManagedRulesAmazonIpReputationList"} {
		if managed[g] == nil {
			t.Errorf("no %s", g)
		}
	}

	// Every route: which rate-based rules count it.
	var routes []string
	for _, f := range loadTemplate(t).Functions {
		routes = append(routes, f.Routes...)
	}
	tpl := loadTemplate(t)
	counted := map[string][]string{} // rule -> routes
	perSecond := map[string]float64{}
	for name, r := range rules {
		rb, ok := r["Statement"].(map[string]any)["RateBasedStatement"].(map[string]any)
		if !ok {
			continue
		}
		if rb["AggregateKeyType"] != "IP" {
			t.Errorf("%s keys on %v, not the client address CloudFront saw", name, rb["AggregateKeyType"])
		}
		limit, _ := paramDefault(t, c, rb["Limit"])
		window, allowed := paramDefault(t, c, rb["EvaluationWindowSec"])
		for _, a := range allowed {
			if !slices.Contains([]string{"60", "120", "300", "600"}, a) {
				t.Errorf("%s: window %s s is none of WAF's", name, a)
			}
		}
		if limit < 10 {
			t.Errorf("%s: limit %v below WAF's least, 10", name, limit)
		}
		perSecond[name] = limit / window
		block, _ := r["Action"].(map[string]any)["Block"].(map[string]any)
		cr, _ := block["CustomResponse"].(map[string]any)
		body, _ := bodies[fmt.Sprint(cr["CustomResponseBodyKey"])].(map[string]any)
		want, _ := json.Marshal(map[string]any{"data": apperr.MsgTooManyRequest, "code": 429})
		var got, w any
		_ = json.Unmarshal([]byte(fmt.Sprint(body["Content"])), &got)
		_ = json.Unmarshal(want, &w)
		if cr["ResponseCode"] != float64(429) || body["ContentType"] != "APPLICATION_JSON" || fmt.Sprint(got) != fmt.Sprint(w) {
			t.Errorf("%s blocks with %v %v, want 429 %s", name, cr, body, want)
		}
		for _, route := range routes {
			method, path, _ := strings.Cut(route, " ")
			if wafMatch(t, rb["ScopeDownStatement"].(map[string]any), wafRequest{Method: method, Path: concretePath(path)}) {
				counted[name] = append(counted[name], route)
			}
		}
	}
	if len(perSecond) != 3 {
		t.Fatalf("rate-based rules %v, want reads, writes and OAuth", perSecond)
	}
	// Every method CloudFront lets through is counted, as a read or as a write (a flood
	// of preflights or of methods no route has still reaches API Gateway).
	for _, m := range []string{"GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE"} {
		var by []string
		for _, name := range []string{"ReadsPerClient", "WritesPerClient"} {
			if wafMatch(t, rules[name]["Statement"].(map[string]any)["RateBasedStatement"].(map[string]any)["ScopeDownStatement"].(map[string]any), wafRequest{Method: m, Path: "/tags"}) {
				by = append(by, name)
			}
		}
		if len(by) != 1 {
			t.Errorf("%s /tags is counted by %v, want reads or writes", m, by)
		}
	}
	for _, route := range routes {
		method, path, _ := strings.Cut(route, " ")
		want := []string{"WritesPerClient"}
		if method == "GET" {
			want = []string{"ReadsPerClient"}
		}
		if strings.HasPrefix(path, "/auth/oauth") {
			want = append(want, "OAuthPerClient")
		}
		var got []string
		for name, rs := range counted {
			if slices.Contains(rs, route) {
				got = append(got, name)
			}
		}
		sort.Strings(got)
		sort.Strings(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s is counted by %v, want %v", route, got, want)
		}
	}

	// API Gateway's route throttles (one bucket per route, all clients) stay a backstop
	// above what one client may send: in the template's defaults and every environment.
	backstop := map[string]string{"ReadsPerClient": "ReadRateLimit", "WritesPerClient": "WriteRateLimit", "OAuthPerClient": "OAuthRouteRateLimit"}
	envs := map[string]map[string]string{"defaults": {}}
	for _, env := range []string{"default", "staging", "prod"} {
		envs[env] = samconfigParams(t, repoFile("samconfig.toml"), env)
	}
	for rule, p := range backstop {
		for env, set := range envs {
			v, ok := set[p]
			if !ok {
				v = param(t, tpl, p, "Default")
			}
			if route := float64(atoi(t, v)); route <= perSecond[rule] {
				t.Errorf("%s: %s %v/s does not stay above one client's %s of %.2f/s", env, p, route, rule, perSecond[rule])
			}
		}
	}
	if perSecond["OAuthPerClient"] >= perSecond["ReadsPerClient"] || perSecond["WritesPerClient"] >= perSecond["ReadsPerClient"] {
		t.Errorf("per-client limits %v: OAuth and writes should be below reads", perSecond)
	}

	// The 8 KB body rule: counted in the group, blocked by the web ACL's own rule except
	// on the routes whose bodies may be larger.
	crs := managed["AWSManagedRulesCommonRuleSet"]
	var overrides []string
	for _, o := range s2(crs["RuleActionOverrides"]) {
		o := o.(map[string]any)
		overrides = append(overrides, fmt.Sprintf("%v=%v", o["Name"], o["ActionToUse"]))
	}
	if !slices.Equal(overrides, []string{"SizeRestrictions_BODY=map[Count:map[]]"}) {
		t.Errorf("common rule set overrides %v, want SizeRestrictions_BODY to Count only", overrides)
	}
	size := rules["BodySizeOutsideLargeBodyRoutes"]
	if size == nil || fmt.Sprint(size["Action"]) != "map[Block:map[]]" || size["Priority"].(float64) <= rulesPriority(t, rules, "AWSManagedRulesCommonRuleSet") {
		t.Fatalf("no blocking rule after the common set for its counted body size: %v", size)
	}
	large := largeBodyRoutes(t)
	if len(large) < 2 {
		t.Fatalf("large-body routes %v: the image uploads at least", large)
	}
	const label = "awswaf:managed:aws:core-rule-set:SizeRestrictions_Body"
	for _, route := range routes {
		method, path, _ := strings.Cut(route, " ")
		r := wafRequest{Method: method, Path: concretePath(path), Labels: []string{label}}
		blocked := wafMatch(t, size["Statement"].(map[string]any), r)
		if blocked == slices.Contains(large, route) {
			t.Errorf("%s with a body over 8 KB: blocked %v (bodies over 8 KB: %v)", route, blocked, large)
		}
		if r.Labels = nil; wafMatch(t, size["Statement"].(map[string]any), r) {
			t.Errorf("%s blocked without the size label", route)
		}
	}
}

// TestEdgeWebACLKeepsNoCredential: what WAF keeps of a request (the sampled requests of
// the web ACL and of each rule, for about three hours, readable with
// wafv2:GetSampledRequests; and a log, if one is configured) holds no session cookie, no
// Authorization and no OAuth code or state. Sampling is on for the ACL and every rule (an
// operator's view of who was blocked), so the web ACL's own data protection, which
// applies to samples and logs alike, must substitute REDACTED for: every header's value
// (a field key names a header, and AWS does not document whether "cookie" matches a
// viewer's "Cookie", so none is named), every cookie, the query string and every query
// argument; in the rules' match details and the rate-based rules' lists too. A
// logging configuration's RedactedFields would not do: AWS applies them to logs only,
// never to samples.
func TestEdgeWebACLKeepsNoCredential(t *testing.T) {
	c := edgeTemplate(t)
	acl := c.Resources["WebAcl"]
	sampled := []string{}
	if vc, _ := acl.Properties["VisibilityConfig"].(map[string]any); vc["SampledRequestsEnabled"] != false {
		sampled = append(sampled, "the web ACL")
	}
	for _, r := range s2(acl.Properties["Rules"]) {
		r := r.(map[string]any)
		if vc, _ := r["VisibilityConfig"].(map[string]any); vc["SampledRequestsEnabled"] != false {
			sampled = append(sampled, fmt.Sprint(r["Name"]))
		}
	}
	logged := c.OfType("AWS::WAFv2::LoggingConfiguration")
	if len(sampled) == 0 && len(logged) == 0 {
		return // WAF keeps nothing of a request
	}
	protected := map[string]bool{}
	dpc, _ := acl.Properties["DataProtectionConfig"].(map[string]any)
	for _, d := range s2(dpc["DataProtections"]) {
		d := d.(map[string]any)
		f, _ := d["Field"].(map[string]any)
		keys := s2(f["FieldKeys"])
		if d["Action"] != "SUBSTITUTION" || d["ExcludeRuleMatchDetails"] == true || d["ExcludeRateBasedDetails"] == true {
			t.Errorf("data protection %v: want SUBSTITUTION (a hash of a token still identifies it) and no exclusion", d)
			continue
		}
		if len(keys) > 0 {
			t.Errorf("data protection of %v names keys %v: want every key of the field", f["FieldType"], keys)
			continue
		}
		protected[fmt.Sprint(f["FieldType"])] = true
	}
	for _, field := range []string{"SINGLE_HEADER", "SINGLE_COOKIE", "QUERY_STRING", "SINGLE_QUERY_ARGUMENT"} {
		if !protected[field] {
			t.Errorf("WAF keeps samples of %v (and logs: %v), and the web ACL's data protection leaves %s whole: a session cookie or an OAuth code in what wafv2:GetSampledRequests reads", sampled, logged, field)
		}
	}
}

func rulesPriority(t *testing.T, rules map[string]map[string]any, group string) float64 {
	t.Helper()
	for _, r := range rules {
		if m, ok := r["Statement"].(map[string]any)["ManagedRuleGroupStatement"].(map[string]any); ok && m["Name"] == group {
			return r["Priority"].(float64)
		}
	}
	t.Fatalf("no %s", group)
	return 0
}

// TestEdgeBlockedRequestsMetrics: the blocked-requests alarm and the dashboard read WAF's
// metrics as WAF publishes them for a CLOUDFRONT-scoped web ACL: in us-east-1 (where the
// alarm lives, and where the dashboard's widget looks), namespace AWS/WAFV2, dimensions
// WebACL and Rule only, no Region (the Region dimension is for regional ACLs; AWS WAF
// Developer Guide, "AWS WAF metrics and dimensions",
// https://docs.aws.amazon.com/waf/latest/developerguide/waf-metrics.html, and so
// alarms in the wild, e.g. 18F/identity-pki terraform/waf/module/alerts.tf: "only has
// Rule and WebACL instead of Rule/WebACL/Region because of Cloudfront"). CloudFront's own
// metrics are the ones with Region=Global.
func TestEdgeBlockedRequestsMetrics(t *testing.T) {
	c := edgeTemplate(t)
	a := c.Resources["BlockedRequestsAlarm"].Properties
	dims := map[string]string{}
	for _, d := range s2(a["Dimensions"]) {
		d := d.(map[string]any)
		dims[fmt.Sprint(d["Name"])] = fmt.Sprint(d["Value"])
	}
	name := fmt.Sprint(c.Resources["WebAcl"].Properties["Name"])
	if a["Namespace"] != "AWS/WAFV2" || a["MetricName"] != "BlockedRequests" || len(dims) != 2 || dims["WebACL"] != name || dims["Rule"] != "ALL" {
		t.Errorf("alarm on %v %v %v, want AWS/WAFV2 BlockedRequests {WebACL: %s, Rule: ALL}", a["Namespace"], a["MetricName"], dims, name)
	}
	if !strings.Contains(fmt.Sprint(a["AlarmActions"]), "AlarmTopicArn") ||
		!strings.Contains(fmt.Sprint(c.Parameters["AlarmTopicArn"]["AllowedPattern"]), ":sns:us-east-1:") {
		t.Errorf("the alarm notifies %v (a topic of us-east-1, the alarm's region)", a["AlarmActions"])
	}

	cfn, _ := transformed(t, "create")
	sub := cfn.Resources["Dashboard"].Properties["DashboardBody"].(map[string]any)["Fn::Sub"].([]any)
	body := fmt.Sprint(sub[0])
	vars := sub[1].(map[string]any)
	if got, _ := json.Marshal(vars["WebAclName"]); string(got) != `{"Fn::Select":[2,{"Fn::Split":["/",{"Ref":"WebAclArn"}]}]}` {
		t.Errorf("WebAclName %s: want the name out of arn:...:global/webacl/<name>/<id>", got)
	}
	var dash struct {
		Widgets []struct {
			Properties struct {
				Title   string  `json:"title"`
				Region  string  `json:"region"`
				Metrics [][]any `json:"metrics"`
			} `json:"properties"`
		} `json:"widgets"`
	}
	if err := json.Unmarshal([]byte(body), &dash); err != nil {
		t.Fatalf("dashboard body: %v", err)
	}
	rules := map[string]bool{"ALL": true}
	for _, r := range s2(c.Resources["WebAcl"].Properties["Rules"]) {
		rules[fmt.Sprint(r.(map[string]any)["Name"])] = true
	}
	waf, edge := 0, 0
	for _, w := range dash.Widgets {
		ns := ""
		for _, m := range w.Properties.Metrics {
			if m[0] != "..." && m[0] != "." {
				ns = fmt.Sprint(m[0])
			}
			if ns != "AWS/WAFV2" && ns != "AWS/CloudFront" {
				continue
			}
			switch m[0] {
			case "AWS/WAFV2":
				waf++
				if w.Properties.Region != "us-east-1" || m[2] != "WebACL" || m[3] != "${WebAclName}" || m[4] != "Rule" || !rules[fmt.Sprint(m[5])] || len(m) != 6 {
					t.Errorf("%q: WAF metric %v in %s", w.Properties.Title, m, w.Properties.Region)
				}
			case "...": // the row above's metric, another rule
				if len(m) != 2 || !rules[fmt.Sprint(m[1])] {
					t.Errorf("%q: metric %v names no rule of the web ACL", w.Properties.Title, m)
				}
			case "AWS/CloudFront":
				edge++
				if w.Properties.Region != "us-east-1" || !slices.Contains(m, any("Region")) || !slices.Contains(m, any("Global")) {
					t.Errorf("%q: CloudFront metric %v in %s", w.Properties.Title, m, w.Properties.Region)
				}
			}
		}
	}
	if waf == 0 || edge == 0 {
		t.Errorf("the dashboard shows %d WAF and %d CloudFront metrics", waf, edge)
	}
}

// TestEdgeLimitsDocumented: the operations guide states the web ACL's default limits.
func TestEdgeLimitsDocumented(t *testing.T) {
	c := edgeTemplate(t)
	def := func(name string) string {
		return fmt.Sprint(c.Parameters[name]["Default"])
	}
	b, err := os.ReadFile(repoFile("docs/operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	guide := strings.Join(strings.Fields(string(b)), " ")
	for _, want := range []string{
		fmt.Sprintf("reads (GET, HEAD, OPTIONS) %s per %s s", def("ReadLimit"), def("ReadWindowSec")),
		fmt.Sprintf("writes (any other method) %s per %s s", def("WriteLimit"), def("WriteWindowSec")),
		fmt.Sprintf("`/auth/oauth` %s per %s s", def("OAuthLimit"), def("OAuthWindowSec")),
	} {
		if !strings.Contains(guide, want) {
			t.Errorf("docs/operations.md does not say %q", want)
		}
	}
}
