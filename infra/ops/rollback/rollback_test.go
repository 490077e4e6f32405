package rollback_test

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"github.com/mediacatalog/service/infra/ops/rollback"
	"github.com/mediacatalog/service/infra/tests/motoserver"
	"github.com/mediacatalog/service/shared/awsconfig"
)

// client is a Lambda client of the moto server at url.
func client(url string) *lambda.Client {
	env := map[string]string{"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"}
	return lambda.NewFromConfig(awsconfig.ForEndpoint("eu-central-1", url, func(k string) string { return env[k] }), func(o *lambda.Options) {
		o.BaseEndpoint = aws.String(url)
	})
}

// deploy makes a function with one version per release, as make deploy's releases
// publish them, and points its alias live at version live.
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
		publish(t, l, name, r)
	}
	if _, err := l.CreateAlias(ctx, &lambda.CreateAliasInput{FunctionName: aws.String(name), Name: aws.String("live"), FunctionVersion: aws.String(fmt.Sprint(live))}); err != nil {
		t.Fatal(err)
	}
}

// publish publishes a version of release r (its configuration carries the release, as
// template.yaml's RELEASE does).
func publish(t *testing.T, l *lambda.Client, name, r string) {
	t.Helper()
	ctx := context.Background()
	if _, err := l.UpdateFunctionConfiguration(ctx, &lambda.UpdateFunctionConfigurationInput{FunctionName: aws.String(name),
		Environment: &types.Environment{Variables: map[string]string{"RELEASE": r}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.PublishVersion(ctx, &lambda.PublishVersionInput{FunctionName: aws.String(name), Description: aws.String(r)}); err != nil {
		t.Fatal(err)
	}
}

// setLive points live at version v, as a finished deployment leaves it.
func setLive(t *testing.T, l *lambda.Client, name, v string) {
	t.Helper()
	if _, err := l.UpdateAlias(context.Background(), &lambda.UpdateAliasInput{FunctionName: aws.String(name), Name: aws.String("live"), FunctionVersion: aws.String(v)}); err != nil {
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

func history(t *testing.T, l *lambda.Client, name string) string {
	t.Helper()
	h, err := rollback.History(context.Background(), l, name)
	if err != nil {
		t.Fatal(err)
	}
	var s []string
	for _, e := range h {
		s = append(s, e.Version+":"+e.Commit)
	}
	return strings.Join(s, " ")
}

// failing fails the move of one function's live alias, once: a run interrupted
// half-way.
type failing struct {
	*lambda.Client
	fn   string
	done bool
}

func (f *failing) UpdateAlias(ctx context.Context, in *lambda.UpdateAliasInput, o ...func(*lambda.Options)) (*lambda.UpdateAliasOutput, error) {
	if !f.done && aws.ToString(in.FunctionName) == f.fn && aws.ToString(in.Name) == "live" {
		f.done = true
		return nil, errors.New("connection reset")
	}
	return f.Client.UpdateAlias(ctx, in, o...)
}

// TestRollback, against Lambda's wire format (moto's server): make deploy records each
// release that went live; a rollback moves every alias to the release recorded before
// the live one and names its commit; a release whose canary was rolled back (published,
// never recorded) is passed over; an interrupted run, run again, finishes its plan
// rather than going a release further back; a second rollback goes one more back, and
// past the first recorded release it is refused; a live version nobody recorded, a
// deployment in progress and functions whose histories disagree are refused; the
// deploy of the commit a rollback went back to takes that commit's place.
func TestRollback(t *testing.T) {
	ctx := context.Background()
	url := motoserver.Start(t)
	motoserver.LambdaRole(t, url)
	l := client(url)
	fns := []string{"s-a", "s-b", "s-c"}
	var log strings.Builder
	for _, fn := range fns {
		deploy(t, l, fn, []string{"r1"}, 1)
	}
	step := func(release, commit string, wentLive bool) {
		t.Helper()
		for _, fn := range fns {
			publish(t, l, fn, release)
			if wentLive {
				setLive(t, l, fn, release[1:])
			}
		}
		if wentLive {
			if err := rollback.Record(ctx, l, "live", fns, commit, release, &log); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := rollback.Record(ctx, l, "live", fns, "c1", "r1", &log); err != nil {
		t.Fatal(err)
	}
	step("r2", "c2", true)
	step("r3", "c3", false) // its canary failed: CodeDeploy left live on 2, make deploy recorded nothing
	// A change set declined at sam deploy's prompt (exit 0, nothing deployed): release
	// r3 is on no live alias, so nothing is recorded, for no function.
	setLive(t, l, "s-c", "3")
	if err := rollback.Record(ctx, l, "live", fns, "c3", "r3", &log); !errors.Is(err, rollback.ErrNotDeployed) {
		t.Errorf("record of a release not live: %v", err)
	}
	setLive(t, l, "s-c", "2")
	for _, fn := range fns {
		if h := history(t, l, fn); h != "2:c2 1:c1" {
			t.Errorf("%s: history %q after the record of a release not live, want 2:c2 1:c1", fn, h)
		}
	}
	step("r4", "c4", true)
	if h := history(t, l, "s-a"); h != "4:c4 2:c2 1:c1" {
		t.Fatalf("history %q, want 4:c4 2:c2 1:c1", h)
	}
	plan := filepath.Join(t.TempDir(), "plan.json")

	// Interrupted after moving s-a: s-b's move fails.
	_, err := rollback.Run(ctx, &failing{Client: l, fn: "s-b"}, "live", fns, plan, &log)
	if err == nil || !strings.Contains(err.Error(), "resumes") {
		t.Fatalf("interrupted run: %v", err)
	}
	if got := liveVersion(t, l, "s-a"); got != "2" {
		t.Errorf("s-a moved to %s before the interruption, want 2 (3 never went live)", got)
	}
	if _, err := os.Stat(plan); err != nil {
		t.Fatalf("the plan is gone after an interrupted run: %v", err)
	}
	// Run again: the plan is resumed, s-a stays on 2.
	p, err := rollback.Run(ctx, l, "live", fns, plan, &log)
	if err != nil {
		t.Fatal(err)
	}
	if p.Commit != "c2" {
		t.Errorf("rollback names commit %q, want c2", p.Commit)
	}
	for _, fn := range fns {
		if got := liveVersion(t, l, fn); got != "2" {
			t.Errorf("%s: live %s, want 2\n%s", fn, got, log.String())
		}
		if h := history(t, l, fn); h != "2:c2 1:c1" {
			t.Errorf("%s: history after the rollback %q, want 2:c2 1:c1", fn, h)
		}
	}
	if _, err := os.Stat(plan); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the plan stays after the rollback finished: %v", err)
	}
	// A second rollback goes one release further back: a deliberate, new plan.
	if p, err := rollback.Run(ctx, l, "live", []string{"s-a"}, plan, &log); err != nil || liveVersion(t, l, "s-a") != "1" || p.Commit != "c1" {
		t.Errorf("second rollback: %v, live %s, commit %q", err, liveVersion(t, l, "s-a"), p.Commit)
	}
	// Nothing older: refused, nothing moved.
	if _, err := rollback.Run(ctx, l, "live", []string{"s-a"}, plan, &log); !errors.Is(err, rollback.ErrNoEarlierRelease) || liveVersion(t, l, "s-a") != "1" {
		t.Errorf("rollback past the first release: %v", err)
	}
	// The functions' histories disagree (a deploy recorded s-c and stopped before s-b):
	// refused, nothing moved.
	fns = []string{"s-b", "s-c"}
	step("r5", "c5", true)
	publish(t, l, "s-c", "r6")
	setLive(t, l, "s-c", "6")
	if err := rollback.Record(ctx, l, "live", []string{"s-c"}, "c6", "r6", &log); err != nil {
		t.Fatal(err)
	}
	if _, err := rollback.Run(ctx, l, "live", fns, plan, &log); err == nil || !strings.Contains(err.Error(), "did not finish recording") || liveVersion(t, l, "s-b") != "5" {
		t.Errorf("disagreeing histories: %v", err)
	}
	// A live version nobody recorded (moved by hand): refused.
	setLive(t, l, "s-b", "3")
	if _, err := rollback.Run(ctx, l, "live", []string{"s-b"}, plan, &log); err == nil || !strings.Contains(err.Error(), "not a recorded release") {
		t.Errorf("unrecorded live version: %v", err)
	}
	// A canary shifting traffic: refused, with the way out.
	if _, err := l.UpdateAlias(ctx, &lambda.UpdateAliasInput{FunctionName: aws.String("s-b"), Name: aws.String("live"), FunctionVersion: aws.String("2"),
		RoutingConfig: &types.AliasRoutingConfiguration{AdditionalVersionWeights: map[string]float64{"4": 0.1}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := rollback.Run(ctx, l, "live", []string{"s-b"}, plan, &log); !errors.Is(err, rollback.ErrCanaryInProgress) {
		t.Errorf("during a canary: %v", err)
	}
	if err := rollback.Record(ctx, l, "live", []string{"s-b"}, "c9", "r9", &log); !errors.Is(err, rollback.ErrCanaryInProgress) {
		t.Errorf("record during a canary: %v", err)
	}
	// make rollback's own deploy of the commit it went back to (a new version of the
	// same code) takes that release's place: the next rollback goes to an older commit.
	publish(t, l, "s-a", "r7")
	setLive(t, l, "s-a", "5")
	if err := rollback.Record(ctx, l, "live", []string{"s-a"}, "c1", "r7", &log); err != nil || history(t, l, "s-a") != "5:c1" {
		t.Errorf("the same commit recorded again: %v, history %q, want 5:c1", err, history(t, l, "s-a"))
	}
}

// TestPrune: the versions nothing can go back to are deleted (a failed canary's, a
// release dropped from the history); the live one, the history's, an alias's and any
// newer than those stay.
func TestPrune(t *testing.T) {
	ctx := context.Background()
	url := motoserver.Start(t)
	motoserver.LambdaRole(t, url)
	l := client(url)
	var log strings.Builder
	deploy(t, l, "p", []string{"r1", "r2", "r3", "r4", "r5", "r6"}, 2)
	if err := rollback.Record(ctx, l, "live", []string{"p"}, "c2", "r2", &log); err != nil {
		t.Fatal(err)
	}
	setLive(t, l, "p", "5") // 3 and 4: canaries that failed
	if err := rollback.Record(ctx, l, "live", []string{"p"}, "c5", "r5", &log); err != nil {
		t.Fatal(err)
	}
	if err := rollback.Prune(ctx, l, []string{"p"}, &log); err != nil {
		t.Fatal(err)
	}
	var left []string
	out, err := l.ListVersionsByFunction(ctx, &lambda.ListVersionsByFunctionInput{FunctionName: aws.String("p")})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range out.Versions {
		left = append(left, aws.ToString(v.Version))
	}
	if got := strings.Join(left, " "); got != "$LATEST 2 5 6" {
		t.Errorf("versions left %q, want $LATEST 2 5 6\n%s", got, log.String())
	}
}

// TestStalePlanRefused: a rollback interrupted half-way leaves its plan; a deploy that
// came after it moved every alias. A later rollback must not resume that plan (moving
// the aliases two releases back and deploying its old commit): it is refused, naming
// the file, and nothing moves.
func TestStalePlanRefused(t *testing.T) {
	ctx := context.Background()
	url := motoserver.Start(t)
	motoserver.LambdaRole(t, url)
	l := client(url)
	fns := []string{"s-a", "s-b"}
	var log strings.Builder
	for _, fn := range fns {
		deploy(t, l, fn, []string{"r1"}, 1)
	}
	release := func(r, commit string) {
		t.Helper()
		for _, fn := range fns {
			publish(t, l, fn, r)
			setLive(t, l, fn, r[1:])
		}
		if err := rollback.Record(ctx, l, "live", fns, commit, r, &log); err != nil {
			t.Fatal(err)
		}
	}
	if err := rollback.Record(ctx, l, "live", fns, "c1", "r1", &log); err != nil {
		t.Fatal(err)
	}
	release("r2", "c2")
	plan := filepath.Join(t.TempDir(), "plan.json")
	if _, err := rollback.Run(ctx, &failing{Client: l, fn: "s-b"}, "live", fns, plan, &log); err == nil {
		t.Fatal("the interrupted run succeeded")
	}
	release("r3", "c3")
	release("r4", "c4")
	_, err := rollback.Run(ctx, l, "live", fns, plan, &log)
	if !errors.Is(err, rollback.ErrStalePlan) || !strings.Contains(err.Error(), plan) {
		t.Errorf("resuming a plan whose aliases moved since: %v, want %v naming %s", err, rollback.ErrStalePlan, plan)
	}
	for _, fn := range fns {
		if got := liveVersion(t, l, fn); got != "4" {
			t.Errorf("%s: live %s after the refused resume, want 4\n%s", fn, got, log.String())
		}
		if h := history(t, l, fn); !strings.HasPrefix(h, "4:c4 3:c3 ") {
			t.Errorf("%s: history %q after the refused resume", fn, h)
		}
	}
}
