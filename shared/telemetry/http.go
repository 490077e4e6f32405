package telemetry

import (
	"net/http"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/propagation"
)

// Transport is the round tripper of the service's outgoing HTTP clients (the OAuth
// providers, the local cdn notifier): otelhttp's client span per call, named by method
// and host ("POST oauth2.googleapis.com"), and ProviderErrors counted for a failed
// call or a 5xx answer. No trace header is sent: the providers are not ours. base
// nil is http.DefaultTransport.
func Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return otelhttp.NewTransport(countErrors{base},
		otelhttp.WithPropagators(propagation.NewCompositeTextMapPropagator()),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return r.Method + " " + r.URL.Host }))
}

type countErrors struct{ base http.RoundTripper }

func (c countErrors) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(r)
	if err != nil || resp.StatusCode >= 500 {
		Add(r.Context(), MetricProviderErrors, 1)
	}
	return resp, err
}
