package testenv

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/mediacatalog/service/shared/lambdahttp"
	"github.com/mediacatalog/service/shared/openapi"
)

var (
	apiOnce   sync.Once
	apiRouter routers.Router
	apiErr    error
)

// API returns the router over the OpenAPI document, loaded and validated once.
func API(t testing.TB) routers.Router {
	t.Helper()
	apiOnce.Do(func() {
		for _, ct := range []string{"image/jpeg", "image/png", "image/gif", "image/webp"} {
			openapi3filter.RegisterBodyDecoder(ct, openapi3filter.FileBodyDecoder)
		}
		loader := openapi3.NewLoader()
		doc, err := loader.LoadFromData(openapi.Document)
		if err != nil {
			apiErr = err
			return
		}
		if apiErr = doc.Validate(context.Background()); apiErr != nil {
			return
		}
		doc.Servers = nil // match any host: handler tests and Lambda events alike
		apiRouter, apiErr = gorillamux.NewRouter(doc)
	})
	if apiErr != nil {
		t.Fatalf("openapi document: %v", apiErr)
	}
	return apiRouter
}

type malformedKey struct{}

// Malformed marks a request as malformed on purpose, in a way the server tolerates
// (it answers 2xx, as for an empty order or a limit past int64): its response is
// checked against the document, the request itself is not.
func Malformed(req *http.Request) *http.Request {
	return req.WithContext(context.WithValue(req.Context(), malformedKey{}, true))
}

// CheckResponse fails the test unless the route is in the OpenAPI document and the
// response's status, headers and body match what it says; and, when the server
// accepted the request (an answer below 400) and the test did not mark it Malformed,
// unless the request's parameters and body are what the document allows.
func CheckResponse(t testing.TB, req *http.Request, status int, header http.Header, body []byte) {
	t.Helper()
	router := API(t)
	// Route on a copy whose URL carries a host, as the router expects.
	probe := req.Clone(context.Background())
	if probe.URL.Host == "" {
		probe.URL.Scheme, probe.URL.Host = "http", "localhost"
	}
	route, params, err := router.FindRoute(probe)
	if err != nil {
		t.Errorf("openapi: %s %s: no such route in the document: %v", req.Method, req.URL.Path, err)
		return
	}
	reqIn := &openapi3filter.RequestValidationInput{
		Request:    probe,
		PathParams: params,
		Route:      route,
		Options:    &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc},
	}
	// A request the server accepted must be one the document allows, with the types a
	// generated client sends (integer ids, enums); requests malformed on purpose are
	// the ones answered 4xx, and only those are exempt.
	if status < 400 && req.Context().Value(malformedKey{}) == nil {
		if err := openapi3filter.ValidateRequest(context.Background(), reqIn); err != nil {
			t.Errorf("openapi: %s %s answered %d to a request the document does not allow: %v",
				req.Method, req.URL.Path, status, err)
		}
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: reqIn,
		Status:                 status,
		Header:                 header,
		Options:                &openapi3filter.Options{IncludeResponseStatus: true},
	}
	in.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		t.Errorf("openapi: %s %s answered %d, which the document does not allow: %v\nbody: %.500s",
			req.Method, req.URL.Path, status, err, body)
	}
}

// Do serves req with h and checks the response against the OpenAPI document.
func Do(t testing.TB, h http.Handler, req *http.Request) *httptest.ResponseRecorder {
	t.Helper()
	var reqBody []byte
	if req.Body != nil {
		reqBody, _ = io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(reqBody))
	}
	if req.RemoteAddr == "" || req.RemoteAddr == "192.0.2.1:1234" {
		req.RemoteAddr = "127.0.0.1:40000"
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	check := req.Clone(req.Context())
	check.Body = io.NopCloser(bytes.NewReader(reqBody))
	CheckResponse(t, check, rec.Code, rec.Header(), rec.Body.Bytes())
	return rec
}

// Request builds a request with an optional JSON body and cookies.
func Request(method, target string, body any, cookies ...*http.Cookie) *http.Request {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		js, _ := json.Marshal(b)
		rd = bytes.NewReader(js)
	}
	req := httptest.NewRequest(method, target, rd)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, c := range cookies {
		req.AddCookie(c)
	}
	return req
}

// RepoRoot is the repository's top folder.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", ".."))
}

// Event reads an API Gateway v2 event from events/ (path relative to that folder).
func Event(t testing.TB, name string) events.APIGatewayV2HTTPRequest {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(RepoRoot(), "events", name))
	if err != nil {
		t.Fatalf("read event: %v", err)
	}
	var ev events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(b, &ev); err != nil {
		t.Fatalf("decode event %s: %v", name, err)
	}
	return ev
}

// Invoke runs an event through the real Lambda entry (the API Gateway v2 adapter) and
// checks the response against the OpenAPI document.
func Invoke(t testing.TB, h http.Handler, ev events.APIGatewayV2HTTPRequest) events.APIGatewayV2HTTPResponse {
	t.Helper()
	raw, err := json.Marshal(ev)
	if err != nil {
		t.Fatalf("encode event: %v", err)
	}
	resp, err := lambdahttp.Invoke(context.Background(), h, raw)
	if err != nil {
		t.Fatalf("invoke: %v", err)
	}
	resp = gunzipResponse(t, resp)
	target := ev.RawPath
	if ev.RawQueryString != "" {
		target += "?" + ev.RawQueryString
	}
	reqBody := []byte(ev.Body)
	if ev.IsBase64Encoded {
		if reqBody, err = base64.StdEncoding.DecodeString(ev.Body); err != nil {
			t.Fatalf("decode the event's base64 body: %v", err)
		}
	}
	req := httptest.NewRequest(ev.RequestContext.HTTP.Method, target, bytes.NewReader(reqBody))
	for k, v := range ev.Headers {
		req.Header.Set(k, v)
	}
	for _, c := range ev.Cookies {
		req.Header.Add("Cookie", c)
	}
	header := http.Header{}
	for k, v := range resp.Headers {
		header.Set(k, v)
	}
	for k, vs := range resp.MultiValueHeaders {
		for _, v := range vs {
			header.Add(k, v)
		}
	}
	body := []byte(resp.Body)
	if resp.IsBase64Encoded {
		if body, err = base64.StdEncoding.DecodeString(resp.Body); err != nil {
			t.Fatalf("decode base64 body: %v", err)
		}
	}
	CheckResponse(t, req, resp.StatusCode, header, body)
	return resp
}

// gunzipResponse checks a gzipped answer (the events carry the browsers'
// Accept-Encoding) as API Gateway needs it, Base64-encoded, and returns it as the client
// sees it after API Gateway and the HTTP client: the plain body, without
// Content-Encoding, so the tests read bodies alike with and without compression.
func gunzipResponse(t testing.TB, resp events.APIGatewayV2HTTPResponse) events.APIGatewayV2HTTPResponse {
	t.Helper()
	if resp.Headers["Content-Encoding"] != "gzip" {
		return resp
	}
	if !resp.IsBase64Encoded {
		t.Fatalf("gzipped body not Base64-encoded")
	}
	zb, err := base64.StdEncoding.DecodeString(resp.Body)
	if err != nil {
		t.Fatalf("decode base64 body: %v", err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(zb))
	if err != nil {
		t.Fatalf("gunzip body: %v", err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("gunzip body: %v", err)
	}
	headers := make(map[string]string, len(resp.Headers))
	for k, v := range resp.Headers {
		if k != "Content-Encoding" {
			headers[k] = v
		}
	}
	resp.Headers, resp.Body, resp.IsBase64Encoded = headers, string(plain), false
	if !utf8.Valid(plain) {
		resp.Body, resp.IsBase64Encoded = base64.StdEncoding.EncodeToString(plain), true
	}
	return resp
}

// ResponseBody returns the decoded body of a Lambda response.
func ResponseBody(t testing.TB, resp events.APIGatewayV2HTTPResponse) []byte {
	t.Helper()
	if !resp.IsBase64Encoded {
		return []byte(resp.Body)
	}
	b, err := base64.StdEncoding.DecodeString(resp.Body)
	if err != nil {
		t.Fatalf("decode base64 body: %v", err)
	}
	return b
}
