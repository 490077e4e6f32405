package iamcheck_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/codedeploy"
	cdtypes "github.com/aws/aws-sdk-go-v2/service/codedeploy/types"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/mediacatalog/service/infra/tests/iamcheck"
	"github.com/mediacatalog/service/shared/telemetry"
)

// TestIAMRequests: each call becomes the requests AWS authorizes for it, as the
// services' references give them: S3's object and bucket ARNs (a missing key's 404 also
// checks s3:ListBucket, a versioned delete is s3:DeleteObjectVersion, a batch delete
// one request per key), Lambda's function ARN with its qualifier, Secrets Manager's
// kms:Decrypt through it for a secret under a customer-managed key, CodeDeploy's
// deployment group from the answer, the IAM token's database user on the proxy's
// resource id; a call no entry knows is an error that says what to add.
func TestIAMRequests(t *testing.T) {
	a := iamcheck.Account{ID: "123456789012", Region: "eu-central-1", Partition: "aws",
		Proxies:    map[string]string{"p.proxy-x.eu-central-1.rds.amazonaws.com": "prx-0abc"},
		SecretKeys: map[string]string{"arn:aws:secretsmanager:eu-central-1:123456789012:secret:oauth-AbCdEf": "arn:aws:kms:eu-central-1:123456789012:key/k"}}
	noSuchKey := &s3types.NoSuchKey{}
	tests := []struct {
		name    string
		call    telemetry.AWSCall
		want    []string // "action resource [context]"
		wantErr string
	}{
		{"an object", telemetry.AWSCall{Service: "S3", Operation: "PutObject", Input: &s3.PutObjectInput{Bucket: aws.String("b"), Key: aws.String("users/1/x.png")}},
			[]string{"s3:PutObject arn:aws:s3:::b/users/1/x.png"}, ""},
		{"a missing key", telemetry.AWSCall{Service: "S3", Operation: "GetObject", Input: &s3.GetObjectInput{Bucket: aws.String("b"), Key: aws.String("k")}, Err: noSuchKey},
			[]string{"s3:GetObject arn:aws:s3:::b/k", "s3:ListBucket arn:aws:s3:::b"}, ""},
		{"a present key", telemetry.AWSCall{Service: "S3", Operation: "GetObject", Input: &s3.GetObjectInput{Bucket: aws.String("b"), Key: aws.String("k")}},
			[]string{"s3:GetObject arn:aws:s3:::b/k"}, ""},
		{"a version's delete", telemetry.AWSCall{Service: "S3", Operation: "DeleteObject", Input: &s3.DeleteObjectInput{Bucket: aws.String("b"), Key: aws.String("k"), VersionId: aws.String("v1")}},
			[]string{"s3:DeleteObjectVersion arn:aws:s3:::b/k"}, ""},
		{"a batch delete", telemetry.AWSCall{Service: "S3", Operation: "DeleteObjects", Input: &s3.DeleteObjectsInput{Bucket: aws.String("b"),
			Delete: &s3types.Delete{Objects: []s3types.ObjectIdentifier{{Key: aws.String("k1")}, {Key: aws.String("k2"), VersionId: aws.String("v")}}}}},
			[]string{"s3:DeleteObject arn:aws:s3:::b/k1", "s3:DeleteObjectVersion arn:aws:s3:::b/k2"}, ""},
		{"a prefix's versions", telemetry.AWSCall{Service: "S3", Operation: "ListObjectVersions", Input: &s3.ListObjectVersionsInput{Bucket: aws.String("b"), Prefix: aws.String("users/2/")}},
			[]string{"s3:ListBucketVersions arn:aws:s3:::b map[s3:prefix:users/2/]"}, ""},
		{"an alias by ARN", telemetry.AWSCall{Service: "Lambda", Operation: "Invoke", Input: &lambda.InvokeInput{FunctionName: aws.String("arn:aws:lambda:eu-central-1:123456789012:function:cdn:live")}},
			[]string{"lambda:InvokeFunction arn:aws:lambda:eu-central-1:123456789012:function:cdn:live"}, ""},
		{"a version by qualifier", telemetry.AWSCall{Service: "Lambda", Operation: "Invoke", Input: &lambda.InvokeInput{FunctionName: aws.String("tags"), Qualifier: aws.String("7")}},
			[]string{"lambda:InvokeFunction arn:aws:lambda:eu-central-1:123456789012:function:tags:7"}, ""},
		{"a secret under the operator's key", telemetry.AWSCall{Service: "Secrets Manager", Operation: "GetSecretValue",
			Input: &secretsmanager.GetSecretValueInput{SecretId: aws.String("arn:aws:secretsmanager:eu-central-1:123456789012:secret:oauth-AbCdEf")}},
			[]string{"secretsmanager:GetSecretValue arn:aws:secretsmanager:eu-central-1:123456789012:secret:oauth-AbCdEf",
				"kms:Decrypt arn:aws:kms:eu-central-1:123456789012:key/k map[kms:CallerAccount:123456789012 kms:ViaService:secretsmanager.eu-central-1.amazonaws.com]"}, ""},
		{"a secret under AWS's key", telemetry.AWSCall{Service: "Secrets Manager", Operation: "GetSecretValue",
			Input: &secretsmanager.GetSecretValueInput{SecretId: aws.String("arn:aws:secretsmanager:eu-central-1:123456789012:secret:jwt-GhIjKl")}},
			[]string{"secretsmanager:GetSecretValue arn:aws:secretsmanager:eu-central-1:123456789012:secret:jwt-GhIjKl"}, ""},
		{"a secret by name", telemetry.AWSCall{Service: "Secrets Manager", Operation: "GetSecretValue", Input: &secretsmanager.GetSecretValueInput{SecretId: aws.String("jwt")}},
			nil, "by name"},
		{"a deployment", telemetry.AWSCall{Service: "CodeDeploy", Operation: "GetDeployment", Input: &codedeploy.GetDeploymentInput{DeploymentId: aws.String("d-1")},
			Output: &codedeploy.GetDeploymentOutput{DeploymentInfo: &cdtypes.DeploymentInfo{ApplicationName: aws.String("app"), DeploymentGroupName: aws.String("g")}}},
			[]string{"codedeploy:GetDeployment arn:aws:codedeploy:eu-central-1:123456789012:deploymentgroup:app/g"}, ""},
		{"a hook's report", telemetry.AWSCall{Service: "CodeDeploy", Operation: "PutLifecycleEventHookExecutionStatus", Input: &codedeploy.PutLifecycleEventHookExecutionStatusInput{}},
			[]string{"codedeploy:PutLifecycleEventHookExecutionStatus *"}, ""},
		{"an IAM token", telemetry.AWSCall{Service: "rds-db", Operation: "connect", Input: telemetry.RDSConnect{Endpoint: "p.proxy-x.eu-central-1.rds.amazonaws.com:5432", User: "catalog_cdn"}},
			[]string{"rds-db:connect arn:aws:rds-db:eu-central-1:123456789012:dbuser:prx-0abc/catalog_cdn"}, ""},
		{"a token for another host", telemetry.AWSCall{Service: "rds-db", Operation: "connect", Input: telemetry.RDSConnect{Endpoint: "db.example:5432", User: "u"}},
			nil, "no RDS Proxy endpoint of the stack"},
		{"a call no entry knows", telemetry.AWSCall{Service: "S3", Operation: "CopyObject", Input: &s3.CopyObjectInput{}},
			nil, "S3.CopyObject: no IAM action known for this operation: add it to infra/tests/iamcheck's operations (operations.go)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rs, err := a.Requests(tc.call)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range rs {
				s := r.Action + " " + r.Resource
				if r.Context["aws:SecureTransport"] != "true" {
					t.Errorf("%s without aws:SecureTransport", s)
				}
				delete(r.Context, "aws:SecureTransport")
				if len(r.Context) > 0 {
					s += " " + fmt.Sprint(r.Context)
				}
				got = append(got, s)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("requests\n%v\nwant\n%v", got, tc.want)
			}
		})
	}
}
