package httpapi

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/cespare/xxhash/v2"
)

// How long browsers and shared caches (CloudFront, any proxy) may keep an answer: the
// one place of the service's Cache-Control values. docs/behaviour.md has the table.
//
// Every answer starts as CachePrivate (privateByDefault): authenticated answers,
// writes, redirects and errors raised before a route is chosen stay there. A public
// read route declares its policy with Public, which decides by the answer's status.
const (
	// CachePrivate is every answer that no shared cache may keep: authenticated ones,
	// writes, 5xx, and anything carrying Set-Cookie.
	CachePrivate = "private, no-store"
	// CacheCatalog is a public catalog read: browsers a minute, the edge four minutes,
	// then one more in the background while it revalidates, so a catalog change is
	// seen within five minutes; during an origin failure the edge keeps serving what
	// it has for a day.
	CacheCatalog = "public, max-age=60, s-maxage=240, stale-while-revalidate=60, stale-if-error=86400"
	// CacheRandom is GET /publisher/random: every request is a new draw, so neither a
	// browser nor the edge reuses an answer while the origin answers (max-age and
	// s-maxage 0: a cache revalidates each time, and a 304 says the draw came out the
	// same); any publisher is a right answer, so during an origin failure the edge may
	// serve the last draw for a day.
	CacheRandom = "public, max-age=0, s-maxage=0, stale-if-error=86400"
	// CacheAvatar is a profile image: URLs are not versioned, so browsers keep it five
	// minutes; CloudFront a day, since a change invalidates its copies.
	CacheAvatar = "public, max-age=300, s-maxage=86400, stale-while-revalidate=60, stale-if-error=86400"
	// CacheAvatarUnconfirmed is a profile image the cdn serves from its container while
	// the database cannot confirm it is still the user's: a minute everywhere, so
	// caches ask again soon after the database is back.
	CacheAvatarUnconfirmed = "public, max-age=60, s-maxage=60"
	// CacheMissing is a public read's 4xx (404 of an unknown id or slug, 400 of a
	// malformed query): short, so that what is created is found within a minute, and
	// never served stale.
	CacheMissing = "public, max-age=60, s-maxage=60"
)

// Header values made once; Header.Set and Add never write into a value they find.
var (
	cachePrivate = []string{CachePrivate}
	cacheMissing = []string{CacheMissing}
)

// privateByDefault makes CachePrivate every answer's Cache-Control until a route says
// otherwise (Public), so that no answer is cacheable unless declared so.
func privateByDefault(next http.Handler, _ *Options) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Cache-Control"] = cachePrivate
		next.ServeHTTP(w, r)
	})
}

// Public serves a public read route under the Cache-Control value policy (one of the
// Cache constants), by the answer's status:
//   - 2xx: policy, with an ETag. A handler that sets its own ETag before answering
//     (the avatars) answers conditional requests itself and is passed through; any
//     other answer is held, given a weak ETag of its bytes (weak: the same ETag names
//     the gzip and the plain form, Compress) and written by http.ServeContent, whose
//     conditional-request logic answers a matching If-None-Match with 304 and HEAD
//     without a body. Range is not served: the answer is always whole (ServeWhole).
//   - 4xx: CacheMissing, with an ETag.
//   - 5xx: CachePrivate (never cached; CloudFront serves its stale copy instead).
//
// An answer carrying Set-Cookie is CachePrivate whatever its status: a shared cache
// would hand the cookie to everyone.
func Public(policy string, next http.Handler) http.Handler {
	value := []string{policy}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pw := &publicWriter{ResponseWriter: w, policy: value}
		next.ServeHTTP(pw, r)
		pw.finish(r)
	})
}

// publicWriter decides an answer's caching when its status is known (WriteHeader or
// the first Write), then either passes the answer through or holds it for finish.
type publicWriter struct {
	http.ResponseWriter
	policy  []string
	status  int
	decided bool
	held    *bytes.Buffer // the body of a held answer
}

var heldBodies = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func (w *publicWriter) WriteHeader(code int) {
	if w.decided || code < http.StatusOK {
		if !w.decided {
			w.ResponseWriter.WriteHeader(code) // informational: the answer follows
		}
		return
	}
	w.decided = true
	w.status = code
	h := w.Header()
	switch {
	case h["Set-Cookie"] != nil || code >= http.StatusInternalServerError:
		h["Cache-Control"] = cachePrivate
	case code == http.StatusNotModified || (code < http.StatusMultipleChoices && h["Etag"] != nil):
		// The handler answers conditional requests itself. It may have chosen a
		// shorter public lifetime for this one answer (the cdn's picture that the
		// database could not confirm); otherwise the route's policy.
		if v := h["Cache-Control"]; len(v) != 1 || !strings.HasPrefix(v[0], "public") {
			h["Cache-Control"] = w.policy
		}
	case code >= http.StatusMultipleChoices && code < http.StatusBadRequest:
		h["Cache-Control"] = cachePrivate // a redirect is no public read's answer
	default:
		w.held = heldBodies.Get().(*bytes.Buffer)
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *publicWriter) Write(b []byte) (int, error) {
	if !w.decided {
		w.WriteHeader(http.StatusOK)
	}
	if w.held != nil {
		return w.held.Write(b)
	}
	return w.ResponseWriter.Write(b)
}

// ReadFrom keeps io.ReaderFrom visible to http.ServeContent's copy (copyBody).
func (w *publicWriter) ReadFrom(src io.Reader) (int64, error) {
	if !w.decided {
		w.WriteHeader(http.StatusOK)
	}
	if w.held != nil {
		return w.held.ReadFrom(src)
	}
	return copyBody(w.ResponseWriter, src)
}

func (w *publicWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// finish writes a held answer.
func (w *publicWriter) finish(r *http.Request) {
	if w.held == nil {
		return
	}
	body := w.held
	defer func() {
		w.held = nil
		body.Reset()
		heldBodies.Put(body)
	}()
	h := w.Header()
	if h["Set-Cookie"] != nil { // set after the first write, still unsent
		h["Cache-Control"] = cachePrivate
		w.ResponseWriter.WriteHeader(w.status)
		_, _ = w.ResponseWriter.Write(body.Bytes())
		return
	}
	h["Etag"] = []string{etagOf(body.Bytes())}
	if w.status != http.StatusOK {
		h["Cache-Control"] = cacheMissing
		if w.status < http.StatusBadRequest {
			h["Cache-Control"] = w.policy // another 2xx
		}
		w.ResponseWriter.WriteHeader(w.status)
		_, _ = w.ResponseWriter.Write(body.Bytes())
		return
	}
	h["Cache-Control"] = w.policy
	ServeWhole(w.ResponseWriter, r, body.Bytes())
}

// ServeWhole writes body as a 200 through http.ServeContent, whose conditional-request
// logic answers an If-None-Match naming the ETag already set (weak comparison, "*"
// included) with 304, keeping ETag and Cache-Control. No answer of the API is served
// in parts: the Range header is dropped, so the answer is the whole body, and the
// Accept-Ranges: bytes that ServeContent adds is removed, so that no client or cache
// is told it could ask for a range. A JSON answer is gzipped when the client accepts it
// (Compress), and a byte range of a compressed body is a range of the gzip stream, not
// of the JSON; a picture is at most a 512-pixel rendition, which gains nothing from
// parts; and an unsatisfiable range would be a plain-text 416 beside the Response
// Model. CloudFront still answers a viewer's range from the whole object it holds.
func ServeWhole(w http.ResponseWriter, r *http.Request, body []byte) {
	if r.Header.Get("Range") != "" {
		whole := *r
		whole.Header = r.Header.Clone()
		whole.Header.Del("Range")
		r = &whole
	}
	http.ServeContent(&wholeWriter{w}, r, "", time.Time{}, bytes.NewReader(body))
}

// wholeWriter removes ServeContent's Accept-Ranges before the header is sent.
type wholeWriter struct{ http.ResponseWriter }

func (w *wholeWriter) WriteHeader(code int) {
	delete(w.Header(), "Accept-Ranges")
	w.ResponseWriter.WriteHeader(code)
}

// ReadFrom keeps the wrapped writer's io.ReaderFrom visible to ServeContent's copy
// (copyBody); ServeContent has written the header by then.
func (w *wholeWriter) ReadFrom(src io.Reader) (int64, error) { return copyBody(w.ResponseWriter, src) }

func (w *wholeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// etagOf is the weak ETag of a JSON answer: xxHash's 64 bits of its bytes (cespare/xxhash,
// which OpenTelemetry's attribute sets already link). An ETag needs no cryptographic
// hash: it only has to differ between two versions of one answer, and the same bytes
// give the same tag in every container; at an answer's size, a SHA-256 would be the
// costliest step of a public read's middleware.
func etagOf(body []byte) string {
	var sum [8]byte
	binary.BigEndian.PutUint64(sum[:], xxhash.Sum64(body))
	var tag [len(`W/""`) + 2*len(sum)]byte
	b := hex.AppendEncode(append(tag[:0], `W/"`...), sum[:])
	return string(append(b, '"'))
}
