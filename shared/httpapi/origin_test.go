package httpapi_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mediacatalog/service/shared/httpapi"
)

// TestGuardWrites drives the shared middleware with a handler that records whether it
// ran: writes with cookies from anywhere but the frontend are 403, bodies that are not
// JSON 400, and everything else reaches the handler.
func TestGuardWrites(t *testing.T) {
	const frontend, partner = "https://mediacatalog.app", "https://admin.partner.example"
	var reached bool
	h := httpapi.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached = true
		httpapi.OK(w, r, "done")
	}), httpapi.Options{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), CORSOrigins: []string{frontend, partner}})

	const cookie = "refreshToken=abc"
	const jsonType = "application/json"
	tests := []struct {
		name        string
		method      string
		cookie      string
		origin      string
		site        string // Sec-Fetch-Site
		contentType string
		body        string
		status      int
		msg         string
	}{
		{"frontend write", "POST", cookie, frontend, "same-site", jsonType, `{}`, 200, "done"},
		{"frontend write, origin with a trailing slash", "POST", cookie, frontend + "/", "same-site", jsonType, `{}`, 200, "done"},
		{"another allowed origin", "DELETE", cookie, partner, "", "", "", 200, "done"},
		{"JSON with a charset", "POST", cookie, frontend, "same-site", "application/json; charset=utf-8", `{}`, 200, "done"},
		{"JSON in capitals", "POST", cookie, frontend, "same-site", "Application/JSON", `{}`, 200, "done"},
		{"no browser headers (a script, an internal service)", "POST", cookie, "", "", jsonType, `{}`, 200, "done"},
		{"same-origin", "POST", cookie, "https://api.mediacatalog.app", "same-origin", jsonType, `{}`, 200, "done"},
		{"user-initiated (none)", "POST", cookie, "", "none", jsonType, `{}`, 200, "done"},
		{"no cookie, no body: the cdn's public change route", "POST", "", "", "", "", "", 200, "done"},
		{"no cookie, cross-site: nothing to abuse", "POST", "", "https://evil.example", "cross-site", "", "", 200, "done"},
		{"reads are not concerned", "GET", cookie, "https://evil.example", "cross-site", "", "", 200, "done"},

		{"cross-site", "POST", cookie, frontend, "cross-site", jsonType, `{}`, 403, "Forbidden"},
		{"cross-site delete without origin", "DELETE", cookie, "", "cross-site", "", "", 403, "Forbidden"},
		{"same-site from a staging host", "POST", cookie, "https://staging.mediacatalog.app", "same-site", "text/plain", `{}`, 403, "Forbidden"},
		{"same-site without an origin", "POST", cookie, "", "same-site", jsonType, `{}`, 403, "Forbidden"},
		{"foreign origin without fetch metadata", "POST", cookie, "https://evil.example", "", jsonType, `{}`, 403, "Forbidden"},
		{"origin null", "DELETE", cookie, "null", "", "", "", 403, "Forbidden"},
		{"origin differing in scheme", "POST", cookie, "http://mediacatalog.app", "", jsonType, `{}`, 403, "Forbidden"},

		{"text/plain body", "POST", cookie, frontend, "same-site", "text/plain", `{"name":"x"}`, 400, httpapi.MsgJSONOnly},
		{"form body", "POST", "", "", "", "application/x-www-form-urlencoded", `name=x`, 400, httpapi.MsgJSONOnly},
		{"body without a content type", "POST", cookie, "", "", "", `{}`, 400, httpapi.MsgJSONOnly},
		{"malformed content type", "POST", cookie, "", "", "application/json;;", `{}`, 400, httpapi.MsgJSONOnly},
		{"JSON-like type", "POST", cookie, "", "", "application/jsonp", `{}`, 400, httpapi.MsgJSONOnly},
		{"text/plain without a body", "POST", cookie, frontend, "same-site", "text/plain", "", 200, "done"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reached = false
			req := httptest.NewRequest(tt.method, "/x", strings.NewReader(tt.body))
			for k, v := range map[string]string{"Cookie": tt.cookie, "Origin": tt.origin, "Sec-Fetch-Site": tt.site, "Content-Type": tt.contentType} {
				if v != "" {
					req.Header.Set(k, v)
				}
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			var body httpapi.Response
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatalf("body %q is not a Response Model", rec.Body.String())
			}
			if rec.Code != tt.status || body.Data != tt.msg || body.Code != tt.status {
				t.Fatalf("%d %+v, want %d %q", rec.Code, body, tt.status, tt.msg)
			}
			if reached != (tt.status == 200) {
				t.Errorf("handler reached: %v", reached)
			}
		})
	}
}
