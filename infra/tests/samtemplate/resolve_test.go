package samtemplate_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mediacatalog/service/infra/tests/samtemplate"
)

// TestResolve: the intrinsic functions of a transformed template come out as
// CloudFormation passes them for one deployment: parameters (lists split, defaults
// filled), pseudo parameters, conditions, Fn::Sub with and without its variables,
// Fn::Join, Fn::Split, Fn::Select, Fn::If (AWS::NoValue dropped), and the physical
// names and ARNs of resources, each of the shape AWS gives it; a resource another
// condition leaves out, and an attribute the resolver does not know, are errors.
// Symbolic writes the physical strings back as the template names them.
func TestResolve(t *testing.T) {
	var cfn samtemplate.CFN
	if err := json.Unmarshal([]byte(`{
		"Parameters": {"Key": {"Type": "String", "Default": ""}, "Subnets": {"Type": "List<AWS::EC2::Subnet::Id>"},
			"Secret": {"Type": "String"}},
		"Conditions": {"HasKey": {"Fn::Not": [{"Fn::Equals": [{"Ref": "Key"}, ""]}]}, "NoKey": {"Fn::Not": [{"Condition": "HasKey"}]}},
		"Resources": {
			"Bucket": {"Type": "AWS::S3::Bucket"},
			"Table": {"Type": "AWS::DynamoDB::Table"},
			"Fn": {"Type": "AWS::Lambda::Function", "Properties": {"FunctionName": {"Fn::Sub": "${AWS::StackName}-fn"}}},
			"FnAliaslive": {"Type": "AWS::Lambda::Alias", "Properties": {"FunctionName": {"Ref": "Fn"}, "Name": "live"}},
			"Jwt": {"Type": "AWS::SecretsManager::Secret"},
			"Logs": {"Type": "AWS::Logs::LogGroup", "Properties": {"LogGroupName": "/aws/lambda/x"}},
			"Proxy": {"Type": "AWS::RDS::DBProxy", "Condition": "NoKey", "Properties": {"DBProxyName": "p"}},
			"Other": {"Type": "AWS::SNS::Topic", "Condition": "HasKey"}}}`), &cfn); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	params := filepath.Join(dir, "p.json")
	if err := os.WriteFile(params, []byte(`{"Subnets": "subnet-a,subnet-b", "Secret": "arn:aws:secretsmanager:eu-central-1:123456789012:secret:oauth-AbCdEf"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := samtemplate.NewStack(&cfn, params, "mc", "eu-central-1", "123456789012")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		expr, want, wantErr string
	}{
		{`{"Ref": "Subnets"}`, `[subnet-a subnet-b]`, ""},
		{`{"Fn::Sub": "arn:${AWS::Partition}:logs:${AWS::Region}:${AWS::AccountId}:log-group:/aws/lambda/${AWS::StackName}-x:*"}`, "arn:aws:logs:eu-central-1:123456789012:log-group:/aws/lambda/mc-x:*", ""},
		{`{"Fn::Sub": ["${A}/${B}${!Literal}", {"A": {"Ref": "Key"}, "B": "b"}]}`, "/b${Literal}", ""},
		{`{"Fn::Select": [1, {"Fn::Split": [",", "x,y,z"]}]}`, "y", ""},
		{`{"Fn::Join": ["-", ["a", {"Ref": "AWS::Region"}]]}`, "a-eu-central-1", ""},
		{`[{"Fn::If": ["HasKey", "key", {"Ref": "AWS::NoValue"}]}, "kept"]`, "[kept]", ""},
		{`{"Fn::If": ["NoKey", {"Fn::GetAtt": ["Proxy", "Endpoint"]}, "none"]}`, "p.proxy-", ""},
		{`{"Fn::GetAtt": ["Bucket", "Arn"]}`, "arn:aws:s3:::mc-bucket-", ""},
		{`{"Fn::GetAtt": ["Table", "Arn"]}`, "arn:aws:dynamodb:eu-central-1:123456789012:table/mc-Table-", ""},
		{`{"Ref": "FnAliaslive"}`, "arn:aws:lambda:eu-central-1:123456789012:function:mc-fn:live", ""},
		{`{"Ref": "Jwt"}`, "arn:aws:secretsmanager:eu-central-1:123456789012:secret:Jwt-", ""},
		{`{"Fn::GetAtt": ["Logs", "Arn"]}`, "arn:aws:logs:eu-central-1:123456789012:log-group:/aws/lambda/x:*", ""},
		{`{"Ref": "Other"}`, "", "not created with these parameters"},
		{`{"Fn::GetAtt": ["Fn", "SnapStartResponse"]}`, "", "an attribute this resolver does not know"},
	} {
		t.Run(tc.expr, func(t *testing.T) {
			var v any
			if err := json.Unmarshal([]byte(tc.expr), &v); err != nil {
				t.Fatal(err)
			}
			got, err := s.Resolve(v)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, %v; want an error with %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if g := fmt.Sprint(got); !strings.HasPrefix(g, tc.want) {
				t.Errorf("resolved %s, want %s…", g, tc.want)
			}
		})
	}
	bucket, _ := s.ResolveString(map[string]any{"Fn::GetAtt": []any{"Bucket", "Arn"}})
	if got := s.Symbolic(bucket + "/users/1 " + s.Params["Secret"] + " eu-central-1"); got != "${Bucket.Arn}/users/1 ${Secret} ${AWS::Region}" {
		t.Errorf("Symbolic: %s", got)
	}
}
