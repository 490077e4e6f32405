package httpapi

import (
	"bufio"
	"compress/gzip"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// Gzip compression of answers. net/http compresses nothing on the server side and the
// design card names no compression library, so this is our own, small: gzip from the
// standard library, for the JSON answers of a client that accepts it.
//
// A body shorter than gzipMinSize goes out as it is (compressing it would save nothing);
// a longer one is compressed while it is written, never held whole a second time. Under
// Lambda the API Gateway adapter (aws-lambda-go-api-proxy) sees the gzip bytes, which are
// never valid UTF-8 (the stream starts with 0x1f 0x8b), and sends them Base64-encoded
// with isBase64Encoded, as API Gateway expects of a binary body; API Gateway decodes it
// and passes Content-Encoding: gzip on to the client.

// gzipMinSize is the smallest body worth compressing.
const gzipMinSize = 1024

var gzipWriters = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(nil, gzip.DefaultCompression)
	return w
}}

// Compress gzips the answers of clients that accept gzip (Accept-Encoding), when the
// body is JSON or text of at least gzipMinSize bytes and not encoded already.
func Compress(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h := w.Header(); len(h["Vary"]) == 0 {
			h["Vary"] = varyAcceptEncoding
		} else {
			h.Add("Vary", "Accept-Encoding")
		}
		if r.Method == http.MethodHead || !acceptsGzip(r.Header.Get("Accept-Encoding")) {
			next.ServeHTTP(w, r)
			return
		}
		cw := &compressWriter{ResponseWriter: w}
		defer cw.finish()
		next.ServeHTTP(cw, r)
	})
}

func compressLayer(next http.Handler, _ *Options) http.Handler { return Compress(next) }

// varyAcceptEncoding is the Vary value of Compress, one slice for every response:
// Header.Add and Set never write into a value they find (Add appends to a slice of
// capacity 1, so copies it), and net/http copies the header before it is sent.
var varyAcceptEncoding = []string{"Accept-Encoding"}

// acceptsGzip reports whether an Accept-Encoding value allows gzip (gzip or *, without
// q=0).
func acceptsGzip(header string) bool {
	for rest := header; rest != ""; {
		var part string
		part, rest, _ = strings.Cut(rest, ",")
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		name = strings.ToLower(strings.TrimSpace(name))
		if name != "gzip" && name != "x-gzip" && name != "*" {
			continue
		}
		q := 1.0
		for _, p := range strings.Split(params, ";") {
			k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
			if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
				if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
					q = f
				}
			}
		}
		if q > 0 {
			return true
		}
	}
	return false
}

// compressWriter holds the status and the first bytes until it knows whether to
// compress: at gzipMinSize bytes, or at the end for a short body.
type compressWriter struct {
	http.ResponseWriter
	status  int
	buf     []byte
	decided bool
	gz      *gzip.Writer
}

func (w *compressWriter) WriteHeader(code int) {
	if w.status != 0 || w.decided {
		return
	}
	if code < http.StatusOK || code == http.StatusNoContent || code == http.StatusNotModified {
		// No body follows: nothing to compress.
		w.decided = true
		w.ResponseWriter.WriteHeader(code)
		return
	}
	w.status = code
}

func (w *compressWriter) Write(b []byte) (int, error) {
	if w.status == 0 && !w.decided {
		w.status = http.StatusOK
	}
	if !w.decided && !mayCompress(w.Header()) {
		// The headers already say it stays as it is (an image): holding its first
		// bytes back would only copy them.
		if err := w.decide(false); err != nil {
			return 0, err
		}
	}
	if w.decided {
		if w.gz != nil {
			return w.gz.Write(b)
		}
		return w.ResponseWriter.Write(b)
	}
	w.buf = append(w.buf, b...)
	if len(w.buf) >= gzipMinSize {
		if err := w.decide(true); err != nil {
			return 0, err
		}
	}
	return len(b), nil
}

// decide sends the header, compressed when the body is long enough and compressible,
// then what was held back.
func (w *compressWriter) decide(long bool) error {
	w.decided = true
	h := w.Header()
	if long && mayCompress(h) {
		h.Set("Content-Encoding", "gzip")
		h.Del("Content-Length")
		gz := gzipWriters.Get().(*gzip.Writer)
		gz.Reset(w.ResponseWriter)
		w.gz = gz
	}
	if w.status != 0 {
		w.ResponseWriter.WriteHeader(w.status)
	}
	buf := w.buf
	w.buf = nil
	if len(buf) == 0 {
		return nil
	}
	var err error
	if w.gz != nil {
		_, err = w.gz.Write(buf)
	} else {
		_, err = w.ResponseWriter.Write(buf)
	}
	return err
}

// finish sends what is still held back and ends the gzip stream.
func (w *compressWriter) finish() {
	if !w.decided {
		_ = w.decide(false)
	}
	if w.gz != nil {
		_ = w.gz.Close()
		gzipWriters.Put(w.gz)
		w.gz = nil
	}
}

// Flush sends what is compressed so far (streaming handlers).
func (w *compressWriter) Flush() {
	if !w.decided {
		_ = w.decide(len(w.buf) >= gzipMinSize)
	}
	if w.gz != nil {
		_ = w.gz.Flush()
	}
	// Through the writers beneath, each of which unwraps to the next.
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Hijack is not available once compressing; before, it passes through.
func (w *compressWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if w.decided {
		return nil, nil, http.ErrNotSupported
	}
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

// ReadFrom copies src through Write with a pooled buffer (copyBody), as http.ServeContent's
// copy does: hiding io.ReaderFrom would make io.Copy allocate a buffer per response.
func (w *compressWriter) ReadFrom(src io.Reader) (int64, error) { return copyBody(w, src) }

func (w *compressWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// mayCompress: the body is not encoded yet and its type is worth compressing.
func mayCompress(h http.Header) bool {
	return h.Get("Content-Encoding") == "" && compressible(h.Get("Content-Type"))
}

// compressible: JSON and text; images and other binary bodies are compressed already.
func compressible(contentType string) bool {
	ct := strings.ToLower(strings.TrimSpace(strings.SplitN(contentType, ";", 2)[0]))
	return ct == "application/json" || strings.HasSuffix(ct, "+json") || strings.HasPrefix(ct, "text/")
}
