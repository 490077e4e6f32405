package httpapi_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"

	"github.com/mediacatalog/service/shared/httpapi"
)

// sink is a response writer that keeps only the count of body bytes, so that what a
// request allocates is the middleware's and the handler's alone.
type sink struct {
	header http.Header
	status int
	n      int
}

func (s *sink) Header() http.Header { return s.header }
func (s *sink) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
}
func (s *sink) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	s.n += len(b)
	return len(b), nil
}

// TestServeContentThroughMiddleware: a body that http.ServeContent copies (an image of
// 37 KB) costs the middleware no buffer of its size per request, with and without a
// client that accepts gzip (a writer that hides io.ReaderFrom makes io.Copy allocate
// up to 32 KB per response, and a compress writer that copies the first bytes of a body
// it will never compress costs as much); the request line still logs status and size.
func TestServeContentThroughMiddleware(t *testing.T) {
	if raceDetector {
		t.Skip("under the race detector sync.Pool drops pooled buffers at random: the allocations measured are not the program's")
	}
	body := bytes.Repeat([]byte{0xff, 0xd8, 0x42}, 37569/3)
	var logs bytes.Buffer
	h := httpapi.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/jpeg")
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
	}), httpapi.Options{Log: slog.New(slog.NewJSONHandler(&logs, nil))})
	for _, accept := range []string{"", "gzip, deflate, br"} {
		t.Run("Accept-Encoding "+accept, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/user/avatar/3/high", nil)
			req.Header.Set("Accept-Encoding", accept)
			serve := func() *sink {
				s := &sink{header: http.Header{}}
				h.ServeHTTP(s, req)
				return s
			}
			logs.Reset()
			s := serve()
			if s.status != http.StatusOK || s.n != len(body) || s.header.Get("Content-Encoding") != "" {
				t.Fatalf("status %d, %d bytes, Content-Encoding %q; want 200, %d bytes, none", s.status, s.n, s.header.Get("Content-Encoding"), len(body))
			}
			var line struct{ Status, Bytes int }
			if err := json.Unmarshal(logs.Bytes(), &line); err != nil || line.Status != 200 || line.Bytes != len(body) {
				t.Errorf("request line %s: want status 200 and bytes %d", logs.String(), len(body))
			}
			const runs = 200
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for range runs {
				serve()
			}
			runtime.ReadMemStats(&after)
			if perRequest := (after.TotalAlloc - before.TotalAlloc) / runs; perRequest > 8<<10 {
				t.Errorf("%d bytes allocated per request, want well under the body's %d", perRequest, len(body))
			}
		})
	}
}
