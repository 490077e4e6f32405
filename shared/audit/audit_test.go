package audit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mediacatalog/service/shared/audit"
	"github.com/mediacatalog/service/shared/auth"
	"github.com/mediacatalog/service/shared/httpapi"
)

func TestValue(t *testing.T) {
	long := strings.Repeat("a", 6000)
	tests := []struct {
		name, in, want string
	}{
		{"plain", "jane-doe", "jane-doe"},
		{"right-to-left override", "adm\u202eni", `adm\u{202E}ni`},
		{"zero-width space and joiner", "ad\u200bmin\u200d", `ad\u{200B}min\u{200D}`},
		{"newline and escape", "a\nb\x1b[31m", `a\u{000A}b\u{001B}[31m`},
		{"backslash is escaped too", `a\u{000A}`, `a\\u{000A}`},
		{"invalid UTF-8", "a\xffb", "a\ufffdb"},
		{"long", long, strings.Repeat("a", audit.MaxValue) + "…(+5800)"},
		{"exactly the bound", long[:audit.MaxValue], long[:audit.MaxValue]},
		{"letters of other scripts stay", "Émile Ωmega 日本", "Émile Ωmega 日本"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := audit.Value(tt.in); got != tt.want {
				t.Errorf("Value(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestRecordBoundsValues: every text value of a record, in groups and lists too, is
// bounded and escaped, so a 6,000-character name with a bidirectional override
// becomes at most MaxValue characters plus the count.
func TestRecordBoundsValues(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	h := httpapi.Wrap(httpapi.NewMux([]httpapi.Route{{Pattern: "GET /x", Handler: httpapiHandler(func(ctx context.Context) {
		name := "adm\u202eni" + strings.Repeat("x", 6000)
		audit.Record(ctx, "user.edit", "user", 7,
			audit.Change("username", "old\nname", name),
			slog.Any("names", []string{name}),
			slog.String("plain", "ok"))
	})}}), httpapi.Options{Log: log})
	req := httptest.NewRequest("GET", "/x", nil)
	req = req.WithContext(auth.WithPrincipal(req.Context(), auth.Principal{UserID: 5}))
	h.ServeHTTP(httptest.NewRecorder(), req)
	var rec struct {
		Msg     string `json:"msg"`
		Actor   int64  `json:"actor_id"`
		Changes struct {
			Username struct{ Before, After string }
			Names    []string
			Plain    string
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if strings.Contains(line, `"msg":"audit"`) {
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := `adm\u{202E}ni` + strings.Repeat("x", audit.MaxValue-6) + "…(+5806)"
	if rec.Actor != 5 || rec.Changes.Username.Before != `old\u{000A}name` || rec.Changes.Username.After != want ||
		len(rec.Changes.Names) != 1 || rec.Changes.Names[0] != want || rec.Changes.Plain != "ok" {
		t.Errorf("record %+v\nlogs %s", rec, buf.String())
	}
}

type httpapiHandler func(ctx context.Context)

func (f httpapiHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f(r.Context())
	w.WriteHeader(200)
}
