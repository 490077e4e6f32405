package samtemplate_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestAvatarChangeRouteNeedsIAM: as CloudFormation creates the API, the internal route
// POST /user/avatar/change/{id} requires AWS IAM authorization (SigV4) and no other
// route has an authorizer; yet no principal is granted execute-api:Invoke, since only
// CloudFront completes a handshake with the origin domain (TestOriginMutualTLS) and the
// distribution answers the route 404. Internal callers invoke the cdn function's live
// alias: one named role may do that and nothing else, and admin-users keeps invoking it
// directly.
func TestAvatarChangeRouteNeedsIAM(t *testing.T) {
	for _, set := range paramSets {
		t.Run(set, func(t *testing.T) {
			cfn, _ := transformed(t, set)
			api := cfn.Resources["HttpApi"]
			var body struct {
				Paths      map[string]map[string]map[string]any `json:"paths"`
				Components struct {
					SecuritySchemes map[string]map[string]any `json:"securitySchemes"`
				} `json:"components"`
			}
			b, _ := json.Marshal(api.Properties["Body"])
			if err := json.Unmarshal(b, &body); err != nil {
				t.Fatal(err)
			}
			if len(body.Paths) == 0 {
				t.Fatal("no paths in the API's body")
			}
			for path, ops := range body.Paths {
				for method, op := range ops {
					if method == "parameters" {
						continue
					}
					sec := fmt.Sprint(op["security"])
					internal := path == "/user/avatar/change/{id}" && method == "post"
					if internal && sec != "[map[AWS_IAM:[]]]" {
						t.Errorf("%s %s: security %s, want AWS_IAM", method, path, sec)
					}
					if !internal && op["security"] != nil {
						t.Errorf("%s %s: security %s, want none", method, path, sec)
					}
				}
			}
			if got := body.Components.SecuritySchemes["AWS_IAM"]["x-amazon-apigateway-authtype"]; got != "awsSigv4" {
				t.Errorf("AWS_IAM scheme %v, want awsSigv4", body.Components.SecuritySchemes["AWS_IAM"])
			}

			var grants []string
			for id, r := range cfn.Resources {
				if r.Type != "AWS::IAM::Role" && r.Type != "AWS::IAM::Policy" && r.Type != "AWS::IAM::ManagedPolicy" {
					continue
				}
				doc, _ := json.Marshal(r.Properties)
				if strings.Contains(string(doc), "execute-api") {
					t.Errorf("%s grants execute-api: no caller but CloudFront reaches the API", id)
				}
				if r.Type != "AWS::IAM::Role" || r.Properties["RoleName"] == nil || !strings.Contains(fmt.Sprint(r.Properties["RoleName"]), "avatar-change-invoker") {
					continue
				}
				grants = append(grants, id)
				for _, p := range anyList(r.Properties["Policies"]) {
					pd, _ := p.(map[string]any)["PolicyDocument"].(map[string]any)
					for _, st := range anyList(pd["Statement"]) {
						st := st.(map[string]any)
						if fmt.Sprint(st["Action"]) != "lambda:InvokeFunction" || fmt.Sprint(st["Resource"]) != "map[Ref:CdnFunctionAliaslive]" {
							t.Errorf("%s: %v on %v, want lambda:InvokeFunction on the cdn function's live alias only", id, st["Action"], st["Resource"])
						}
					}
				}
			}
			if len(grants) != 1 {
				t.Errorf("avatar-change invoker roles: %v, want one", grants)
			}

			sts, _ := statementsOf(t, cfn, "AdminUsersFunction")
			direct := false
			for _, st := range sts {
				if st["Sid"] == "NotifyCdn" && fmt.Sprint(st["Action"]) == "[lambda:InvokeFunction]" {
					direct = true
				}
			}
			if !direct {
				t.Errorf("admin-users no longer invokes the cdn function directly: %v", sts)
			}
		})
	}
}
