package samtemplate_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/mediacatalog/service/infra/tests/samtemplate"
	"github.com/mediacatalog/service/shared/openapi"
)

// The edge as CloudFormation creates it: the distribution's behaviours, cache and origin
// request policies and functions in the transformed template, the functions run with
// node as CloudFront runs them, and the us-east-1 template's web ACL.

// cachingDisabled is the managed cache policy Managed-CachingDisabled.
const cachingDisabled = "4135ea2d-6df8-44a3-9df3-4b5a84be39ad"

// edgeSources: each CloudFront Function of the template and the file it is the copy of.
var edgeSources = map[string]string{
	"EdgeNotFoundFunction":    "functions/edge/not-found.js",
	"AvatarCanonicalFunction": "functions/edge/avatar-canonical.js",
	"CatalogCacheKeyFunction": "functions/edge/cache-key.js",
}

func nodePath(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node runs the CloudFront Functions in these tests: install Node.js")
	}
	return node
}

// TestEdgeFunctionsUnderNode: functions/edge's own tests (node --test), which run each
// function on viewer-request events of the shape CloudFront passes.
func TestEdgeFunctionsUnderNode(t *testing.T) {
	cmd := exec.Command(nodePath(t), "--test", repoFile("functions/edge/functions.test.js"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test functions/edge: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "# fail 0") || strings.Contains(string(out), "# pass 0") {
		t.Errorf("node --test functions/edge:\n%s", out)
	}
}

// TestEdgeFunctionSources: every CloudFront Function of the template is its file's code,
// as the transform leaves it (what CloudFront runs is what node tests): the code itself,
// or the code in a Fn::Sub that fills in parameters only (functions.test.js fills them
// in as CloudFormation does).
func TestEdgeFunctionSources(t *testing.T) {
	cfn, _ := transformed(t, "create")
	ids := cfn.OfType("AWS::CloudFront::Function")
	if got := slices.Sorted(func(yield func(string) bool) {
		for id := range edgeSources {
			if !yield(id) {
				return
			}
		}
	}); !slices.Equal(ids, got) {
		t.Errorf("CloudFront Functions %v, sources for %v", ids, got)
	}
	for id, file := range edgeSources {
		src, err := os.ReadFile(repoFile(file))
		if err != nil {
			t.Fatal(err)
		}
		r, ok := cfn.Resources[id]
		if !ok {
			continue // reported above
		}
		code := r.Properties["FunctionCode"]
		if sub, ok := code.(map[string]any); ok && len(sub) == 1 {
			code = sub["Fn::Sub"]
			for _, name := range samtemplate.SubNames(fmt.Sprint(code)) {
				if _, param := cfn.Parameters[name]; !param {
					t.Errorf("%s substitutes ${%s}, which is no parameter of the template", id, name)
				}
			}
		}
		if got, ok := code.(string); !ok || got != string(src) {
			t.Errorf("%s's FunctionCode is not %s:\n%v", id, file, r.Properties["FunctionCode"])
		}
		if rt := r.Properties["FunctionConfig"].(map[string]any)["Runtime"]; rt != "cloudfront-js-2.0" {
			t.Errorf("%s runtime %v", id, rt)
		}
		if len(src) > 10*1024 {
			t.Errorf("%s: %d bytes, CloudFront Functions take 10 KB", file, len(src))
		}
	}
}

// apiOperation is one operation of the OpenAPI document.
type apiOperation struct {
	Method, Path string
	Public       bool     // no security requirement
	Query        []string // its query parameters, sorted
}

// openapiOperations reads every operation of the OpenAPI document with its query
// parameters ($ref'd ones resolved) and whether it needs a session.
func openapiOperations(t *testing.T) []apiOperation {
	t.Helper()
	type param struct {
		Ref  string `yaml:"$ref"`
		Name string `yaml:"name"`
		In   string `yaml:"in"`
	}
	type op struct {
		Parameters []param          `yaml:"parameters"`
		Security   []map[string]any `yaml:"security"`
	}
	var doc struct {
		Security   []map[string]any                `yaml:"security"`
		Paths      map[string]map[string]yaml.Node `yaml:"paths"`
		Components struct {
			Parameters map[string]param `yaml:"parameters"`
		} `yaml:"components"`
	}
	if err := yaml.Unmarshal(openapi.Document, &doc); err != nil {
		t.Fatal(err)
	}
	resolve := func(p param) param {
		if p.Ref != "" {
			return doc.Components.Parameters[p.Ref[strings.LastIndex(p.Ref, "/")+1:]]
		}
		return p
	}
	var out []apiOperation
	for path, item := range doc.Paths {
		var common []param
		if n, ok := item["parameters"]; ok {
			if err := n.Decode(&common); err != nil {
				t.Fatal(err)
			}
		}
		for method, n := range item {
			switch method {
			case "get", "post", "delete", "put", "patch":
			default:
				continue
			}
			var o op
			if err := n.Decode(&o); err != nil {
				t.Fatal(err)
			}
			security := doc.Security
			if o.Security != nil {
				security = o.Security
			}
			a := apiOperation{Method: strings.ToUpper(method), Path: path, Public: len(security) == 0}
			for _, p := range append(slices.Clone(common), o.Parameters...) {
				if p = resolve(p); p.In == "query" {
					a.Query = append(a.Query, p.Name)
				}
			}
			sort.Strings(a.Query)
			out = append(out, a)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Method+out[i].Path < out[j].Method+out[j].Path })
	return out
}

// publicRead: what may be cached at the edge, a GET that needs no session, outside the
// OAuth flows (which set cookies and spend one-time codes).
func publicRead(o apiOperation) bool {
	return o.Method == "GET" && o.Public && !strings.HasPrefix(o.Path, "/auth/oauth")
}

// TestCacheKeyParamsAgreeWithOpenAPI: the cache-key function keeps, for each public
// catalog read, exactly the query parameters the OpenAPI document gives it, and the
// catalog cache policy lets nothing else into the key.
func TestCacheKeyParamsAgreeWithOpenAPI(t *testing.T) {
	script := fmt.Sprintf(`const vm = require('vm'); const ctx = {};
vm.runInNewContext(require('fs').readFileSync(%q, 'utf8') + '\nthis.routes = ROUTES;', ctx);
console.log(JSON.stringify(ctx.routes));`, repoFile("functions/edge/cache-key.js"))
	out, err := exec.Command(nodePath(t), "-e", script).Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var routes []struct {
		Path   string   `json:"path"`
		Params []string `json:"params"`
	}
	if err := json.Unmarshal(out, &routes); err != nil {
		t.Fatal(err)
	}
	fn := map[string][]string{}
	for _, r := range routes {
		if !slices.IsSorted(r.Params) {
			t.Errorf("%s: parameters %v not in their canonical (alphabetical) order", r.Path, r.Params)
		}
		fn[r.Path] = r.Params
	}
	doc := map[string][]string{}
	union := map[string]bool{}
	for _, o := range openapiOperations(t) {
		if publicRead(o) && !strings.HasPrefix(o.Path, "/user/avatar/") {
			doc[o.Path] = o.Query
			if doc[o.Path] == nil {
				doc[o.Path] = []string{}
			}
			for _, q := range o.Query {
				union[q] = true
			}
		}
	}
	for path, want := range doc {
		got, ok := fn[path]
		if !ok {
			t.Errorf("%s: public read the cache-key function does not know (it would drop every parameter)", path)
		} else if !slices.Equal(got, want) {
			t.Errorf("%s: the function keeps %v, the OpenAPI document has %v", path, got, want)
		}
	}
	for path := range fn {
		if _, ok := doc[path]; !ok {
			t.Errorf("%s: in the function, not a public read of the OpenAPI document", path)
		}
	}
	cfn, _ := transformed(t, "create")
	qs := cfnResource(t, cfn, "CatalogCachePolicy", "AWS::CloudFront::CachePolicy").Properties["CachePolicyConfig"].(map[string]any)["ParametersInCacheKeyAndForwardedToOrigin"].(map[string]any)["QueryStringsConfig"].(map[string]any)
	var listed []string
	for _, q := range qs["QueryStrings"].([]any) {
		listed = append(listed, fmt.Sprint(q))
	}
	sort.Strings(listed)
	want := slices.Sorted(func(yield func(string) bool) {
		for q := range union {
			if !yield(q) {
				return
			}
		}
	})
	if qs["QueryStringBehavior"] != "whitelist" || !slices.Equal(listed, want) {
		t.Errorf("catalog cache policy query strings %v %v, want the whitelist %v", qs["QueryStringBehavior"], listed, want)
	}
}

// behaviour is one cache behaviour of the distribution, as the tests read it.
type behaviour struct {
	Pattern   string
	Methods   []string
	Cache     string // cache policy: a managed id or a resource of the template
	OriginReq string // origin request policy (resource or managed id), "" for none
	Function  string // viewer-request function's resource, "" for none
}

func refOrID(v any) string {
	if m, ok := v.(map[string]any); ok {
		return fmt.Sprint(m["Ref"])
	}
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

func readBehaviour(pattern string, b map[string]any) behaviour {
	out := behaviour{Pattern: pattern, Cache: refOrID(b["CachePolicyId"]), OriginReq: refOrID(b["OriginRequestPolicyId"])}
	for _, m := range b["AllowedMethods"].([]any) {
		out.Methods = append(out.Methods, fmt.Sprint(m))
	}
	if fa, ok := b["FunctionAssociations"].([]any); ok {
		for _, a := range fa {
			a := a.(map[string]any)
			if a["EventType"] == "viewer-request" {
				out.Function = fmt.Sprint(a["FunctionARN"].(map[string]any)["Fn::GetAtt"].([]any)[0])
			}
		}
	}
	return out
}

// distribution returns the distribution's config and its behaviours in CloudFront's
// order of precedence, the default last (pattern "*").
func distribution(t *testing.T, cfn *samtemplate.CFN) (map[string]any, []behaviour) {
	t.Helper()
	dc := cfnResource(t, cfn, "Distribution", "AWS::CloudFront::Distribution").Properties["DistributionConfig"].(map[string]any)
	var bs []behaviour
	for _, b := range dc["CacheBehaviors"].([]any) {
		b := b.(map[string]any)
		bs = append(bs, readBehaviour(fmt.Sprint(b["PathPattern"]), b))
	}
	return dc, append(bs, readBehaviour("*", dc["DefaultCacheBehavior"].(map[string]any)))
}

// cfnResource is a resource of the transformed template, which must exist with its type.
func cfnResource(t *testing.T, cfn *samtemplate.CFN, id, typ string) samtemplate.Resource {
	t.Helper()
	r, ok := cfn.Resources[id]
	if !ok || r.Type != typ {
		t.Fatalf("no %s %s", typ, id)
	}
	return r
}

// matches is CloudFront's path pattern match: * any run of characters (slashes
// included), ? one character, case-sensitive, the whole path.
func matches(pattern, path string) bool {
	re := regexp.QuoteMeta(pattern)
	re = strings.ReplaceAll(re, `\*`, ".*")
	re = strings.ReplaceAll(re, `\?`, ".")
	return regexp.MustCompile("^" + re + "$").MatchString(path)
}

func behaviourFor(bs []behaviour, path string) behaviour {
	for _, b := range bs {
		if matches(b.Pattern, path) {
			return b
		}
	}
	panic("no default behaviour")
}

// concretePath fills a route's path parameters with values the API accepts.
func concretePath(route string) string {
	return strings.NewReplacer("{id}", "3", "{provider}", "github", "{res}", "high", "{slug}", "kodansha").Replace(route)
}

// runFunction runs a CloudFront Function's code on viewer-request events with node
// and returns what it returned for each (a request passed on, or a response).
func runFunction(t *testing.T, code string, events []map[string]any) []map[string]any {
	t.Helper()
	evs, _ := json.Marshal(events)
	script := `const vm = require('vm'); const ctx = {};
vm.runInNewContext(process.env.FN_CODE + '\nthis.handler = handler;', ctx);
console.log(JSON.stringify(JSON.parse(process.env.FN_EVENTS).map((e) => ctx.handler(e))));`
	cmd := exec.Command(nodePath(t), "-e", script)
	cmd.Env = append(os.Environ(), "FN_CODE="+code, "FN_EVENTS="+string(evs))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var res []map[string]any
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return res
}

func viewerEvent(method, uri string) map[string]any {
	return map[string]any{
		"version": "1.0",
		"context": map[string]any{"distributionDomainName": "d111111abcdef8.cloudfront.net", "distributionId": "EDFDVBD6EXAMPLE", "eventType": "viewer-request", "requestId": "req"},
		"viewer":  map[string]any{"ip": "198.51.100.11"},
		"request": map[string]any{"method": method, "uri": uri, "querystring": map[string]any{"client": map[string]any{"value": "1"}},
			"headers": map[string]any{"host": map[string]any{"value": "api.mediacatalog.app"}}, "cookies": map[string]any{}},
	}
}

// originHeaders says which viewer headers an origin request policy forwards: all (but
// some), or a list. Managed policies other than AllViewerExceptHostHeader are refused.
func originHeaders(t *testing.T, cfn *samtemplate.CFN, policy string) (behaviourName string, headers []string, cookies, query string) {
	t.Helper()
	if policy == "" {
		return "none", nil, "none", "none"
	}
	if policy == "b689b0a8-53d0-40ab-baf2-68738e2966ac" { // Managed-AllViewerExceptHostHeader
		return "allExcept", []string{"Host"}, "all", "all"
	}
	r, ok := cfn.Resources[policy]
	if !ok || r.Type != "AWS::CloudFront::OriginRequestPolicy" {
		t.Fatalf("origin request policy %s: neither the stack's nor AllViewerExceptHostHeader", policy)
	}
	c := r.Properties["OriginRequestPolicyConfig"].(map[string]any)
	hc := c["HeadersConfig"].(map[string]any)
	for _, h := range anyList(hc["Headers"]) {
		if h != nil {
			headers = append(headers, fmt.Sprint(h))
		}
	}
	return fmt.Sprint(hc["HeaderBehavior"]), headers, fmt.Sprint(c["CookiesConfig"].(map[string]any)["CookieBehavior"]),
		fmt.Sprint(c["QueryStringsConfig"].(map[string]any)["QueryStringBehavior"])
}

// cacheKey reads a stack cache policy: its TTLs and what its key holds.
type cacheKey struct {
	MinTTL, DefaultTTL, MaxTTL float64
	Headers                    []string
	Cookies                    string
}

func readCachePolicy(t *testing.T, cfn *samtemplate.CFN, id string) cacheKey {
	t.Helper()
	r, ok := cfn.Resources[id]
	if !ok || r.Type != "AWS::CloudFront::CachePolicy" {
		t.Fatalf("cache policy %s is not one of the stack's", id)
	}
	c := r.Properties["CachePolicyConfig"].(map[string]any)
	p := c["ParametersInCacheKeyAndForwardedToOrigin"].(map[string]any)
	k := cacheKey{MinTTL: c["MinTTL"].(float64), DefaultTTL: c["DefaultTTL"].(float64), MaxTTL: c["MaxTTL"].(float64),
		Cookies: fmt.Sprint(p["CookiesConfig"].(map[string]any)["CookieBehavior"])}
	for _, h := range anyList(p["HeadersConfig"].(map[string]any)["Headers"]) {
		if h != nil {
			k.Headers = append(k.Headers, fmt.Sprint(h))
		}
	}
	return k
}

// TestEdgeBehaviours walks every route of the API through the distribution, for both
// parameter sets: each reaches the behaviour CloudFront would pick (first matching
// pattern, the default last), which allows its method; only public reads are in a
// cached behaviour; every route but the internal avatar change reaches the origin (its
// viewer-request function passes it), and the avatar change is answered 404 at the edge
// for every method; paths that are no route are 404 at the edge. Cached behaviours take
// their TTLs from the origin (MinTTL and DefaultTTL 0, MaxTTL a day or more, so that
// stale-if-error can serve through an outage), key on no cookie, and key on Origin
// whenever the origin can see it (its CORS answer differs by it), but only on a CORS
// origin: their viewer-request function keeps each CORS origin and drops an invented
// one, so inventing Origins makes no new cache entries. Uncached ones forward every
// cookie and query string and the headers the API reads. Headers are forwarded by name
// only, never all of a viewer's: CloudFront's documentation promises to overwrite a
// viewer's copy only of an origin custom header, so a viewer's own
// CloudFront-Viewer-Address would pass wherever CloudFront does not add its own; and
// Host reaches the origin through no behaviour.
func TestEdgeBehaviours(t *testing.T) {
	ops := map[string]apiOperation{}
	for _, o := range openapiOperations(t) {
		ops[o.Method+" "+o.Path] = o
	}
	var routes []string
	for _, f := range loadTemplate(t).Functions {
		routes = append(routes, f.Routes...)
	}
	sort.Strings(routes)
	for _, set := range paramSets {
		t.Run(set, func(t *testing.T) {
			cfn, _ := transformed(t, set)
			params := stackParams(t, cfn, set)
			_, bs := distribution(t, cfn)
			code := func(fn string) string { return functionCode(t, cfn, params, fn) }
			cachedRoutes, publicReads := 0, 0
			for _, route := range routes {
				method, path, _ := strings.Cut(route, " ")
				uri := concretePath(path)
				b := behaviourFor(bs, uri)
				op, ok := ops[route]
				if !ok {
					t.Fatalf("%s is not in the OpenAPI document", route)
				}
				if !slices.Contains(b.Methods, method) {
					t.Errorf("%s: behaviour %s allows %v only (CloudFront refuses the rest)", route, b.Pattern, b.Methods)
				}
				cached := b.Cache != cachingDisabled
				if cached {
					cachedRoutes++
				}
				if publicRead(op) {
					publicReads++
				}
				if cached && !publicRead(op) {
					t.Errorf("%s: needs a session or is no read, yet behaviour %s caches (policy %s)", route, b.Pattern, b.Cache)
				}
				if !cached && publicRead(op) {
					t.Errorf("%s: a public read in the uncached behaviour %s", route, b.Pattern)
				}
				internal := route == "POST /user/avatar/change/{id}"
				if b.Function == "" {
					if internal {
						t.Errorf("%s: reaches the origin through %s", route, b.Pattern)
					}
					continue
				}
				events := []map[string]any{}
				for _, m := range b.Methods {
					if internal || m == method {
						events = append(events, viewerEvent(m, uri))
					}
				}
				for i, out := range runFunction(t, code(b.Function), events) {
					m := events[i]["request"].(map[string]any)["method"]
					status, _ := out["statusCode"].(float64)
					if internal && status != 404 {
						t.Errorf("%s %s: the edge passes it on (%v), want 404", m, uri, out)
					}
					if !internal && (status != 0 || out["uri"] != uri) {
						t.Errorf("%s %s: the edge answers %v, want it passed to the origin", m, uri, out)
					}
				}
			}
			if cachedRoutes != publicReads || publicReads < 8 {
				t.Errorf("%d routes in cached behaviours, want the %d public reads (the catalog's six and the avatars' two at least)", cachedRoutes, publicReads)
			}
			def := bs[len(bs)-1]
			for i, out := range runFunction(t, code(def.Function), []map[string]any{viewerEvent("GET", "/"), viewerEvent("GET", "/docs"), viewerEvent("POST", "/tags")}) {
				if out["statusCode"] != float64(404) {
					t.Errorf("default behaviour, request %d: %v, want 404 at the edge", i, out)
				}
			}
			for _, b := range bs {
				hb, headers, cookies, query := originHeaders(t, cfn, b.OriginReq)
				if hb == "allViewer" || hb == "allViewerAndWhitelistCloudFront" || slices.ContainsFunc(headers, func(h string) bool { return strings.EqualFold(h, "Host") }) != (hb == "allExcept") {
					t.Errorf("%s: forwards Host to API Gateway (headers %s %v)", b.Pattern, hb, headers)
				}
				if hb != "whitelist" && hb != "none" {
					t.Errorf("%s: forwards the viewer's headers wholesale (%s): a viewer's own CloudFront-Viewer-Address reaches the origin", b.Pattern, hb)
				}
				if b.Cache == cachingDisabled {
					if b.OriginReq == "" {
						continue // answered at the edge
					}
					for _, want := range []string{"Origin", "Sec-Fetch-Site", "Content-Type", "CloudFront-Viewer-Address"} {
						if hb == "whitelist" && !slices.Contains(headers, want) {
							t.Errorf("%s: %s not forwarded (%v)", b.Pattern, want, headers)
						}
					}
					if cookies != "all" || query != "all" {
						t.Errorf("%s: cookies %s, query strings %s; the API reads them all", b.Pattern, cookies, query)
					}
					continue
				}
				k := readCachePolicy(t, cfn, b.Cache)
				if k.MinTTL != 0 || k.DefaultTTL != 0 || k.MaxTTL < 86400 {
					t.Errorf("%s: TTLs min %v default %v max %v; the origin's headers decide, up to a day or more", b.Pattern, k.MinTTL, k.DefaultTTL, k.MaxTTL)
				}
				if k.Cookies != "none" || cookies != "none" {
					t.Errorf("%s: cookies in the key (%s) or forwarded (%s) on a cached behaviour", b.Pattern, k.Cookies, cookies)
				}
				if slices.ContainsFunc(k.Headers, func(h string) bool { return strings.EqualFold(h, "Host") }) {
					t.Errorf("%s: Host in the cache key (and so forwarded)", b.Pattern)
				}
				originSeen := slices.Contains(k.Headers, "Origin") || slices.Contains(headers, "Origin") || hb == "allExcept"
				if originSeen && !slices.Contains(k.Headers, "Origin") {
					t.Errorf("%s: the origin sees Origin but the key does not hold it: one origin's CORS answer would serve another", b.Pattern)
				}
				// The frontend reads the catalog with fetch, cross-origin: its Origin must
				// reach the origin (the avatars are images, which need no CORS).
				if b.Function == "CatalogCacheKeyFunction" && !slices.Contains(k.Headers, "Origin") {
					t.Errorf("%s: Origin does not reach the origin, so no CORS answer does", b.Pattern)
				}
				if slices.Contains(k.Headers, "Origin") {
					if b.Function == "" {
						t.Errorf("%s: keys on Origin with no viewer-request function: each invented Origin is a cache entry", b.Pattern)
						continue
					}
					allowed := corsOrigins(t, cfn, params)
					var events []map[string]any
					for _, o := range append(slices.Clone(allowed), inventedOrigins(allowed)...) {
						events = append(events, originEvent(o))
					}
					for i, out := range runFunction(t, code(b.Function), events) {
						got := keptOrigin(t, out)
						if i < len(allowed) && got != allowed[i] {
							t.Errorf("%s: CORS origin %q keyed as %q", b.Pattern, allowed[i], got)
						}
						if i >= len(allowed) && got != "" {
							t.Errorf("%s: an invented Origin keyed as %q: a cache entry per invention", b.Pattern, got)
						}
					}
				}
			}
		})
	}
}

// TestEdgeDistribution: the distribution's one origin is API Gateway's own domain over
// TLS, with X-Origin-Verify from the origin secret's ORIGIN_SECRET (pinned to a version
// only when OriginSecretVersion is set); the public name with the us-east-1 certificate
// and the web ACL; the secret generates ORIGIN_SECRET long enough for the origin's check
// and an empty ORIGIN_SECRET_PREVIOUS.
func TestEdgeDistribution(t *testing.T) {
	for _, set := range paramSets {
		t.Run(set, func(t *testing.T) {
			cfn, _ := transformed(t, set)
			dc, _ := distribution(t, cfn)
			if got := fmt.Sprint(dc["WebACLId"]); got != "map[Ref:WebAclArn]" {
				t.Errorf("WebACLId %s", got)
			}
			vc, _ := dc["ViewerCertificate"].(map[string]any)
			if fmt.Sprint(vc["AcmCertificateArn"]) != "map[Ref:EdgeCertificateArn]" || vc["SslSupportMethod"] != "sni-only" || !strings.HasPrefix(fmt.Sprint(vc["MinimumProtocolVersion"]), "TLSv1.2") {
				t.Errorf("ViewerCertificate %v", vc)
			}
			origins := dc["Origins"].([]any)
			if len(origins) != 1 {
				t.Fatalf("%d origins", len(origins))
			}
			o := origins[0].(map[string]any)
			coc, _ := o["CustomOriginConfig"].(map[string]any)
			if fmt.Sprint(o["DomainName"]) != "map[Ref:OriginDomainName]" || coc["OriginProtocolPolicy"] != "https-only" {
				t.Errorf("origin %v", o)
			}
			hs, _ := o["OriginCustomHeaders"].([]any)
			if len(hs) != 1 || hs[0].(map[string]any)["HeaderName"] != "X-Origin-Verify" {
				t.Fatalf("origin headers %v", hs)
			}
			v, _ := json.Marshal(hs[0].(map[string]any)["HeaderValue"])
			for _, want := range []string{`"PinOriginSecret"`, `{{resolve:secretsmanager:${OriginSecret}:SecretString:ORIGIN_SECRET::${OriginSecretVersion}}}`,
				`{{resolve:secretsmanager:${OriginSecret}:SecretString:ORIGIN_SECRET}}`} {
				if !strings.Contains(string(v), want) {
					t.Errorf("X-Origin-Verify's value %s lacks %s", v, want)
				}
			}
			s := cfnResource(t, cfn, "OriginSecret", "AWS::SecretsManager::Secret")
			gen := s.Properties["GenerateSecretString"].(map[string]any)
			var tmpl map[string]string
			if err := json.Unmarshal([]byte(fmt.Sprint(gen["SecretStringTemplate"])), &tmpl); err != nil || len(tmpl) != 1 || tmpl["ORIGIN_SECRET_PREVIOUS"] != "" {
				t.Errorf("SecretStringTemplate %v: want only an empty ORIGIN_SECRET_PREVIOUS (%v)", gen["SecretStringTemplate"], err)
			}
			// The origin's check refuses a secret shorter than a signing secret (32 bytes).
			if gen["GenerateStringKey"] != "ORIGIN_SECRET" || gen["PasswordLength"].(float64) < 32 || gen["ExcludePunctuation"] != true {
				t.Errorf("GenerateSecretString %v", gen)
			}
			// Kept when the stack lets go of it, except after a failed first creation
			// (TestRetryableCreate); a replacement keeps the old one too.
			if s.DeletionPolicy != "RetainExceptOnCreate" || s.UpdateReplacePolicy != "Retain" {
				t.Errorf("OriginSecret: a replacement would change CloudFront's header and the functions' value at once")
			}
		})
	}
}
