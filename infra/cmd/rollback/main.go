// Command rollback moves every function's live alias of a stack back to the previous
// release's version (infra/rollback): `make rollback ENV=<env>`.
//
//	AWS_REGION=... AWS_ACCESS_KEY_ID=... go run ./infra/cmd/rollback -stack media-catalog-prod
package main

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/mediacatalog/service/infra/cmdrun"
	"github.com/mediacatalog/service/infra/rollback"
	"github.com/mediacatalog/service/shared/awsconfig"
	"github.com/mediacatalog/service/shared/config"
)

// functions are the suffixes of the functions' names (template.yaml: FunctionName is
// ${AWS::StackName}-<suffix>).
var functions = []string{"oauth", "tags", "cdn", "admin-users", "admin-roles", "admin-permissions", "admin-contributors", "publishers"}

func main() {
	cmdrun.Main("rollback", func(ctx context.Context) error { return run(ctx, os.Args[1:], os.Getenv) })
}

func run(ctx context.Context, args []string, getenv func(string) string) error {
	fs := flag.NewFlagSet("rollback", flag.ContinueOnError)
	stack := fs.String("stack", "", "the stack's name (samconfig's stack_name)")
	alias := fs.String("alias", "live", "the alias the API calls")
	dir := fs.String("dir", ".rollback", "folder of the unfinished plans")
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
	return rollback.Run(ctx, l, *alias, names, filepath.Join(*dir, strings.ReplaceAll(*stack, "/", "_")+".json"), os.Stdout)
}
