package httpapi_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mediacatalog/service/shared/httpapi"
)

// BenchmarkWrap is the cost of the shared middleware (request line logged as JSON to
// io.Discard) around a handler that serves a 4 KB image with http.ServeContent, as the
// avatar route does, for a client without and with gzip and with a request deadline
// already set (as Lambda and the local server give one), with the request line and
// without it (LogErrorsOnly, as the avatar route): time and allocations per request.
func BenchmarkWrap(b *testing.B) {
	body := bytes.Repeat([]byte{0xff, 0xd8, 0x42}, 3927/3)
	for _, tc := range []struct {
		name, accept string
		errorsOnly   bool
	}{{"line", "", false}, {"line/gzip", "gzip, deflate, br", false}, {"errors-only", "", true}} {
		h := httpapi.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if tc.errorsOnly {
				httpapi.LogErrorsOnly(r)
			}
			w.Header().Set("ETag", `"0123456789abcdef0123456789abcdef"`)
			w.Header().Set("Cache-Control", "public, max-age=300, s-maxage=86400")
			w.Header().Set("Content-Type", "image/jpeg")
			http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
		}), httpapi.Options{Log: slog.New(slog.NewJSONHandler(io.Discard, nil)), CORSOrigins: []string{"https://example.com"}, RequestTimeout: 20 * time.Second})
		accept := tc.accept
		b.Run(tc.name, func(b *testing.B) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
			defer cancel()
			req := httptest.NewRequest(http.MethodGet, "/user/avatar/3/scaled", nil).WithContext(ctx)
			req.Header.Set("Accept-Encoding", accept)
			b.ReportAllocs()
			for b.Loop() {
				s := &sink{header: http.Header{}}
				h.ServeHTTP(s, req)
				if s.status != http.StatusOK {
					b.Fatal(s.status)
				}
			}
		})
	}
}
