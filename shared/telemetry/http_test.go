package telemetry_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mediacatalog/service/shared/telemetry"
)

// TestTransport: an outgoing call through Transport (the OAuth providers' client) is a
// span under its request's, named by method and host, with the answer's status, an
// error status for a 5xx, no trace header sent to the provider, and a ProviderErrors
// count in the request's EMF document.
func TestTransport(t *testing.T) {
	spans := tracetest.NewInMemoryExporter()
	var emf lockedBuffer
	telemetry.Setup(telemetry.Options{Function: "oauth", Exporter: spans, Metrics: &emf})
	tests := []struct {
		name   string
		status int
		errors any
	}{
		{"answered", http.StatusOK, nil},
		{"provider failing", http.StatusServiceUnavailable, 1.0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var traceHeaders int
			provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				for k := range r.Header {
					if k == "Traceparent" || k == "X-Amzn-Trace-Id" {
						traceHeaders++
					}
				}
				w.WriteHeader(tc.status)
			}))
			defer provider.Close()
			client := &http.Client{Transport: telemetry.Transport(nil)}
			h := telemetry.Middleware(telemetry.Route("GET /auth/oauth/{provider}/callback", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				req, _ := http.NewRequestWithContext(r.Context(), http.MethodPost, provider.URL+"/token?code=secret", nil)
				if resp, err := client.Do(req); err == nil {
					resp.Body.Close()
				}
				w.WriteHeader(http.StatusFound)
			})), func(*http.Request) string { return "r-1" })
			telemetry.Flush(context.Background())
			spans.Reset()
			emf.Reset()
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/auth/oauth/google/callback", nil))
			telemetry.Flush(context.Background())
			got := spans.GetSpans().Snapshots()
			if len(got) != 2 {
				t.Fatalf("%d spans, want the route's and the call's", len(got))
			}
			call, route := got[0], got[1]
			host := strings.TrimPrefix(provider.URL, "http://")
			if call.Name() != "POST "+host || call.Parent().SpanID() != route.SpanContext().SpanID() {
				t.Errorf("call span %q under %q", call.Name(), route.Name())
			}
			if isErr := call.Status().Code == codes.Error; isErr != (tc.status >= 500) {
				t.Errorf("call span's error status %v for a %d", isErr, tc.status)
			}
			if traceHeaders != 0 {
				t.Errorf("a trace header went to the provider")
			}
			var doc map[string]any
			if err := json.Unmarshal([]byte(emf.String()), &doc); err != nil {
				t.Fatal(err)
			}
			if doc[telemetry.MetricProviderErrors] != tc.errors {
				t.Errorf("ProviderErrors %v, want %v", doc[telemetry.MetricProviderErrors], tc.errors)
			}
		})
	}
}
