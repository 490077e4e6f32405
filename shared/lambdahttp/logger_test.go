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
