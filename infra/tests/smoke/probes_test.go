package smoke_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mediacatalog/service/infra/tests/smoke"
	"github.com/mediacatalog/service/shared/awsconfig"
	"github.com/mediacatalog/service/shared/deployhook"
)

// TestDeployHookProbes: the deploy hook (shared/deployhook, as its main builds it)
// decides each deployment of a real bootstrap, which CodeDeploy's and Lambda's
// stand-ins run through the Runtime API on the test's PostgreSQL, dynalite and S3 with
// the demo data, configured as the template deploys it ("deployed": its secrets read
// from Secrets Manager, the origin secret every request must carry and the signing
// secret) or as make run does ("local"). Each function's own build passes; failed are
// the same function answering 401, or 404, to everything (infra/tests/smoke/testdata/broken),
// each function without its database, and without its origin secret, and one whose
// secrets cannot be read (its start fails).
func TestDeployHookProbes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds nine binaries")
	}
	bins := buildHost(t, append(append([]string{}, functions...), "broken"))
	env, _ := stackEnv(t)
	sm := newSecretsManager(t, map[string]string{
		secretARN("all"):          `{"JWT_SECRET":"readiness-test-signing-secret-0123456789","ORIGIN_SECRET":"readiness-test-origin-secret-0123456789abcdef"}`,
		secretARN("no-origin"):    `{"JWT_SECRET":"readiness-test-signing-secret-0123456789"}`,
		secretARN("unreadable"):   "",
		secretARN("unreadable-2"): "",
	})
	deployed := with(env, map[string]string{"DB_ENV": "production", "SECRETS_ARN": secretARN("all"),
		"AWS_ENDPOINT_URL_SECRETS_MANAGER": sm.URL})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	noDatabase := map[string]string{"DATABASE_URL": "postgres://nobody@" + closed + "/none?sslmode=disable&connect_timeout=2"}

	type version struct {
		bin string
		env []string
	}
	type tc struct {
		name, fn string
		v        version
		want     string // the status the hook reports
	}
	var cases []tc
	for _, fn := range functions {
		broken := func(status, msg string) []string {
			return with(env, map[string]string{"BROKEN_GROUP": fn, "BROKEN_STATUS": status, "BROKEN_MESSAGE": msg})
		}
		cases = append(cases,
			tc{"ready, deployed", fn, version{bins[fn], deployed}, "Succeeded"},
			tc{"ready, local", fn, version{bins[fn], env}, "Succeeded"},
			tc{"401 to everything", fn, version{bins["broken"], broken("401", "Unauthorized")}, "Failed"},
			tc{"404 to everything", fn, version{bins["broken"], broken("404", "User not found")}, "Failed"},
			tc{"no database", fn, version{bins[fn], with(env, noDatabase)}, "Failed"},
			tc{"no origin secret, deployed", fn, version{bins[fn], with(deployed, map[string]string{"SECRETS_ARN": secretARN("no-origin")})}, "Failed"},
		)
	}
	cases = append(cases,
		tc{"its secrets unreadable", "tags", version{bins["tags"], with(deployed, map[string]string{"SECRETS_ARN": secretARN("unreadable")})}, "Failed"},
		tc{"its secrets unreadable", "admin-users", version{bins["admin-users"], with(deployed, map[string]string{"SECRETS_ARN": secretARN("unreadable-2")})}, "Failed"},
	)
	for i, c := range cases {
		t.Run(c.fn+"/"+c.name, func(t *testing.T) {
			fn := hookPrefix + c.fn
			cd := &codeDeploy{deployments: map[string]string{fmt.Sprint("d-", i): hookAppSpec(fn, "1", "2")}}
			lam := &lambdaRunner{versions: map[string]func([]byte) ([]byte, bool){
				fn + ":2": func(payload []byte) ([]byte, bool) { return invoke(t, c.v.bin, c.v.env, payload) },
			}}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasPrefix(r.Header.Get("X-Amz-Target"), "CodeDeploy_") {
					cd.ServeHTTP(w, r)
					return
				}
				lam.ServeHTTP(w, r)
			}))
			defer srv.Close()
			var logs strings.Builder
			var mu sync.Mutex
			log := slog.New(slog.NewJSONHandler(writerFunc(func(b []byte) (int, error) {
				mu.Lock()
				defer mu.Unlock()
				return logs.Write(b)
			}), nil))
			hook := deployhook.New(awsconfig.ForEndpoint("us-east-1", srv.URL, func(string) string { return "" }), srv.URL, hookPrefix, log)
			id := fmt.Sprint("d-", i)
			if err := hook.Handle(context.Background(), deployhook.Event{DeploymentID: id, HookExecutionID: "hook-" + id}); err != nil {
				t.Fatal(err)
			}
			cd.mu.Lock()
			defer cd.mu.Unlock()
			if len(cd.reports) != 1 || cd.reports[0] != c.want {
				mu.Lock()
				defer mu.Unlock()
				t.Errorf("the hook reported %v for %s %s, want %s\nits log: %s", cd.reports, c.fn, c.name, c.want, logs.String())
			}
		})
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

// with is env with the variables of set replaced or added.
func with(env []string, set map[string]string) []string {
	out := make([]string, 0, len(env)+len(set))
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); !mapHas(set, k) {
			out = append(out, kv)
		}
	}
	for k, v := range set {
		out = append(out, k+"="+v)
	}
	return out
}

func mapHas(m map[string]string, k string) bool { _, ok := m[k]; return ok }

// buildHost builds the functions (and testdata commands) for the host, at once.
func buildHost(t *testing.T, names []string) map[string]string {
	t.Helper()
	dir := t.TempDir()
	out := map[string]string{}
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.NumCPU())
	for _, name := range names {
		pkg := "./functions/" + name
		if name == "broken" {
			pkg = "./infra/tests/smoke/testdata/broken"
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			bin, err := build(dir, name, pkg, runtime.GOARCH)
			mu.Lock()
			defer mu.Unlock()
			out[name], errs = bin, append(errs, err)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return out
}

// invoke runs bin for one invocation of payload, as Lambda runs a version: its answer,
// and whether it is a function error (the invocation's error, or its start's).
func invoke(t *testing.T, bin string, env []string, payload []byte) ([]byte, bool) {
	api, err := smoke.NewRuntimeAPI()
	if err != nil {
		t.Fatal(err)
	}
	defer api.Close()
	api.Enqueue(payload)
	cmd := exec.Command(bin)
	cmd.Env = append(append([]string{}, env...), "AWS_LAMBDA_RUNTIME_API="+api.Addr)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	r, err := api.Wait(20 * time.Second)
	if err != nil {
		t.Logf("%s: %v\nstderr:\n%s", bin, err, stderr.String())
		return []byte(fmt.Sprintf(`{"errorMessage":%q,"errorType":"Runtime.ExitError"}`, err.Error())), true
	}
	return r.Body, r.Err
}

// The stack the hook serves, and its deployments' revisions.
const (
	hookPrefix      = "media-catalog-smoke-"
	hookApplication = "media-catalog-smoke-ServerlessDeploymentApplication-1"
)

// hookAppSpec is a Lambda deployment's AppSpec (CodeDeploy's "AppSpec 'resources'
// section for an AWS Lambda deployment").
func hookAppSpec(function, current, target string) string {
	return fmt.Sprintf(`{"version": 0.0, "Resources": [{"fn": {"Type": "AWS::Lambda::Function",
		"Properties": {"Name": %q, "Alias": "live", "CurrentVersion": %q, "TargetVersion": %q}}}]}`, function, current, target)
}

// codeDeploy speaks the three operations of CodeDeploy the hook calls, in the JSON 1.1
// protocol (API reference: GetDeployment, whose appSpecContent.content "is always
// null"; GetApplicationRevision; PutLifecycleEventHookExecutionStatus), and records the
// statuses reported.
type codeDeploy struct {
	deployments map[string]string // id -> AppSpec
	mu          sync.Mutex
	reports     []string
}

func (c *codeDeploy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var in map[string]any
	_ = json.NewDecoder(r.Body).Decode(&in)
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	sha := func(s string) string { sum := sha256.Sum256([]byte(s)); return hex.EncodeToString(sum[:]) }
	switch r.Header.Get("X-Amz-Target") {
	case "CodeDeploy_20141006.GetDeployment":
		id, _ := in["deploymentId"].(string)
		spec, ok := c.deployments[id]
		if !ok {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"__type":"DeploymentDoesNotExistException","message":"no deployment"}`)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"deploymentInfo": map[string]any{
			"applicationName": hookApplication, "deploymentId": id, "computePlatform": "Lambda", "status": "InProgress",
			"revision": map[string]any{"revisionType": "AppSpecContent", "appSpecContent": map[string]any{"sha256": sha(spec)}},
		}})
	case "CodeDeploy_20141006.GetApplicationRevision":
		rev, _ := in["revision"].(map[string]any)
		content, _ := rev["appSpecContent"].(map[string]any)
		for _, spec := range c.deployments {
			if content["sha256"] == sha(spec) {
				_ = json.NewEncoder(w).Encode(map[string]any{"applicationName": hookApplication,
					"revision": map[string]any{"revisionType": "AppSpecContent", "appSpecContent": map[string]any{"content": spec, "sha256": sha(spec)}}})
				return
			}
		}
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"__type":"RevisionDoesNotExistException","message":"no such revision"}`)
	case "CodeDeploy_20141006.PutLifecycleEventHookExecutionStatus":
		c.mu.Lock()
		c.reports = append(c.reports, fmt.Sprint(in["status"]))
		c.mu.Unlock()
		_ = json.NewEncoder(w).Encode(map[string]any{"lifecycleEventHookExecutionId": in["lifecycleEventHookExecutionId"]})
	default:
		w.WriteHeader(http.StatusBadRequest)
	}
}

var invocationsPath = regexp.MustCompile(`^/2015-03-31/functions/([^/]+)/invocations$`)

// lambdaRunner speaks Lambda's Invoke (REST-JSON: the payload in and out,
// X-Amz-Function-Error for a function error, ResourceNotFoundException for a version it
// does not have) and runs each known version's function.
type lambdaRunner struct {
	versions map[string]func([]byte) ([]byte, bool) // "function:qualifier"
}

func (l *lambdaRunner) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var run func([]byte) ([]byte, bool)
	if m := invocationsPath.FindStringSubmatch(r.URL.Path); m != nil {
		run = l.versions[m[1]+":"+r.URL.Query().Get("Qualifier")]
	}
	if run == nil {
		w.Header().Set("X-Amzn-Errortype", "ResourceNotFoundException")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"Type":"User","Message":"Function not found"}`)
		return
	}
	payload, _ := io.ReadAll(r.Body)
	out, functionError := run(payload)
	if functionError {
		w.Header().Set("X-Amz-Function-Error", "Unhandled")
	}
	w.Header().Set("X-Amz-Executed-Version", r.URL.Query().Get("Qualifier"))
	_, _ = w.Write(out)
}

// secretARN is the ARN of the test's secret name.
func secretARN(name string) string {
	return "arn:aws:secretsmanager:eu-central-1:123456789012:secret:media-catalog/" + name + "-AbCdEf"
}

// newSecretsManager speaks Secrets Manager's GetSecretValue (JSON 1.1) with values by
// ARN; an empty value is ResourceNotFoundException.
func newSecretsManager(t *testing.T, values map[string]string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in struct{ SecretId string }
		_ = json.NewDecoder(r.Body).Decode(&in)
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		v := values[in.SecretId]
		if r.Header.Get("X-Amz-Target") != "secretsmanager.GetSecretValue" || v == "" {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"__type":"ResourceNotFoundException","message":"Secrets Manager can't find the specified secret."}`)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"ARN": in.SecretId, "Name": "n", "SecretString": v, "VersionId": "v1"})
	}))
	t.Cleanup(srv.Close)
	return srv
}
