package soak

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mediacatalog/service/infra/tests/routefacts"
)

// errAbandon ends a worker's cycle after an answer it did not expect: the next cycle
// starts afresh, with names of its own, so that a write whose outcome a fault hid
// (committed, yet answered 500) cannot make later answers differ from the expected.
var errAbandon = errors.New("cycle abandoned")

// maxBody bounds what is read of an answer (the largest is a high-resolution avatar).
const maxBody = 4 << 20

// client sends a worker's requests to the service, paced by the soak's rate, and
// records each answer. Redirects are not followed: each is an answer of its own.
type client struct {
	base   string
	http   *http.Client
	rec    *recorder
	pace   <-chan time.Time
	cookie *http.Cookie // the admin session's refreshToken, on admin routes
}

// answer is one response, read whole.
type answer struct {
	status int
	header http.Header
	body   []byte
}

// call is one request: its class for the report, and the statuses that are the right
// answer. The report names it by its route (call.route).
type call struct {
	class        string
	method, path string
	body         any         // JSON, when not nil
	header       http.Header // added to the request
	admin        bool        // with the admin session
	want         []int
}

// do sends c and records its answer. It returns errAbandon when the answer is not
// one of c.want, and the context's error when the soak is ending (nothing recorded).
func (cl *client) do(ctx context.Context, c call) (answer, error) {
	select {
	case <-cl.pace:
	case <-ctx.Done():
		return answer{}, ctx.Err()
	}
	var body io.Reader
	if c.body != nil {
		b, err := json.Marshal(c.body)
		if err != nil {
			return answer{}, err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, c.method, cl.base+c.path, body)
	if err != nil {
		return answer{}, err
	}
	if c.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range c.header {
		req.Header[k] = v
	}
	if c.admin {
		req.AddCookie(cl.cookie)
	}
	start := time.Now()
	a, err := cl.send(req)
	end := time.Now()
	if ctx.Err() != nil {
		return answer{}, ctx.Err() // the soak ended under it: not the service's answer
	}
	if err != nil {
		cl.rec.answer(c.class, 0, &outcome{Class: c.class, Route: c.route(), Status: 0, Detail: err.Error(), Start: start, End: end})
		return a, errAbandon
	}
	if !slices.Contains(c.want, a.status) {
		cl.rec.answer(c.class, a.status, &outcome{Class: c.class, Route: c.route(), Status: a.status,
			Detail: fmt.Sprintf("want %v: %.200s", c.want, bytes.TrimSpace(a.body)), Start: start, End: end})
		return a, errAbandon
	}
	cl.rec.answer(c.class, a.status, nil)
	return a, nil
}

// api is the route tables and the OpenAPI document's facts of their routes, read once:
// the workload's reads derive from them and the report names each call by its route.
var api = sync.OnceValue(func() apiFacts {
	groups, err := routefacts.Groups()
	if err != nil {
		panic("soak: the route tables: " + err.Error())
	}
	params, err := routefacts.Params()
	if err != nil {
		panic("soak: the OpenAPI document: " + err.Error())
	}
	statuses, err := routefacts.Statuses()
	if err != nil {
		panic("soak: the OpenAPI document: " + err.Error())
	}
	return apiFacts{groups, routefacts.NewRouter(groups), params, statuses}
})

type apiFacts struct {
	groups   []routefacts.Group
	router   *routefacts.Router
	params   map[string][]routefacts.Param
	statuses map[string][]int
}

// route is the pattern of the route c reaches, as its route table writes it,
// or its method and path when it reaches none.
func (c call) route() string {
	if rt, ok := api().router.Route(c.method, c.path); ok {
		return rt.Pattern
	}
	path, _, _ := strings.Cut(c.path, "?")
	return c.method + " " + path
}

func (cl *client) send(req *http.Request) (answer, error) {
	resp, err := cl.http.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return answer{}, err
	}
	return answer{status: resp.StatusCode, header: resp.Header, body: b}, nil
}

// check records a failed check of an expected answer (what it saw in detail) and
// returns errAbandon; it returns nil when ok.
func (cl *client) check(ok bool, class, name string, at time.Time, detail string, args ...any) error {
	if ok {
		return nil
	}
	cl.rec.failedCheck(outcome{Class: class, Route: name, Detail: fmt.Sprintf(detail, args...), Start: at, End: time.Now()})
	return errAbandon
}

// decode reads a JSON answer into a T; a body that is not one is a failed check.
func decode[T any](cl *client, c call, a answer, at time.Time) (T, error) {
	var v T
	if err := json.Unmarshal(a.body, &v); err != nil {
		return v, cl.check(false, c.class, c.route()+" body", at, "%v: %.200s", err, a.body)
	}
	return v, nil
}

// newHTTPClient is a worker's own connection pool, as a browser or a CloudFront edge
// keeps one: keep-alive, gzip, no redirects followed.
func newHTTPClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 4
	return &http.Client{
		Transport:     tr,
		Timeout:       30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// etagOf is the answer's ETag ("" for none).
func etagOf(a answer) string { return a.header.Get("Etag") }

func ifNoneMatch(etag string) http.Header {
	if etag == "" {
		return nil
	}
	return http.Header{"If-None-Match": {etag}}
}

// locationQuery is the query of the answer's Location URL.
func locationQuery(a answer) string {
	loc := a.header.Get("Location")
	_, q, _ := strings.Cut(loc, "?")
	return q
}
