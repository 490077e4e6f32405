package httpapi_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mediacatalog/service/shared/httpapi"
)

// TestRequestLine: each request writes one JSON line with its fields in a fixed order,
// the request id the same as the one of the request's own logger; a handler that calls
// LogErrorsOnly (the avatar route) writes it only for a status of 400 or more.
func TestRequestLine(t *testing.T) {
	tests := []struct {
		name       string
		errorsOnly bool
		status     int
		wantLine   bool
	}{
		{"200", false, http.StatusOK, true},
		{"404", false, http.StatusNotFound, true},
		{"errors only, 200", true, http.StatusOK, false},
		{"errors only, 304", true, http.StatusNotModified, false},
		{"errors only, 404", true, http.StatusNotFound, true},
		{"errors only, 500", true, http.StatusInternalServerError, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			h := httpapi.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.errorsOnly {
					httpapi.LogErrorsOnly(r)
				}
				httpapi.Logger(r.Context()).Info("inside")
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte("abc"))
			}), httpapi.Options{Log: slog.New(slog.NewJSONHandler(&logs, nil))})
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/user/avatar/3?code=secret", nil))

			lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
			var inside struct {
				Msg       string
				RequestID string `json:"request_id"`
			}
			if err := json.Unmarshal([]byte(lines[0]), &inside); err != nil || inside.Msg != "inside" || inside.RequestID == "" {
				t.Fatalf("the handler's line %s", lines[0])
			}
			if !tc.wantLine {
				if len(lines) != 1 {
					t.Errorf("a request line: %s", lines[1:])
				}
				return
			}
			if len(lines) != 2 {
				t.Fatalf("%d lines, want the handler's and the request line:\n%s", len(lines), logs.String())
			}
			var keys []string
			dec := json.NewDecoder(strings.NewReader(lines[1]))
			dec.UseNumber()
			var fields map[string]any
			if err := json.Unmarshal([]byte(lines[1]), &fields); err != nil {
				t.Fatal(err)
			}
			if _, err := dec.Token(); err != nil {
				t.Fatal(err)
			}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					t.Fatal(err)
				}
				keys = append(keys, k.(string))
				var v any
				if err := dec.Decode(&v); err != nil {
					t.Fatal(err)
				}
			}
			if got, want := strings.Join(keys, ","), "time,level,msg,request_id,method,path,status,bytes,duration_ms"; got != want {
				t.Errorf("fields %s, want %s", got, want)
			}
			if fields["msg"] != "request" || fields["level"] != "INFO" || fields["request_id"] != inside.RequestID ||
				fields["method"] != "GET" || fields["path"] != "/user/avatar/3" || fields["status"] != float64(tc.status) || fields["bytes"] != float64(3) {
				t.Errorf("request line %s", lines[1])
			}
		})
	}
}

// TestVary: every answer through the middleware names Accept-Encoding (Compress) and
// Origin (CORS) in Vary, in one line when nothing else set Vary before them, and keeps
// what a handler adds after them.
func TestVary(t *testing.T) {
	for _, tc := range []struct {
		name    string
		handler string // a Vary the handler adds
		want    []string
	}{
		{"middleware only", "", []string{"Accept-Encoding, Origin"}},
		{"and the handler's", "Cookie", []string{"Accept-Encoding, Origin", "Cookie"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := httpapi.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.handler != "" {
					w.Header().Add("Vary", tc.handler)
				}
				w.Header().Set("Content-Type", "image/jpeg")
				_, _ = w.Write([]byte("abc"))
			}), httpapi.Options{Log: slog.New(slog.DiscardHandler)})
			for _, accept := range []string{"", "gzip"} {
				rec := httptest.NewRecorder()
				req := httptest.NewRequest(http.MethodGet, "/user/avatar/3", nil)
				req.Header.Set("Accept-Encoding", accept)
				h.ServeHTTP(rec, req)
				if got := rec.Header()["Vary"]; strings.Join(got, "|") != strings.Join(tc.want, "|") {
					t.Errorf("Accept-Encoding %q: Vary %q, want %q", accept, got, tc.want)
				}
			}
		})
	}
}
