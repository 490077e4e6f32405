package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mediacatalog/service/shared/telemetry"
)

// TestTelemetryOTLP: make run sends its spans to the OTLP/HTTP collector
// OTEL_EXPORTER_OTLP_ENDPOINT names, and sets nothing up without one.
func TestTelemetryOTLP(t *testing.T) {
	var out strings.Builder
	stop, err := startTelemetry(context.Background(), func(string) string { return "" }, &out)
	if err != nil {
		t.Fatal(err)
	}
	stop()
	if out.Len() != 0 {
		t.Errorf("without a collector it says %q", out.String())
	}

	var posts atomic.Int64
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.Method == http.MethodPost && r.URL.Path == "/v1/traces" && len(b) > 0 {
			posts.Add(1)
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer collector.Close()
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": collector.URL}
	stop, err = startTelemetry(context.Background(), func(k string) string { return env[k] }, &out)
	if err != nil {
		t.Fatal(err)
	}
	h := telemetry.Middleware(telemetry.Route("GET /tags", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	})), func(*http.Request) string { return "r-1" })
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/tags", nil))
	stop() // flushes
	if posts.Load() == 0 {
		t.Errorf("the collector received no spans; make run said %q", out.String())
	}
}
