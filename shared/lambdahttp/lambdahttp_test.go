package lambdahttp_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
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
