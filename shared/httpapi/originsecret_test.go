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

const (
	secretNow  = "current-origin-secret-0123456789abcdef"
	secretPrev = "previous-origin-secret-0123456789abcdef"
)

// TestOriginSecret: with secrets configured, a request passes only with the current or
// the previous value of X-Origin-Verify (a rotation), else it is a 403 Response Model
// recorded as a refusal; the Internal route passes without it; the header never reaches
// a handler. The viewer's address of CloudFront-Viewer-Address is the caller's address
// only beside a valid secret, and only as one public address: two values (a viewer's
// own beside CloudFront's, as two lines or joined with a comma) or an address no viewer
// reaches CloudFront from are not CloudFront's, and leave the connection's address, as
// it is without the secret, or without secrets configured, whatever the request says.
func TestOriginSecret(t *testing.T) {
	tests := []struct {
		name    string
		secrets []string
		method  string
		path    string
		header  map[string][]string
		status  int
		client  string // ClientIP the handler sees
	}{
		{"no secrets configured", nil, "GET", "/tags", nil, 200, "192.0.2.1"},
		{"no secrets configured, a forged viewer", nil, "GET", "/tags",
			map[string][]string{"Cloudfront-Viewer-Address": {"198.51.100.7:443"}}, 200, "192.0.2.1"},
		{"no secret sent", []string{secretNow}, "GET", "/tags", nil, 403, ""},
		{"a wrong secret", []string{secretNow}, "GET", "/tags", map[string][]string{"X-Origin-Verify": {"guess"}}, 403, ""},
		{"the secret's prefix", []string{secretNow}, "GET", "/tags", map[string][]string{"X-Origin-Verify": {secretNow[:20]}}, 403, ""},
		{"the secret twice", []string{secretNow}, "GET", "/tags", map[string][]string{"X-Origin-Verify": {secretNow, secretNow}}, 403, ""},
		{"the previous secret, not rotating", []string{secretNow}, "GET", "/tags", map[string][]string{"X-Origin-Verify": {secretPrev}}, 403, ""},
		{"the current secret", []string{secretNow, secretPrev}, "GET", "/tags", map[string][]string{"X-Origin-Verify": {secretNow}}, 200, "192.0.2.1"},
		{"the previous secret, rotating", []string{secretNow, secretPrev}, "GET", "/tags", map[string][]string{"X-Origin-Verify": {secretPrev}}, 200, "192.0.2.1"},
		{"an unknown path without the secret", []string{secretNow}, "GET", "/no/such/route", nil, 403, ""},
		{"the internal route without the secret", []string{secretNow}, "POST", "/user/avatar/change/3", nil, 200, "192.0.2.1"},
		{"the internal route, a forged viewer", []string{secretNow}, "POST", "/user/avatar/change/3",
			map[string][]string{"Cloudfront-Viewer-Address": {"198.51.100.7:443"}}, 200, "192.0.2.1"},
		{"another method on the internal path", []string{secretNow}, "GET", "/user/avatar/change/3", nil, 403, ""},
		{"a forged viewer without the secret", []string{secretNow}, "GET", "/tags",
			map[string][]string{"Cloudfront-Viewer-Address": {"198.51.100.7:443"}}, 403, ""},
		{"the viewer, IPv4", []string{secretNow}, "GET", "/tags",
			map[string][]string{"X-Origin-Verify": {secretNow}, "Cloudfront-Viewer-Address": {"198.51.100.7:46532"}}, 200, "198.51.100.7"},
		{"the viewer, IPv6", []string{secretNow}, "GET", "/tags",
			map[string][]string{"X-Origin-Verify": {secretNow}, "Cloudfront-Viewer-Address": {"2001:db8:85a3::8a2e:370:7334:46532"}}, 200, "2001:db8:85a3::8a2e:370:7334"},
		{"the viewer, IPv6 bracketed", []string{secretNow}, "GET", "/tags",
			map[string][]string{"X-Origin-Verify": {secretNow}, "Cloudfront-Viewer-Address": {"[2001:db8::1]:443"}}, 200, "2001:db8::1"},
		{"the viewer, IPv4-mapped", []string{secretNow}, "GET", "/tags",
			map[string][]string{"X-Origin-Verify": {secretNow}, "Cloudfront-Viewer-Address": {"[::ffff:198.51.100.7]:443"}}, 200, "198.51.100.7"},
		{"the viewer, not an address", []string{secretNow}, "GET", "/tags",
			map[string][]string{"X-Origin-Verify": {secretNow}, "Cloudfront-Viewer-Address": {"evil:1"}}, 200, "192.0.2.1"},
		{"the viewer without a port", []string{secretNow}, "GET", "/tags",
			map[string][]string{"X-Origin-Verify": {secretNow}, "Cloudfront-Viewer-Address": {"198.51.100.7"}}, 200, "192.0.2.1"},
		{"a viewer's own address before CloudFront's", []string{secretNow}, "GET", "/tags",
			map[string][]string{"X-Origin-Verify": {secretNow}, "Cloudfront-Viewer-Address": {"198.51.100.66:1234", "198.51.100.7:46532"}}, 200, "192.0.2.1"},
		{"a viewer's own address joined to CloudFront's", []string{secretNow}, "GET", "/tags",
			map[string][]string{"X-Origin-Verify": {secretNow}, "Cloudfront-Viewer-Address": {"198.51.100.66:1234, 198.51.100.7:46532"}}, 200, "192.0.2.1"},
		{"a loopback viewer", []string{secretNow}, "GET", "/tags",
			map[string][]string{"X-Origin-Verify": {secretNow}, "Cloudfront-Viewer-Address": {"127.0.0.1:443"}}, 200, "192.0.2.1"},
		{"a private viewer", []string{secretNow}, "GET", "/tags",
			map[string][]string{"X-Origin-Verify": {secretNow}, "Cloudfront-Viewer-Address": {"10.1.2.3:443"}}, 200, "192.0.2.1"},
		{"a private viewer, IPv4-mapped", []string{secretNow}, "GET", "/tags",
			map[string][]string{"X-Origin-Verify": {secretNow}, "Cloudfront-Viewer-Address": {"[::ffff:192.168.0.9]:443"}}, 200, "192.0.2.1"},
		{"a link-local viewer, IPv6", []string{secretNow}, "GET", "/tags",
			map[string][]string{"X-Origin-Verify": {secretNow}, "Cloudfront-Viewer-Address": {"fe80::1:443"}}, 200, "192.0.2.1"},
		{"a unique-local viewer, IPv6", []string{secretNow}, "GET", "/tags",
			map[string][]string{"X-Origin-Verify": {secretNow}, "Cloudfront-Viewer-Address": {"[fd00::7]:443"}}, 200, "192.0.2.1"},
		{"the unspecified viewer", []string{secretNow}, "GET", "/tags",
			map[string][]string{"X-Origin-Verify": {secretNow}, "Cloudfront-Viewer-Address": {"0.0.0.0:443"}}, 200, "192.0.2.1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			var seen, secretSeen string
			see := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				seen = httpapi.ClientIP(r)
				secretSeen = r.Header.Get(httpapi.OriginSecretHeader)
				httpapi.OK(w, r, "Success")
			})
			mux := httpapi.NewMux([]httpapi.Route{
				{Pattern: "GET /tags", Handler: see},
				{Pattern: "POST /user/avatar/change/{id}", Handler: see, Internal: true},
			})
			h := httpapi.Wrap(mux, httpapi.Options{Log: slog.New(slog.NewJSONHandler(&logs, nil)),
				OriginSecrets: tc.secrets, OriginExempt: []string{"POST /user/avatar/change/{id}"}})
			req := httptest.NewRequest(tc.method, tc.path, nil)
			for k, vs := range tc.header {
				req.Header[k] = vs
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tc.status {
				t.Fatalf("%d %s, want %d", rec.Code, rec.Body, tc.status)
			}
			if tc.status == 403 {
				var body httpapi.Response
				if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body != (httpapi.Response{Data: "Forbidden", Code: 403}) {
					t.Errorf("body %s, want the Response Model of a 403", rec.Body)
				}
				if seen != "" {
					t.Error("the handler ran")
				}
				if !strings.Contains(logs.String(), `"action":"refused"`) || !strings.Contains(logs.String(), `"client_ip":"192.0.2.1"`) {
					t.Errorf("no refusal recorded with the connection's address: %s", logs.String())
				}
				if strings.Contains(logs.String(), secretNow) || strings.Contains(logs.String(), secretPrev) {
					t.Error("a secret in the logs")
				}
				return
			}
			if seen != tc.client {
				t.Errorf("ClientIP %q, want %q", seen, tc.client)
			}
			if secretSeen != "" {
				t.Error("the handler saw the origin secret")
			}
		})
	}
}
