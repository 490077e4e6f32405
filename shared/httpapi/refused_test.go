package httpapi_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/httpapi"
)

// TestRefusalsRecorded: every 403 is an audit record (level AUDIT, msg audit, action
// refused) with the actor, the route, the target and the caller's address; other
// errors are not: a run of refusals is how an account probing the admin routes shows,
// so each lands where operators look.
func TestRefusalsRecorded(t *testing.T) {
	tests := []struct {
		name    string
		method  string
		target  string
		headers map[string]string
		err     error
		actor   int64
		record  string // "" for no audit record
	}{
		{"a rule's refusal", "POST", "/things/edit/7", nil,
			apperr.Wrap(apperr.Forbidden, apperr.MsgForbidden, errors.New("user 5 is not a full admin")), 5,
			`"actor_id":5,"action":"refused","route":"POST /things/edit/{id}","target":{"id":7},"reason":"user 5 is not a full admin","client_ip":"192.0.2.1"`},
		{"a refusal without a cause", "POST", "/things/edit/8", nil, apperr.New(apperr.Forbidden, apperr.MsgForbidden), 6,
			`"actor_id":6,"action":"refused","route":"POST /things/edit/{id}","target":{"id":8},"client_ip":"192.0.2.1"}`},
		{"a cross-site write, before anyone is known", "POST", "/things/edit/9",
			map[string]string{"Origin": "https://evil.example", "Cookie": "refreshToken=x"}, nil, 0,
			`"actor_id":0,"action":"refused","route":"POST /things/edit/9","target":{"id":0},"client_ip":"192.0.2.1"}`},
		{"refused before routing, a path with a right-to-left override", "POST", "/things/edit/%E2%80%AEx%0A",
			map[string]string{"Origin": "https://evil.example", "Cookie": "refreshToken=x"}, nil, 0,
			`"route":"POST /things/edit/%E2%80%AEx%0A"`},
		{"a 404 is no refusal", "POST", "/things/edit/10", nil, apperr.New(apperr.NotFound, "Thing not found"), 5, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			h := httpapi.Wrap(httpapi.NewMux([]httpapi.Route{{Pattern: "POST /things/edit/{id}", Handler: http.HandlerFunc(
				func(w http.ResponseWriter, r *http.Request) {
					r = r.WithContext(httpapi.WithActor(r.Context(), tt.actor))
					httpapi.Error(w, r, tt.err)
				})}}),
				httpapi.Options{Log: slog.New(slog.NewJSONHandler(&logs, nil)), CORSOrigins: []string{"https://mediacatalog.app"}})
			req := httptest.NewRequest(tt.method, tt.target, strings.NewReader(`{}`))
			req.Header.Set("Content-Type", "application/json")
			for k, v := range tt.headers {
				req.Header.Set(k, v)
			}
			h.ServeHTTP(httptest.NewRecorder(), req)
			var records []string
			for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
				var m map[string]any
				if json.Unmarshal([]byte(line), &m) == nil && m["msg"] == httpapi.AuditMessage {
					if m["level"] != "ERROR+8" { // httpapi.LevelAudit, named AUDIT by the functions' logger
						t.Errorf("record at level %v", m["level"])
					}
					records = append(records, line)
				}
			}
			switch {
			case tt.record == "" && len(records) != 0:
				t.Errorf("records %v, want none", records)
			case tt.record != "" && (len(records) != 1 || !strings.Contains(records[0], tt.record)):
				t.Errorf("records %v, want one with %s", records, tt.record)
			}
		})
	}
}
