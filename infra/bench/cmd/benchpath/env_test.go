package main

import (
	"slices"
	"testing"
)

func TestEnvPairs(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string
		ok       bool
	}{
		{"empty", "", nil, true},
		{"one", "GOGC=100", []string{"GOGC=100"}, true},
		{"two, spaces around", "  GOGC=100   GOMEMLIMIT=64MiB ", []string{"GOGC=100", "GOMEMLIMIT=64MiB"}, true},
		{"an empty value", "OTEL_EXPORTER_OTLP_ENDPOINT=", []string{"OTEL_EXPORTER_OTLP_ENDPOINT="}, true},
		{"no equals sign", "GOGC", nil, false},
		{"no key", "=100", nil, false},
		{"one bad among good", "GOGC=100 oops", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := envPairs(tc.in)
			if (err == nil) != tc.ok {
				t.Fatalf("envPairs(%q) error %v, want ok %v", tc.in, err, tc.ok)
			}
			if tc.ok && !slices.Equal(got, tc.want) {
				t.Errorf("envPairs(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
