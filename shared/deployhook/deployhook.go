// Package deployhook is CodeDeploy's PreTraffic hook of the route groups' functions:
// before any traffic shifts to a function's new version, it invokes that version with
// a readiness probe (package readiness) and reports to CodeDeploy whether the version
// is ready: every dependency of its group checked (its secrets, the database, DynamoDB
// or S3), and its group's route probes answered as the API contract says, status and
// Response Model, judged here again. A function that gets no traffic during its canary
// leaves its alarms without data, so without the hook the shift would complete on no
// evidence that the new version works at all.
//
// The probe is an invocation, not an API request: a request to the version would need
// the origin secret (every function refuses a request without it), which the hook
// would then have to read; the version serves its route probes itself, with its own.
package deployhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/codedeploy"
	cdtypes "github.com/aws/aws-sdk-go-v2/service/codedeploy/types"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/smithy-go/middleware"
	"gopkg.in/yaml.v3"

	"github.com/mediacatalog/service/shared/awsconfig"
	"github.com/mediacatalog/service/shared/readiness"
)

// The hook's time limits: a probe's covers a cold start in the VPC with the secrets
// read and the version's readiness.Timeout; the template gives the hook a Timeout above
// ProbeTimeout + 2 × CallTimeout, so that it reports even when the new version never
// answers.
const (
	ProbeTimeout = 15 * time.Second
	CallTimeout  = 5 * time.Second
)

// Event is what CodeDeploy passes to a lifecycle hook.
type Event struct {
	DeploymentID    string `json:"DeploymentId"`
	HookExecutionID string `json:"LifecycleEventHookExecutionId"`
}

// Target is the function version a deployment shifts traffic to.
type Target struct {
	Function string
	Alias    string
	Version  string
}

// Hook answers CodeDeploy's PreTraffic lifecycle events.
type Hook struct {
	CodeDeploy *codedeploy.Client
	Lambda     *lambda.Client
	// Prefix begins the names of the stack's functions ("<stack>-"): the hook probes only the
	// functions of its own stack.
	Prefix string
	// ProbeTimeout bounds the invocation, a cold start included; CallTimeout each
	// call to CodeDeploy. The hook's own Timeout is above their sum, so it always
	// reports.
	ProbeTimeout time.Duration
	CallTimeout  time.Duration
	Log          *slog.Logger
	Now          func() time.Time
}

// New returns the hook with clients of cfg (awsconfig: endpoint "" is AWS's own) and
// the package's time limits. Its Lambda client goes without awsconfig's circuit
// breaker: each probe calls another new version, and one that never answers must fail
// its own deployment only, not open a breaker that refuses, or cuts to a second, the
// probe of the next version this container checks. CodeDeploy keeps its breaker.
func New(cfg aws.Config, endpoint, prefix string, log *slog.Logger) *Hook {
	return &Hook{
		CodeDeploy: codedeploy.NewFromConfig(cfg, func(o *codedeploy.Options) {
			o.BaseEndpoint = awsconfig.BaseEndpoint(endpoint)
		}),
		Lambda: lambda.NewFromConfig(cfg, func(o *lambda.Options) {
			o.BaseEndpoint = awsconfig.BaseEndpoint(endpoint)
			o.APIOptions = append(o.APIOptions, withoutBreaker)
		}),
		Prefix:       prefix,
		ProbeTimeout: ProbeTimeout,
		CallTimeout:  CallTimeout,
		Log:          log,
		Now:          time.Now,
	}
}

// withoutBreaker removes awsconfig's breaker middleware (its guard, by its id) from a
// client's stack.
func withoutBreaker(s *middleware.Stack) error {
	if _, ok := s.Initialize.Get("DependencyBreaker"); !ok {
		return nil
	}
	_, err := s.Initialize.Remove("DependencyBreaker")
	return err
}

// Handle probes the deployment's target version and reports Succeeded or Failed. It
// returns an error only when the report itself fails (CodeDeploy then fails the
// deployment when the hook's hour runs out).
func (h *Hook) Handle(ctx context.Context, ev Event) error {
	if ev.DeploymentID == "" || ev.HookExecutionID == "" {
		return errors.New("deployhook: the event has no DeploymentId or LifecycleEventHookExecutionId")
	}
	status := cdtypes.LifecycleEventStatusSucceeded
	target, err := h.target(ctx, ev.DeploymentID)
	if err == nil {
		err = h.probe(ctx, target)
	}
	log := h.Log.With("deployment", ev.DeploymentID, "function", target.Function, "version", target.Version)
	if err != nil {
		status = cdtypes.LifecycleEventStatusFailed
		log.Error("pre-traffic probe failed", "error", err.Error())
	} else {
		log.Info("pre-traffic probe passed")
	}
	// The report goes out even when the probe used up its own time.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), h.CallTimeout)
	defer cancel()
	if _, err := h.CodeDeploy.PutLifecycleEventHookExecutionStatus(rctx, &codedeploy.PutLifecycleEventHookExecutionStatusInput{
		DeploymentId:                  aws.String(ev.DeploymentID),
		LifecycleEventHookExecutionId: aws.String(ev.HookExecutionID),
		Status:                        status,
	}); err != nil {
		return fmt.Errorf("deployhook: report %s for deployment %s: %w", status, ev.DeploymentID, err)
	}
	return nil
}

// appSpec is the revision of a Lambda deployment (CodeDeploy's AppSpec file, YAML or
// JSON): one function resource with its alias and the versions it shifts between.
type appSpec struct {
	Resources []map[string]resource `yaml:"Resources"`
}

type resource struct {
	Type       string `yaml:"Type"`
	Properties struct {
		Name           string `yaml:"Name"`
		Alias          string `yaml:"Alias"`
		CurrentVersion string `yaml:"CurrentVersion"`
		TargetVersion  string `yaml:"TargetVersion"`
	} `yaml:"Properties"`
}

// target reads the deployment's revision: GetDeployment names it (its content is
// always null there, says the API reference), GetApplicationRevision holds its
// content.
func (h *Hook) target(ctx context.Context, deploymentID string) (Target, error) {
	ctx, cancel := context.WithTimeout(ctx, h.CallTimeout)
	defer cancel()
	dep, err := h.CodeDeploy.GetDeployment(ctx, &codedeploy.GetDeploymentInput{DeploymentId: aws.String(deploymentID)})
	if err != nil {
		return Target{}, fmt.Errorf("get deployment: %w", err)
	}
	if dep.DeploymentInfo == nil || dep.DeploymentInfo.Revision == nil {
		return Target{}, errors.New("the deployment has no revision")
	}
	rev, err := h.CodeDeploy.GetApplicationRevision(ctx, &codedeploy.GetApplicationRevisionInput{
		ApplicationName: dep.DeploymentInfo.ApplicationName,
		Revision:        dep.DeploymentInfo.Revision,
	})
	if err != nil {
		return Target{}, fmt.Errorf("get the deployment's revision: %w", err)
	}
	var content string
	switch r := rev.Revision; {
	case r == nil:
	case r.AppSpecContent != nil:
		content = aws.ToString(r.AppSpecContent.Content)
	case r.String_ != nil: // the deprecated RawString
		content = aws.ToString(r.String_.Content)
	}
	return ParseAppSpec(content, h.Prefix)
}

// ParseAppSpec reads the target of a Lambda deployment's AppSpec, which must name one
// function of prefix's stack that has a probe.
func ParseAppSpec(content, prefix string) (Target, error) {
	var spec appSpec
	if err := yaml.Unmarshal([]byte(content), &spec); err != nil {
		return Target{}, fmt.Errorf("the deployment's AppSpec: %w", err)
	}
	if len(spec.Resources) != 1 || len(spec.Resources[0]) != 1 {
		return Target{}, fmt.Errorf("the deployment's AppSpec names %d resources, want one function", len(spec.Resources))
	}
	var res resource
	for _, r := range spec.Resources[0] {
		res = r
	}
	p := res.Properties
	// Name is the function's name; an ARN names it too.
	if _, after, ok := strings.Cut(p.Name, ":function:"); ok {
		p.Name, _, _ = strings.Cut(after, ":")
	}
	t := Target{Function: p.Name, Alias: p.Alias, Version: p.TargetVersion}
	switch {
	case res.Type != "AWS::Lambda::Function":
		return t, fmt.Errorf("the deployment's resource is a %q, not a function", res.Type)
	case p.Name == "" || p.TargetVersion == "":
		return t, errors.New("the deployment's AppSpec has no function name or target version")
	case !strings.HasPrefix(p.Name, prefix):
		return t, fmt.Errorf("function %q is not one of this stack's (%s*)", p.Name, prefix)
	}
	if _, ok := readiness.Dependencies[strings.TrimPrefix(p.Name, prefix)]; !ok {
		return t, fmt.Errorf("function %q is no route group with a readiness probe", p.Name)
	}
	return t, nil
}

// probe invokes the target version with a readiness probe and judges its answer.
func (h *Hook) probe(ctx context.Context, t Target) error {
	group := strings.TrimPrefix(t.Function, h.Prefix)
	ctx, cancel := context.WithTimeout(ctx, h.ProbeTimeout)
	defer cancel()
	out, err := h.Lambda.Invoke(ctx, &lambda.InvokeInput{
		FunctionName:   aws.String(t.Function),
		Qualifier:      aws.String(t.Version),
		InvocationType: types.InvocationTypeRequestResponse,
		Payload:        readiness.Payload,
	})
	if err != nil {
		return fmt.Errorf("invoke %s:%s: %w", t.Function, t.Version, err)
	}
	if err := Judge(group, aws.ToString(out.FunctionError), out.Payload); err != nil {
		return fmt.Errorf("%s:%s: %w", t.Function, t.Version, err)
	}
	return nil
}

// Judge is the verdict on a group's version by its answer to the readiness probe: the
// invocation's FunctionError ("" when it returned) and payload. It is nil only for a
// readiness.Result that readiness.Judge finds ready.
func Judge(group, functionError string, payload []byte) error {
	if functionError != "" {
		return fmt.Errorf("failed (%s): %.500s", functionError, payload)
	}
	var res readiness.Result
	if err := json.Unmarshal(payload, &res); err != nil {
		return fmt.Errorf("answered no readiness result: %w: %.300s", err, payload)
	}
	if err := readiness.Judge(group, res); err != nil {
		return fmt.Errorf("not ready: %w", err)
	}
	return nil
}
