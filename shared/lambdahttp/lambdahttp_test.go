package lambdahttp_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/mediacatalog/service/shared/httpapi"
	"github.com/mediacatalog/service/shared/lambdahttp"
)

// TestLambdaBodies: through the Lambda entry, a gzipped answer is Base64-encoded as API
// Gateway expects, a plain one is sent as text, and one over Lambda's payload limit is a
// 500 Response Model.
func TestLambdaBodies(t *testing.T) {
	list := func(n int) http.Handler {
		return httpapi.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			items := make([]string, n)
			for i := range items {
				items[i] = strings.Repeat("x", 10) + string(rune('a'+i%26))
			}
			httpapi.JSON(w, r, http.StatusOK, map[string]any{"items": items})
		}), httpapi.Options{})
	}
	tests := []struct {
		name, accept string
		items        int
		status       int
		base64, gzip bool
	}{
		{"gzip accepted", "gzip", 1000, 200, true, true},
		{"gzip not accepted", "", 1000, 200, false, false},
		{"compressed under the limit", "gzip", 1_000_000, 200, true, true},
		{"over the limit uncompressed", "", 1_000_000, 500, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			headers := map[string]string{}
			if tc.accept != "" {
				headers["accept-encoding"] = tc.accept
			}
			ev, err := json.Marshal(map[string]any{
				"version": "2.0", "routeKey": "$default", "rawPath": "/list", "headers": headers,
				"requestContext": map[string]any{"http": map[string]any{"method": "GET", "path": "/list"}},
			})
			if err != nil {
				t.Fatal(err)
			}
			resp, err := lambdahttp.Invoke(context.Background(), list(tc.items), ev)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.status || resp.IsBase64Encoded != tc.base64 {
				t.Fatalf("status %d, base64 %v; want %d, %v", resp.StatusCode, resp.IsBase64Encoded, tc.status, tc.base64)
			}
			if len(resp.Body) > lambdahttp.MaxResponseBody {
				t.Errorf("body of %d bytes over the limit", len(resp.Body))
			}
			body := []byte(resp.Body)
			if tc.base64 {
				if body, err = base64.StdEncoding.DecodeString(resp.Body); err != nil {
					t.Fatal(err)
				}
			}
			if tc.gzip {
				if resp.Headers["Content-Encoding"] != "gzip" {
					t.Errorf("headers %v", resp.Headers)
				}
				zr, err := gzip.NewReader(bytes.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				if body, err = io.ReadAll(zr); err != nil {
					t.Fatal(err)
				}
			}
			if tc.status == 500 {
				var m httpapi.Response
				if err := json.Unmarshal(body, &m); err != nil || m.Code != 500 {
					t.Errorf("body %.200s (%v), want a 500 Response Model", body, err)
				}
				return
			}
			var got struct{ Items []string }
			if err := json.Unmarshal(body, &got); err != nil || len(got.Items) != tc.items {
				t.Errorf("%d items (%v), want %d", len(got.Items), err, tc.items)
			}
		})
	}
}

// event is an API Gateway v2 event of GET path with headers (lower-case names, as API
// Gateway sends them).
func event(t *testing.T, path string, headers map[string]string) []byte {
	t.Helper()
	ev, err := json.Marshal(map[string]any{
		"version": "2.0", "routeKey": "$default", "rawPath": path, "headers": headers,
		"requestContext": map[string]any{"http": map[string]any{"method": "GET", "path": path, "sourceIp": "192.0.2.9"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// TestLambdaHeadersWhole: under Lambda a header with commas reaches the handlers whole,
// as net/http reads it, though the adapter splits it: gzip is chosen from any
// Accept-Encoding list that has it (CloudFront sends "br,gzip"), and an If-None-Match
// list that names the answer's ETag is a 304.
func TestLambdaHeadersWhole(t *testing.T) {
	h := httpapi.Wrap(httpapi.Public(httpapi.CacheCatalog, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		httpapi.JSON(w, r, http.StatusOK, map[string]string{"items": strings.Repeat("catalog ", 200)})
	})), httpapi.Options{})
	invoke := func(headers map[string]string) map[string]string {
		t.Helper()
		resp, err := lambdahttp.Invoke(context.Background(), h, event(t, "/list", headers))
		if err != nil {
			t.Fatal(err)
		}
		resp.Headers["status"] = strconv.Itoa(resp.StatusCode)
		return resp.Headers
	}
	for _, accept := range []string{"gzip", "gzip, deflate, br", "br,gzip", "deflate, gzip", "zstd, br, gzip"} {
		if got := invoke(map[string]string{"accept-encoding": accept})["Content-Encoding"]; got != "gzip" {
			t.Errorf("Accept-Encoding %q: Content-Encoding %q, want gzip", accept, got)
		}
	}
	if got := invoke(map[string]string{"accept-encoding": "br, deflate"})["Content-Encoding"]; got != "" {
		t.Errorf("Accept-Encoding without gzip: Content-Encoding %q", got)
	}
	etag := invoke(nil)["Etag"]
	if etag == "" {
		t.Fatal("no ETag")
	}
	for _, inm := range []string{etag, `W/"0000000000000000", ` + etag, etag + `,W/"0000000000000000"`} {
		if got := invoke(map[string]string{"if-none-match": inm})["status"]; got != "304" {
			t.Errorf("If-None-Match %q: %s, want 304", inm, got)
		}
	}
	if got := invoke(map[string]string{"if-none-match": `W/"0000000000000000", W/"1111111111111111"`})["status"]; got != "200" {
		t.Errorf("If-None-Match of other tags: %s, want 200", got)
	}
}

// TestLambdaTooLargeHeaders: the 500 that replaces an answer over the payload limit is
// private, and carries the Vary and CORS headers the frontend needs to read it.
func TestLambdaTooLargeHeaders(t *testing.T) {
	const origin = "https://app.example"
	h := httpapi.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		httpapi.JSON(w, r, http.StatusOK, map[string]string{"items": strings.Repeat("x", lambdahttp.MaxResponseBody)})
	}), httpapi.Options{CORSOrigins: []string{origin}})
	resp, err := lambdahttp.Invoke(context.Background(), h, event(t, "/list", map[string]string{"origin": origin}))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"Cache-Control":                    httpapi.CachePrivate,
		"Access-Control-Allow-Origin":      origin,
		"Access-Control-Allow-Credentials": "true",
	}
	if resp.StatusCode != 500 {
		t.Fatalf("status %d, want 500", resp.StatusCode)
	}
	for k, v := range want {
		if got := resp.Headers[k]; got != v {
			t.Errorf("%s %q, want %q (headers %v)", k, got, v, resp.Headers)
		}
	}
	if !strings.Contains(resp.Headers["Vary"], "Origin") {
		t.Errorf("Vary %q, want it to name Origin", resp.Headers["Vary"])
	}
}
