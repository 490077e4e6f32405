// Command rollback moves every function's live alias of a stack back to the last
// release that went live before the current one and prints that release's commit
// (infra/ops/rollback), or with -record adds the live versions to the history once a deploy
// succeeded: `make rollback ENV=<env>`, `make deploy`.
//
//	AWS_REGION=... AWS_ACCESS_KEY_ID=... go run ./infra/ops/cmd/rollback -stack media-catalog-prod
//	AWS_REGION=... go run ./infra/ops/cmd/rollback -stack media-catalog-prod -record <commit> -release <release>
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/mediacatalog/service/infra/cmdrun"
	"github.com/mediacatalog/service/infra/ops/rollback"
	"github.com/mediacatalog/service/shared/awsconfig"
	"github.com/mediacatalog/service/shared/config"
)

// functions are the suffixes of the route groups' functions' names (template.yaml:
// FunctionName is ${AWS::StackName}-<suffix>). The deploy hook is none of them:
// CodeDeploy calls its latest code, never an alias, so there is nothing to roll back.
var functions = []string{"oauth", "tags", "cdn", "admin-users", "admin-roles", "admin-permissions", "admin-contributors", "publishers"}

func main() {
	cmdrun.Main("rollback", func(ctx context.Context) error { return run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr) })
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("rollback", flag.ContinueOnError)
	stack := fs.String("stack", "", "the stack's name (samconfig's stack_name)")
	alias := fs.String("alias", "live", "the alias the API calls")
	dir := fs.String("dir", ".rollback", "folder of the unfinished plans")
	record := fs.String("record", "", "record the live versions as the release built from this commit, and delete the versions nothing can go back to")
	release := fs.String("release", "", "with -record: the release make deploy deployed (template.yaml's Release), which every live version must carry")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *stack == "" {
		return errors.New("-stack is required")
	}
	region := getenv("AWS_REGION")
	if region == "" {
		return errors.New("AWS_REGION is not set")
	}
	endpoint := config.FirstEnv(getenv, config.LambdaEndpointEnv)
	l := lambda.NewFromConfig(awsconfig.ForEndpoint(region, endpoint, getenv), func(o *lambda.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	})
	names := make([]string, len(functions))
	for i, f := range functions {
		names[i] = *stack + "-" + f
	}
	plan := filepath.Join(*dir, strings.ReplaceAll(*stack, "/", "_")+".json")
	if *record != "" {
		if err := rollback.Record(ctx, l, *alias, names, *record, *release, stderr); err != nil {
			return err
		}
		// A deploy that went live supersedes a rollback left unfinished before it.
		if err := os.Remove(plan); err == nil {
			fmt.Fprintf(stderr, "removed the unfinished rollback %s: the deploy replaced it\n", plan)
		} else if !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return rollback.Prune(ctx, l, names, stderr)
	}
	p, err := rollback.Run(ctx, l, *alias, names, plan, stderr)
	if err != nil {
		return err
	}
	// The commit, alone on stdout, for make rollback to deploy through CloudFormation.
	_, err = fmt.Fprintln(stdout, p.Commit)
	return err
}
