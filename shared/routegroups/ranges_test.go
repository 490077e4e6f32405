package routegroups_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/lambdahttp"
)

// TestNoRanges walks the route table: no answer offers ranges (Accept-Ranges) or serves
// one (206, Content-Range), through the handler the local server serves and through
// the Lambda entry with each route's event from events/, with and without gzip. A
// public read asked for bytes=0-9 answers 200 with the whole body, the same as without
// Range.
func TestNoRanges(t *testing.T) {
	s := newServer(t, nil)
	evs := eventsByRoute(t)
	lambda := lambdahttp.Handler(s.h)
	for _, rt := range s.routes {
		ev, ok := evs[rt.Pattern]
		if !ok {
			t.Errorf("%s: no event in events/ to call it with", rt.Pattern)
			continue
		}
		if strings.HasPrefix(rt.Pattern, "GET /user/avatar/") { // a user of the test's database
			ev.RawPath = strings.Replace(ev.RawPath, "/3", "/"+strconv.FormatInt(s.userID, 10), 1)
			ev.RequestContext.HTTP.Path = ev.RawPath
		}
		t.Run(rt.Pattern, func(t *testing.T) {
			for _, gzip := range []bool{false, true} {
				whole := eventRequest(t, ev, s.cookie)
				ranged := eventRequest(t, ev, s.cookie)
				ranged.Header.Set("Range", "bytes=0-9")
				if gzip {
					whole.Header.Set("Accept-Encoding", "gzip")
					ranged.Header.Set("Accept-Encoding", "gzip")
				}
				want, got := serve(t, s.h, whole), serve(t, s.h, ranged)
				checkWhole(t, "handler", gzip, got.Code, got.Header(), got.Body.Bytes())
				if publicRead(rt) && rt.Pattern != "GET /publisher/random" { // a new draw each time
					if got.Code != http.StatusOK || !bytes.Equal(got.Body.Bytes(), want.Body.Bytes()) {
						t.Errorf("handler, gzip %v: Range bytes=0-9: %d with %d bytes; without Range %d with %d bytes",
							gzip, got.Code, got.Body.Len(), want.Code, want.Body.Len())
					}
				}

				lev := ev
				lev.Headers = map[string]string{"range": "bytes=0-9"}
				for k, v := range ev.Headers {
					if !strings.EqualFold(k, "accept-encoding") {
						lev.Headers[k] = v
					}
				}
				if gzip {
					lev.Headers["accept-encoding"] = "gzip"
				}
				lev.Cookies = []string{s.cookie.String()}
				resp, err := lambda(context.Background(), lev)
				if err != nil {
					t.Fatal(err)
				}
				h := http.Header{}
				for k, v := range resp.Headers {
					h.Add(k, v)
				}
				for k, vs := range resp.MultiValueHeaders {
					for _, v := range vs {
						h.Add(k, v)
					}
				}
				body := []byte(resp.Body)
				if resp.IsBase64Encoded {
					if body, err = base64.StdEncoding.DecodeString(resp.Body); err != nil {
						t.Fatal(err)
					}
				}
				checkWhole(t, "Lambda entry", gzip, resp.StatusCode, h, body)
				if publicRead(rt) && resp.StatusCode != http.StatusOK {
					t.Errorf("Lambda entry, gzip %v: Range bytes=0-9: %d, want 200 with the whole body", gzip, resp.StatusCode)
				}
			}
		})
	}
}

// serve is testenv.Do (the answer checked against the OpenAPI document) when the
// answer is plain, the handler's answer as it is when gzipped.
func serve(t *testing.T, h http.Handler, req *http.Request) *httptest.ResponseRecorder {
	t.Helper()
	if req.Header.Get("Accept-Encoding") == "" {
		return testenv.Do(t, h, req)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// checkWhole holds one answer to a request with Range: bytes=0-9 to the rule.
func checkWhole(t *testing.T, via string, gzip bool, status int, h http.Header, body []byte) {
	t.Helper()
	if v := h.Values("Accept-Ranges"); len(v) != 0 {
		t.Errorf("%s, gzip %v: %d with Accept-Ranges %q: ranges are offered but not served", via, gzip, status, v)
	}
	if status == http.StatusPartialContent || status == http.StatusRequestedRangeNotSatisfiable || h.Get("Content-Range") != "" {
		t.Errorf("%s, gzip %v: %d, Content-Range %q, %d bytes: want the whole answer", via, gzip, status, h.Get("Content-Range"), len(body))
	}
}
