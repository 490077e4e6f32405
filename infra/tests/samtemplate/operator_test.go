package samtemplate_test

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/aws-sdk-go-v2/service/rds"

	"github.com/mediacatalog/service/infra/ops/rollback"
	"github.com/mediacatalog/service/infra/tests/motoserver"
	"github.com/mediacatalog/service/shared/awsconfig"
	"github.com/mediacatalog/service/shared/routegroups"
)

// samCall is one run of the stand-in sam: its arguments and working directory.
type samCall struct {
	Args []string `json:"args"`
	Dir  string   `json:"dir"`
}

// standInSam writes a stand-in `sam` into a new directory (to put first on PATH): it
// appends each call to the file $SAM_LOG and exits 1 when its subcommand is $SAM_FAIL.
// Its deploy does to Lambda (the endpoint AWS_ENDPOINT_URL_LAMBDA) what CloudFormation
// does with a new Release: it publishes a version of each route group's function whose
// description is the release and moves the alias live to it. With SAM_DECLINE set it
// deploys nothing and exits 0, as SAM CLI does when the change set is declined at its
// prompt.
func standInSam(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	deploy := `import os, subprocess, sys, boto3
args = sys.argv[1:]
env, config = args[args.index("--config-env") + 1], args[args.index("--config-file") + 1]
stack = subprocess.run(["python3", os.environ["SAMCONFIG_PY"], config, "stack", env], check=True, capture_output=True, text=True).stdout.strip()
release = [a.split("=", 1)[1] for a in args if a.startswith("Release=")][0]
l = boto3.client("lambda", region_name="eu-central-1", aws_access_key_id="test", aws_secret_access_key="test")
for group in os.environ["SAM_GROUPS"].split():
    name = stack + "-" + group
    l.update_function_configuration(FunctionName=name, Environment={"Variables": {"RELEASE": release}})
    v = l.publish_version(FunctionName=name, Description=release)["Version"]
    l.update_alias(FunctionName=name, Name="live", FunctionVersion=v)
`
	var groups []string
	for _, g := range routegroups.All() {
		groups = append(groups, g.Name)
	}
	script := `#!/bin/sh
export SAMCONFIG_PY='` + repoFile("infra/ops/samconfig.py") + `' SAM_GROUPS='` + strings.Join(groups, " ") + `'
python3 -c 'import json, os, sys; open(os.environ["SAM_LOG"], "a").write(json.dumps({"args": sys.argv[1:], "dir": os.getcwd()}) + "\n")' "$@"
[ "$1" != "${SAM_FAIL:-}" ] || exit 1
if [ "$1" = deploy ] && [ -z "${SAM_DECLINE:-}" ]; then
	exec python3 -c '` + deploy + `' "$@"
fi
`
	if err := os.WriteFile(filepath.Join(dir, "sam"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// samCalls reads and empties the stand-in's log.
func samCalls(t *testing.T, log string) []samCall {
	t.Helper()
	f, err := os.Open(log)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(log)
	defer f.Close()
	var calls []samCall
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var c samCall
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		calls = append(calls, c)
	}
	return calls
}

// filledSamconfig is the repository's samconfig.toml with its <...> placeholders filled
// from the "create" parameter set, as an operator leaves it before the first deploy.
func filledSamconfig(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(repoFile("samconfig.toml"))
	if err != nil {
		t.Fatal(err)
	}
	fill := paramsOf(t, "create")
	out := regexp.MustCompile(`"(\w+)=<[^"]*>"`).ReplaceAllStringFunc(string(b), func(m string) string {
		k := strings.SplitN(m[1:], "=", 2)[0]
		return fmt.Sprintf("%q", k+"="+fill[k])
	})
	path := filepath.Join(t.TempDir(), "samconfig.toml")
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// samParse is what SAM CLI makes of --parameter-overrides words (its parser, ported in
// infra/ops/samconfig.py); an error when it refuses one.
func samParse(t *testing.T, words []string) (map[string]string, error) {
	t.Helper()
	in, _ := json.Marshal(words)
	cmd := exec.Command("python3", repoFile("infra/ops/samconfig.py"), "parse")
	cmd.Stdin = strings.NewReader(string(in))
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%v: %s", err, stderrOf(err))
	}
	var m map[string]string
	return m, json.Unmarshal(out, &m)
}

// sam deploy's options make deploy may pass, from SAM CLI's deploy command
// (samcli/commands/deploy/command.py and samcli/commands/_utils/options.py, 1.164.0);
// --parameter-overrides takes every word up to the next option.
var deployOptions = map[string]bool{
	"--config-env": true, "--config-file": true, // with a value
	"--no-fail-on-empty-changeset": false, "--confirm-changeset": false, "--no-confirm-changeset": false,
}

// checkDeploy holds one sam deploy call to the grammar: known options, each value
// present, and parameter overrides that SAM CLI reads as exactly want plus a Release.
func checkDeploy(t *testing.T, c samCall, env, samconfig string, want map[string]string) (release string) {
	t.Helper()
	if len(c.Args) == 0 || c.Args[0] != "deploy" {
		t.Fatalf("not sam deploy: %v", c.Args)
	}
	opts := map[string]string{}
	var words []string
	args := c.Args[1:]
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--parameter-overrides" {
			for i+1 < len(args) && !strings.HasPrefix(args[i+1], "--") {
				i++
				words = append(words, args[i])
			}
			continue
		}
		takes, ok := deployOptions[a]
		switch {
		case !ok:
			t.Errorf("sam deploy has no option %q", a)
		case takes && i+1 < len(args):
			i++
			opts[a] = args[i]
		case takes:
			t.Errorf("%s without its value", a)
		default:
			opts[a] = ""
		}
	}
	if opts["--config-env"] != env || opts["--config-file"] != samconfig {
		t.Errorf("sam deploy reads %v, want environment %s of %s", opts, env, samconfig)
	}
	if _, ok := opts["--no-fail-on-empty-changeset"]; !ok {
		t.Error("an empty change set would fail the deploy")
	}
	got, err := samParse(t, words)
	if err != nil {
		t.Fatalf("SAM CLI refuses make deploy's parameter overrides: %v", err)
	}
	release = got["Release"]
	if !regexp.MustCompile(`^[A-Za-z0-9]{10}$`).MatchString(release) {
		t.Errorf("Release %q", release)
	}
	delete(got, "Release")
	if !maps.Equal(got, want) {
		for k, v := range want {
			if got[k] != v {
				t.Errorf("SAM CLI reads %s=%q, samconfig says %q", k, got[k], v)
			}
		}
		for k := range got {
			if _, ok := want[k]; !ok {
				t.Errorf("SAM CLI reads %s, which samconfig does not set", k)
			}
		}
	}
	return release
}

// TestOperatorCommands runs make deploy (every environment of samconfig.toml), make
// rollback and make redeploy with a stand-in sam on PATH and Lambda from moto's server,
// and checks each command they give sam against SAM CLI's grammar, and what they leave
// in Lambda: a deploy records the release that went live, a failed one records
// nothing and fails; a deploy to a database (RDS from moto's server too) without 7
// days of automated backups or without deletion protection is refused before anything
// is built, with the command that fixes it; a rollback moves the aliases to the last
// release that went live and deploys its commit all at once from a checkout of it;
// every command fails when what it checks fails.
func TestOperatorCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("runs make, go run and moto's server (make test runs it)")
	}
	ctx := context.Background()
	url := motoserver.Start(t)
	roleARN := motoserver.LambdaRole(t, url)
	awsEnv := map[string]string{"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"}
	l := lambda.NewFromConfig(awsconfig.ForEndpoint("eu-central-1", url, func(k string) string { return awsEnv[k] }),
		func(o *lambda.Options) { o.BaseEndpoint = aws.String(url) })
	samconfig := filledSamconfig(t)
	bin := standInSam(t)
	log := filepath.Join(t.TempDir(), "sam.log")
	repo := filepath.Dir(repoFile("Makefile"))
	git := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", repo}, args...)...).Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	// The release before: a commit make rollback checks out.
	if err := exec.Command("git", "-C", repo, "rev-parse", "--verify", "-q", "HEAD~1").Run(); err != nil {
		t.Skip("the clone has no parent commit to roll back to (a shallow clone)")
	}
	previous := git("rev-parse", "HEAD~1")
	run := func(extra []string, args ...string) (string, error) {
		cmd := exec.Command("make", append([]string{"--no-print-directory", "SAMCONFIG=" + samconfig, "CONFIRM_CHANGESET=false"}, args...)...)
		cmd.Dir = repo
		cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "AWS_") })
		cmd.Env = append(cmd.Env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "SAM_LOG="+log,
			"AWS_ENDPOINT_URL_LAMBDA="+url, "AWS_ENDPOINT_URL_RDS="+url, "AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test")
		cmd.Env = append(cmd.Env, extra...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	// Each stack's functions as the release before left them: version 1 (release r1,
	// built from the previous commit) live and recorded.
	functions := func(stack string) []string {
		var names []string
		for _, g := range routegroups.All() {
			name := stack + "-" + g.Name
			names = append(names, name)
			if _, err := l.CreateFunction(ctx, &lambda.CreateFunctionInput{FunctionName: aws.String(name), Runtime: types.RuntimeProvidedal2023,
				Handler: aws.String("bootstrap"), Role: aws.String(roleARN), Code: &types.FunctionCode{ZipFile: zipped(t)}}); err != nil {
				t.Fatal(err)
			}
			if _, err := l.PublishVersion(ctx, &lambda.PublishVersionInput{FunctionName: aws.String(name), Description: aws.String("r1")}); err != nil {
				t.Fatal(err)
			}
			if _, err := l.CreateAlias(ctx, &lambda.CreateAliasInput{FunctionName: aws.String(name), Name: aws.String("live"), FunctionVersion: aws.String("1")}); err != nil {
				t.Fatal(err)
			}
		}
		if err := rollback.Record(ctx, l, "live", names, previous, "r1", &strings.Builder{}); err != nil {
			t.Fatal(err)
		}
		return names
	}
	aliases := func(names []string) (live, released []string) {
		for _, n := range names {
			a, err := l.GetAlias(ctx, &lambda.GetAliasInput{FunctionName: aws.String(n), Name: aws.String("live")})
			if err != nil {
				t.Fatal(err)
			}
			live = append(live, aws.ToString(a.FunctionVersion))
			h, err := rollback.History(ctx, l, n)
			if err != nil {
				t.Fatal(err)
			}
			released = append(released, fmt.Sprint(h))
		}
		return live, released
	}
	// Every environment's database (the filled samconfig names one instance), restorable.
	db := paramsOf(t, "create")["DbInstanceIdentifier"]
	rdsc := rds.NewFromConfig(awsconfig.ForEndpoint("eu-central-1", url, func(k string) string { return awsEnv[k] }),
		func(o *rds.Options) { o.BaseEndpoint = aws.String(url) })
	if _, err := rdsc.CreateDBInstance(ctx, &rds.CreateDBInstanceInput{DBInstanceIdentifier: aws.String(db), Engine: aws.String("postgres"),
		DBInstanceClass: aws.String("db.t4g.medium"), AllocatedStorage: aws.Int32(20), MasterUsername: aws.String("owner"),
		MasterUserPassword: aws.String("password-123"), BackupRetentionPeriod: aws.Int32(1), DeletionProtection: aws.Bool(false)}); err != nil {
		t.Fatal(err)
	}
	t.Run("deploy/refused without backups", func(t *testing.T) {
		out, err := run(nil, "-o", "lint", "deploy", "ENV=prod")
		if err == nil || !strings.Contains(out, "keeps automated backups 1 days") || !strings.Contains(out, "deletion protection off") ||
			!strings.Contains(out, "aws rds modify-db-instance --region eu-central-1 --db-instance-identifier "+db+" --backup-retention-period 7 --deletion-protection --apply-immediately") {
			t.Errorf("make deploy to a database without backups: %v\n%s", err, out)
		}
		if calls := samCalls(t, log); len(calls) != 0 {
			t.Errorf("make deploy built or deployed before the backup check: %v", calls)
		}
	})
	if _, err := rdsc.ModifyDBInstance(ctx, &rds.ModifyDBInstanceInput{DBInstanceIdentifier: aws.String(db),
		BackupRetentionPeriod: aws.Int32(7), DeletionProtection: aws.Bool(true), ApplyImmediately: aws.Bool(true)}); err != nil {
		t.Fatal(err)
	}
	stacks := map[string][]string{}
	for _, env := range []string{"default", "staging", "prod"} {
		t.Run("deploy/"+env, func(t *testing.T) {
			want := samconfigParams(t, samconfig, env)
			names := functions(stackOf(t, samconfig, env))
			stacks[env] = names
			// sam deploy fails (a canary rolled back): make fails, nothing recorded.
			out, err := run([]string{"SAM_FAIL=deploy"}, "-o", "lint", "deploy", "ENV="+env)
			if err == nil {
				t.Errorf("make deploy succeeded when sam deploy failed:\n%s", out)
			}
			if _, released := aliases(names); !strings.Contains(released[0], "{1 "+previous+"}") || strings.Contains(released[0], "{2 ") {
				t.Errorf("a failed deploy changed the history: %v", released)
			}
			samCalls(t, log)
			// The change set declined at sam deploy's prompt (sam exits 0, nothing
			// deployed): make fails and records nothing.
			out, err = run([]string{"SAM_DECLINE=1"}, "-o", "lint", "deploy", "ENV="+env)
			if err == nil || !strings.Contains(out, "nothing recorded") {
				t.Errorf("make deploy of a declined change set: %v\n%s", err, out)
			}
			if live, released := aliases(names); live[0] != "1" || released[0] != "[{1 "+previous+"}]" {
				t.Errorf("a declined change set changed live %v or the history %v", live, released)
			}
			samCalls(t, log)
			// sam deploy succeeds.
			out, err = run(nil, "-o", "lint", "deploy", "ENV="+env)
			if err != nil {
				t.Fatalf("make deploy: %v\n%s", err, out)
			}
			calls := samCalls(t, log)
			if len(calls) != 2 || !slices.Equal(calls[0].Args, []string{"build", "--config-env", env, "--config-file", samconfig}) || calls[0].Dir != repo {
				t.Fatalf("sam calls %v, want sam build then sam deploy in %s", calls, repo)
			}
			checkDeploy(t, calls[1], env, samconfig, want)
			if env == "prod" {
				for _, c := range calls {
					t.Logf("make deploy ENV=prod ran: sam %s", shellWords(c.Args))
				}
			}
			live, released := aliases(names)
			for i, n := range names {
				if live[i] != "2" || !strings.HasPrefix(released[i], "[{2 "+git("rev-parse", "HEAD")) || !strings.Contains(released[i], "{1 "+previous+"}") {
					t.Errorf("%s after make deploy: live %s, history %s", n, live[i], released[i])
				}
			}
		})
	}
	t.Run("rollback/prod", func(t *testing.T) {
		names := stacks["prod"]
		if names == nil {
			t.Skip("the prod deploy failed")
		}
		out, err := run(nil, "rollback", "ENV=prod")
		if err != nil {
			t.Fatalf("make rollback: %v\n%s", err, out)
		}
		live, released := aliases(names)
		for i, n := range names {
			// The aliases went back to 1; the deploy of its commit published 3, which
			// takes that release's place.
			if live[i] != "3" || released[i] != "[{3 "+previous+"}]" {
				t.Errorf("%s after make rollback: live %s, history %s", n, live[i], released[i])
			}
		}
		calls := samCalls(t, log)
		if len(calls) != 2 || calls[0].Args[0] != "build" || calls[0].Dir == repo || calls[1].Dir != calls[0].Dir {
			t.Fatalf("make rollback's sam calls %v: want build and deploy in a checkout of %s", calls, previous)
		}
		want := samconfigParams(t, samconfig, "prod")
		declared := templateParameters(t, previous)
		for k := range want {
			if !declared[k] {
				delete(want, k)
			}
		}
		want["DeploymentType"] = "AllAtOnce"
		checkDeploy(t, calls[1], "prod", samconfig, want)
		for _, c := range calls {
			t.Logf("make rollback ENV=prod ran, in a checkout of %s: sam %s", previous[:12], shellWords(c.Args))
		}
		// Nothing before the first recorded release: refused, nothing deployed.
		if out, err := run(nil, "rollback", "ENV=prod"); err == nil || !strings.Contains(out, "no earlier release") || len(samCalls(t, log)) != 0 {
			t.Errorf("make rollback past the first release: %v\n%s", err, out)
		}
	})
	t.Run("redeploy/staging", func(t *testing.T) {
		if out, err := run(nil, "redeploy", "ENV=staging"); err == nil || !strings.Contains(out, "usage") {
			t.Errorf("make redeploy without VERSION: %v\n%s", err, out)
		}
		out, err := run(nil, "redeploy", "ENV=staging", "VERSION="+previous)
		if err != nil {
			t.Fatalf("make redeploy: %v\n%s", err, out)
		}
		calls := samCalls(t, log)
		if len(calls) != 2 || calls[0].Dir == repo {
			t.Fatalf("make redeploy's sam calls %v", calls)
		}
		want := samconfigParams(t, samconfig, "staging")
		declared := templateParameters(t, previous)
		for k := range want {
			if !declared[k] {
				delete(want, k)
			}
		}
		checkDeploy(t, calls[1], "staging", samconfig, want)
		if out, err := run(nil, "redeploy", "ENV=staging", "VERSION=no-such-tag"); err == nil {
			t.Errorf("make redeploy of a missing tag succeeded:\n%s", out)
		}
	})
}

// templateParameters are the parameters the template of commit declares.
func templateParameters(t *testing.T, commit string) map[string]bool {
	t.Helper()
	out, err := exec.Command("git", "-C", filepath.Dir(repoFile("Makefile")), "show", commit+":template.yaml").Output()
	if err != nil {
		t.Fatal(err)
	}
	declared := map[string]bool{}
	inside := false
	for _, line := range strings.Split(string(out), "\n") {
		if line != "" && line[0] != ' ' && line[0] != '#' {
			inside = strings.HasPrefix(line, "Parameters:")
		} else if m := regexp.MustCompile(`^  (\w+):\s*$`).FindStringSubmatch(line); inside && m != nil {
			declared[m[1]] = true
		}
	}
	return declared
}

// stackOf is an environment's stack name.
func stackOf(t *testing.T, samconfig, env string) string {
	t.Helper()
	out, err := exec.Command("python3", repoFile("infra/ops/samconfig.py"), samconfig, "stack", env).Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// shellWords writes args as a shell would read them back.
func shellWords(args []string) string {
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		if regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`).MatchString(a) {
			b.WriteString(a)
		} else {
			b.WriteString("'" + strings.ReplaceAll(a, "'", `'\''`) + "'")
		}
	}
	return b.String()
}

// zipped is a function's code package: a bootstrap that is never run.
func zipped(t *testing.T) []byte {
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
