package samtemplate_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/mediacatalog/service/infra/tests/samtemplate"
	"github.com/mediacatalog/service/shared/app"
	"github.com/mediacatalog/service/shared/httpapi"
	"github.com/mediacatalog/service/shared/routegroups"
	"github.com/mediacatalog/service/shared/secrets"
)

// The parameter sets the template is transformed with, as an operator would deploy it:
// a stack that creates its proxy, custom domain, DNS record and endpoints, and one that
// reuses an existing proxy and domain and creates no endpoint.
var paramSets = []string{"create", "existing"}

// transformedIgnore: cfn-lint rules skipped on the transform's output, each for a
// reason. W2001 (unused parameter): the transform writes DeploymentType's value into
// every deployment group, so the parameter is no longer referenced in its output.
var transformedIgnore = []string{"W2001"}

var (
	transformOnce sync.Map // set name -> *transformResult
)

type transformResult struct {
	once sync.Once
	cfn  *samtemplate.CFN
	path string
	err  error
}

func paramsPath(set string) string {
	return filepath.Join(samtemplate.Dir(), "testdata", set+".json")
}

// transformed returns the template as the SAM transform leaves it with a parameter
// set (once per test binary).
func transformed(t *testing.T, set string) (*samtemplate.CFN, string) {
	t.Helper()
	v, _ := transformOnce.LoadOrStore(set, &transformResult{})
	r := v.(*transformResult)
	r.once.Do(func() {
		dir, err := os.MkdirTemp("", "samtemplate-")
		if err != nil {
			r.err = err
			return
		}
		r.cfn, r.path, r.err = samtemplate.Transform(repoFile("template.yaml"), paramsPath(set), dir)
	})
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.cfn, r.path
}

// TestStrictYAML: template.yaml read as CloudFormation reads it; a key given twice in
// one mapping is refused (yaml.v3 alone would keep the last).
func TestStrictYAML(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		ok        bool
	}{
		{"the template", "", true},
		{"duplicate key", "Resources:\n  A:\n    Type: X\n    Properties:\n      T: 1\n      T: 1\n", false},
		{"same key in two mappings", "Resources:\n  A:\n    Type: X\n  B:\n    Type: X\n", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.doc == "" {
				_, err = samtemplate.Load(repoFile("template.yaml"))
			} else {
				_, err = samtemplate.Parse([]byte(tc.doc))
			}
			if (err == nil) != tc.ok {
				t.Errorf("parse: %v, want ok %v", err, tc.ok)
			}
		})
	}
}

// TestCfnLint: cfn-lint (which also runs the SAM transform with its own placeholder
// values) finds nothing in template.yaml; the warnings the template ignores are
// explained beside the ignore.
func TestCfnLint(t *testing.T) {
	out, err := samtemplate.Lint(repoFile("template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if out != "" {
		t.Errorf("cfn-lint template.yaml:\n%s", out)
	}
}

// TestTransformed: for each parameter set the transform succeeds, cfn-lint finds
// nothing in its output, and the resource graph, counting UpdatePolicy references
// (CloudFormation orders by them), has no cycle.
func TestTransformed(t *testing.T) {
	for _, set := range paramSets {
		t.Run(set, func(t *testing.T) {
			cfn, path := transformed(t, set)
			out, err := samtemplate.Lint(path, transformedIgnore...)
			if err != nil {
				t.Fatal(err)
			}
			if out != "" {
				t.Errorf("cfn-lint on the transformed template:\n%s", out)
			}
			if c := cfn.Cycle(); c != nil {
				t.Errorf("dependency cycle: %s", strings.Join(c, " -> "))
			}
		})
	}
}

// TestCycleCheck: the cycle check sees a cycle closed through an UpdatePolicy, as the
// one an alarm referenced by a deployment group made (API -> alias -> deployment group
// -> alarm -> API).
func TestCycleCheck(t *testing.T) {
	var c samtemplate.CFN
	if err := json.Unmarshal([]byte(`{"Resources": {
		"Api": {"Type": "T", "Properties": {"Uri": {"Fn::Sub": "arn:${AWS::Partition}:x/${Alias}/invocations"}}},
		"Alias": {"Type": "T", "Properties": {"V": {"Fn::GetAtt": ["Version", "Version"]}},
			"UpdatePolicy": {"CodeDeployLambdaAliasUpdate": {"DeploymentGroupName": {"Ref": "Group"}}}},
		"Version": {"Type": "T"},
		"Group": {"Type": "T", "Properties": {"Alarms": [{"Name": {"Ref": "Alarm"}}]}},
		"Alarm": {"Type": "T", "Properties": {"D": [{"Value": {"Ref": "Api"}}]}}}}`), &c); err != nil {
		t.Fatal(err)
	}
	if got := c.Cycle(); len(got) != 5 {
		t.Errorf("cycle %v, want Alarm -> Api -> Alias -> Group -> Alarm", got)
	}
	delete(c.Resources["Alias"].UpdatePolicy, "CodeDeployLambdaAliasUpdate")
	if got := c.Cycle(); got != nil {
		t.Errorf("cycle %v without the UpdatePolicy", got)
	}
}

// lambdas maps a group name to its AWS::Lambda::Function id in the transformed
// template: every function but the deploy hook, which is no route group
// (TestTransformedDeployHook).
func lambdas(t *testing.T, cfn *samtemplate.CFN) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, id := range cfn.OfType("AWS::Lambda::Function") {
		if id == samtemplate.DeployHook {
			continue
		}
		name := fmt.Sprint(cfn.Resources[id].Properties["FunctionName"])
		i := strings.LastIndex(name, "}-")
		out[strings.TrimSuffix(name[i+2:], "]")] = id
	}
	return out
}

// TestTransformedCORS: API Gateway's CORS object survives the transform whole (an
// intrinsic in place of AllowOrigins replaced it), and allows what the Go middleware
// allows, with credentials, to the frontend and the extra origins.
func TestTransformedCORS(t *testing.T) {
	for _, set := range paramSets {
		t.Run(set, func(t *testing.T) {
			cfn, _ := transformed(t, set)
			body, _ := cfn.Resources["HttpApi"].Properties["Body"].(map[string]any)
			cors, ok := body["x-amazon-apigateway-cors"].(map[string]any)
			if !ok {
				t.Fatalf("x-amazon-apigateway-cors is %T %v, not an object", body["x-amazon-apigateway-cors"], body["x-amazon-apigateway-cors"])
			}
			strs := func(key string) []string {
				var out []string
				l, _ := cors[key].([]any)
				for _, v := range l {
					if s, ok := v.(string); ok {
						out = append(out, strings.ToLower(s))
					}
				}
				return out
			}
			lower := func(s []string) []string {
				out := slices.Clone(s)
				for i := range out {
					out[i] = strings.ToLower(out[i])
				}
				return out
			}
			if cors["allowCredentials"] != true {
				t.Errorf("allowCredentials %v", cors["allowCredentials"])
			}
			if got := strs("allowMethods"); !slices.Equal(got, lower(httpapi.CORSMethods)) {
				t.Errorf("allowMethods %v, the middleware %v", got, httpapi.CORSMethods)
			}
			if got := strs("allowHeaders"); !slices.Equal(got, lower(httpapi.CORSHeaders)) {
				t.Errorf("allowHeaders %v, the middleware %v", got, httpapi.CORSHeaders)
			}
			if age, _ := cors["maxAge"].(float64); age <= 0 {
				t.Errorf("maxAge %v", cors["maxAge"])
			}
			origins, _ := cors["allowOrigins"].([]any)
			if len(origins) == 0 || origins[0] != paramsOf(t, set)["FrontendUrl"] {
				t.Errorf("allowOrigins %v, want the frontend %s first", origins, paramsOf(t, set)["FrontendUrl"])
			}
			extra := paramsOf(t, set)["ExtraCorsOrigins"]
			for i, o := range strings.Split(extra, ",") {
				if o == "" {
					continue
				}
				if len(origins) < i+2 || !strings.Contains(fmt.Sprint(origins[i+1]), "HasExtraOrigin"+fmt.Sprint(i+1)) {
					t.Errorf("extra origin %d (%s) has no slot: %v", i+1, o, origins)
				}
			}
		})
	}
}

// TestTransformedEnvironment: each function's environment, after the transform, holds
// every variable its wiring reads and no other; the secrets among them come from
// Secrets Manager at start-up (SECRETS_ARN, which every function has: each checks the
// origin secret), never as variables or dynamic references; GOMEMLIMIT is the Go
// runtime's.
func TestTransformedEnvironment(t *testing.T) {
	for _, set := range paramSets {
		cfn, _ := transformed(t, set)
		fns := lambdas(t, cfn)
		for _, g := range routegroups.All() {
			t.Run(set+"/"+g.Name, func(t *testing.T) {
				id, ok := fns[g.Name]
				if !ok {
					t.Fatalf("no function %s in %v", g.Name, fns)
				}
				env, _ := cfn.Resources[id].Properties["Environment"].(map[string]any)
				vars, _ := env["Variables"].(map[string]any)
				want := []string{"GOMEMLIMIT", secrets.ARNsVariable}
				fromSecrets := false
				for _, k := range append(slices.Clone(app.CommonEnv), g.Env...) {
					if isSecret(k) {
						fromSecrets = true
						continue
					}
					want = append(want, k)
				}
				if fromSecrets != (g.Secrets != nil) {
					t.Errorf("the group reads secrets at start-up: %v; its variables need them: %v", g.Secrets != nil, fromSecrets)
				}
				sort.Strings(want)
				var got []string
				for k := range vars {
					got = append(got, k)
				}
				sort.Strings(got)
				if !slices.Equal(got, want) {
					t.Errorf("environment differs\ntransformed: %v\nwant:        %v", got, want)
				}
				for k, v := range vars {
					if strings.Contains(fmt.Sprint(v), "{{resolve:") {
						t.Errorf("%s is resolved into the environment at deploy: %v", k, v)
					}
				}
				if v := fmt.Sprint(vars["CORS_ORIGINS"]); !strings.Contains(v, "ExtraCorsOrigins") && v != paramsOf(t, set)["ExtraCorsOrigins"] {
					t.Errorf("CORS_ORIGINS %s", v)
				}
			})
		}
	}
}

// statementsOf returns the inline policy statements of a function's role, and its
// managed policies.
func statementsOf(t *testing.T, cfn *samtemplate.CFN, fnID string) ([]map[string]any, []string) {
	t.Helper()
	role, _ := cfn.Resources[fnID].Properties["Role"].(map[string]any)
	ga, _ := role["Fn::GetAtt"].([]any)
	if len(ga) != 2 {
		t.Fatalf("%s's Role %v", fnID, role)
	}
	r := cfn.Resources[ga[0].(string)]
	var sts []map[string]any
	pols, _ := r.Properties["Policies"].([]any)
	for _, p := range pols {
		doc, _ := p.(map[string]any)["PolicyDocument"].(map[string]any)
		for _, s := range doc["Statement"].([]any) {
			st := s.(map[string]any)
			if cond, ok := st["Fn::If"].([]any); ok && len(cond) == 3 {
				st, _ = cond[1].(map[string]any) // a grant of an optional resource (the secrets' key)
			}
			sts = append(sts, st)
		}
	}
	var managed []string
	for _, m := range anyList(r.Properties["ManagedPolicyArns"]) {
		if m != nil {
			managed = append(managed, fmt.Sprint(m))
		}
	}
	return sts, managed
}

// TestTransformedIAM: each function's role, as created: a role of the template's, whose
// managed policies are the template's two of what Lambda does with it (network
// interfaces, X-Ray uploads); no statement has a wildcard action or resource (object
// prefixes and its own log group's streams aside); it connects to the database as its
// own role; the cdn may list the images bucket without a prefix condition, so that S3
// answers a missing key 404, and a readiness probe lists under its group's prefix
// only; only admin-users removes object versions (a deleted user's pictures), listing
// them under a user's prefix only and deleting them under users/ only.
// (infra/tests/iamcheck's TestIAM evaluates every call.)
func TestTransformedIAM(t *testing.T) {
	for _, set := range paramSets {
		cfn, _ := transformed(t, set)
		for name, id := range lambdas(t, cfn) {
			t.Run(set+"/"+name, func(t *testing.T) {
				sts, managed := statementsOf(t, cfn, id)
				if want := []string{"map[Ref:FunctionNetworkInterfacesPolicy]", "map[Ref:FunctionTracesPolicy]"}; !slices.Equal(managed, want) {
					t.Errorf("managed policies %v, want %v", managed, want)
				}
				var connect []string
				for _, st := range sts {
					for _, a := range anyList(st["Action"]) {
						if a == "*" || strings.HasSuffix(fmt.Sprint(a), ":*") {
							t.Errorf("wildcard action %v", a)
						}
						if a == "rds-db:connect" {
							connect = append(connect, fmt.Sprint(st["Resource"]))
						}
					}
					for _, r := range anyList(st["Resource"]) {
						s, ok := r.(string)
						if st["Sid"] == "OwnLogs" {
							s = fmt.Sprint(subOf(r))
							ok = !strings.HasSuffix(s, ":log-group:/aws/lambda/${AWS::StackName}-"+name+":log-stream:*")
						}
						if ok && (s == "*" || strings.HasSuffix(s, ":*")) {
							t.Errorf("wildcard resource %v", s)
						}
					}
					if name == "cdn" && st["Sid"] == "ListProfileImages" && st["Condition"] != nil {
						t.Errorf("ListBucket under a condition S3's 404 check cannot meet: %v", st["Condition"])
					}
					for _, a := range anyList(st["Action"]) {
						switch a {
						case "s3:ListBucket":
							// The cdn's answers a missing key 404; any other function's
							// (its readiness probe) lists under its own prefix only.
							cond := fmt.Sprint(st["Condition"])
							want := map[string]string{"admin-users": "map[StringEquals:map[s3:prefix:users/]]", "admin-contributors": "map[StringEquals:map[s3:prefix:contributors/]]"}[name]
							if name != "cdn" && cond != want {
								t.Errorf("%s: s3:ListBucket under %s, want %q", name, cond, want)
							}
						case "s3:ListBucketVersions":
							cond := fmt.Sprint(st["Condition"])
							if name != "admin-users" || cond != "map[StringLike:map[s3:prefix:users/*/]]" {
								t.Errorf("%s: s3:ListBucketVersions under %s, want admin-users' only, under a user's prefix (users/*/)", name, cond)
							}
						case "s3:DeleteObjectVersion":
							if res := fmt.Sprint(st["Resource"]); name != "admin-users" || !strings.HasSuffix(res, "/users/*]") {
								t.Errorf("%s: s3:DeleteObjectVersion on %s, want admin-users' only, on users/*", name, res)
							}
						}
					}
				}
				if len(connect) != 1 || !strings.Contains(connect[0], dbRoles[name]) {
					t.Errorf("rds-db:connect %v, want one as %s", connect, dbRoles[name])
				}
				if set == "existing" && !strings.Contains(connect[0], "DbProxyResourceId") {
					t.Errorf("connects on %s, want the existing proxy's resource id", connect[0])
				}
			})
		}
	}
}

func anyList(v any) []any {
	if l, ok := v.([]any); ok {
		return l
	}
	return []any{v}
}

// TestTransformedAlias: the API calls each function's "live" alias; the alias points
// at the version the transform publishes and is moved by CodeDeploy (UpdatePolicy);
// the deployment group is rolled back by that function's own alarms only: the new
// version's error rate (alias and ExecutedVersion dimensions, 2 periods) and its
// routes' 5xx (by name), never an API-wide alarm.
func TestTransformedAlias(t *testing.T) {
	cfn, _ := transformed(t, "create")
	body, _ := json.Marshal(cfn.Resources["HttpApi"].Properties["Body"])
	fns := functionOf(t, loadTemplate(t))
	for name, id := range lambdas(t, cfn) {
		t.Run(name, func(t *testing.T) {
			alias := id + "Aliaslive"
			a, ok := cfn.Resources[alias]
			if !ok || a.Type != "AWS::Lambda::Alias" || a.Properties["Name"] != "live" {
				t.Fatalf("no alias live: %v", a)
			}
			ver, _ := a.Properties["FunctionVersion"].(map[string]any)["Fn::GetAtt"].([]any)
			if len(ver) != 2 || cfn.Resources[fmt.Sprint(ver[0])].Type != "AWS::Lambda::Version" {
				t.Fatalf("alias version %v", a.Properties["FunctionVersion"])
			}
			// One version per release, labelled with it; the function's description
			// changes with the release, so Lambda publishes even unchanged code.
			release := paramsOf(t, "create")["Release"]
			if v := cfn.Resources[fmt.Sprint(ver[0])]; ver[0] != id+"Version"+release || fmt.Sprint(v.Properties["Description"]) != "map[Ref:Release]" {
				t.Errorf("version %v %v, want %sVersion%s described by the release", ver[0], v.Properties, id, release)
			}
			if d := fmt.Sprint(cfn.Resources[id].Properties["Description"]); !strings.HasSuffix(d, " "+release) {
				t.Errorf("function description %q does not end with the release", d)
			}
			up, _ := a.UpdatePolicy["CodeDeployLambdaAliasUpdate"].(map[string]any)
			group := fmt.Sprint(up["DeploymentGroupName"].(map[string]any)["Ref"])
			if cfn.Resources[group].Type != "AWS::CodeDeploy::DeploymentGroup" {
				t.Fatalf("alias UpdatePolicy %v", a.UpdatePolicy)
			}
			if !strings.Contains(string(body), "${"+alias+"}") {
				t.Errorf("the API does not call %s", alias)
			}
			alarms := cfn.Resources[group].Properties["AlarmConfiguration"].(map[string]any)["Alarms"].([]any)
			base := strings.TrimSuffix(id, "Function")
			var refs, named []string
			for _, al := range alarms {
				n := al.(map[string]any)["Name"].(map[string]any)
				if r, ok := n["Ref"]; ok {
					refs = append(refs, fmt.Sprint(r))
				} else {
					named = append(named, fmt.Sprint(n["Fn::Sub"]))
				}
			}
			if !slices.Equal(refs, []string{base + "CanaryErrorsAlarm"}) {
				t.Errorf("rollback alarms by reference %v", refs)
			}
			canary := fmt.Sprint(cfn.Resources[base+"CanaryErrorsAlarm"].Properties)
			for _, want := range []string{"ExecutedVersion", fmt.Sprint(ver[0]), "Resource", "${" + id + "}:live", "EvaluationPeriods:2", "DatapointsToAlarm:2", "Invocations"} {
				if !strings.Contains(canary, want) {
					t.Errorf("canary alarm lacks %q: %s", want, canary)
				}
			}
			routes := cfn.Resources[base+"RoutesAlarm"]
			if !slices.Equal(named, []string{fmt.Sprint(routes.Properties["AlarmName"].(map[string]any)["Fn::Sub"])}) {
				t.Errorf("rollback alarms by name %v, routes alarm named %v", named, routes.Properties["AlarmName"])
			}
			var watched []string
			for _, m := range routes.Properties["Metrics"].([]any) {
				ms, _ := m.(map[string]any)["MetricStat"].(map[string]any)
				if ms == nil {
					continue
				}
				dims := map[string]string{}
				for _, d := range ms["Metric"].(map[string]any)["Dimensions"].([]any) {
					dims[fmt.Sprint(d.(map[string]any)["Name"])] = fmt.Sprint(d.(map[string]any)["Value"])
				}
				if dims["Method"] != "" {
					watched = append(watched, dims["Method"]+" "+dims["Resource"])
				}
			}
			sort.Strings(watched)
			if !slices.Equal(watched, fns[name].Routes) {
				t.Errorf("routes alarm watches %v, the function serves %v", watched, fns[name].Routes)
			}
		})
	}
}

// TestTransformedRetention: the images (the only copy of every upload) and the JWT
// secret (replacing it ends every session) outlive the stack and a replacement; the
// bucket is versioned from its first day.
func TestTransformedRetention(t *testing.T) {
	cfn, _ := transformed(t, "create")
	for _, id := range []string{"ImagesBucket", "JwtSecret"} {
		r := cfn.Resources[id]
		if r.DeletionPolicy != "RetainExceptOnCreate" || r.UpdateReplacePolicy != "Retain" {
			t.Errorf("%s: DeletionPolicy %q, UpdateReplacePolicy %q", id, r.DeletionPolicy, r.UpdateReplacePolicy)
		}
	}
	if v := cfn.Resources["ImagesBucket"].Properties["VersioningConfiguration"].(map[string]any)["Status"]; v != "Enabled" {
		t.Errorf("versioning %v", v)
	}
}

// reservedNames are the properties naming a resource whose name stays taken for a
// while after the resource is deleted: a fixed one fails the retry of a failed first
// creation, or any replacement (CloudFormation creates the new resource before it
// deletes the old). Secrets Manager keeps a deleted secret's name for its recovery
// window (7 to 30 days); a deleted bucket's name may not be free again at once; RDS
// Proxy names are unique in the account and region, so a proxy that must be replaced
// (a change of subnets) cannot take its own name.
var reservedNames = map[string]string{
	"AWS::SecretsManager::Secret": "Name",
	"AWS::S3::Bucket":             "BucketName",
	"AWS::RDS::DBProxy":           "DBProxyName",
}

// TestRetryableCreate: a first creation that fails and rolls back can be run again as
// it was: nothing is kept by Retain when the stack's own creation fails (only
// RetainExceptOnCreate, which CloudFormation deletes on that rollback), and no resource
// whose name stays taken after deletion has a fixed name.
func TestRetryableCreate(t *testing.T) {
	for _, set := range paramSets {
		cfn, _ := transformed(t, set)
		for id, r := range cfn.Resources {
			// (A function's versions go with the function.)
			if r.DeletionPolicy == "Retain" && r.Type != "AWS::Lambda::Version" {
				t.Errorf("%s %s: DeletionPolicy Retain keeps it after a failed first creation (RetainExceptOnCreate does not)", set, id)
			}
			if prop, ok := reservedNames[r.Type]; ok {
				// The proxy's name is required; ProxyGeneration gives its replacement
				// another (docs/operations.md).
				if name, fixed := r.Properties[prop]; fixed && !strings.Contains(fmt.Sprint(name), "ProxyGeneration") {
					t.Errorf("%s %s: %s %v is fixed; its name stays taken after a delete, so a retry or a replacement fails", set, id, prop, name)
				}
			}
		}
	}
}

// TestTransformedEndpoints: endpoints exist only when asked for.
func TestTransformedEndpoints(t *testing.T) {
	for set, want := range map[string]string{"create": "true", "existing": "false"} {
		cfn, _ := transformed(t, set)
		p := paramsOf(t, set)
		if p["CreateGatewayEndpoints"] != "" && p["CreateGatewayEndpoints"] != want || p["CreateGatewayEndpoints"] == "" && want != "false" {
			t.Fatalf("%s sets CreateGatewayEndpoints %q", set, p["CreateGatewayEndpoints"])
		}
		for _, id := range []string{"S3GatewayEndpoint", "DynamoDBGatewayEndpoint", "SecretsManagerEndpoint", "LambdaEndpoint"} {
			r, ok := cfn.Resources[id]
			if !ok || r.Type != "AWS::EC2::VPCEndpoint" {
				t.Errorf("%s: no %s", set, id)
				continue
			}
			cond := fmt.Sprint(cfn.Conditions[r.Condition])
			if !strings.Contains(cond, "Create") {
				t.Errorf("%s: %s's condition %s is not an explicit switch", set, id, cond)
			}
		}
	}
}

// TestRulesRefuseBadInput: a missing or malformed input fails before anything is
// created (the parameters' patterns and the template's Rules, checked by transform.py
// as CloudFormation checks them).
func TestRulesRefuseBadInput(t *testing.T) {
	for _, tc := range []struct {
		name, base string
		set        map[string]string
		want       string
	}{
		{"existing proxy without its resource id", "existing", map[string]string{"DbProxyResourceId": ""}, "ExistingProxyNeedsItsResourceId"},
		{"secret by name", "create", map[string]string{"OAuthSecretArn": "media-catalog/prod/oauth"}, "OAuthSecretArn"},
		{"secret by partial ARN", "create", map[string]string{"DbWriterSecretArn": "arn:aws:secretsmanager:eu-central-1:123456789012:secret:media-catalog/prod/db/catalog_writer"}, "DbWriterSecretArn"},
		{"created proxy without a database", "create", map[string]string{"DbInstanceIdentifier": ""}, "CreatedProxyNeedsItsDatabaseAndLogins"},
		{"created proxy without a login", "create", map[string]string{"DbCdnSecretArn": ""}, "CreatedProxyNeedsItsDatabaseAndLogins"},
		{"record without the domain", "existing", map[string]string{"HostedZoneId": "Z0123456789ABCDEFGHIJ"}, "DnsRecordNeedsTheCreatedDomain"},
		{"gateway endpoints without route tables", "existing", map[string]string{"CreateGatewayEndpoints": "true"}, "GatewayEndpointsNeedVpcAndRouteTables"},
		{"four extra origins", "create", map[string]string{"ExtraCorsOrigins": "https://a.example,https://b.example,https://c.example,https://d.example"}, "ExtraCorsOrigins"},
		{"frontend with a path", "create", map[string]string{"FrontendUrl": "https://mediacatalog.app/"}, "FrontendUrl"},
		{"the local environment", "create", map[string]string{"Env": "local"}, "Env"},
		{"edge certificate outside us-east-1", "create", map[string]string{"EdgeCertificateArn": "arn:aws:acm:eu-central-1:123456789012:certificate/1a2b3c4d-5e6f-7081-92a3-b4c5d6e7f809"}, "EdgeCertificateArn"},
		{"regional web ACL", "create", map[string]string{"WebAclArn": "arn:aws:wafv2:eu-central-1:123456789012:regional/webacl/media-catalog-prod-edge/0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b"}, "WebAclArn"},
		{"no web ACL", "existing", map[string]string{"WebAclArn": ""}, "WebAclArn"},
		{"origin on the public name's pattern with a path", "create", map[string]string{"OriginDomainName": "origin-api.mediacatalog.app/x"}, "OriginDomainName"},
		{"no origin client certificate", "existing", map[string]string{"OriginClientCertificateArn": ""}, "OriginClientCertificateArn"},
		{"origin client certificate outside us-east-1", "create", map[string]string{"OriginClientCertificateArn": "arn:aws:acm:eu-central-1:123456789012:certificate/3c4d5e6f-7081-92a3-b4c5-d6e7f8091a2b"}, "OriginClientCertificateArn"},
		{"created domain without a truststore", "create", map[string]string{"OriginTruststoreUri": ""}, "CreatedDomainNeedsItsTruststore"},
		{"created domain without the truststore's version", "create", map[string]string{"OriginTruststoreVersion": ""}, "CreatedDomainNeedsItsTruststore"},
		{"truststore not in S3", "create", map[string]string{"OriginTruststoreUri": "https://example.com/truststore.pem"}, "OriginTruststoreUri"},
		{"existing domain with a truststore it would not get", "existing", map[string]string{"OriginTruststoreUri": "s3://media-catalog-staging-truststore/origin-truststore.pem", "OriginTruststoreVersion": "v1"}, "ExistingDomainTakesNoTruststore"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := paramsOf(t, tc.base)
			for k, v := range tc.set {
				p[k] = v
			}
			b, _ := json.Marshal(p)
			dir := t.TempDir()
			path := filepath.Join(dir, "bad.json")
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			_, _, err := samtemplate.Transform(repoFile("template.yaml"), path, dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want a refusal naming %s", err, tc.want)
			}
		})
	}
}

// TestReleaseIsConfiguration: every function's environment carries the release, so a
// release that changes neither code nor any of the function's other settings (a
// parameter of the alarms only, or RELEASE_SALT after a secret's rotation) is a change
// of configuration, which Lambda publishes as a new version (PublishVersion publishes
// nothing when code and configuration are unchanged, and CloudFormation's version
// resource then fails); a new version runs in new containers, which read the secrets
// when they start.
func TestReleaseIsConfiguration(t *testing.T) {
	for _, set := range paramSets {
		cfn, _ := transformed(t, set)
		for name, id := range lambdas(t, cfn) {
			env, _ := cfn.Resources[id].Properties["Environment"].(map[string]any)
			vars, _ := env["Variables"].(map[string]any)
			if got := fmt.Sprint(vars["RELEASE"]); got != "map[Ref:Release]" {
				t.Errorf("%s %s: RELEASE is %s, want the Release parameter", set, name, got)
			}
		}
	}
}
