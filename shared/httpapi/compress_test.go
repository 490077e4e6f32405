package httpapi_test

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mediacatalog/service/shared/httpapi"
)

func TestCompress(t *testing.T) {
	long := map[string]string{"data": strings.Repeat("publication ", 500)}
	short := map[string]string{"data": "ok"}
	jsonHandler := func(v any) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { httpapi.JSON(w, r, http.StatusOK, v) })
	}
	image := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Header().Set("ETag", `"0123456789abcdef"`)
		_, _ = w.Write(bytes.Repeat([]byte{0x89}, 4096))
	})
	served := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { // as the cdn serves a picture
		w.Header().Set("Content-Type", "image/jpeg")
		w.Header().Set("ETag", `"0123456789abcdef"`)
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(bytes.Repeat([]byte{0xff, 0xd8}, 20000)))
	})
	notModified := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNotModified) })
	tests := []struct {
		name, accept string
		h            http.Handler
		status       int
		gzipped      bool
	}{
		{"long JSON, gzip accepted", "gzip, deflate, br", jsonHandler(long), 200, true},
		{"long JSON, gzip with q", "br;q=1.0, gzip;q=0.5", jsonHandler(long), 200, true},
		{"long JSON, any encoding", "*", jsonHandler(long), 200, true},
		{"long JSON, gzip refused", "gzip;q=0", jsonHandler(long), 200, false},
		{"long JSON, no Accept-Encoding", "", jsonHandler(long), 200, false},
		{"long JSON, other encodings only", "br, deflate", jsonHandler(long), 200, false},
		{"long JSON, zstd first, gzip too", "zstd, br, gzip", jsonHandler(long), 200, true},
		{"long JSON, zstd only", "zstd", jsonHandler(long), 200, false},
		{"long text", "gzip", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			_, _ = io.WriteString(w, long["data"])
		}), 200, true},
		{"short JSON", "gzip", jsonHandler(short), 200, false},
		{"image", "gzip", image, 200, false},
		{"image through ServeContent", "gzip, deflate, br", served, 200, false},
		{"not modified", "gzip", notModified, 304, false},
		{"error status keeps its status", "gzip", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			httpapi.JSON(w, r, http.StatusBadRequest, long)
		}), 400, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			plain := httptest.NewRecorder()
			tc.h.ServeHTTP(plain, httptest.NewRequest(http.MethodGet, "/", nil))

			req := httptest.NewRequest(http.MethodGet, "/", nil)
			if tc.accept != "" {
				req.Header.Set("Accept-Encoding", tc.accept)
			}
			rec := httptest.NewRecorder()
			httpapi.Compress(tc.h).ServeHTTP(rec, req)
			if rec.Code != tc.status {
				t.Errorf("status %d, want %d", rec.Code, tc.status)
			}
			if got := rec.Header().Get("Vary"); got != "Accept-Encoding" {
				t.Errorf("Vary %q", got)
			}
			if got, want := rec.Header().Get("ETag"), plain.Header().Get("ETag"); got != want {
				t.Errorf("ETag %q, want the plain answer's %q", got, want)
			}
			body := rec.Body.Bytes()
			if enc := rec.Header().Get("Content-Encoding"); (enc == "gzip") != tc.gzipped {
				t.Fatalf("Content-Encoding %q, want gzip: %v", enc, tc.gzipped)
			}
			if tc.gzipped {
				if len(body) >= plain.Body.Len() {
					t.Errorf("compressed %d bytes, plain %d", len(body), plain.Body.Len())
				}
				zr, err := gzip.NewReader(bytes.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				if body, err = io.ReadAll(zr); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(body, plain.Body.Bytes()) {
				t.Errorf("body differs from the uncompressed answer: %d bytes, want %d", len(body), plain.Body.Len())
			}
		})
	}
}

// BenchmarkCompress is the gzip of a large list through Compress: 10,000
// publisher-shaped objects (about 3 MB of JSON, as an unpaged GET /publishers of 10k
// publishers), for a client that accepts gzip; it reports the plain and the gzipped
// size and what the gzipped one would be Base64-encoded in a Lambda answer.
func BenchmarkCompress(b *testing.B) {
	type publisher struct {
		ID           int64    `json:"id"`
		Name         string   `json:"name"`
		Slug         string   `json:"slug"`
		Image        string   `json:"image"`
		Website      string   `json:"website"`
		Country      string   `json:"country"`
		Domain       string   `json:"domain"`
		Descriptions []string `json:"descriptions"`
	}
	list := make([]publisher, 10000)
	for i := range list {
		n := strconv.Itoa(i)
		list[i] = publisher{int64(i + 1), "Publisher " + n, "publisher-" + n, "https://images.example.com/publishers/" + n + ".webp",
			"https://www.publisher-" + n + ".example.com/", "JP", "publisher-" + n + ".example.com",
			[]string{"A publisher of manga and light novels founded in " + strconv.Itoa(1900+i%120) + ", number " + n + " of the catalog."}}
	}
	h := httpapi.Compress(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { httpapi.JSON(w, r, http.StatusOK, list) }))
	req := httptest.NewRequest(http.MethodGet, "/publishers", nil)
	plain := httptest.NewRecorder()
	h.ServeHTTP(plain, req)
	req.Header.Set("Accept-Encoding", "gzip")
	var gz int
	b.ReportAllocs()
	for b.Loop() {
		s := &sink{header: http.Header{}}
		h.ServeHTTP(s, req)
		if s.header.Get("Content-Encoding") != "gzip" {
			b.Fatal("not gzipped")
		}
		gz = s.n
	}
	b.ReportMetric(float64(plain.Body.Len())/1e6, "plain-MB")
	b.ReportMetric(float64(gz)/1e6, "gzip-MB")
	b.ReportMetric(float64(base64.StdEncoding.EncodedLen(gz))/1e6, "gzip-base64-MB")
}
