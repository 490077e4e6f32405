package iamcheck

import (
	"fmt"
	"sort"
	"strings"

	"github.com/mediacatalog/service/infra/tests/samtemplate"
)

// The principals that are no function: the role CodeDeploy shifts the aliases with,
// and RDS Proxy's.
const (
	CodeDeploy = "codedeploy"
	RDSProxy   = "rds-proxy"
)

// Reasons of the requests AWS's services make with the stack's roles: what no test can
// record, since no code of the service makes them. They are the short list of grants
// no call of the code uses.
const (
	reasonLogs = "writes the function's output to its log group with the function's role; " +
		"the template creates the group: no logs:CreateLogGroup"
	reasonENI = "creates, describes and deletes the function's network interfaces in the VPC with its role; " +
		"an interface's ARN does not exist before it is created and DescribeNetworkInterfaces and DescribeSubnets " +
		"have no resource type, so only \"*\" is granted (Lambda developer guide, \"Giving Lambda functions access to resources in an Amazon VPC\")"
	reasonXRay = "(its X-Ray daemon) uploads the function's trace segments (shared/telemetry's datagrams) and the " +
		"daemon's telemetry with the function's role; neither action has a resource type"
	reasonAlias = "reads and moves the alias live of each function it deploys (resource type function: the unqualified ARN)"
	reasonPC    = "reads the alias's provisioned concurrency before it shifts traffic (resource type function alias)"
	reasonHook  = "invokes the deployment's PreTraffic hook"
	reasonAlarm = "polls the deployment group's alarms, which roll the deployment back"
	reasonProxy = "reads the database logins of its auth entries with its role"
)

// Functions are the stack's Lambda functions by principal name: the route groups'
// (their FunctionName after "<stack>-") and the deploy hook's, each with its logical id.
func Functions(s *samtemplate.Stack) (map[string]string, error) {
	out := map[string]string{}
	for _, id := range s.CFN.OfType("AWS::Lambda::Function") {
		name, err := s.ResolveString(s.CFN.Resources[id].Properties["FunctionName"])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", id, err)
		}
		short := strings.TrimPrefix(name, s.Name+"-")
		if id == samtemplate.DeployHook {
			short = "deploy-hook"
		}
		out[short] = id
	}
	return out, nil
}

// Principals are the stack's roles by principal name: each function's execution role,
// CodeDeploy's service role (every deployment group's ServiceRoleArn) and RDS Proxy's,
// when the stack creates the proxy.
func Principals(s *samtemplate.Stack, functions map[string]string) (map[string]*Principal, error) {
	out := map[string]*Principal{}
	add := func(name string, role any) error {
		id, err := roleID(role)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		p, err := RolePrincipal(s, name, id)
		if err != nil {
			return err
		}
		out[name] = p
		return nil
	}
	for name, id := range functions {
		if err := add(name, s.CFN.Resources[id].Properties["Role"]); err != nil {
			return nil, err
		}
	}
	groups := s.CFN.OfType("AWS::CodeDeploy::DeploymentGroup")
	for _, g := range groups {
		id, err := roleID(s.CFN.Resources[g].Properties["ServiceRoleArn"])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", g, err)
		}
		if p := out[CodeDeploy]; p != nil && p.Role != id {
			return nil, fmt.Errorf("deployment groups with two service roles, %s and %s", p.Role, id)
		}
		if out[CodeDeploy] == nil {
			if err := add(CodeDeploy, s.CFN.Resources[g].Properties["ServiceRoleArn"]); err != nil {
				return nil, err
			}
		}
	}
	for _, id := range s.CFN.OfType("AWS::RDS::DBProxy") {
		if s.Exists(id) {
			if err := add(RDSProxy, s.CFN.Resources[id].Properties["RoleArn"]); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// roleID is the logical id of the role a Role property names (Fn::GetAtt Role.Arn).
func roleID(v any) (string, error) {
	m, _ := v.(map[string]any)
	ga, _ := m["Fn::GetAtt"].([]any)
	if len(ga) != 2 || ga[1] != "Arn" {
		return "", fmt.Errorf("role %v is not a role of the template (Fn::GetAtt <Role>.Arn)", v)
	}
	return fmt.Sprint(ga[0]), nil
}

// Platform are the requests AWS's services make with the stack's roles: Lambda's for
// every function (logs; network interfaces in a VPC; traces with active tracing),
// CodeDeploy's for every alias it deploys, RDS Proxy's for its logins.
func Platform(s *samtemplate.Stack, a Account, functions map[string]string) ([]Check, error) {
	var out []Check
	arn := func(service, rest string) string {
		return fmt.Sprintf("arn:%s:%s:%s:%s:%s", a.Partition, service, a.Region, a.ID, rest)
	}
	names := make([]string, 0, len(functions))
	for n := range functions {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		r := s.CFN.Resources[functions[name]]
		fn, err := s.ResolveString(r.Properties["FunctionName"])
		if err != nil {
			return nil, err
		}
		group := "/aws/lambda/" + fn
		if lc, ok := r.Properties["LoggingConfig"].(map[string]any); ok && lc["LogGroup"] != nil {
			if group, err = s.ResolveString(lc["LogGroup"]); err != nil {
				return nil, err
			}
		}
		stream := arn("logs", "log-group:"+group+":log-stream:2026/12/02/[1]0123456789abcdef0123456789abcdef")
		for _, action := range []string{"logs:CreateLogStream", "logs:PutLogEvents"} {
			out = append(out, Check{Principal: name, Request: Request{Action: action, Resource: stream}, Source: "Lambda", Reason: reasonLogs})
		}
		vpc, err := s.Resolve(r.Properties["VpcConfig"])
		if err != nil {
			return nil, err
		}
		if m, _ := vpc.(map[string]any); len(asList(m["SubnetIds"])) > 0 {
			for _, action := range []string{"ec2:CreateNetworkInterface", "ec2:DescribeNetworkInterfaces", "ec2:DescribeSubnets",
				"ec2:DeleteNetworkInterface", "ec2:AssignPrivateIpAddresses", "ec2:UnassignPrivateIpAddresses"} {
				out = append(out, Check{Principal: name, Request: Request{Action: action, Resource: "*"}, Source: "Lambda", Reason: reasonENI})
			}
		}
		if tc, _ := r.Properties["TracingConfig"].(map[string]any); tc["Mode"] == "Active" {
			for _, action := range []string{"xray:PutTraceSegments", "xray:PutTelemetryRecords"} {
				out = append(out, Check{Principal: name, Request: Request{Action: action, Resource: "*"}, Source: "Lambda", Reason: reasonXRay})
			}
		}
	}

	for _, id := range s.CFN.OfType("AWS::Lambda::Alias") {
		alias := s.CFN.Resources[id]
		up, _ := alias.UpdatePolicy["CodeDeployLambdaAliasUpdate"].(map[string]any)
		if up == nil {
			continue
		}
		fn, err := s.ResolveString(alias.Properties["FunctionName"])
		if err != nil {
			return nil, err
		}
		aliasARN, err := s.ResolveString(map[string]any{"Ref": id})
		if err != nil {
			return nil, err
		}
		fnARN := arn("lambda", "function:"+fn)
		for _, action := range []string{"lambda:GetAlias", "lambda:UpdateAlias"} {
			out = append(out, Check{Principal: CodeDeploy, Request: Request{Action: action, Resource: fnARN}, Source: "CodeDeploy", Reason: reasonAlias})
		}
		out = append(out, Check{Principal: CodeDeploy, Request: Request{Action: "lambda:GetProvisionedConcurrencyConfig", Resource: aliasARN},
			Source: "CodeDeploy", Reason: reasonPC})
		for _, hook := range []string{"BeforeAllowTrafficHook", "AfterAllowTrafficHook"} {
			if up[hook] == nil {
				continue
			}
			h, err := s.ResolveString(up[hook])
			if err != nil {
				return nil, err
			}
			out = append(out, Check{Principal: CodeDeploy, Request: Request{Action: "lambda:InvokeFunction", Resource: arn("lambda", "function:"+h)},
				Source: "CodeDeploy", Reason: reasonHook})
		}
		gm, _ := up["DeploymentGroupName"].(map[string]any)
		group := s.CFN.Resources[fmt.Sprint(gm["Ref"])]
		ac, _ := group.Properties["AlarmConfiguration"].(map[string]any)
		for _, al := range asList(ac["Alarms"]) {
			m, _ := al.(map[string]any)
			alarm, err := s.ResolveString(m["Name"])
			if err != nil {
				return nil, err
			}
			out = append(out, Check{Principal: CodeDeploy, Request: Request{Action: "cloudwatch:DescribeAlarms", Resource: arn("cloudwatch", "alarm:"+alarm)},
				Source: "CodeDeploy", Reason: reasonAlarm})
		}
	}

	for _, id := range s.CFN.OfType("AWS::RDS::DBProxy") {
		if !s.Exists(id) {
			continue
		}
		auth, err := s.Resolve(s.CFN.Resources[id].Properties["Auth"])
		if err != nil {
			return nil, err
		}
		for _, e := range asList(auth) {
			m, _ := e.(map[string]any)
			secret := fmt.Sprint(m["SecretArn"])
			out = append(out, Check{Principal: RDSProxy, Request: Request{Action: "secretsmanager:GetSecretValue", Resource: secret}, Source: "RDS Proxy", Reason: reasonProxy})
			if key := a.SecretKeys[secret]; key != "" {
				out = append(out, Check{Principal: RDSProxy, Request: a.decryptVia(key, "secretsmanager"), Source: "RDS Proxy", Reason: reasonProxy})
			}
		}
	}
	for i := range out {
		if out[i].Context == nil {
			out[i].Context = map[string]string{}
		}
		out[i].Context["aws:SecureTransport"] = "true"
	}
	return out, nil
}
