package lambdahttp

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/mediacatalog/service/shared/httpapi"
)

// TestLoggerKeepsAudit: whatever LOG_LEVEL says, audit records are written, under the
// level name AUDIT; other records follow LOG_LEVEL.
func TestLoggerKeepsAudit(t *testing.T) {
	for _, level := range []string{"debug", "info", "warn", "error", "nonsense"} {
		t.Run(level, func(t *testing.T) {
			var buf bytes.Buffer
			log := newLogger(&buf, level)
			log.Log(context.Background(), httpapi.LevelAudit, "audit")
			log.Info("info")
			out := buf.String()
			if !strings.Contains(out, `"level":"AUDIT","msg":"audit"`) {
				t.Errorf("LOG_LEVEL=%s: no AUDIT record in %q", level, out)
			}
			wantInfo := level == "debug" || level == "info" || level == "nonsense"
			if got := strings.Contains(out, `"msg":"info"`); got != wantInfo {
				t.Errorf("LOG_LEVEL=%s: info record written %v, want %v", level, got, wantInfo)
			}
		})
	}
}

// TestLogLevel: the stricter of LOG_LEVEL and Lambda's AWS_LAMBDA_LOG_LEVEL
// (LoggingConfig.ApplicationLogLevel) wins.
func TestLogLevel(t *testing.T) {
	for _, tc := range []struct{ logLevel, lambda, want string }{
		{"info", "", "info"},
		{"debug", "INFO", "INFO"},
		{"error", "INFO", "error"},
		{"info", "WARN", "WARN"},
		{"warn", "TRACE", "warn"},
		{"debug", "FATAL", "FATAL"},
		{"nonsense", "DEBUG", "nonsense"},
	} {
		getenv := func(k string) string {
			if k == "AWS_LAMBDA_LOG_LEVEL" {
				return tc.lambda
			}
			return ""
		}
		if got := LogLevel(getenv, tc.logLevel); got != tc.want {
			t.Errorf("LOG_LEVEL=%s AWS_LAMBDA_LOG_LEVEL=%s: %s, want %s", tc.logLevel, tc.lambda, got, tc.want)
		}
	}
}

// TestTraceIDOnEveryLine: a line logged without the request's context, as most are,
// carries the trace id of the invocation being served.
func TestTraceIDOnEveryLine(t *testing.T) {
	var buf bytes.Buffer
	log := newLogger(&buf, "info").With("request_id", "r-1")
	currentTraceID.Store("1-6789abcd-0123456789abcdef01234567")
	defer currentTraceID.Store("")
	log.Info("something")
	if !strings.Contains(buf.String(), `"request_id":"r-1","trace_id":"1-6789abcd-0123456789abcdef01234567"`) {
		t.Errorf("line without the trace id: %s", buf.String())
	}
}
