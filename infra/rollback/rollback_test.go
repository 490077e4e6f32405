package rollback_test

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	neturl "net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"github.com/mediacatalog/service/infra/motoserver"
	"github.com/mediacatalog/service/infra/rollback"
	"github.com/mediacatalog/service/shared/awsconfig"
)

// role creates the functions' role in moto's IAM (Lambda there refuses a role it does
// not know), with IAM's Query API, which has no client in this module.
func role(t *testing.T, url string) {
	t.Helper()
	form := neturl.Values{"Action": {"CreateRole"}, "Version": {"2010-05-08"}, "RoleName": {"lambda"},
		"AssumeRolePolicyDocument": {`{"Statement":[{"Effect":"Allow","Principal":{"Service":"lambda.amazonaws.com"},"Action":"sts:AssumeRole"}]}`}}
	req, _ := http.NewRequest("POST", url, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	// moto picks the service from the credential scope.
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/iam/aws4_request, SignedHeaders=host, Signature=0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("create role: %s", resp.Status)
	}
}

// client is a Lambda client of the moto server at url.
func client(url string) *lambda.Client {
	env := map[string]string{"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"}
	return lambda.NewFromConfig(awsconfig.ForEndpoint("eu-central-1", url, func(k string) string { return env[k] }), func(o *lambda.Options) {
		o.BaseEndpoint = aws.String(url)
	})
}

// deploy makes a function with one version per release, as make deploy's releases
// publish them, and points its alias live at version live (0: the newest).
func deploy(t *testing.T, l *lambda.Client, name string, releases []string, live int) {
	t.Helper()
	ctx := context.Background()
	var zipped bytes.Buffer
	zw := zip.NewWriter(&zipped)
	w, _ := zw.Create("bootstrap")
	w.Write([]byte("#!/bin/sh\n"))
	zw.Close()
	if _, err := l.CreateFunction(ctx, &lambda.CreateFunctionInput{
		FunctionName: aws.String(name), Runtime: types.RuntimeProvidedal2023, Handler: aws.String("bootstrap"),
		Role: aws.String("arn:aws:iam::123456789012:role/lambda"), Code: &types.FunctionCode{ZipFile: zipped.Bytes()},
	}); err != nil {
		t.Fatal(err)
	}
	for _, r := range releases {
		if _, err := l.UpdateFunctionConfiguration(ctx, &lambda.UpdateFunctionConfigurationInput{FunctionName: aws.String(name), Description: aws.String("route group " + r)}); err != nil {
			t.Fatal(err)
		}
		if _, err := l.PublishVersion(ctx, &lambda.PublishVersionInput{FunctionName: aws.String(name), Description: aws.String(r)}); err != nil {
			t.Fatal(err)
		}
	}
	if live == 0 {
		live = len(releases)
	}
	if _, err := l.CreateAlias(ctx, &lambda.CreateAliasInput{FunctionName: aws.String(name), Name: aws.String("live"), FunctionVersion: aws.String(fmt.Sprint(live))}); err != nil {
		t.Fatal(err)
	}
}

func liveVersion(t *testing.T, l *lambda.Client, name string) string {
	t.Helper()
	a, err := l.GetAlias(context.Background(), &lambda.GetAliasInput{FunctionName: aws.String(name), Name: aws.String("live")})
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(a.FunctionVersion)
}

// failing fails UpdateAlias for one function, once: a run interrupted half-way.
type failing struct {
	*lambda.Client
	fn   string
	done bool
}

func (f *failing) UpdateAlias(ctx context.Context, in *lambda.UpdateAliasInput, o ...func(*lambda.Options)) (*lambda.UpdateAliasOutput, error) {
	if !f.done && aws.ToString(in.FunctionName) == f.fn {
		f.done = true
		return nil, errors.New("connection reset")
	}
	return f.Client.UpdateAlias(ctx, in, o...)
}

// TestRollback, against Lambda's wire format (moto's server): every alias moves to the
// version of the release before the live one; a release that never went live (its
// canary rolled back) is passed over; an interrupted run, run again, finishes its plan
// rather than going a release further back; a deployment in progress is refused.
func TestRollback(t *testing.T) {
	ctx := context.Background()
	url := motoserver.Start(t)
	role(t, url)
	l := client(url)
	deploy(t, l, "s-a", []string{"r1", "r2", "r3"}, 0)
	deploy(t, l, "s-b", []string{"r1", "r2", "r3"}, 0)
	deploy(t, l, "s-c", []string{"r1", "r2", "r3"}, 2) // r3's canary rolled back: live is r2
	plan := filepath.Join(t.TempDir(), "plan.json")
	var log strings.Builder

	// Interrupted after moving s-a: s-b's move fails.
	err := rollback.Run(ctx, &failing{Client: l, fn: "s-b"}, "live", []string{"s-a", "s-b", "s-c"}, plan, &log)
	if err == nil || !strings.Contains(err.Error(), "resumes") {
		t.Fatalf("interrupted run: %v", err)
	}
	if got := liveVersion(t, l, "s-a"); got != "2" {
		t.Errorf("s-a moved to %s before the interruption, want 2", got)
	}
	if _, err := os.Stat(plan); err != nil {
		t.Fatalf("the plan is gone after an interrupted run: %v", err)
	}
	// Run again: the plan is resumed, s-a stays on r2.
	if err := rollback.Run(ctx, l, "live", []string{"s-a", "s-b", "s-c"}, plan, &log); err != nil {
		t.Fatal(err)
	}
	for fn, want := range map[string]string{"s-a": "2", "s-b": "2", "s-c": "1"} {
		if got := liveVersion(t, l, fn); got != want {
			t.Errorf("%s: live %s, want %s\n%s", fn, got, want, log.String())
		}
	}
	if _, err := os.Stat(plan); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the plan stays after the rollback finished: %v", err)
	}
	// A second rollback goes one release further back: a deliberate, new plan.
	if err := rollback.Run(ctx, l, "live", []string{"s-a"}, plan, &log); err != nil || liveVersion(t, l, "s-a") != "1" {
		t.Errorf("second rollback: %v, live %s", err, liveVersion(t, l, "s-a"))
	}
	// Nothing older: refused, nothing moved.
	if err := rollback.Run(ctx, l, "live", []string{"s-a"}, plan, &log); err == nil || !strings.Contains(err.Error(), "no version older") {
		t.Errorf("rollback past the first release: %v", err)
	}
	// A canary shifting traffic: refused, with the way out.
	if _, err := l.UpdateAlias(ctx, &lambda.UpdateAliasInput{FunctionName: aws.String("s-b"), Name: aws.String("live"), FunctionVersion: aws.String("2"),
		RoutingConfig: &types.AliasRoutingConfiguration{AdditionalVersionWeights: map[string]float64{"3": 0.1}}}); err != nil {
		t.Fatal(err)
	}
	if err := rollback.Run(ctx, l, "live", []string{"s-b"}, plan, &log); !errors.Is(err, rollback.ErrCanaryInProgress) {
		t.Errorf("during a canary: %v", err)
	}
}
