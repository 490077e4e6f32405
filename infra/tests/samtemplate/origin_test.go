package samtemplate_test

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mediacatalog/service/infra/tests/samtemplate"
)

// Who reaches the origin, and what the edge keys on: mutual TLS between the
// distribution and the origin domain, and the cache key's Origin held to the CORS
// origins, read as CloudFormation creates them with each parameter set.

// noValue is what AWS::NoValue resolves to: the item or property is left out.
var noValue = &struct{}{}

// stackParams is a parameter set as CloudFormation reads it: the set's values over the
// template's defaults.
func stackParams(t *testing.T, cfn *samtemplate.CFN, set string) map[string]string {
	t.Helper()
	p := map[string]string{}
	for name, def := range cfn.Parameters {
		if d, ok := def["Default"]; ok {
			p[name] = fmt.Sprint(d)
		}
	}
	for k, v := range paramsOf(t, set) {
		p[k] = v
	}
	return p
}

// resolve evaluates what CloudFormation evaluates before it creates anything in an
// expression of parameters: Ref (a parameter or AWS::NoValue), Fn::If and the
// conditions, Fn::Select, Fn::Split, Fn::Join and Fn::Sub of parameters. A reference
// to a resource fails the test (such a value is known only once the stack exists).
func resolve(t *testing.T, cfn *samtemplate.CFN, params map[string]string, v any) any {
	t.Helper()
	switch v := v.(type) {
	case string, bool, float64:
		return v
	case []any:
		var out []any
		for _, e := range v {
			if r := resolve(t, cfn, params, e); r != noValue {
				out = append(out, r)
			}
		}
		return out
	case map[string]any:
		if len(v) != 1 {
			out := map[string]any{}
			for k, e := range v {
				if r := resolve(t, cfn, params, e); r != noValue {
					out[k] = r
				}
			}
			return out
		}
		for fn, arg := range v {
			str := func(e any) string { return fmt.Sprint(resolve(t, cfn, params, e)) }
			args, _ := arg.([]any)
			switch fn {
			case "Ref":
				if arg == "AWS::NoValue" {
					return noValue
				}
				p, ok := params[fmt.Sprint(arg)]
				if !ok {
					t.Fatalf("Ref %v: not a parameter with a value", arg)
				}
				return p
			case "Fn::If":
				if condition(t, cfn, params, cfn.Conditions[fmt.Sprint(args[0])]) {
					return resolve(t, cfn, params, args[1])
				}
				return resolve(t, cfn, params, args[2])
			case "Fn::Select":
				var i int
				fmt.Sscan(str(args[0]), &i)
				l, _ := resolve(t, cfn, params, args[1]).([]any)
				if i >= len(l) {
					t.Fatalf("Fn::Select %d of %v", i, l)
				}
				return l[i]
			case "Fn::Split":
				var out []any
				for _, s := range strings.Split(str(args[1]), str(args[0])) {
					out = append(out, s)
				}
				return out
			case "Fn::Join":
				var parts []string
				for _, e := range resolve(t, cfn, params, args[1]).([]any) {
					parts = append(parts, fmt.Sprint(e))
				}
				return strings.Join(parts, str(args[0]))
			case "Fn::Sub":
				s, ok := arg.(string)
				if !ok {
					t.Fatalf("Fn::Sub with variables: %v", arg)
				}
				return regexp.MustCompile(`\$\{([^}]*)\}`).ReplaceAllStringFunc(s, func(m string) string {
					name := m[2 : len(m)-1]
					if strings.HasPrefix(name, "!") {
						return "${" + name[1:] + "}"
					}
					p, ok := params[name]
					if !ok {
						t.Fatalf("Fn::Sub ${%s}: not a parameter with a value", name)
					}
					return p
				})
			}
			if strings.HasPrefix(fn, "Fn::") || fn == "Condition" {
				t.Fatalf("%s is not resolved here (%v)", fn, arg)
			}
			return map[string]any{fn: resolve(t, cfn, params, arg)}
		}
	}
	t.Fatalf("cannot resolve %T %v", v, v)
	return nil
}

// condition evaluates a condition of the template with the parameters.
func condition(t *testing.T, cfn *samtemplate.CFN, params map[string]string, c any) bool {
	t.Helper()
	m, ok := c.(map[string]any)
	if !ok || len(m) != 1 {
		t.Fatalf("condition %v", c)
	}
	for fn, arg := range m {
		args, _ := arg.([]any)
		switch fn {
		case "Condition":
			return condition(t, cfn, params, cfn.Conditions[fmt.Sprint(arg)])
		case "Fn::Not":
			return !condition(t, cfn, params, args[0])
		case "Fn::And", "Fn::Or":
			and := fn == "Fn::And"
			for _, a := range args {
				if condition(t, cfn, params, a) != and {
					return !and
				}
			}
			return and
		case "Fn::Equals":
			return fmt.Sprint(resolve(t, cfn, params, args[0])) == fmt.Sprint(resolve(t, cfn, params, args[1]))
		}
	}
	t.Fatalf("condition %v is not evaluated here", c)
	return false
}

// functionCode is a CloudFront Function's code as CloudFront runs it with a parameter
// set: its FunctionCode, Fn::Sub resolved.
func functionCode(t *testing.T, cfn *samtemplate.CFN, params map[string]string, id string) string {
	t.Helper()
	return fmt.Sprint(resolve(t, cfn, params, cfn.Resources[id].Properties["FunctionCode"]))
}

// corsOrigins are the origins API Gateway's CORS configuration allows with a parameter
// set (in AWS it answers the browsers' CORS, whatever the function says), and the ones
// the functions' own CORS middleware allows (FRONTEND_URL and CORS_ORIGINS, as
// shared/config reads them); the test fails unless they are the same.
func corsOrigins(t *testing.T, cfn *samtemplate.CFN, params map[string]string) []string {
	t.Helper()
	body, _ := cfn.Resources["HttpApi"].Properties["Body"].(map[string]any)
	cors, _ := body["x-amazon-apigateway-cors"].(map[string]any)
	var gateway []string
	for _, o := range resolve(t, cfn, params, cors["allowOrigins"]).([]any) {
		gateway = append(gateway, fmt.Sprint(o))
	}
	env := loadTemplate(t).GlobalEnv
	if env["FRONTEND_URL"] != "!Ref FrontendUrl" || env["CORS_ORIGINS"] != "!Ref ExtraCorsOrigins" {
		t.Fatalf("the functions' CORS origins are %s and %s, not FrontendUrl and ExtraCorsOrigins", env["FRONTEND_URL"], env["CORS_ORIGINS"])
	}
	functions := []string{params["FrontendUrl"]}
	for _, o := range strings.Split(params["ExtraCorsOrigins"], ",") {
		if o != "" {
			functions = append(functions, o)
		}
	}
	slices.Sort(gateway)
	slices.Sort(functions)
	if !slices.Equal(gateway, functions) || len(gateway) == 0 {
		t.Fatalf("API Gateway allows %v, the functions %v", gateway, functions)
	}
	return gateway
}

// originEvent is a viewer-request event of a catalog read with an Origin header.
func originEvent(origin string) map[string]any {
	e := viewerEvent("GET", "/tags")
	e["request"].(map[string]any)["headers"].(map[string]any)["origin"] = map[string]any{"value": origin}
	return e
}

// inventedOrigins are Origin values no parameter set allows, each close to an allowed
// one in some way (case, scheme, port, path, suffix, a list), besides plain inventions.
func inventedOrigins(allowed []string) []string {
	out := []string{"https://evil.example", "null", "", "https://x1.example", "https://x2.example"}
	for _, o := range allowed {
		out = append(out, o+"/", strings.ToUpper(o), strings.Replace(o, "https://", "http://", 1), o+":443", o+".evil.example", o+","+o)
	}
	return out
}

// keptOrigin says what a function returned for an Origin: the Origin header it kept
// ("" for none), or a failure when it answered at the edge.
func keptOrigin(t *testing.T, out map[string]any) string {
	t.Helper()
	if out["statusCode"] != nil {
		t.Fatalf("answered at the edge: %v", out)
	}
	h, _ := out["headers"].(map[string]any)["origin"].(map[string]any)
	if h == nil {
		return ""
	}
	if h["multiValue"] != nil {
		t.Errorf("Origin kept with several values: %v", h)
	}
	return fmt.Sprint(h["value"])
}

// TestCacheKeyOriginsAgreeWithCORS: with each parameter set the catalog's cache-key
// function keeps an Origin exactly when API Gateway's CORS configuration (and the
// functions' own) allows it, and drops every other, so the catalog's cache holds one
// entry per allowed origin and one without: an invented Origin is a hit of the latter,
// never a miss that reaches the database. The function knows the origins by Fn::Sub of
// the same parameters the CORS configuration reads.
func TestCacheKeyOriginsAgreeWithCORS(t *testing.T) {
	for _, set := range paramSets {
		t.Run(set, func(t *testing.T) {
			cfn, _ := transformed(t, set)
			params := stackParams(t, cfn, set)
			allowed := corsOrigins(t, cfn, params)
			invented := inventedOrigins(allowed)
			var events []map[string]any
			for _, o := range append(slices.Clone(allowed), invented...) {
				events = append(events, originEvent(o))
			}
			outs := runFunction(t, functionCode(t, cfn, params, "CatalogCacheKeyFunction"), events)
			for i, out := range outs {
				sent := fmt.Sprint(events[i]["request"].(map[string]any)["headers"].(map[string]any)["origin"].(map[string]any)["value"])
				got := keptOrigin(t, out)
				if i < len(allowed) && got != sent {
					t.Errorf("CORS origin %q: the function keeps %q, so no CORS answer reaches it", sent, got)
				}
				if i >= len(allowed) && got != "" {
					t.Errorf("Origin %q (no CORS origin) reaches the cache key as %q: one more entry, a miss to the database", sent, got)
				}
			}
		})
	}
}

// TestOriginMutualTLS: with each parameter set, the distribution's one origin presents
// the client certificate OriginClientCertificateArn names (a parameter without default,
// an ACM certificate in us-east-1, where CloudFront takes origin client certificates
// from), and the origin domain the stack creates requires mutual TLS against the
// truststore's pinned version: a regional domain with TLS 1.2 (API Gateway's
// requirements for it), created or changed after the distribution (CloudFront presents
// a new certificate before the domain requires it). API Gateway serves no other
// address (the execute-api endpoint is off), no principal may invoke the API's routes
// with IAM, and the parameters refuse a domain the stack creates without its
// truststore, or a truststore it would not apply (an existing domain's owner turns its
// mutual TLS on: docs/operations.md says how).
func TestOriginMutualTLS(t *testing.T) {
	acmUSEast1 := regexp.MustCompile(`^arn:aws[a-z-]*:acm:us-east-1:[0-9]{12}:certificate/[0-9a-f-]{36}$`)
	for _, set := range paramSets {
		t.Run(set, func(t *testing.T) {
			cfn, _ := transformed(t, set)
			params := stackParams(t, cfn, set)
			dc, _ := distribution(t, cfn)
			for _, o := range dc["Origins"].([]any) {
				o := o.(map[string]any)
				coc, _ := o["CustomOriginConfig"].(map[string]any)
				mtls, _ := coc["OriginMtlsConfig"].(map[string]any)
				if got := fmt.Sprint(mtls["ClientCertificateArn"]); got != "map[Ref:OriginClientCertificateArn]" {
					t.Errorf("origin %v presents no client certificate (CustomOriginConfig.OriginMtlsConfig %v): anyone who finds the origin's name reaches API Gateway's throttles", o["Id"], coc["OriginMtlsConfig"])
				}
				if coc["OriginProtocolPolicy"] != "https-only" || fmt.Sprint(coc["OriginSSLProtocols"]) != "[TLSv1.2]" {
					t.Errorf("origin %v: %v %v, want https-only over TLS 1.2", o["Id"], coc["OriginProtocolPolicy"], coc["OriginSSLProtocols"])
				}
			}
			p := cfn.Parameters["OriginClientCertificateArn"]
			if _, def := p["Default"]; def || !strings.Contains(fmt.Sprint(p["AllowedPattern"]), ":acm:us-east-1:") {
				t.Errorf("OriginClientCertificateArn %v: want a required ACM certificate of us-east-1", p)
			}
			if v := params["OriginClientCertificateArn"]; !acmUSEast1.MatchString(v) {
				t.Errorf("%s's OriginClientCertificateArn %q", set, v)
			}

			var domains []string
			for _, id := range cfn.OfType("AWS::ApiGatewayV2::DomainName") {
				if c := cfn.Resources[id].Condition; c == "" || condition(t, cfn, params, cfn.Conditions[c]) {
					domains = append(domains, id)
				}
			}
			if want := set == "create"; (len(domains) == 1) != want {
				t.Fatalf("domains %v; the %s set creates one: %v", domains, set, want)
			}
			for _, id := range domains {
				d := cfn.Resources[id]
				mt, _ := d.Properties["MutualTlsAuthentication"].(map[string]any)
				if fmt.Sprint(mt["TruststoreUri"]) != "map[Ref:OriginTruststoreUri]" || fmt.Sprint(mt["TruststoreVersion"]) != "map[Ref:OriginTruststoreVersion]" {
					t.Errorf("%s: MutualTlsAuthentication %v, want the truststore's URI and pinned version: any client reaches the routes", id, d.Properties["MutualTlsAuthentication"])
				}
				if u := params["OriginTruststoreUri"]; !strings.HasPrefix(u, "s3://") || params["OriginTruststoreVersion"] == "" {
					t.Errorf("%s: truststore %q version %q", set, u, params["OriginTruststoreVersion"])
				}
				for _, c := range anyList(d.Properties["DomainNameConfigurations"]) {
					c := c.(map[string]any)
					if c["EndpointType"] != "REGIONAL" || c["SecurityPolicy"] != "TLS_1_2" {
						t.Errorf("%s: %v; mutual TLS takes a regional domain with TLS 1.2", id, c)
					}
				}
				if !slices.Contains(anyStrings(d.DependsOn), "Distribution") {
					t.Errorf("%s depends on %v, not on the distribution: a new client certificate could be required before CloudFront presents it", id, d.DependsOn)
				}
			}
			// The transform writes HttpApi's DisableExecuteApiEndpoint into the OpenAPI
			// body's servers, where API Gateway reads it.
			for _, id := range cfn.OfType("AWS::ApiGatewayV2::Api") {
				body, _ := cfn.Resources[id].Properties["Body"].(map[string]any)
				off := false
				for _, srv := range anyList(body["servers"]) {
					ec, _ := srv.(map[string]any)["x-amazon-apigateway-endpoint-configuration"].(map[string]any)
					off = off || ec["disableExecuteApiEndpoint"] == true
				}
				if !off {
					t.Errorf("%s answers on its execute-api endpoint, without mutual TLS", id)
				}
			}
			for id, r := range cfn.Resources {
				if doc, _ := json.Marshal(r.Properties); strings.Contains(string(doc), "execute-api:Invoke") {
					t.Errorf("%s grants execute-api:Invoke: no caller but CloudFront completes a handshake with the origin", id)
				}
			}
		})
	}

	b, err := os.ReadFile(repoFile("docs/operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"aws acm import-certificate --region us-east-1", "aws apigatewayv2 update-domain-name", "--mutual-tls-authentication",
		"extendedKeyUsage=clientAuth", "OriginClientCertificateArn", "OriginTruststoreVersion"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("docs/operations.md does not say %q (how an operator makes, imports and rotates the client certificate and the truststore)", want)
		}
	}
}

func anyStrings(v any) []string {
	var out []string
	if v == nil {
		return nil
	}
	for _, e := range anyList(v) {
		out = append(out, fmt.Sprint(e))
	}
	return out
}

// TestOriginClientCertificateExpiry: the origin client certificate is imported, so ACM
// never renews it, and API Gateway refuses an expired one (the API is then down): the
// edge stack, in its region, alarms on ACM's DaysToExpiry for it, as ACM publishes it
// (namespace AWS/CertificateManager, dimension CertificateArn, a point a day), before
// the threshold, notifying the alarm topic; and keeps the alarm in its state when ACM
// stops the metric (at expiry).
func TestOriginClientCertificateExpiry(t *testing.T) {
	c := edgeTemplate(t)
	a, ok := c.Resources["OriginClientCertificateExpiryAlarm"]
	if !ok || a.Type != "AWS::CloudWatch::Alarm" {
		t.Fatal("no alarm on the origin client certificate's expiry")
	}
	p := a.Properties
	dims := fmt.Sprint(p["Dimensions"])
	if p["Namespace"] != "AWS/CertificateManager" || p["MetricName"] != "DaysToExpiry" || dims != "[map[Name:CertificateArn Value:map[Ref:OriginClientCertificateArn]]]" {
		t.Errorf("alarm on %v %v %v, want AWS/CertificateManager DaysToExpiry by the certificate's ARN", p["Namespace"], p["MetricName"], dims)
	}
	if p["Statistic"] != "Minimum" || p["Period"] != float64(86400) || p["ComparisonOperator"] != "LessThanThreshold" ||
		fmt.Sprint(p["Threshold"]) != "map[Ref:ClientCertificateDaysLeft]" || p["TreatMissingData"] != "ignore" {
		t.Errorf("alarm %v", p)
	}
	if !strings.Contains(fmt.Sprint(p["AlarmActions"]), "AlarmTopicArn") {
		t.Errorf("the alarm notifies %v", p["AlarmActions"])
	}
	if !strings.Contains(fmt.Sprint(c.Parameters["OriginClientCertificateArn"]["AllowedPattern"]), ":acm:us-east-1:") {
		t.Error("the edge stack's OriginClientCertificateArn accepts a certificate outside us-east-1")
	}
}
