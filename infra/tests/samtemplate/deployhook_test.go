package samtemplate_test

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/mediacatalog/service/infra/tests/samtemplate"
	"github.com/mediacatalog/service/shared/deployhook"
	"github.com/mediacatalog/service/shared/readiness"
	"github.com/mediacatalog/service/shared/routegroups"
)

// TestTransformedDeployHook: CodeDeploy runs the deploy hook before it shifts any
// traffic of every route group's function (the alias's BeforeAllowTrafficHook), the
// readiness probe has checks and route probes for each group and for nothing else,
// each route probe a route of that group's function (infra/tests/smoke holds the real
// functions to them), and, as created:
//   - CodeDeploy deploys with the template's CodeDeployServiceRole (no managed
//     policy), which may invoke the hook by its name;
//   - it runs outside the VPC and its role has the template's X-Ray policy only, not
//     the network interfaces' one;
//   - it may write its own log group's streams, invoke the versions and aliases of
//     the stack's eight functions (qualified ARNs of their names) and nothing else,
//     read the deployments and revisions of the stack's CodeDeploy application only,
//     and report a hook's status ("*": the action has no resource type);
//   - its Timeout is above a probe and two CodeDeploy calls, so that it always reports;
//   - its logs are kept like the functions' (its own log group, LogRetentionDays).
func TestTransformedDeployHook(t *testing.T) {
	groups := []string{}
	for _, g := range routegroups.All() {
		groups = append(groups, g.Name)
	}
	sort.Strings(groups)
	if probes := slices.Sorted(maps.Keys(readiness.Probes)); !slices.Equal(probes, groups) {
		t.Errorf("route probes for %v, route groups %v", probes, groups)
	}
	if deps := slices.Sorted(maps.Keys(readiness.Dependencies)); !slices.Equal(deps, groups) {
		t.Errorf("readiness checks for %v, route groups %v", deps, groups)
	}
	fns := functionOf(t, loadTemplate(t))
	for g, ps := range readiness.Probes {
		for _, p := range ps {
			if f := fns[g]; f == nil || !slices.Contains(f.Routes, p.RouteKey) {
				t.Errorf("%s's probe %s is no route of its function", g, p.RouteKey)
			}
		}
	}
	for _, set := range paramSets {
		t.Run(set, func(t *testing.T) {
			cfn, _ := transformed(t, set)
			hook, ok := cfn.Resources[samtemplate.DeployHook]
			if !ok || hook.Type != "AWS::Lambda::Function" {
				t.Fatalf("no function %s", samtemplate.DeployHook)
			}
			hookName := fmt.Sprint(subOf(hook.Properties["FunctionName"]))
			cd := cfn.Resources["CodeDeployServiceRole"]
			if cd.Type != "AWS::IAM::Role" || cd.Properties["ManagedPolicyArns"] != nil {
				t.Errorf("CodeDeploy's role %s: want the template's, without managed policies", fmt.Sprint(cd.Properties["ManagedPolicyArns"]))
			}
			for _, g := range cfn.OfType("AWS::CodeDeploy::DeploymentGroup") {
				if got := fmt.Sprint(cfn.Resources[g].Properties["ServiceRoleArn"]); got != "map[Fn::GetAtt:[CodeDeployServiceRole Arn]]" {
					t.Errorf("%s deploys as %s", g, got)
				}
			}
			if invoke := fmt.Sprint(cd.Properties["Policies"]); !strings.Contains(invoke, "function:"+hookName+"]") {
				t.Errorf("CodeDeploy's role may not invoke %s: %s", hookName, invoke)
			}
			if v, ok := hook.Properties["VpcConfig"]; ok && fmt.Sprint(v) != "map[Ref:AWS::NoValue]" {
				t.Errorf("the hook runs in the VPC: %v", v)
			}
			limit := (deployhook.ProbeTimeout + 2*deployhook.CallTimeout).Seconds()
			if to, _ := hook.Properties["Timeout"].(float64); to <= limit {
				t.Errorf("Timeout %v s, not above the probe's and two calls' %v s", hook.Properties["Timeout"], limit)
			}

			// Every route group's canary runs the hook first.
			fns := lambdas(t, cfn)
			var names []string
			for _, g := range groups {
				id, ok := fns[g]
				if !ok {
					t.Fatalf("no function %s", g)
				}
				up, _ := cfn.Resources[id+"Aliaslive"].UpdatePolicy["CodeDeployLambdaAliasUpdate"].(map[string]any)
				if got := fmt.Sprint(up["BeforeAllowTrafficHook"]); got != "map[Ref:"+samtemplate.DeployHook+"]" {
					t.Errorf("%s: BeforeAllowTrafficHook %s, want the deploy hook", g, got)
				}
				names = append(names, fmt.Sprint(subOf(cfn.Resources[id].Properties["FunctionName"])))
			}

			// Its role: exactly these grants.
			ga, _ := hook.Properties["Role"].(map[string]any)["Fn::GetAtt"].([]any)
			if len(ga) != 2 {
				t.Fatalf("Role %v", hook.Properties["Role"])
			}
			role := cfn.Resources[fmt.Sprint(ga[0])]
			if got := fmt.Sprint(role.Properties["ManagedPolicyArns"]); got != "[map[Ref:FunctionTracesPolicy]]" {
				t.Errorf("managed policies %s, want the template's FunctionTracesPolicy", got)
			}
			grants := map[string][]string{}
			for _, p := range role.Properties["Policies"].([]any) {
				doc, _ := p.(map[string]any)["PolicyDocument"].(map[string]any)
				for _, s := range doc["Statement"].([]any) {
					st := s.(map[string]any)
					if st["Effect"] != "Allow" || st["NotAction"] != nil || st["NotResource"] != nil {
						t.Errorf("statement %v", st)
					}
					for _, a := range anyList(st["Action"]) {
						for _, r := range anyList(st["Resource"]) {
							grants[fmt.Sprint(a)] = append(grants[fmt.Sprint(a)], fmt.Sprint(subOf(r)))
						}
					}
				}
			}
			var invoke []string
			for _, n := range names {
				invoke = append(invoke, "arn:${AWS::Partition}:lambda:${AWS::Region}:${AWS::AccountId}:function:"+n+":*")
			}
			sort.Strings(invoke)
			deployments := []string{"arn:${AWS::Partition}:codedeploy:${AWS::Region}:${AWS::AccountId}:deploymentgroup:${ServerlessDeploymentApplication}/*"}
			logs := []string{"arn:${AWS::Partition}:logs:${AWS::Region}:${AWS::AccountId}:log-group:/aws/lambda/" + hookName + ":log-stream:*"}
			want := map[string][]string{
				"logs:CreateLogStream":                            logs,
				"logs:PutLogEvents":                               logs,
				"lambda:InvokeFunction":                           invoke,
				"codedeploy:GetDeployment":                        deployments,
				"codedeploy:PutLifecycleEventHookExecutionStatus": {"*"},
				"codedeploy:GetApplicationRevision":               {"arn:${AWS::Partition}:codedeploy:${AWS::Region}:${AWS::AccountId}:application:${ServerlessDeploymentApplication}"},
			}
			for a := range grants {
				sort.Strings(grants[a])
			}
			if fmt.Sprint(grants) != fmt.Sprint(want) {
				t.Errorf("the hook's grants\n%v\nwant\n%v", grants, want)
			}
			group := fmt.Sprint(cfn.Resources[samtemplate.DeployHook+"Logs"].Properties)
			if want := fmt.Sprintf("map[LogGroupName:map[Fn::Sub:/aws/lambda/%s] RetentionInDays:map[Ref:LogRetentionDays]]", hookName); group != want {
				t.Errorf("the hook's log group %s, want %s", group, want)
			}
			if cfn.Resources["ServerlessDeploymentApplication"].Type != "AWS::CodeDeploy::Application" {
				t.Errorf("ServerlessDeploymentApplication is %q", cfn.Resources["ServerlessDeploymentApplication"].Type)
			}
		})
	}
}

// subOf is an Fn::Sub's string, or v itself.
func subOf(v any) any {
	if m, ok := v.(map[string]any); ok {
		if s, ok := m["Fn::Sub"].(string); ok {
			return s
		}
	}
	return v
}
