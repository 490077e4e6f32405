package lambdahttp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/mediacatalog/service/shared/httpapi"
	"github.com/mediacatalog/service/shared/lambdahttp"
)

// TestInvocationContext: under Lambda a request carries its invocation's request id
// (the runtime's, else API Gateway's) and API Gateway's source address, which httpapi
// reads without knowing the adapter.
func TestInvocationContext(t *testing.T) {
	tests := []struct {
		name      string
		runtimeID string
		gatewayID string
		wantID    string
	}{
		{"the runtime's id", "runtime-id-1", "gateway-id-1", "runtime-id-1"},
		{"API Gateway's id without the runtime's", "", "gateway-id-2", "gateway-id-2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var gotID, gotIP string
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				gotID, gotIP = httpapi.RequestID(r), httpapi.SourceIP(r)
				w.WriteHeader(http.StatusNoContent)
			})
			event, err := json.Marshal(events.APIGatewayV2HTTPRequest{
				Version: "2.0", RawPath: "/tags", RouteKey: "GET /tags",
				RequestContext: events.APIGatewayV2HTTPRequestContext{
					RequestID: tt.gatewayID,
					HTTP:      events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "GET", Path: "/tags", SourceIP: "203.0.113.7"},
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if tt.runtimeID != "" {
				ctx = lambdacontext.NewContext(ctx, &lambdacontext.LambdaContext{AwsRequestID: tt.runtimeID})
			}
			if _, err := lambdahttp.Invoke(ctx, h, event); err != nil {
				t.Fatal(err)
			}
			if gotID != tt.wantID || gotIP != "203.0.113.7" {
				t.Errorf("request id %q, source %q; want %q, 203.0.113.7", gotID, gotIP, tt.wantID)
			}
		})
	}
}
