package samtemplate_test

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/mediacatalog/service/infra/samtemplate"
	"github.com/mediacatalog/service/shared/deployhook"
	"github.com/mediacatalog/service/shared/readiness"
	"github.com/mediacatalog/service/shared/routegroups"
)

// TestTransformedDeployHook: CodeDeploy runs the deploy hook before it shifts any
// traffic of every route group's function (the alias's BeforeAllowTrafficHook), the
// readiness probe has checks and route probes for each group and for nothing else,
// each route probe a route of that group's function (infra/smoke holds the real
// functions to them), and, as created:
//   - its name starts with CodeDeployHook_, the functions SAM's CodeDeploy role
//     (AWSCodeDeployRoleForLambda, "arn:aws:lambda:*:*:function:CodeDeployHook_*")
//     may invoke;
//   - it runs outside the VPC and its role has the logging and X-Ray policies only,
//     not the VPC one;
//   - it may invoke the versions and aliases of the stack's eight functions (qualified
//     ARNs of their names) and nothing else, and read and report the deployments and
//     revisions of the stack's CodeDeploy application only;
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
			if name := fmt.Sprint(subOf(hook.Properties["FunctionName"])); !strings.HasPrefix(name, "CodeDeployHook_") {
				t.Errorf("FunctionName %s: CodeDeploy's role may not invoke it", name)
			}
			cdRole := fmt.Sprint(cfn.Resources["CodeDeployServiceRole"].Properties["ManagedPolicyArns"])
			if !strings.Contains(cdRole, "service-role/AWSCodeDeployRoleForLambda") {
				t.Errorf("CodeDeploy's role has %s", cdRole)
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
			var managed []string
			for _, m := range role.Properties["ManagedPolicyArns"].([]any) {
				s := fmt.Sprint(subOf(m))
				managed = append(managed, s[strings.LastIndex(s, ":policy/")+len(":policy/"):])
			}
			sort.Strings(managed)
			if want := []string{"AWSXrayWriteOnlyAccess", "service-role/AWSLambdaBasicExecutionRole"}; !slices.Equal(managed, want) {
				t.Errorf("managed policies %v, want %v", managed, want)
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
			want := map[string][]string{
				"lambda:InvokeFunction":                           invoke,
				"codedeploy:GetDeployment":                        deployments,
				"codedeploy:PutLifecycleEventHookExecutionStatus": deployments,
				"codedeploy:GetApplicationRevision":               {"arn:${AWS::Partition}:codedeploy:${AWS::Region}:${AWS::AccountId}:application:${ServerlessDeploymentApplication}"},
			}
			for a := range grants {
				sort.Strings(grants[a])
			}
			if fmt.Sprint(grants) != fmt.Sprint(want) {
				t.Errorf("the hook's grants\n%v\nwant\n%v", grants, want)
			}
			logs := fmt.Sprint(cfn.Resources[samtemplate.DeployHook+"Logs"].Properties)
			if want := fmt.Sprintf("map[LogGroupName:map[Fn::Sub:/aws/lambda/%s] RetentionInDays:map[Ref:LogRetentionDays]]", subOf(hook.Properties["FunctionName"])); logs != want {
				t.Errorf("the hook's log group %s, want %s", logs, want)
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
