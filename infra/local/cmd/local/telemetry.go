package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"

	"github.com/mediacatalog/service/shared/telemetry"
)

// startTelemetry sends the local server's spans, the same the functions send to
// X-Ray, to the OTLP/HTTP collector OTEL_EXPORTER_OTLP_ENDPOINT names (the exporter
// reads the other OTEL_EXPORTER_OTLP_* variables, headers and timeouts, itself). Without
// it nothing is recorded.
// The returned function flushes and stops the exporter.
func startTelemetry(ctx context.Context, getenv func(string) string, out io.Writer) (func(), error) {
	endpoint := getenv("OTEL_EXPORTER_OTLP_ENDPOINT")
	if endpoint == "" {
		return func() {}, nil
	}
	// The signal's path is appended to the base endpoint, as the variable's
	// specification says.
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(strings.TrimRight(endpoint, "/")+"/v1/traces"))
	if err != nil {
		return nil, fmt.Errorf("OTLP exporter: %w", err)
	}
	telemetry.Setup(telemetry.Options{Function: "local", Exporter: exp})
	fmt.Fprintf(out, "spans to %s (OTLP)\n", endpoint)
	return func() { telemetry.Shutdown(context.WithoutCancel(ctx)) }, nil
}
