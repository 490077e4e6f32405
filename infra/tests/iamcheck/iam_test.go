package iamcheck_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/mediacatalog/service/infra/tests/iamcheck"
	"github.com/mediacatalog/service/infra/tests/motoserver"
	"github.com/mediacatalog/service/infra/tests/samtemplate"
	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/telemetry"
)

func TestMain(m *testing.M) { testenv.Main(m) }

var update = flag.Bool("update", false, "rewrite the generated table of docs/operations.md from the recording (make iam-table)")

// The parameter sets of infra/tests/samtemplate's tests, each deployed as a stack of its own:
// one that creates its proxy and secrets' key grants, one that reuses a proxy.
var sets = []struct{ name, stack string }{
	{"create", "media-catalog-prod"},
	{"existing", "media-catalog-staging"},
}

// deployment is one parameter set's stack with every request made with its roles: the
// recorded calls' and the platform's.
type deployment struct {
	world      *world
	principals map[string]*iamcheck.Principal
	checks     []iamcheck.Check
	calls      int // checks from recorded calls (the first ones)
}

func templatePath() string { return filepath.Join(testenv.RepoRoot(), "template.yaml") }

// record transforms the template with each parameter set (and each mutation of it with
// the create set, for the mutations' test), runs every function of each stack with all
// calls recorded, and turns the calls into the requests AWS authorizes.
func record(t *testing.T) (map[string]*deployment, map[string]mutated) {
	t.Helper()
	dir := t.TempDir()
	var jobs []samtemplate.Job
	for _, set := range sets {
		jobs = append(jobs, samtemplate.Job{Template: templatePath(), Params: paramsPath(set.name)})
	}
	muts := map[string]mutated{}
	text, err := os.ReadFile(templatePath())
	if err != nil {
		t.Fatal(err)
	}
	var applied []string
	for i, m := range mutations {
		if n := strings.Count(string(text), m.old); n != 1 {
			muts[m.name] = mutated{err: fmt.Errorf("the mutation's text is in template.yaml %d times, want once: %q", n, m.old)}
			continue
		}
		path := filepath.Join(dir, fmt.Sprintf("mutation-%d.yaml", i))
		if err := os.WriteFile(path, []byte(strings.Replace(string(text), m.old, m.new, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, samtemplate.Job{Template: path, Params: paramsPath("create")})
		applied = append(applied, m.name)
	}
	var cfns []*samtemplate.CFN
	done := make(chan struct{})
	go func() {
		defer close(done)
		cfns, err = samtemplate.TransformAll(dir, jobs...)
	}()
	motoURL := motoserver.Start(t)
	<-done
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range applied {
		muts[name] = mutated{cfn: cfns[len(sets)+i]}
	}
	worlds := make([]*world, len(sets))
	for i, set := range sets {
		worlds[i] = newWorld(t, set.name, set.stack, motoURL, cfns[i])
	}

	rec := &recorder{}
	stop := telemetry.ObserveAWS(rec.observe)
	for _, w := range worlds {
		w.build(t)
		w.drive(t)
	}
	stop()
	if t.Failed() {
		for _, w := range worlds {
			t.Logf("%s: the functions' logs:\n%s", w.set, w.logs.String())
		}
		t.FailNow()
	}

	out := map[string]*deployment{}
	for _, w := range worlds {
		principals, err := iamcheck.Principals(w.stack, w.functions)
		if err != nil {
			t.Fatal(err)
		}
		d := &deployment{world: w, principals: principals}
		for _, c := range rec.calls {
			if c.tag.function == "" {
				t.Errorf("%s.%s was called outside any function's invocation (a context not derived from the request's or the start-up's)", c.call.Service, c.call.Operation)
				continue
			}
			if c.tag.set != w.set {
				continue
			}
			rs, err := w.account.Requests(c.call)
			if err != nil {
				t.Errorf("%s: %v", c.tag.function, err)
				continue
			}
			for _, r := range rs {
				d.checks = append(d.checks, iamcheck.Check{Principal: c.tag.function, Request: r, Source: c.call.Service + "." + c.call.Operation})
			}
		}
		d.calls = len(d.checks)
		platform, err := iamcheck.Platform(w.stack, w.account, w.functions)
		if err != nil {
			t.Fatal(err)
		}
		d.checks = append(d.checks, platform...)
		out[w.set] = d
	}
	return out, muts
}

// mutated is a mutation's template transformed with the create set, or why it is not.
type mutated struct {
	cfn *samtemplate.CFN
	err error
}

// resourcePolicies are the policies of the resources the requests name: the images
// bucket's (from the template) and the secrets' customer-managed key's, KMS's default
// key policy, which lets the account's IAM policies grant the key (an operator's key
// must keep that statement).
func (d *deployment) resourcePolicies(t *testing.T, s *samtemplate.Stack) (map[string]any, func(iamcheck.Request) string) {
	t.Helper()
	bucket := d.world.env["cdn"]["S3_BUCKET"]
	policy, err := s.Resolve(s.CFN.Resources["ImagesBucketPolicy"].Properties["PolicyDocument"])
	if err != nil {
		t.Fatal(err)
	}
	pols := map[string]any{"bucket": policy, "key": map[string]any{"Version": "2012-10-17", "Statement": []any{map[string]any{
		"Sid": "Enable IAM User Permissions", "Effect": "Allow", "Principal": map[string]any{"AWS": "arn:" + s.Partition + ":iam::" + accountID + ":root"},
		"Action": "kms:*", "Resource": "*"}}}}
	bucketARN := "arn:" + s.Partition + ":s3:::" + bucket
	key := s.Params["SecretsKmsKeyArn"]
	return pols, func(r iamcheck.Request) string {
		switch {
		case r.Resource == bucketARN || strings.HasPrefix(r.Resource, bucketARN+"/"):
			return "bucket"
		case key != "" && r.Resource == key:
			return "key"
		}
		return ""
	}
}

func (d *deployment) evaluate(t *testing.T, s *samtemplate.Stack, principals map[string]*iamcheck.Principal, usage bool) []iamcheck.Result {
	t.Helper()
	pols, of := d.resourcePolicies(t, s)
	results, err := iamcheck.Evaluate(context.Background(), principals, pols, of, d.checks, usage)
	if err != nil {
		t.Fatal(err)
	}
	return results
}

// TestIAM: every call each function makes while the tests drive it the way it ships,
// and every request AWS's services make with the stack's roles, is allowed by its
// principal's role in the transformed template, for both parameter sets, as AWS's
// policy evaluation decides it; a call of an operation with no known IAM action fails,
// and so does a grant that no call uses. Then: each narrowing of template.yaml in
// mutations is caught with the grant it removed named, and docs/operations.md's table of
// the calls is the recording's.
func TestIAM(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every function of two stacks")
	}
	deployments, muts := record(t)
	for _, set := range sets {
		t.Run(set.name, func(t *testing.T) {
			d := deployments[set.name]
			s := d.world.stack
			results := d.evaluate(t, s, d.principals, true)
			for _, m := range iamcheck.Denials(d.principals, results, s.Symbolic) {
				t.Error(m)
			}
			for _, m := range iamcheck.Unused(d.principals, results, s.Symbolic) {
				t.Error(m)
			}
			calls := map[string]int{}
			for _, c := range d.checks[:d.calls] {
				calls[c.Principal]++
			}
			for name := range d.world.functions {
				if calls[name] == 0 {
					t.Errorf("%s made no AWS call: the test drives it no more", name)
				}
			}
			t.Logf("%d requests from %d recorded calls' and the platform's, %d principals", len(d.checks), d.calls, len(d.principals))
		})
	}
	t.Run("mutations", func(t *testing.T) { testMutations(t, deployments["create"], muts) })
	t.Run("table", func(t *testing.T) { testTable(t, deployments["create"]) })
}

// mutations narrow one grant of template.yaml each (old appears exactly once); the IAM
// check must deny the request the grant allowed, naming the grant (want).
var mutations = []struct {
	name, old, new, want string
}{
	{"admin-users loses s3:DeleteObject",
		"Sid: WriteProfileImages\n                Effect: Allow\n                Action: [s3:PutObject, s3:DeleteObject]",
		"Sid: WriteProfileImages\n                Effect: Allow\n                Action: [s3:PutObject]",
		"admin-users (role AdminUsersFunctionRole): S3.DeleteObjects is denied (ImplicitlyDenied): grant s3:DeleteObject on arn:aws:s3:::"},
	{"the bucket's ARN in place of users/*",
		"Action: [s3:PutObject, s3:DeleteObject]\n                Resource: !Sub \"${ImagesBucket.Arn}/users/*\"",
		"Action: [s3:PutObject, s3:DeleteObject]\n                Resource: !GetAtt ImagesBucket.Arn",
		"admin-users (role AdminUsersFunctionRole): S3.PutObject is denied (ImplicitlyDenied): grant s3:PutObject on arn:aws:s3:::"},
	{"the state and rate-limit tables swapped",
		"Action: [dynamodb:PutItem, dynamodb:DeleteItem]\n                Resource: !GetAtt OAuthStateTable.Arn\n              - Sid: OAuthRateLimitCounters\n                Effect: Allow\n                Action: [dynamodb:UpdateItem]\n                Resource: !GetAtt RateLimitTable.Arn",
		"Action: [dynamodb:PutItem, dynamodb:DeleteItem]\n                Resource: !GetAtt RateLimitTable.Arn\n              - Sid: OAuthRateLimitCounters\n                Effect: Allow\n                Action: [dynamodb:UpdateItem]\n                Resource: !GetAtt OAuthStateTable.Arn",
		"oauth (role OAuthFunctionRole): DynamoDB.PutItem is denied (ImplicitlyDenied): grant dynamodb:PutItem on arn:aws:dynamodb:eu-central-1:123456789012:table/media-catalog-prod-OAuthStateTable-"},
	{"a region in the distribution's ARN",
		"arn:${AWS::Partition}:cloudfront::${AWS::AccountId}:distribution/${Distribution}",
		"arn:${AWS::Partition}:cloudfront:${AWS::Region}:${AWS::AccountId}:distribution/${Distribution}",
		"cdn (role CdnFunctionRole): CloudFront.CreateInvalidation is denied (ImplicitlyDenied): grant cloudfront:CreateInvalidation on arn:aws:cloudfront::123456789012:distribution/"},
	{"the contributors' prefix replaced by the users'",
		"Resource: !Sub \"${ImagesBucket.Arn}/contributors/*\"",
		"Resource: !Sub \"${ImagesBucket.Arn}/users/*\"",
		"admin-contributors (role AdminContributorsFunctionRole): S3.PutObject is denied (ImplicitlyDenied): grant s3:PutObject on arn:aws:s3:::"},
	{"the cdn function in place of its alias",
		"Action: [lambda:InvokeFunction]\n                Resource: !Ref CdnFunction.Alias",
		"Action: [lambda:InvokeFunction]\n                Resource: !GetAtt CdnFunction.Arn",
		"admin-users (role AdminUsersFunctionRole): Lambda.Invoke is denied (ImplicitlyDenied): grant lambda:InvokeFunction on arn:aws:lambda:eu-central-1:123456789012:function:media-catalog-prod-cdn:live"},
	{"the hook's status report on the deployment groups",
		"Action: [codedeploy:PutLifecycleEventHookExecutionStatus]\n                Resource: \"*\"",
		"Action: [codedeploy:PutLifecycleEventHookExecutionStatus]\n                Resource: !Sub \"arn:${AWS::Partition}:codedeploy:${AWS::Region}:${AWS::AccountId}:deploymentgroup:${ServerlessDeploymentApplication}/*\"",
		"deploy-hook (role DeployHookRole): CodeDeploy.PutLifecycleEventHookExecutionStatus is denied (ImplicitlyDenied): grant codedeploy:PutLifecycleEventHookExecutionStatus on *"},
	{"the secrets' key through another service",
		"Sid: DecryptOwnSecretsThroughSecretsManager\n                  Effect: Allow\n                  Action: [kms:Decrypt]\n                  Resource: !Ref SecretsKmsKeyArn\n                  Condition:\n                    StringEquals:\n                      kms:ViaService: !Sub \"secretsmanager.",
		"Sid: DecryptOwnSecretsThroughSecretsManager\n                  Effect: Allow\n                  Action: [kms:Decrypt]\n                  Resource: !Ref SecretsKmsKeyArn\n                  Condition:\n                    StringEquals:\n                      kms:ViaService: !Sub \"lambda.",
		"oauth (role OAuthFunctionRole): Secrets Manager.GetSecretValue is denied (ImplicitlyDenied): grant kms:Decrypt on arn:aws:kms:eu-central-1:123456789012:key/"},
	{"a function's logs in another function's group",
		"log-group:/aws/lambda/${AWS::StackName}-tags:log-stream:*",
		"log-group:/aws/lambda/${AWS::StackName}-publishers:log-stream:*",
		"tags (role TagsFunctionRole): Lambda (writes the function's output to its log group with the function's role; the template creates the group: no logs:CreateLogGroup) is denied (ImplicitlyDenied): grant logs:PutLogEvents on arn:aws:logs:eu-central-1:123456789012:log-group:/aws/lambda/media-catalog-prod-tags:log-stream:"},
}

// testMutations evaluates the recorded requests of the create set against the roles
// of each mutation of template.yaml (transformed by record).
func testMutations(t *testing.T, d *deployment, muts map[string]mutated) {
	sem := make(chan struct{}, 2) // each evaluation is a node process: two at a time
	for _, m := range mutations {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			mu := muts[m.name]
			if mu.err != nil {
				t.Fatal(mu.err)
			}
			s, err := samtemplate.NewStack(mu.cfn, paramsPath("create"), d.world.stack.Name, region, accountID)
			if err != nil {
				t.Fatal(err)
			}
			principals, err := iamcheck.Principals(s, d.world.functions)
			if err != nil {
				t.Fatal(err)
			}
			sem <- struct{}{}
			results := d.evaluate(t, s, principals, false)
			<-sem
			denials := iamcheck.Denials(principals, results, s.Symbolic)
			found := false
			for _, msg := range denials {
				found = found || strings.Contains(msg, m.want)
			}
			if !found {
				t.Errorf("the mutation is not caught: want a denial with %q, got %d:\n%s", m.want, len(denials), strings.Join(denials, "\n"))
			}
			t.Logf("caught:\n%s", strings.Join(denials, "\n"))
		})
	}
}

// The generated part of docs/operations.md.
const (
	tableBegin = "<!-- iam-table: begin; make iam-table writes this part from infra/tests/iamcheck's recording -->"
	tableEnd   = "<!-- iam-table: end -->"
)

// generalize writes a request's resource as the template names it, with the parts each
// call chooses (an object's key below its prefix, a log stream, a version) as *, and
// each function's resources as <Fn>'s when the row is every function's.
var generalize = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`^(\$\{ImagesBucket\.Arn\}/[^/]+)/.+$`), "$1/*"},
	{regexp.MustCompile(`:log-stream:.+$`), ":log-stream:*"},
	{regexp.MustCompile(`^(.*:function:[^:]+|\$\{[A-Za-z]+\.Arn\}):\d+$`), "$1:<version>"},
	{regexp.MustCompile(`^(arn:.*:dbuser:)prx-[0-9a-f]+/`), "${1}<proxy id>/"},
}

func tableResource(s *samtemplate.Stack, r string) string {
	r = s.Symbolic(r)
	for _, g := range generalize {
		r = g.re.ReplaceAllString(r, g.with)
	}
	return r
}

// perFunction writes the resources of one function of w in r as those of any (<Fn>);
// the deploy hook's too with hook.
func perFunction(w *world, r string, withHook bool) string {
	for name, id := range w.functions {
		if name == hook && !withHook {
			continue
		}
		base := strings.TrimSuffix(id, "Function")
		r = regexp.MustCompile(`\$\{`+base+`(Function|CanaryErrorsAlarm|RoutesAlarm)`).ReplaceAllString(r, "${<Fn>$1")
		r = strings.ReplaceAll(r, "${AWS::StackName}-"+name, "${AWS::StackName}-<fn>")
	}
	return r
}

// table writes rows grouped by all but their actions: "| key... | actions |" with the
// actions as the column at index at.
type table map[string][]string

func (tb table) add(action string, cols ...string) {
	k := strings.Join(cols, "\x00")
	if !slices.Contains(tb[k], action) {
		tb[k] = append(tb[k], action)
	}
}

func (tb table) rows(at int) []string {
	var out []string
	for k, actions := range tb {
		sort.Strings(actions)
		cols := strings.Split(k, "\x00")
		cell := "`" + strings.Join(actions, "`, `") + "`"
		cols = append(cols[:at], append([]string{cell}, cols[at:]...)...)
		out = append(out, "| "+strings.Join(cols, " | ")+" |")
	}
	sort.Strings(out)
	return out
}

// testTable holds docs/operations.md's generated part to the create set's recording
// (make iam-table rewrites it).
func testTable(t *testing.T, d *deployment) {
	s := d.world.stack
	calls, platform := table{}, table{}
	who := map[string]string{iamcheck.CodeDeploy: "CodeDeploy (CodeDeployServiceRole)", iamcheck.RDSProxy: "RDS Proxy (DbProxyRole)"}
	for i, c := range d.checks {
		res := tableResource(s, c.Resource)
		if i < d.calls {
			if c.Principal == hook {
				res = perFunction(d.world, res, false)
			}
			calls.add(c.Action, c.Principal, "`"+res+"`", c.Source)
			continue
		}
		role := who[c.Principal]
		if c.Source == "Lambda" {
			role = "every function"
			if strings.HasPrefix(c.Action, "ec2:") {
				role = "every function but the deploy hook (in the VPC)"
			}
		}
		platform.add(c.Action, role, "`"+perFunction(d.world, res, c.Source == "Lambda")+"`", c.Source+" "+c.Reason)
	}
	var b strings.Builder
	b.WriteString(tableBegin + "\n\n")
	b.WriteString("The calls each function made while `TestIAM` drove it (parameter set `create`; `<Fn>`: each function's), as AWS authorizes them:\n\n")
	b.WriteString("| function | actions | resource | call |\n|---|---|---|---|\n")
	for _, r := range calls.rows(1) {
		b.WriteString(r + "\n")
	}
	b.WriteString("\nThe requests AWS's services make with the roles, which no code of the service makes (the short list of grants no call uses):\n\n")
	b.WriteString("| role of | actions | resource | why |\n|---|---|---|---|\n")
	for _, r := range platform.rows(1) {
		b.WriteString(r + "\n")
	}
	b.WriteString("\n" + tableEnd)
	want := b.String()

	path := filepath.Join(testenv.RepoRoot(), "docs", "operations.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	begin, end := strings.Index(string(doc), tableBegin), strings.Index(string(doc), tableEnd)
	if begin < 0 || end < begin {
		t.Fatalf("docs/operations.md has no generated IAM part (%q ... %q)", tableBegin, tableEnd)
	}
	got := string(doc[begin : end+len(tableEnd)])
	if *update {
		if err := os.WriteFile(path, []byte(string(doc[:begin])+want+string(doc[end+len(tableEnd):])), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got != want {
		t.Errorf("docs/operations.md's table of the IAM calls differs from the recording (make iam-table rewrites it):\n%s", want)
	}
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
