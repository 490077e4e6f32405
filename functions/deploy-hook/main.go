// Command deploy-hook is CodeDeploy's PreTraffic hook of the route groups' functions:
// wiring only, the hook itself lives in shared/deployhook.
package main

import (
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/mediacatalog/service/shared/awsconfig"
	"github.com/mediacatalog/service/shared/deployhook"
	"github.com/mediacatalog/service/shared/lambdahttp"
)

func main() {
	log := lambdahttp.NewLogger(os.Getenv("LOG_LEVEL")).With("function", "deploy-hook")
	cfg := awsconfig.ForEndpoint(os.Getenv("AWS_REGION"), "", os.Getenv)
	lambda.Start(deployhook.New(cfg, "", os.Getenv("FUNCTION_PREFIX"), log).Handle)
}
