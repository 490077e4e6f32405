// Command hello is the smoke test's yardstick: the smallest function built the same
// way as ours (the same adapter, the same flags), answering every request with 200.
package main

import (
	"net/http"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"
)

func main() {
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"data":"hello","code":200}`))
	})
	lambda.Start(httpadapter.NewV2(h).ProxyWithContext)
}
