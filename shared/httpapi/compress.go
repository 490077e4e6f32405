package httpapi

import (
	"io"
	"net/http"
	"strings"

	"github.com/klauspost/compress/gzhttp"
)

// Gzip compression of answers, through klauspost/compress's gzhttp: for a client that
// accepts gzip (Accept-Encoding, "*" included), a JSON or text body of at least
// gzhttp.DefaultMinSize bytes, not encoded already, is compressed while it is written
// (a shorter one goes out as it is: compressing it would save nothing). Images and
// other binary bodies never are (compressible). The ETag stays as the handler set it:
// Public's are weak, naming the gzip and the plain form alike, as the two are the same
// representation to a cache that keys on Accept-Encoding (Vary).
//
// Under Lambda the API Gateway adapter (aws-lambda-go-api-proxy) sees the gzip bytes,
// which are never valid UTF-8 (the stream starts with 0x1f 0x8b), and sends them
// Base64-encoded with isBase64Encoded, as API Gateway expects of a binary body; API
// Gateway decodes it and passes Content-Encoding: gzip on to the client. Why the origin
// compresses rather than CloudFront alone: docs/architecture.md ("Compression").
var gzipWrapper = func() func(http.Handler) http.HandlerFunc {
	wrap, err := gzhttp.NewWrapper(
		gzhttp.ContentTypeFilter(compressible),
		// gzip alone: CloudFront's cache key normalizes Accept-Encoding to gzip and br
		// (template.yaml's cache policies), so no other encoding reaches the origin
		// through it, and one encoding is one cached copy.
		gzhttp.EnableZstd(false),
		gzhttp.AcceptWildcards(true), // "*" accepts gzip (RFC 9110, 12.5.3)
		gzhttp.SetContentType(false), // a handler's headers as it set them
	)
	if err != nil {
		panic(err) // the options are constants: a wrong one fails every test at once
	}
	return wrap
}()

// Compress gzips the answers of clients that accept gzip (gzipWrapper). Every answer
// names Accept-Encoding in Vary. A request that asks for no encoding at all (HEAD, or
// no Accept-Encoding: wrk, curl, a probe) goes straight to next, with no writer of
// gzhttp's between: what decides whether to compress would only pass its bytes on.
func Compress(next http.Handler) http.Handler {
	gz := gzipWrapper(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(&copyingWriter{w}, r)
	}))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead || r.Header.Get("Accept-Encoding") == "" {
			if h := w.Header(); len(h["Vary"]) == 0 {
				h["Vary"] = varyAcceptEncoding
			} else {
				h.Add("Vary", "Accept-Encoding")
			}
			next.ServeHTTP(w, r)
			return
		}
		gz(w, r)
	})
}

// copyingWriter gives gzhttp's writer, which has no io.ReaderFrom, the ReadFrom of the
// service's writers (copyBody): http.ServeContent's copy would otherwise allocate a
// buffer of up to 32 KB per answer, an image's whole size.
type copyingWriter struct{ http.ResponseWriter }

func (w *copyingWriter) ReadFrom(src io.Reader) (int64, error) {
	return copyBody(w.ResponseWriter, src)
}

func (w *copyingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func compressLayer(next http.Handler, _ *Options) http.Handler { return Compress(next) }

// varyAcceptEncoding is the Vary value of Compress, one slice for every response:
// Header.Add and Set never write into a value they find (Add appends to a slice of
// capacity 1, so copies it), and net/http copies the header before it is sent.
var varyAcceptEncoding = []string{"Accept-Encoding"}

// compressible: JSON and text; images and other binary bodies are compressed already.
func compressible(contentType string) bool {
	ct, _, _ := strings.Cut(contentType, ";")
	ct = strings.ToLower(strings.TrimSpace(ct))
	return ct == "application/json" || strings.HasSuffix(ct, "+json") || strings.HasPrefix(ct, "text/")
}
