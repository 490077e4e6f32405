package iamcheck_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/mediacatalog/service/shared/lambdahttp"
)

// awsStandIn speaks, on one address, what the stack's functions call that neither
// dynalite, gofakes3 nor moto serve: Lambda's Invoke (REST-JSON; moto runs functions
// only in Docker), which it answers by running the invoked function's own handler with
// the event, as Lambda runs it; CodeDeploy's GetDeployment, GetApplicationRevision and
// PutLifecycleEventHookExecutionStatus (JSON 1.1; moto 5.2 has the last two not, and
// answers the first with timestamps the SDK refuses); CloudFront's CreateInvalidation
// (REST-XML). Their wire formats are the API references'.
type awsStandIn struct {
	w *world

	mu          sync.Mutex
	deployments map[string]string // deployment id -> the route group it deploys
	reports     []string          // "deployment status"
}

const (
	codeDeployTarget = "CodeDeploy_20141006."
	invalidationPath = "/2020-05-31/distribution/"
	invocationPath   = "/2015-03-31/functions/"
)

func (s *awsStandIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case strings.HasPrefix(r.Header.Get("X-Amz-Target"), codeDeployTarget):
		s.codeDeploy(w, r)
	case r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, invalidationPath) && strings.HasSuffix(r.URL.Path, "/invalidation"):
		s.invalidation(w, r)
	case r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, invocationPath) && strings.HasSuffix(r.URL.Path, "/invocations"):
		s.invoke(w, r)
	default:
		http.Error(w, "the stand-in serves no "+r.Method+" "+r.URL.Path, http.StatusNotFound)
	}
}

// invoke runs the function the path names (a name or an ARN, with or without a
// qualifier) with the event in the body.
func (s *awsStandIn) invoke(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, invocationPath), "/invocations")
	if parts := strings.Split(name, ":"); len(parts) >= 7 && parts[0] == "arn" {
		name = parts[6]
	}
	name, _, _ = strings.Cut(name, ":")
	group := strings.TrimPrefix(name, s.w.stack.Name+"-")
	entry := s.w.entries[group]
	if entry == nil || group == name {
		w.Header().Set("X-Amzn-Errortype", "ResourceNotFoundException")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `{"Type":"User","Message":"Function not found: %s"}`, name)
		return
	}
	var inv lambdahttp.Invocation
	err := json.NewDecoder(r.Body).Decode(&inv)
	var resp any
	if err == nil {
		resp, err = entry(r.Context(), inv)
	}
	if err != nil {
		w.Header().Set("X-Amz-Function-Error", "Unhandled")
		fmt.Fprintf(w, `{"errorMessage":%q,"errorType":"Runtime.Error"}`, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amz-Executed-Version", "2")
	_ = json.NewEncoder(w).Encode(resp)
}

func (s *awsStandIn) invalidation(w http.ResponseWriter, r *http.Request) {
	dist := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, invalidationPath), "/invalidation")
	var batch struct {
		CallerReference string `xml:"CallerReference"`
		Quantity        int    `xml:"Paths>Quantity"`
	}
	body, _ := io.ReadAll(r.Body)
	if err := xml.Unmarshal(body, &batch); err != nil || batch.CallerReference == "" || batch.Quantity == 0 {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "text/xml")
	w.Header().Set("Location", "https://cloudfront.amazonaws.com"+invalidationPath+dist+"/invalidation/I1")
	w.WriteHeader(http.StatusCreated)
	fmt.Fprintf(w, `<?xml version="1.0"?><Invalidation xmlns="http://cloudfront.amazonaws.com/doc/2020-05-31/"><Id>I1</Id><Status>InProgress</Status><CreateTime>2026-12-02T10:00:00Z</CreateTime>%s</Invalidation>`,
		strings.TrimPrefix(string(body), `<?xml version="1.0" encoding="UTF-8"?>`))
}

// appSpec is the revision of a deployment of a group's function from version 1 to 2.
func (s *awsStandIn) appSpec(group string) string {
	fn := s.w.stack.Name + "-" + group
	return fmt.Sprintf(`{"version": 0.0, "Resources": [{%q: {"Type": "AWS::Lambda::Function",
		"Properties": {"Name": %q, "Alias": "live", "CurrentVersion": "1", "TargetVersion": "2"}}}]}`, fn, fn)
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func (s *awsStandIn) codeDeploy(w http.ResponseWriter, r *http.Request) {
	var in struct {
		DeploymentID string `json:"deploymentId"`
		HookID       string `json:"lifecycleEventHookExecutionId"`
		Status       string `json:"status"`
		Application  string `json:"applicationName"`
		Revision     struct {
			AppSpecContent struct {
				SHA256 string `json:"sha256"`
			} `json:"appSpecContent"`
		} `json:"revision"`
	}
	_ = json.NewDecoder(r.Body).Decode(&in)
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	fail := func(typ, msg string) {
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]string{"__type": typ, "message": msg})
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch strings.TrimPrefix(r.Header.Get("X-Amz-Target"), codeDeployTarget) {
	case "GetDeployment":
		group, ok := s.deployments[in.DeploymentID]
		if !ok {
			fail("DeploymentDoesNotExistException", "no deployment "+in.DeploymentID)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"deploymentInfo": map[string]any{
			"applicationName": s.w.application, "deploymentGroupName": s.w.deploymentGroups[group],
			"deploymentId": in.DeploymentID, "computePlatform": "Lambda", "status": "InProgress", "createTime": 1.7649e9,
			"revision": map[string]any{"revisionType": "AppSpecContent", "appSpecContent": map[string]any{"sha256": sha(s.appSpec(group))}},
		}})
	case "GetApplicationRevision":
		for _, group := range s.deployments {
			if spec := s.appSpec(group); in.Application == s.w.application && in.Revision.AppSpecContent.SHA256 == sha(spec) {
				_ = json.NewEncoder(w).Encode(map[string]any{"applicationName": s.w.application,
					"revision": map[string]any{"revisionType": "AppSpecContent", "appSpecContent": map[string]any{"content": spec, "sha256": sha(spec)}}})
				return
			}
		}
		fail("RevisionDoesNotExistException", "no such revision")
	case "PutLifecycleEventHookExecutionStatus":
		s.reports = append(s.reports, in.DeploymentID+" "+in.Status)
		_ = json.NewEncoder(w).Encode(map[string]string{"lifecycleEventHookExecutionId": in.HookID})
	default:
		fail("UnknownOperationException", r.Header.Get("X-Amz-Target"))
	}
}
