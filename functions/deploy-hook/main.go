// Command deploy-hook is CodeDeploy's PreTraffic hook of the route groups' functions:
// wiring only, the hook itself lives in shared/deployhook.
package main

import (
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/codedeploy"
	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/mediacatalog/service/shared/awsconfig"
	"github.com/mediacatalog/service/shared/deployhook"
	"github.com/mediacatalog/service/shared/lambdahttp"
)

func main() {
	cfg := awsconfig.ForEndpoint(os.Getenv("AWS_REGION"), "", os.Getenv)
	h := &deployhook.Hook{
		CodeDeploy:   codedeploy.NewFromConfig(cfg),
		Lambda:       awslambda.NewFromConfig(cfg),
		Prefix:       os.Getenv("FUNCTION_PREFIX"),
		ProbeTimeout: deployhook.ProbeTimeout,
		CallTimeout:  deployhook.CallTimeout,
		Log:          lambdahttp.NewLogger(os.Getenv("LOG_LEVEL")).With("function", "deploy-hook"),
		Now:          time.Now,
	}
	lambda.Start(h.Handle)
}
