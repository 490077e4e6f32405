package deployhook_test

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	cdtypes "github.com/aws/aws-sdk-go-v2/service/codedeploy/types"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"github.com/mediacatalog/service/infra/tests/motoserver"
	"github.com/mediacatalog/service/shared/awsconfig"
	"github.com/mediacatalog/service/shared/deployhook"
	"github.com/mediacatalog/service/shared/lambdahttp"
	"github.com/mediacatalog/service/shared/readiness"
)

const prefix = "media-catalog-test-"

// appSpec is a Lambda deployment's revision as CodeDeploy's AppSpec reference lays it
// out ("AppSpec 'resources' section for an AWS Lambda deployment").
func appSpec(function, current, target string) string {
	return fmt.Sprintf(`{"version": 0.0, "Resources": [{"%[1]s": {"Type": "AWS::Lambda::Function",
		"Properties": {"Name": "%[1]s", "Alias": "live", "CurrentVersion": "%[2]s", "TargetVersion": "%[3]s"}}}],
		"Hooks": [{"BeforeAllowTraffic": "CodeDeployHook_media-catalog-test-deploy-hook"}]}`, function, current, target)
}

// answer is how one function version answers the readiness probe: through the real
// Lambda entry (lambdahttp.Entry), with the result ready makes of the group's healthy
// one, or the API answer of a version without the probe (api: its status to every
// event); a crash; or nothing at all.
type answer struct {
	ready func(group string) readiness.Result
	api   int
	crash bool
	hang  bool
}

// healthy is a group's ready answer: every dependency checked, every route probe
// answered as the contract says.
func healthy(group string) readiness.Result {
	r := readiness.Result{Ready: true}
	for _, d := range readiness.Dependencies[group] {
		r.Checks = append(r.Checks, readiness.Check{Name: d, OK: true})
	}
	for _, p := range readiness.Probes[group] {
		r.Checks = append(r.Checks, probeAnswer(p, p.Status, p.Data))
	}
	return r
}

// probeAnswer is a route probe's check for an answer of status with the Response Model
// of data (a list when data is empty), judged as the version would.
func probeAnswer(p readiness.Probe, status int, data string) readiness.Check {
	body := `[{"id":1}]`
	if data != "" {
		body = fmt.Sprintf(`{"data":%q,"code":%d}`, data, status)
	}
	c := readiness.Check{Name: p.Name(), Status: status, Body: body, OK: true}
	if err := p.Judge(status, []byte(body)); err != nil {
		c.OK, c.Detail = false, err.Error()
	}
	return c
}

// everything is a group's answer from a version that answers every request with
// status and message, its dependencies all fine.
func everything(status int, msg string) func(string) readiness.Result {
	return func(group string) readiness.Result {
		r := healthy(group)
		r.Checks = r.Checks[:len(readiness.Dependencies[group])]
		for _, p := range readiness.Probes[group] {
			r.Checks = append(r.Checks, probeAnswer(p, status, msg))
		}
		r.Ready = !slices.ContainsFunc(r.Checks, func(c readiness.Check) bool { return !c.OK })
		return r
	}
}

// failing is a group's answer whose dependency dep failed with detail.
func failing(dep, detail string) func(string) readiness.Result {
	return func(group string) readiness.Result {
		r := healthy(group)
		for i := range r.Checks {
			if r.Checks[i].Name == dep {
				r.Checks[i].OK, r.Checks[i].Detail = false, detail
			}
		}
		r.Ready = false
		return r
	}
}

// front stands before moto's server, which holds Lambda's functions and versions. It
// serves what moto does not: CodeDeploy (moto 5.2 has neither
// PutLifecycleEventHookExecutionStatus nor GetApplicationRevision, and its
// GetDeployment answers timestamps as strings, which the SDK refuses), in CodeDeploy's
// JSON 1.1 wire format (API reference: "GetDeployment", "GetApplicationRevision",
// "RevisionLocation", "AppSpecContent", "PutLifecycleEventHookExecutionStatus"), and a Lambda invocation, which moto runs only
// in Docker, in Lambda's REST-JSON format (API reference "Invoke": the payload,
// X-Amz-Function-Error for a crash, ResourceNotFoundException for a version moto does
// not have). Everything else goes to moto.
type front struct {
	moto        *httputil.ReverseProxy
	lambda      *lambda.Client // moto's, to check that an invoked version exists
	answers     map[string]answer
	deployments map[string]string // id -> AppSpec

	mu       sync.Mutex
	reports  []map[string]string
	invoked  []string // "function:qualifier"
	released chan struct{}
}

var invokePath = regexp.MustCompile(`^/2015-03-31/functions/([^/]+)/invocations$`)

func (f *front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Header.Get("X-Amz-Target") {
	case "CodeDeploy_20141006.GetDeployment":
		// The revision by its hash only: GetDeployment's appSpecContent.content "is
		// always null" (API reference).
		var in struct {
			DeploymentID string `json:"deploymentId"`
		}
		json.NewDecoder(r.Body).Decode(&in)
		spec, ok := f.deployments[in.DeploymentID]
		if !ok {
			cdError(w, "DeploymentDoesNotExistException", "no deployment "+in.DeploymentID)
			return
		}
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		json.NewEncoder(w).Encode(map[string]any{"deploymentInfo": map[string]any{
			"applicationName": application, "deploymentGroupName": "group",
			"deploymentId": in.DeploymentID, "computePlatform": "Lambda", "status": "InProgress", "createTime": 1.7645e9,
			"revision": map[string]any{"revisionType": "AppSpecContent", "appSpecContent": map[string]any{"sha256": sha(spec)}},
		}})
		return
	case "CodeDeploy_20141006.GetApplicationRevision":
		var in struct {
			ApplicationName string `json:"applicationName"`
			Revision        struct {
				RevisionType   string `json:"revisionType"`
				AppSpecContent struct {
					SHA256 string `json:"sha256"`
				} `json:"appSpecContent"`
			} `json:"revision"`
		}
		json.NewDecoder(r.Body).Decode(&in)
		for _, spec := range f.deployments {
			if in.ApplicationName == application && in.Revision.RevisionType == "AppSpecContent" && in.Revision.AppSpecContent.SHA256 == sha(spec) {
				w.Header().Set("Content-Type", "application/x-amz-json-1.1")
				json.NewEncoder(w).Encode(map[string]any{"applicationName": application,
					"revision": map[string]any{"revisionType": "AppSpecContent", "appSpecContent": map[string]any{"content": spec, "sha256": sha(spec)}}})
				return
			}
		}
		cdError(w, "RevisionDoesNotExistException", "no such revision")
		return
	}
	if r.Header.Get("X-Amz-Target") == "CodeDeploy_20141006.PutLifecycleEventHookExecutionStatus" {
		var in map[string]string
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.reports = append(f.reports, in)
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		json.NewEncoder(w).Encode(map[string]string{"lifecycleEventHookExecutionId": in["lifecycleEventHookExecutionId"]})
		return
	}
	m := invokePath.FindStringSubmatch(r.URL.Path)
	if m == nil {
		f.moto.ServeHTTP(w, r)
		return
	}
	fn, qualifier := m[1], r.URL.Query().Get("Qualifier")
	f.mu.Lock()
	f.invoked = append(f.invoked, fn+":"+qualifier)
	f.mu.Unlock()
	if _, err := f.lambda.GetFunction(r.Context(), &lambda.GetFunctionInput{FunctionName: aws.String(fn), Qualifier: aws.String(qualifier)}); err != nil {
		w.Header().Set("X-Amzn-Errortype", "ResourceNotFoundException")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `{"Type":"User","Message":%q}`, err.Error())
		return
	}
	event, _ := io.ReadAll(r.Body)
	a := f.answers[fn+":"+qualifier]
	switch {
	case a.hang:
		// A version that never answers: the invocation ends when the caller gives up.
		select {
		case <-r.Context().Done():
		case <-f.released:
		}
		return
	case a.crash:
		w.Header().Set("X-Amz-Function-Error", "Unhandled")
		w.Header().Set("X-Amz-Executed-Version", qualifier)
		io.WriteString(w, `{"errorMessage":"runtime error: invalid memory address or nil pointer dereference","errorType":"Runtime.ExitError"}`)
		return
	}
	group := strings.TrimPrefix(fn, prefix)
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(a.api)
		fmt.Fprintf(w, `{"data":"probe","code":%d}`, a.api)
	})
	var ready lambdahttp.Readiness
	if a.ready != nil {
		ready = func(context.Context) readiness.Result { return a.ready(group) }
	}
	var inv lambdahttp.Invocation
	if err := json.Unmarshal(event, &inv); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if a.ready == nil { // a version without the probe reads the payload as an API event
		inv.Readiness = nil
	}
	resp, err := lambdahttp.Entry(h, ready)(r.Context(), inv)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("X-Amz-Executed-Version", qualifier)
	json.NewEncoder(w).Encode(resp)
}

// newHook is the hook as its main makes it, on endpoint, with a probe time of a second
// (the hanging cases wait this long).
func newHook(endpoint string, logs io.Writer) *deployhook.Hook {
	cfg := awsconfig.ForEndpoint("us-east-1", endpoint, func(string) string { return "" })
	h := deployhook.New(cfg, endpoint, prefix, slog.New(slog.NewJSONHandler(logs, nil)))
	h.ProbeTimeout = time.Second
	return h
}

// application is the stack's CodeDeploy application in the stand-in.
const application = "media-catalog-test-ServerlessDeploymentApplication-1"

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// cdError answers a CodeDeploy error in the JSON 1.1 protocol's form.
func cdError(w http.ResponseWriter, typ, msg string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.WriteHeader(http.StatusBadRequest)
	json.NewEncoder(w).Encode(map[string]string{"__type": typ, "message": msg})
}

// functionZip is a deployment package for moto's Lambda (which never runs it here).
func functionZip(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	w, err := zw.Create("bootstrap")
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("#!/bin/sh\n"))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// motoFunctions starts moto's server with two published versions of each function the
// tests deploy, and of one of another stack; it returns moto's URL and a client of it.
func motoFunctions(t *testing.T) (string, *lambda.Client) {
	t.Helper()
	motoURL := motoserver.Start(t)
	role := motoserver.LambdaRole(t, motoURL)
	ctx := context.Background()
	motoCfg := awsconfig.ForEndpoint("us-east-1", motoURL, func(string) string { return "" })
	motoLambda := lambda.NewFromConfig(motoCfg, func(o *lambda.Options) { o.BaseEndpoint = aws.String(motoURL) })
	code := functionZip(t)
	for _, fn := range []string{prefix + "tags", prefix + "cdn", prefix + "admin-roles", prefix + "publishers", "other-stack-tags"} {
		if _, err := motoLambda.CreateFunction(ctx, &lambda.CreateFunctionInput{
			FunctionName: aws.String(fn), Role: aws.String(role), Runtime: types.RuntimeProvidedal2023,
			Handler: aws.String("bootstrap"), Code: &types.FunctionCode{ZipFile: code},
		}); err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			if _, err := motoLambda.UpdateFunctionConfiguration(ctx, &lambda.UpdateFunctionConfigurationInput{
				FunctionName: aws.String(fn), Description: aws.String(fmt.Sprint("release ", i)),
			}); err != nil {
				t.Fatal(err)
			}
			if _, err := motoLambda.PublishVersion(ctx, &lambda.PublishVersionInput{FunctionName: aws.String(fn)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	return motoURL, motoLambda
}

// TestHook: the hook invokes the deployment's target version with the readiness probe
// and reports what it saw: Succeeded for a version ready by every check and route
// probe; Failed for a dependency failing (the database, the secrets), a check missing,
// a version that answers 401, or 404, to everything, one without the probe, a crash, a
// version that does not answer (in the hook's own time), and for a function that is
// not one of its stack's route groups (never invoked).
func TestHook(t *testing.T) {
	motoURL, motoLambda := motoFunctions(t)
	ctx := context.Background()
	ready := answer{ready: healthy}
	missing := answer{ready: func(g string) readiness.Result { r := healthy(g); r.Checks = r.Checks[1:]; return r }}
	selfDoubt := answer{ready: func(g string) readiness.Result { r := healthy(g); r.Ready = false; return r }}

	cases := []struct {
		name     string
		function string
		answers  map[string]answer // by version
		want     cdtypes.LifecycleEventStatus
		invoked  bool
		unknown  bool // CodeDeploy does not know the deployment
	}{
		{"tags ready", prefix + "tags", map[string]answer{"2": ready}, cdtypes.LifecycleEventStatusSucceeded, true, false},
		{"cdn ready", prefix + "cdn", map[string]answer{"2": ready}, cdtypes.LifecycleEventStatusSucceeded, true, false},
		{"admin-roles ready", prefix + "admin-roles", map[string]answer{"2": ready}, cdtypes.LifecycleEventStatusSucceeded, true, false},
		{"tags without its database", prefix + "tags", map[string]answer{"2": {ready: failing("postgres", "dial tcp: connection refused")}}, cdtypes.LifecycleEventStatusFailed, true, false},
		{"admin-roles without its origin secret", prefix + "admin-roles", map[string]answer{"2": {ready: failing("secrets", "ORIGIN_SECRET is not set")}}, cdtypes.LifecycleEventStatusFailed, true, false},
		{"cdn without its bucket", prefix + "cdn", map[string]answer{"2": {ready: failing("s3", "NoSuchBucket")}}, cdtypes.LifecycleEventStatusFailed, true, false},
		{"a check missing", prefix + "admin-roles", map[string]answer{"2": missing}, cdtypes.LifecycleEventStatusFailed, true, false},
		{"not ready by its own account", prefix + "tags", map[string]answer{"2": selfDoubt}, cdtypes.LifecycleEventStatusFailed, true, false},
		{"admin-roles answers 401 to everything", prefix + "admin-roles", map[string]answer{"2": {ready: everything(401, "Unauthorized")}}, cdtypes.LifecycleEventStatusFailed, true, false},
		{"admin-roles answers 404 to everything", prefix + "admin-roles", map[string]answer{"2": {ready: everything(404, "User not found")}}, cdtypes.LifecycleEventStatusFailed, true, false},
		{"cdn answers 404 to everything", prefix + "cdn", map[string]answer{"2": {ready: everything(404, "User not found")}}, cdtypes.LifecycleEventStatusFailed, true, false},
		{"cdn answers 401 to everything", prefix + "cdn", map[string]answer{"2": {ready: everything(401, "Unauthorized")}}, cdtypes.LifecycleEventStatusFailed, true, false},
		{"tags answers 404 to everything", prefix + "tags", map[string]answer{"2": {ready: everything(404, "Not found")}}, cdtypes.LifecycleEventStatusFailed, true, false},
		{"a version without the probe", prefix + "tags", map[string]answer{"2": {api: 200}}, cdtypes.LifecycleEventStatusFailed, true, false},
		{"the current version ready, the target not", prefix + "tags", map[string]answer{"1": ready, "2": {ready: failing("postgres", "timeout")}}, cdtypes.LifecycleEventStatusFailed, true, false},
		{"tags crashes", prefix + "tags", map[string]answer{"2": {crash: true}}, cdtypes.LifecycleEventStatusFailed, true, false},
		{"tags never answers", prefix + "tags", map[string]answer{"2": {hang: true}}, cdtypes.LifecycleEventStatusFailed, true, false},
		{"another stack's function", "other-stack-tags", map[string]answer{"2": ready}, cdtypes.LifecycleEventStatusFailed, false, false},
		{"an unknown deployment", prefix + "tags", map[string]answer{"2": ready}, cdtypes.LifecycleEventStatusFailed, false, true},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			motoURL, _ := url.Parse(motoURL)
			f := &front{moto: httputil.NewSingleHostReverseProxy(motoURL), lambda: motoLambda, answers: map[string]answer{}, released: make(chan struct{})}
			for v, a := range c.answers {
				f.answers[c.function+":"+v] = a
			}
			srv := httptest.NewServer(f)
			defer srv.Close()
			defer close(f.released)

			id := fmt.Sprintf("d-%d", i)
			f.deployments = map[string]string{id: appSpec(c.function, "1", "2")}
			if c.unknown {
				f.deployments = map[string]string{}
			}
			var logs bytes.Buffer
			h := newHook(srv.URL, &logs)
			ev := deployhook.Event{DeploymentID: id, HookExecutionID: "hook-" + id}
			if err := h.Handle(ctx, ev); err != nil {
				t.Fatal(err)
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			if len(f.reports) != 1 {
				t.Fatalf("reports %v, want one", f.reports)
			}
			want := map[string]string{"deploymentId": ev.DeploymentID, "lifecycleEventHookExecutionId": ev.HookExecutionID, "status": string(c.want)}
			if fmt.Sprint(f.reports[0]) != fmt.Sprint(want) {
				t.Errorf("reported %v, want %v\nlog: %s", f.reports[0], want, logs.String())
			}
			switch {
			case c.invoked && (len(f.invoked) == 0 || f.invoked[0] != c.function+":2"):
				t.Errorf("invoked %v, want the target version %s:2", f.invoked, c.function)
			case !c.invoked && len(f.invoked) != 0:
				t.Errorf("invoked %v, a function outside the stack", f.invoked)
			}
			if c.want == cdtypes.LifecycleEventStatusFailed && !strings.Contains(logs.String(), `"level":"ERROR"`) {
				t.Errorf("a failed probe logs no error: %s", logs.String())
			}
		})
	}
}

// TestHookVersionsApart: one hook container checks one deployment after another
// (CloudFormation deploys the eight functions at once; Lambda reuses a warm hook). Two
// new versions that never answer fail their own deployments only: the next version,
// which answers, passes (through awsconfig's breaker, two timeouts would have opened
// it and refused that probe).
func TestHookVersionsApart(t *testing.T) {
	motoURL, motoLambda := motoFunctions(t)
	u, _ := url.Parse(motoURL)
	f := &front{moto: httputil.NewSingleHostReverseProxy(u), lambda: motoLambda, released: make(chan struct{}),
		answers:     map[string]answer{prefix + "tags:2": {hang: true}, prefix + "publishers:2": {hang: true}, prefix + "cdn:2": {ready: healthy}},
		deployments: map[string]string{"d-tags": appSpec(prefix+"tags", "1", "2"), "d-publishers": appSpec(prefix+"publishers", "1", "2"), "d-cdn": appSpec(prefix+"cdn", "1", "2")}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	defer close(f.released)
	var logs bytes.Buffer
	h := newHook(srv.URL, &logs)
	for _, id := range []string{"d-tags", "d-publishers", "d-cdn"} {
		if err := h.Handle(context.Background(), deployhook.Event{DeploymentID: id, HookExecutionID: "hook-" + id}); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, r := range f.reports {
		got = append(got, r["deploymentId"]+" "+r["status"])
	}
	if want := []string{"d-tags Failed", "d-publishers Failed", "d-cdn Succeeded"}; !slices.Equal(got, want) {
		t.Errorf("reports %v, want %v\nlog: %s", got, want, logs.String())
	}
}

// TestHookReportFails: when CodeDeploy refuses the report, Handle says so (the
// invocation fails and Lambda's logs show it).
func TestHookReportFails(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"__type":"DeploymentDoesNotExistException","message":"no deployment d-1"}`)
	}))
	defer srv.Close()
	err := newHook(srv.URL, io.Discard).Handle(context.Background(), deployhook.Event{DeploymentID: "d-1", HookExecutionID: "e-1"})
	if err == nil || !strings.Contains(err.Error(), "DeploymentDoesNotExistException") {
		t.Errorf("Handle = %v, want the refused report", err)
	}
}

// TestParseAppSpec: the AppSpec in JSON or YAML, versions quoted or not; anything but
// one function of the stack with a probe is refused.
func TestParseAppSpec(t *testing.T) {
	cases := []struct {
		name, content string
		want          deployhook.Target
		err           string
	}{
		{"json", appSpec(prefix+"publishers", "7", "8"), deployhook.Target{Function: prefix + "publishers", Alias: "live", Version: "8"}, ""},
		{"yaml, versions unquoted", "version: 0.0\nResources:\n  - fn:\n      Type: AWS::Lambda::Function\n      Properties:\n        Name: " + prefix + "oauth\n        Alias: live\n        CurrentVersion: 3\n        TargetVersion: 4\n",
			deployhook.Target{Function: prefix + "oauth", Alias: "live", Version: "4"}, ""},
		{"the function by its ARN", appSpec("arn:aws:lambda:eu-central-1:123456789012:function:"+prefix+"cdn", "1", "2"),
			deployhook.Target{Function: prefix + "cdn", Alias: "live", Version: "2"}, ""},
		{"another stack", appSpec("other-tags", "1", "2"), deployhook.Target{}, "not one of this stack's"},
		{"the hook itself", appSpec(prefix+"deploy-hook", "1", "2"), deployhook.Target{}, "no route group"},
		{"no target version", appSpec(prefix+"tags", "1", ""), deployhook.Target{}, "no function name or target version"},
		{"two resources", `{"Resources": [{"a": {}}, {"b": {}}]}`, deployhook.Target{}, "2 resources"},
		{"an ECS service", `{"Resources": [{"s": {"Type": "AWS::ECS::Service", "Properties": {}}}]}`, deployhook.Target{}, "not a function"},
		{"empty", "", deployhook.Target{}, "0 resources"},
		{"not YAML", "{", deployhook.Target{}, "AppSpec"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := deployhook.ParseAppSpec(c.content, prefix)
			switch {
			case c.err == "" && err != nil:
				t.Fatalf("error %v", err)
			case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
				t.Fatalf("error %v, want one saying %q", err, c.err)
			case c.err == "" && got != c.want:
				t.Errorf("target %+v, want %+v", got, c.want)
			}
		})
	}
}
