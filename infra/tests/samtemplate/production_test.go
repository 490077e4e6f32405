package samtemplate_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/mediacatalog/service/infra/tests/samtemplate"
	"github.com/mediacatalog/service/shared/cdn"
	"github.com/mediacatalog/service/shared/config"
	"github.com/mediacatalog/service/shared/httpapi"
	"github.com/mediacatalog/service/shared/routegroups"
)

// resource returns the Properties of a resource, failing when it is absent or of
// another type.
func resource(t *testing.T, tpl *samtemplate.Template, id, typ string) *yaml.Node {
	t.Helper()
	r := tpl.Resources[id]
	if r == nil {
		t.Fatalf("no resource %s", id)
	}
	if got := samtemplate.Scalar(samtemplate.Get(r, "Type")); got != typ {
		t.Fatalf("%s is a %s, want %s", id, got, typ)
	}
	return samtemplate.Get(r, "Properties")
}

// param returns a parameter's field ("Default", "MaxValue"...).
func param(t *testing.T, tpl *samtemplate.Template, name, field string) string {
	t.Helper()
	p := samtemplate.Get(tpl.Root, "Parameters", name)
	if p == nil {
		t.Fatalf("no parameter %s", name)
	}
	return samtemplate.Scalar(samtemplate.Get(p, field))
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("%q is not a number", s)
	}
	return n
}

// list is a sequence's items as text.
func list(n *yaml.Node) []string {
	if n == nil {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		return []string{samtemplate.Scalar(n)}
	}
	var out []string
	for _, c := range n.Content {
		out = append(out, samtemplate.Scalar(c))
	}
	return out
}

// dbRoles: the database role each function connects as; only the read-only role for
// the public catalog, the cdn's own for the avatar ledger.
var dbRoles = map[string]string{
	"tags": "DbReaderUser", "publishers": "DbReaderUser", "cdn": "DbCdnUser",
	"oauth": "DbWriterUser", "admin-users": "DbWriterUser", "admin-roles": "DbWriterUser",
	"admin-permissions": "DbWriterUser", "admin-contributors": "DbWriterUser",
}

// subParts returns a long-form !Sub's string and variables.
func subParts(t *testing.T, n *yaml.Node) (string, map[string]string) {
	t.Helper()
	if n == nil || n.Tag != "!Sub" || n.Kind != yaml.SequenceNode || len(n.Content) != 2 {
		t.Fatalf("want a !Sub [string, {variables}], got %s", samtemplate.Scalar(n))
	}
	vars := map[string]string{}
	for i := 0; i+1 < len(n.Content[1].Content); i += 2 {
		vars[n.Content[1].Content[i].Value] = samtemplate.Scalar(n.Content[1].Content[i+1])
	}
	return n.Content[0].Value, vars
}

// statements returns the function's policy statements by Sid.
func statements(f *samtemplate.Function) map[string]*yaml.Node {
	out := map[string]*yaml.Node{}
	for _, p := range f.Policies {
		if st := samtemplate.Get(p, "Statement"); st != nil {
			for _, s := range st.Content {
				out[samtemplate.Scalar(samtemplate.Get(s, "Sid"))] = s
			}
		}
	}
	return out
}

// TestDatabaseAccess: every function reaches PostgreSQL through the proxy as its own
// role, with an IAM token (no password anywhere in its configuration), TLS verify-full
// and the template's connect timeout (TestDeadlineHierarchy holds it within the
// request's budget); its IAM policy lets it connect as that
// role only; the configuration the template gives is what the pool honours.
func TestDatabaseAccess(t *testing.T) {
	tpl := loadTemplate(t)
	if got := tpl.GlobalEnv["DB_IAM_AUTH"]; got != "true" {
		t.Errorf("DB_IAM_AUTH = %q", got)
	}
	cfg, err := config.Load(func(k string) string {
		return map[string]string{"DB_MAX_CONNS": tpl.GlobalEnv["DB_MAX_CONNS"], "DB_IAM_AUTH": tpl.GlobalEnv["DB_IAM_AUTH"]}[k]
	})
	if err != nil || cfg.DBMaxConns < 1 || cfg.DBMaxConns > 2 || !cfg.DBIAMAuth {
		t.Errorf("the template's DB_MAX_CONNS %q reads as %d (%v), IAM %v", tpl.GlobalEnv["DB_MAX_CONNS"], cfg.DBMaxConns, err, cfg.DBIAMAuth)
	}
	host := "!If [CreateProxy, !GetAtt DbProxy.Endpoint, !Ref DbProxyEndpoint]"
	for _, f := range functionOf(t, tpl) {
		t.Run(f.Name, func(t *testing.T) {
			url, vars := subParts(t, f.EnvNodes["DATABASE_URL"])
			if url != "postgres://${User}@${Host}:${DbPort}/${DbName}?sslmode=verify-full&connect_timeout=${DbConnectTimeout}" {
				t.Errorf("DATABASE_URL %q", url)
			}
			if vars["User"] != "!Ref "+dbRoles[f.Name] || vars["Host"] != host {
				t.Errorf("DATABASE_URL variables %v, want user %s through the proxy", vars, dbRoles[f.Name])
			}
			st := statements(f)["ConnectAsOwnDatabaseRole"]
			if !slices.Equal(list(samtemplate.Get(st, "Action")), []string{"rds-db:connect"}) {
				t.Fatalf("no rds-db:connect statement: %s", samtemplate.Scalar(st))
			}
			arn, avars := subParts(t, samtemplate.Get(st, "Resource"))
			if !strings.HasSuffix(arn, ":dbuser:${ProxyId}/${User}") || avars["User"] != "!Ref "+dbRoles[f.Name] ||
				!strings.Contains(avars["ProxyId"], "!GetAtt DbProxy.DBProxyArn") || !strings.Contains(avars["ProxyId"], "!Ref DbProxyResourceId") {
				t.Errorf("rds-db:connect on %s %v", arn, avars)
			}
			for k, v := range f.Env {
				if strings.Contains(strings.ToLower(k+v), "password") {
					t.Errorf("%s mentions a password: %s", k, v)
				}
			}
		})
	}

	// The proxy: created unless an existing one is named, IAM required for every role,
	// TLS required, and a borrow timeout below every function's timeout.
	if c := samtemplate.Get(tpl.Root, "Conditions", "CreateProxy"); c.Tag != "!Equals" || !slices.Equal(list(c), []string{"!Ref DbProxyEndpoint", ""}) || param(t, tpl, "DbProxyEndpoint", "Default") != "" {
		t.Errorf("CreateProxy is %s; want the proxy by default", samtemplate.Scalar(c))
	}
	for _, id := range []string{"DbProxy", "DbProxyTargetGroup", "DbProxyRole"} {
		if got := samtemplate.Scalar(samtemplate.Get(tpl.Resources[id], "Condition")); got != "CreateProxy" {
			t.Errorf("%s's condition %q", id, got)
		}
	}
	proxy := resource(t, tpl, "DbProxy", "AWS::RDS::DBProxy")
	if samtemplate.Scalar(samtemplate.Get(proxy, "RequireTLS")) != "true" || samtemplate.Scalar(samtemplate.Get(proxy, "EngineFamily")) != "POSTGRESQL" {
		t.Error("the proxy must be PostgreSQL with TLS required")
	}
	auth := samtemplate.Get(proxy, "Auth")
	var secrets []string
	for _, a := range auth.Content {
		if samtemplate.Scalar(samtemplate.Get(a, "IAMAuth")) != "REQUIRED" {
			t.Errorf("proxy auth without IAM: %s", samtemplate.Scalar(a))
		}
		secrets = append(secrets, samtemplate.Scalar(samtemplate.Get(a, "SecretArn")))
	}
	slices.Sort(secrets)
	if want := []string{"!Ref DbCdnSecretArn", "!Ref DbReaderSecretArn", "!Ref DbWriterSecretArn"}; !slices.Equal(secrets, want) {
		t.Errorf("proxy logins %v, want %v", secrets, want)
	}
	tg := resource(t, tpl, "DbProxyTargetGroup", "AWS::RDS::DBProxyTargetGroup")
	pool := samtemplate.Get(tg, "ConnectionPoolConfigurationInfo")
	if got := samtemplate.Scalar(samtemplate.Get(pool, "ConnectionBorrowTimeout")); got != "!Ref ProxyBorrowTimeout" {
		t.Errorf("ConnectionBorrowTimeout %q", got)
	}
	// A fixed idle share above an environment's ProxyMaxConnectionsPercent fails the
	// deploy; the proxy's default (half of it) never does.
	if idle := samtemplate.Get(pool, "MaxIdleConnectionsPercent"); idle != nil {
		if n, err := strconv.Atoi(samtemplate.Scalar(idle)); err != nil || n > atoi(t, param(t, tpl, "ProxyMaxConnectionsPercent", "MinValue")) {
			t.Errorf("MaxIdleConnectionsPercent %s may exceed ProxyMaxConnectionsPercent", samtemplate.Scalar(idle))
		}
	}
}

// TestSecretsPerFunction: a function may read exactly the secrets its variables come
// from: the origin secret (made by the stack) everywhere, since every function checks
// CloudFront's X-Origin-Verify; the JWT secret (made by the stack) where sessions are
// checked; the OAuth applications' secret in oauth only.
func TestSecretsPerFunction(t *testing.T) {
	tpl := loadTemplate(t)
	gen := samtemplate.Get(resource(t, tpl, "JwtSecret", "AWS::SecretsManager::Secret"), "GenerateSecretString")
	if samtemplate.Scalar(samtemplate.Get(gen, "GenerateStringKey")) != "JWT_SECRET" || atoi(t, samtemplate.Scalar(samtemplate.Get(gen, "PasswordLength"))) < 32 {
		t.Errorf("JwtSecret generates %s", samtemplate.Scalar(gen))
	}
	fns := functionOf(t, tpl)
	for _, g := range routegroups.All() {
		t.Run(g.Name, func(t *testing.T) {
			f := fns[g.Name]
			want := []string{"OriginSecret"}
			if slices.Contains(g.Env, "JWT_SECRET") {
				want = append(want, "JwtSecret")
			}
			if slices.ContainsFunc(g.Env, func(k string) bool { return strings.HasPrefix(k, "OAUTH_") && strings.HasSuffix(k, "_CLIENT_SECRET") }) {
				want = append(want, "OAuthSecretArn")
			}
			var listed []string
			if n := f.EnvNodes["SECRETS_ARN"]; n != nil {
				listed = samtemplate.Refs(n)
			}
			var readable []string
			if st := statements(f)["ReadOwnSecrets"]; st != nil {
				if !slices.Equal(list(samtemplate.Get(st, "Action")), []string{"secretsmanager:GetSecretValue"}) {
					t.Errorf("secret statement allows %s", samtemplate.Scalar(samtemplate.Get(st, "Action")))
				}
				readable = samtemplate.Refs(samtemplate.Get(st, "Resource"))
			}
			for _, p := range f.Policies {
				if strings.Contains(samtemplate.Scalar(p), "secretsmanager:") && samtemplate.Get(p, "Statement") == nil {
					t.Errorf("secrets access outside ReadOwnSecrets: %s", samtemplate.Scalar(p))
				}
			}
			slices.Sort(listed)
			slices.Sort(want)
			slices.Sort(readable)
			if !slices.Equal(listed, want) || !slices.Equal(readable, want) {
				t.Errorf("SECRETS_ARN lists %v, IAM allows %v; want %v", listed, readable, want)
			}
		})
	}
}

// TestDomain: the API has one public host, ApiDomainName: the distribution's alias (with
// the us-east-1 certificate), its DNS records, the functions' API_URL and the ApiUrl
// output. API Gateway answers only on OriginDomainName (the custom domain, created with
// the regional certificate or an existing one), which is the distribution's one origin;
// the default execute-api host is off; the cdn function invalidates the stack's own
// distribution from the first deploy.
func TestDomain(t *testing.T) {
	tpl := loadTemplate(t)
	want := `!Sub https://${ApiDomainName}`
	if got := tpl.GlobalEnv["API_URL"]; got != want {
		t.Errorf("API_URL %q", got)
	}
	if got := samtemplate.Scalar(samtemplate.Get(tpl.Root, "Outputs", "ApiUrl", "Value")); got != want {
		t.Errorf("ApiUrl output %q", got)
	}
	if got := samtemplate.Scalar(samtemplate.Get(resource(t, tpl, "HttpApi", "AWS::Serverless::HttpApi"), "DisableExecuteApiEndpoint")); got != "true" {
		t.Errorf("DisableExecuteApiEndpoint %q", got)
	}
	dc := samtemplate.Get(resource(t, tpl, "Distribution", "AWS::CloudFront::Distribution"), "DistributionConfig")
	origins := samtemplate.Get(dc, "Origins")
	if len(origins.Content) != 1 || samtemplate.Scalar(samtemplate.Get(origins.Content[0], "DomainName")) != "!Ref OriginDomainName" {
		t.Errorf("CloudFront origin %s", samtemplate.Scalar(origins))
	}
	if got := list(samtemplate.Get(dc, "Aliases")); !slices.Equal(got, []string{"!Ref ApiDomainName"}) {
		t.Errorf("distribution aliases %v", got)
	}
	if got := samtemplate.Scalar(samtemplate.Get(dc, "ViewerCertificate", "AcmCertificateArn")); got != "!Ref EdgeCertificateArn" {
		t.Errorf("distribution certificate %q", got)
	}
	if !strings.Contains(param(t, tpl, "EdgeCertificateArn", "AllowedPattern"), ":acm:us-east-1:") {
		t.Errorf("EdgeCertificateArn accepts a certificate outside us-east-1: %s", param(t, tpl, "EdgeCertificateArn", "AllowedPattern"))
	}
	domain := resource(t, tpl, "ApiDomain", "AWS::ApiGatewayV2::DomainName")
	if samtemplate.Scalar(samtemplate.Get(domain, "DomainName")) != "!Ref OriginDomainName" ||
		!strings.Contains(samtemplate.Scalar(samtemplate.Get(domain, "DomainNameConfigurations")), "!Ref CertificateArn") {
		t.Errorf("ApiDomain %s", samtemplate.Scalar(domain))
	}
	mapping := resource(t, tpl, "ApiDomainMapping", "AWS::ApiGatewayV2::ApiMapping")
	if dn := samtemplate.Get(mapping, "DomainName"); samtemplate.Scalar(samtemplate.Get(mapping, "ApiId")) != "!Ref HttpApi" ||
		dn.Tag != "!If" || !slices.Equal(list(dn), []string{"CreateDomain", "!Ref ApiDomain", "!Ref OriginDomainName"}) {
		t.Errorf("ApiDomainMapping %s", samtemplate.Scalar(mapping))
	}
	for id, want := range map[string][2]string{
		"OriginDomainRecord":  {"!Ref OriginDomainName", "!GetAtt ApiDomain.RegionalDomainName"},
		"ApiDomainRecord":     {"!Ref ApiDomainName", "!GetAtt Distribution.DomainName"},
		"ApiDomainRecordIPv6": {"!Ref ApiDomainName", "!GetAtt Distribution.DomainName"},
	} {
		record := resource(t, tpl, id, "AWS::Route53::RecordSet")
		if samtemplate.Scalar(samtemplate.Get(record, "Name")) != want[0] || samtemplate.Scalar(samtemplate.Get(record, "AliasTarget", "DNSName")) != want[1] {
			t.Errorf("%s %s", id, samtemplate.Scalar(record))
		}
	}
	cdnFn := functionOf(t, tpl)["cdn"]
	if got := cdnFn.Env["CLOUDFRONT_DISTRIBUTION_ID"]; got != "!Ref Distribution" {
		t.Errorf("CLOUDFRONT_DISTRIBUTION_ID %q", got)
	}
	if st := statements(cdnFn)["InvalidateAvatarPaths"]; !slices.Equal(samtemplate.Refs(samtemplate.Get(st, "Resource")), []string{"Distribution"}) {
		t.Errorf("invalidation permission %s", samtemplate.Scalar(st))
	}
}

// TestAlarmsAndCanary: each function publishes a version per release (any change of
// code, template or parameter: make deploy's Release) behind an alias and shifts traffic by
// DeploymentType; it pages on its error rate, throttles, p99 duration and its routes'
// 5xx; the API, DynamoDB, the proxy and the cdn's invalidations have their alarms;
// every alarm but the canaries (which roll back and page no one) notifies
// AlarmTopicArn. What rolls a deployment back is checked on the transformed template
// (TestTransformedAlias).
func TestAlarmsAndCanary(t *testing.T) {
	tpl := loadTemplate(t)
	if got := samtemplate.Scalar(samtemplate.Get(tpl.Root, "Globals", "Function", "AutoPublishAlias")); got != "live" {
		t.Errorf("Globals.Function.AutoPublishAlias %q", got)
	}
	alarm := func(id string) *yaml.Node { return resource(t, tpl, id, "AWS::CloudWatch::Alarm") }
	for id, f := range tpl.Functions {
		t.Run(f.Name, func(t *testing.T) {
			base := strings.TrimSuffix(id, "Function")
			// Every release publishes a version (TestTransformedAlias checks the outcome).
			for _, key := range []string{"AutoPublishCodeSha256", "VersionDescription"} {
				if got := samtemplate.Scalar(samtemplate.Get(f.Props, key)); got != "!Ref Release" {
					t.Errorf("%s %q, want !Ref Release", key, got)
				}
			}
			dp := samtemplate.Get(f.Props, "DeploymentPreference")
			if samtemplate.Scalar(samtemplate.Get(dp, "Type")) != "!Ref DeploymentType" {
				t.Errorf("DeploymentPreference %s", samtemplate.Scalar(dp))
			}
			for _, m := range []string{"Errors", "CanaryErrors", "Throttles", "Duration", "Routes"} {
				a := alarm(base + m + "Alarm")
				if refs := samtemplate.Refs(a); !slices.Contains(refs, id) {
					t.Errorf("%s%sAlarm does not watch %s: %v", base, m, id, refs)
				}
			}
			if got := samtemplate.Scalar(alarm(base + "ErrorsAlarm")); !strings.Contains(got, "EvaluationPeriods: 3") || !strings.Contains(got, "MetricName: Invocations") {
				t.Errorf("the paging errors alarm is not a rate over periods: %s", got)
			}
			d := alarm(base + "DurationAlarm")
			if samtemplate.Scalar(samtemplate.Get(d, "ExtendedStatistic")) != "p99" || atoi(t, samtemplate.Scalar(samtemplate.Get(d, "Threshold"))) >= f.Timeout*1000 {
				t.Errorf("duration alarm %s against a %d s timeout", samtemplate.Scalar(d), f.Timeout)
			}
			if got := samtemplate.Get(f.Props, "ReservedConcurrentExecutions"); samtemplate.Scalar(got) != "!Ref "+base+"Concurrency" {
				t.Errorf("ReservedConcurrentExecutions %s", samtemplate.Scalar(got))
			}
		})
	}
	for id, want := range map[string][]string{
		"Api5xxAlarm":                 {"MetricName: 5xx", "MetricName: Count", "!Ref HttpApi"},
		"Api4xxAlarm":                 {"MetricName: 4xx", "MetricName: Count", "!Ref HttpApi"},
		"DynamoDBErrorsAlarm":         {"SystemErrors", "WriteThrottleEvents", "!Ref OAuthStateTable", "!Ref RateLimitTable"},
		"ProxyClientConnectionsAlarm": {"ClientConnections", "!Ref DbProxy", "!Ref ProxyClientConnectionsThreshold"},
		"ProxyPinnedAlarm":            {"DatabaseConnectionsCurrentlySessionPinned", "!Ref DbProxy"},
		"InvalidationFailuresAlarm":   {"Namespace: " + cdn.MetricsNamespace, "MetricName: InvalidationFailures", "Value: !Ref CdnFunction"},
	} {
		got := samtemplate.Scalar(alarm(id))
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("%s lacks %q:\n%s", id, w, got)
			}
		}
	}
	n := 0
	for id, r := range tpl.Resources {
		if samtemplate.Scalar(samtemplate.Get(r, "Type")) != "AWS::CloudWatch::Alarm" {
			continue
		}
		n++
		got := samtemplate.Scalar(samtemplate.Get(r, "Properties", "AlarmActions"))
		if canary := strings.HasSuffix(id, "CanaryErrorsAlarm"); canary == strings.Contains(got, "!Ref AlarmTopicArn") {
			t.Errorf("%s: AlarmActions %q (canary alarms roll back and page no one; the others page)", id, got)
		}
	}
	if n != 8*5+8 {
		t.Errorf("%d alarms, want %d", n, 8*5+8)
	}
	resource(t, tpl, "Dashboard", "AWS::CloudWatch::Dashboard")
}

// TestThrottles: reads share the default route budget; every write and OAuth route has
// its own, lower one, on its event (SAM merges the events' RouteSettings into the
// API's; TestTransformedThrottles reads the outcome).
func TestThrottles(t *testing.T) {
	tpl := loadTemplate(t)
	api := resource(t, tpl, "HttpApi", "AWS::Serverless::HttpApi")
	if got := samtemplate.Scalar(samtemplate.Get(api, "DefaultRouteSettings", "ThrottlingRateLimit")); got != "!Ref ReadRateLimit" {
		t.Errorf("DefaultRouteSettings rate %q", got)
	}
	if rs := samtemplate.Get(api, "RouteSettings"); rs != nil {
		t.Errorf("the API's own RouteSettings: a route's budget is on its event")
	}
	read := atoi(t, param(t, tpl, "ReadRateLimit", "Default"))
	for _, f := range tpl.Functions {
		events := samtemplate.Get(f.Props, "Events")
		for _, route := range f.Routes {
			var rs *yaml.Node
			for i := 1; i < len(events.Content); i += 2 {
				p := samtemplate.Get(events.Content[i], "Properties")
				if samtemplate.Scalar(samtemplate.Get(p, "Method"))+" "+samtemplate.Scalar(samtemplate.Get(p, "Path")) == route {
					rs = samtemplate.Get(p, "RouteSettings")
				}
			}
			isRead := strings.HasPrefix(route, "GET ") && !strings.HasPrefix(route, "GET /auth/oauth")
			if isRead {
				if rs != nil {
					t.Errorf("%s: a read route with its own settings", route)
				}
				continue
			}
			want := "WriteRateLimit"
			if strings.Contains(route, " /auth/oauth") {
				want = "OAuthRouteRateLimit"
			}
			if got := samtemplate.Scalar(samtemplate.Get(rs, "ThrottlingRateLimit")); got != "!Ref "+want {
				t.Errorf("%s: rate %q, want !Ref %s", route, got, want)
			}
			if lim := atoi(t, param(t, tpl, want, "Default")); lim >= read {
				t.Errorf("%s: %d rps is not below reads' %d", route, lim, read)
			}
		}
	}
}

// TestTransformedThrottles: what API Gateway is given, the default stage's route
// settings, has a budget for every write and OAuth route of the code (its route-table
// line's Throttle) and none for a read.
func TestTransformedThrottles(t *testing.T) {
	for _, set := range paramSets {
		t.Run(set, func(t *testing.T) {
			cfn, _ := transformed(t, set)
			stage := cfnResource(t, cfn, "HttpApiApiGatewayDefaultStage", "AWS::ApiGatewayV2::Stage")
			got, _ := stage.Properties["RouteSettings"].(map[string]any)
			want := map[string]string{}
			for _, rt := range allCodeRoutes(t) {
				if rt.Throttle != httpapi.ThrottleRead {
					want[rt.Pattern] = string(rt.Throttle)
				}
			}
			if len(got) != len(want) {
				t.Errorf("%d routes with their own settings, the code has %d", len(got), len(want))
			}
			for route, th := range want {
				rs, _ := got[route].(map[string]any)
				for key, param := range map[string]string{"ThrottlingRateLimit": th + "RateLimit", "ThrottlingBurstLimit": th + "BurstLimit"} {
					if ref, _ := rs[key].(map[string]any); ref["Ref"] != param {
						t.Errorf("%s %s: %v, want Ref %s", route, key, rs[key], param)
					}
				}
			}
		})
	}
}

// TestTimeouts: every route's event gives API Gateway's wait as IntegrationTimeoutMillis,
// whose least value is above every function's timeout (TestDeadlineHierarchy holds the
// values, transformed).
func TestTimeouts(t *testing.T) {
	tpl := loadTemplate(t)
	integration := atoi(t, param(t, tpl, "IntegrationTimeoutMillis", "Default"))
	if max := atoi(t, param(t, tpl, "IntegrationTimeoutMillis", "MaxValue")); max > 30000 || integration > max {
		t.Errorf("integration timeout %d ms, at most %d", integration, max)
	}
	least := atoi(t, param(t, tpl, "IntegrationTimeoutMillis", "MinValue"))
	for id, f := range tpl.Functions {
		if f.Timeout <= 0 || f.Timeout*1000 >= least {
			t.Errorf("%s: timeout %d s, not below the integration's least %d ms", id, f.Timeout, least)
		}
		ev := samtemplate.Get(f.Props, "Events")
		for i := 1; i < len(ev.Content); i += 2 {
			if got := samtemplate.Scalar(samtemplate.Get(ev.Content[i], "Properties", "TimeoutInMillis")); got != "!Ref IntegrationTimeoutMillis" {
				t.Errorf("%s %s: TimeoutInMillis %q", id, ev.Content[i-1].Value, got)
			}
		}
	}
}

// TestMemoryLimit: GOMEMLIMIT leaves the runtime 5-25 % of each function's memory.
func TestMemoryLimit(t *testing.T) {
	re := regexp.MustCompile(`^(\d+)MiB$`)
	for id, f := range loadTemplate(t).Functions {
		m := re.FindStringSubmatch(f.Env["GOMEMLIMIT"])
		if m == nil {
			t.Errorf("%s: GOMEMLIMIT %q", id, f.Env["GOMEMLIMIT"])
			continue
		}
		if mib := atoi(t, m[1]); mib*100 < f.Memory*75 || mib*100 > f.Memory*95 {
			t.Errorf("%s: GOMEMLIMIT %d MiB of %d MB", id, mib, f.Memory)
		}
	}
}

// TestConnectionArithmetic: the deploy guide's figure is the template's: the most
// client connections the functions can open, and the alarm sits below it.
func TestConnectionArithmetic(t *testing.T) {
	tpl := loadTemplate(t)
	// One connection per container: a request never holds two backend connections,
	// which the guide's arithmetic (one per request in flight) counts on.
	perContainer := atoi(t, tpl.GlobalEnv["DB_MAX_CONNS"])
	if perContainer != 1 {
		t.Errorf("DB_MAX_CONNS %d: a request could hold %d backend connections, the guide counts one per request", perContainer, perContainer)
	}
	total := 0
	for id := range tpl.Functions {
		total += atoi(t, param(t, tpl, strings.TrimSuffix(id, "Function")+"Concurrency", "Default")) * perContainer
	}
	if alarm := atoi(t, param(t, tpl, "ProxyClientConnectionsThreshold", "Default")); alarm >= total {
		t.Errorf("client connection alarm at %d, the most possible is %d", alarm, total)
	}
	guide, err := os.ReadFile(repoFile("docs/operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(guide), "= "+strconv.Itoa(total)+" client connections") {
		t.Errorf("docs/operations.md's connection arithmetic does not come to %d client connections", total)
	}
}

// TestPackaging: sam builds in the source tree (no copy of the repository, .local
// included) and each function's artifact is its bootstrap alone.
func TestPackaging(t *testing.T) {
	sc, err := os.ReadFile(repoFile("samconfig.toml"))
	if err != nil {
		t.Fatal(err)
	}
	sections := regexp.MustCompile(`(?m)^\[(\w+)\.build\.parameters\]\n((?:[a-z_].*\n)*)`).FindAllStringSubmatch(string(sc), -1)
	if len(sections) != 3 {
		t.Errorf("%d build sections in samconfig.toml, want default, staging, prod", len(sections))
	}
	for _, s := range sections {
		if !strings.Contains(s[2], "build_in_source = true") {
			t.Errorf("[%s.build.parameters] does not build in source", s[1])
		}
	}
	for id, f := range loadTemplate(t).Functions {
		if got := samtemplate.Scalar(samtemplate.Get(f.Props, "CodeUri")); got != "." || f.BuildMethod != "makefile" {
			t.Errorf("%s: CodeUri %q, BuildMethod %q", id, got, f.BuildMethod)
		}
	}
	if testing.Short() {
		t.Skip("builds a function")
	}
	dir := t.TempDir()
	cmd := exec.Command("make", "-s", "build-TagsFunction", "ARTIFACTS_DIR="+dir)
	cmd.Dir = filepath.Dir(repoFile("Makefile"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make build-TagsFunction: %v\n%s", err, out)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"bootstrap"}) {
		t.Errorf("the artifact holds %v, want [bootstrap]", names)
	}
}

// TestOutboundAccess: S3 and DynamoDB can be reached through gateway endpoints of the
// stack (the rest needs the NAT the deploy guide asks for).
func TestOutboundAccess(t *testing.T) {
	tpl := loadTemplate(t)
	for _, id := range []string{"S3GatewayEndpoint", "DynamoDBGatewayEndpoint"} {
		p := resource(t, tpl, id, "AWS::EC2::VPCEndpoint")
		if samtemplate.Scalar(samtemplate.Get(p, "VpcEndpointType")) != "Gateway" {
			t.Errorf("%s is not a gateway endpoint", id)
		}
	}
}

// TestSamconfig: every environment lists every parameter of the template (sam deploy
// keeps a stack's previous value of any it leaves out), with values the template
// accepts (its placeholders <...> filled from the "create" parameter set, then checked
// and transformed by transform.py); dev and staging reserve less concurrency than
// prod; the proxy clients' alarm sits below what the concurrencies allow; an empty
// change set is no error.
func TestSamconfig(t *testing.T) {
	tpl := loadTemplate(t)
	sc, err := os.ReadFile(repoFile("samconfig.toml"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile(`(?s)\[(\w+)\.deploy\.parameters\]\n(.*?)parameter_overrides = \[(.*?)\]`).FindAllStringSubmatch(string(sc), -1)
	if len(blocks) != 3 {
		t.Fatalf("%d deploy sections, want 3", len(blocks))
	}
	params := samtemplate.Get(tpl.Root, "Parameters")
	fill := paramsOf(t, "create")
	concurrency := map[string]int{}
	for _, b := range blocks {
		env := b[1]
		t.Run(env, func(t *testing.T) {
			if !strings.Contains(b[2], "fail_on_empty_changeset = false") {
				t.Error("an empty change set fails the deploy")
			}
			// As SAM CLI reads the list (sam deploy --config-env reads it itself).
			set := samconfigParams(t, repoFile("samconfig.toml"), env)
			if n := len(regexp.MustCompile(`(?m)^  ["'](\w+)=`).FindAllString(b[3], -1)); n != len(set) {
				t.Errorf("%d items, %d parameters: one is set twice", n, len(set))
			}
			for k := range set {
				if samtemplate.Get(params, k) == nil {
					t.Errorf("sets %s, which the template does not have", k)
				}
			}
			for i := 0; i+1 < len(params.Content); i += 2 {
				name := params.Content[i].Value
				if _, ok := set[name]; !ok && name != "Release" {
					t.Errorf("does not set %s", name)
				}
			}
			if _, ok := set["Release"]; ok {
				t.Error("sets Release, which make deploy computes for each deploy")
			}
			total := 0
			for k, v := range set {
				if strings.HasSuffix(k, "Concurrency") {
					total += atoi(t, v)
				}
				if strings.HasPrefix(v, "<") {
					f, ok := fill[k]
					if !ok {
						t.Errorf("%s: placeholder %s and no value in the create set", k, v)
					}
					set[k] = f
				}
			}
			concurrency[env] = total
			if limit, most := atoi(t, set["ProxyClientConnectionsThreshold"]), total*atoi(t, tpl.GlobalEnv["DB_MAX_CONNS"]); limit >= most {
				t.Errorf("ProxyClientConnectionsThreshold %d, the most clients are %d", limit, most)
			}
			buf, _ := json.Marshal(set)
			dir := t.TempDir()
			path := filepath.Join(dir, env+".json")
			if err := os.WriteFile(path, buf, 0o644); err != nil {
				t.Fatal(err)
			}
			if _, _, err := samtemplate.Transform(repoFile("template.yaml"), path, dir); err != nil {
				t.Error(err)
			}
		})
	}
	if concurrency["default"] >= concurrency["prod"] || concurrency["staging"] >= concurrency["prod"] {
		t.Errorf("reserved concurrency %v: dev and staging should reserve less than prod", concurrency)
	}
}

// samconfigParams is an environment's parameter_overrides as SAM CLI parses them
// (infra/ops/samconfig.py: its parser, ported from SAM CLI).
func samconfigParams(t *testing.T, file, env string) map[string]string {
	t.Helper()
	out, err := exec.Command("python3", repoFile("infra/ops/samconfig.py"), file, "params", env).Output()
	if err != nil {
		t.Fatalf("samconfig.py params %s: %v\n%s", env, err, stderrOf(err))
	}
	var m map[string]string
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// stderrOf is what a failed command wrote to stderr.
func stderrOf(err error) string {
	if e, ok := err.(*exec.ExitError); ok {
		return string(e.Stderr)
	}
	return ""
}

// paramsOf reads a parameter set of testdata.
func paramsOf(t *testing.T, set string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(samtemplate.Dir(), "testdata", set+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// makeOut runs make with args in the repository and returns its output and error.
func makeOut(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("make", append([]string{"--no-print-directory"}, args...)...)
	cmd.Dir = filepath.Dir(repoFile("Makefile"))
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestDeployTargets: make deploy runs the lint gate before building, refuses an
// environment with placeholders left, can run unattended, takes an empty change set
// as no error and passes the release (a hash that changes with RELEASE_SALT). (What
// make deploy, make rollback and make redeploy run: TestOperatorCommands.)
func TestDeployTargets(t *testing.T) {
	plan, err := makeOut(t, "-n", "deploy", "ENV=prod", "CONFIRM_CHANGESET=false")
	if err != nil {
		t.Fatalf("make -n deploy: %v\n%s", err, plan)
	}
	lint, build := strings.Index(plan, "cfn-lint template.yaml"), strings.Index(plan, "sam build")
	if lint < 0 || build < 0 || lint > build {
		t.Errorf("the lint gate does not come before sam build:\n%s", plan)
	}
	for _, want := range []string{"--no-confirm-changeset", "--no-fail-on-empty-changeset"} {
		if !strings.Contains(plan, want) {
			t.Errorf("make deploy lacks %s:\n%s", want, plan)
		}
	}
	release := regexp.MustCompile(`Release=([A-Za-z0-9]{10})\b`)
	m := release.FindStringSubmatch(plan)
	if m == nil {
		t.Fatalf("no Release=<10 characters> in\n%s", plan)
	}
	if again, _ := makeOut(t, "-n", "deploy", "ENV=prod"); !strings.Contains(again, "Release="+m[1]) || !strings.Contains(again, "--confirm-changeset") {
		t.Errorf("the same deploy twice: another release or no confirmation:\n%s", again)
	}
	if salted, _ := makeOut(t, "-n", "deploy", "ENV=prod", "RELEASE_SALT=rotation"); strings.Contains(salted, "Release="+m[1]) {
		t.Error("RELEASE_SALT does not change the release")
	}
	// A file not yet added to git is part of what sam builds, so of the release.
	src := t.TempDir()
	for _, args := range [][]string{{"init", "-q"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x"}} {
		if out, err := exec.Command("git", append([]string{"-C", src}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	before, _ := makeOut(t, "-n", "deploy", "ENV=prod", "SRC="+src)
	if err := os.WriteFile(filepath.Join(src, "new.go"), []byte("package x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	after, _ := makeOut(t, "-n", "deploy", "ENV=prod", "SRC="+src)
	if r1, r2 := release.FindString(before), release.FindString(after); r1 == "" || r1 == r2 {
		t.Errorf("an untracked file does not change the release: %q, %q", r1, r2)
	}
	// The placeholders of the repository's samconfig stop the deploy before sam runs
	// (-o lint: the gate is assumed passed here).
	out, err := makeOut(t, "-o", "lint", "deploy", "ENV=prod")
	if err == nil || !strings.Contains(out, "placeholders") || strings.Contains(out, "sam build") {
		t.Errorf("make deploy with placeholders: %v\n%s", err, out)
	}
}

// TestBackupFailureEvents: the database's backup and failure events (RDS event
// notifications: RDS publishes no metric of its backups) go to the alarm topic, from
// the instance or the Aurora cluster the stack names, whether it creates the proxy or
// not; and the transformed stacks have the subscription.
func TestBackupFailureEvents(t *testing.T) {
	tpl := loadTemplate(t)
	props := samtemplate.Scalar(resource(t, tpl, "DatabaseEventsSubscription", "AWS::RDS::EventSubscription"))
	for _, w := range []string{"SnsTopicArn: !Ref AlarmTopicArn", "Enabled: true",
		"SourceType: !If [ProxyOnCluster, db-cluster, db-instance]",
		"!If [ProxyOnCluster, !Ref DbClusterIdentifier, !Ref DbInstanceIdentifier]",
		"EventCategories: !If [ProxyOnCluster, [failure], [backup, failure]]"} {
		if !strings.Contains(props, w) {
			t.Errorf("the subscription lacks %q:\n%s", w, props)
		}
	}
	if c := samtemplate.Scalar(samtemplate.Get(tpl.Resources["DatabaseEventsSubscription"], "Condition")); c != "DatabaseEventsToAlarmTopic" {
		t.Errorf("condition %q", c)
	}
	cond := samtemplate.Scalar(samtemplate.Get(tpl.Root, "Conditions", "DatabaseEventsToAlarmTopic"))
	if !strings.Contains(cond, "HasAlarmTopic") || !strings.Contains(cond, "DbInstanceIdentifier") || !strings.Contains(cond, "DbClusterIdentifier") ||
		strings.Contains(cond, "CreateProxy") {
		t.Errorf("the subscription's condition %s: the topic and a database, with or without the created proxy", cond)
	}
	if testing.Short() {
		return
	}
	cfn, _ := transformed(t, "create")
	r, ok := cfn.Resources["DatabaseEventsSubscription"]
	if !ok {
		t.Fatal("the transformed create stack has no DatabaseEventsSubscription")
	}
	if r.Type != "AWS::RDS::EventSubscription" {
		t.Errorf("type %s", r.Type)
	}
}
