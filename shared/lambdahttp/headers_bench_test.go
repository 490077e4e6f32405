package lambdahttp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/core"
)

// BenchmarkEventHeaders: what withEventHeaders adds to every invocation, over the
// sample tags event's headers as the adapter gives them (three of them split at
// commas), against the same request served without it.
func BenchmarkEventHeaders(b *testing.B) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "events", "tags", "get-tags.json"))
	if err != nil {
		b.Fatal(err)
	}
	var ev events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(raw, &ev); err != nil {
		b.Fatal(err)
	}
	var accessor core.RequestAccessorV2
	req, err := accessor.EventToRequest(ev)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.WithValue(context.Background(), eventHeadersKey{}, ev.Headers)
	noop := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	w := httptest.NewRecorder()
	for _, bc := range []struct {
		name string
		h    http.Handler
	}{{"adapter's headers", noop}, {"made whole", withEventHeaders(noop)}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r := req.WithContext(ctx)
				r.Header = req.Header.Clone()
				bc.h.ServeHTTP(w, r)
			}
		})
	}
}
