package httpapi

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/deadlines"
)

func TestCanonicalID(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"1", 1, true},
		{"42", 42, true},
		{"9223372036854775807", 9223372036854775807, true},
		{"9223372036854775808", 0, false},
		{"99999999999999999999", 0, false},
		{"0", 0, false},
		{"00", 0, false},
		{"01", 0, false},
		{"+1", 0, false},
		{"-1", 0, false},
		{" 1", 0, false},
		{"1 ", 0, false},
		{"1e3", 0, false},
		{"0x10", 0, false},
		{"1_000", 0, false},
		{"١", 0, false}, // Arabic-Indic digit one
		{"", 0, false},
	}
	for _, tt := range tests {
		t.Run(strconv.Quote(tt.in), func(t *testing.T) {
			got, ok := CanonicalID(tt.in)
			if got != tt.want || ok != tt.ok {
				t.Errorf("CanonicalID(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestValidJSONText(t *testing.T) {
	tests := []struct {
		body string
		want bool
	}{
		{`{"a":"b"}`, true},
		{`{"a":"é ☃ 😀"}`, true},
		{`{"a":"\\u0000"}`, true},        // a backslash, then the text u0000
		{`{"a":"\\\\u0000"}`, true},      // two backslashes, then u0000
		{`{"a":"\u0001\u00000"}`, false}, // NUL after another escape
		{`{"a":"\u0000"}`, false},
		{`{"a":"x\\\u0000"}`, false}, // a backslash, then NUL
		{`{"a":["ok",{"b":"\u0000"}]}`, false},
		{`{"\u0000":1}`, false},
		{"{\"a\":\"\xff\"}", false},
		{"{\"a\":\"\xed\xa0\x80\"}", false}, // a surrogate encoded in UTF-8
		{`{"a":"\ud800"}`, true},            // a lone surrogate escape decodes to U+FFFD
		{`\`, true},
	}
	for _, tt := range tests {
		if got := validJSONText([]byte(tt.body)); got != tt.want {
			t.Errorf("validJSONText(%q) = %v, want %v", tt.body, got, tt.want)
		}
	}
}

type nested struct {
	Name  string               `json:"name"`
	Items []struct{ T string } `json:"items"`
	Map   map[string]string    `json:"map"`
}

func TestDecodeRefusesInvalidText(t *testing.T) {
	tests := []struct {
		body string
		msg  string
	}{
		{`{"name":"ok","items":[{"T":"fine"}],"map":{"k":"v"}}`, ""},
		{`{"name":"a\u0000b"}`, apperr.MsgInvalidText},
		{`{"items":[{"T":"\u0000"}]}`, apperr.MsgInvalidText},
		{`{"map":{"\u0000":"v"}}`, apperr.MsgInvalidText},
		{"{\"name\":\"\xc3\x28\"}", apperr.MsgInvalidText},
		{`{"name":1}`, apperr.MsgMissingParams},
		{`{"name":"a"} x`, apperr.MsgMissingParams},
	}
	for _, tt := range tests {
		r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(tt.body))
		_, err := Decode[nested](httptest.NewRecorder(), r, 0)
		got := ""
		if e, ok := apperr.As(err); ok {
			got = e.Message
			if e.Code != apperr.Invalid {
				t.Errorf("%q: code %s, want invalid", tt.body, e.Code)
			}
		} else if err != nil {
			t.Errorf("%q: %v is not an apperr", tt.body, err)
		}
		if got != tt.msg {
			t.Errorf("%q: message %q, want %q", tt.body, got, tt.msg)
		}
	}
}

// wrapped is a mux with one route of each parameter kind behind the middleware.
func wrapped(timeout time.Duration, extra ...Route) http.Handler {
	routes := []Route{
		{Pattern: "GET /id/{id}", Handler: Read(PathID, func(_ context.Context, id int64) (int64, error) { return id, nil })},
		{Pattern: "GET /slug/{slug}", Handler: Read(func(r *http.Request) (string, error) { return PathString(r, "slug") },
			func(_ context.Context, s string) (string, error) { return s, nil })},
		{Pattern: "GET /list", Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			c, err := Client(r)
			if err != nil {
				Error(w, r, err)
				return
			}
			p, err := Paging(r)
			if err != nil {
				Error(w, r, err)
				return
			}
			o, err := Order(r, "name-asc", "name-asc", "name-desc")
			if err != nil {
				Error(w, r, err)
				return
			}
			search, err := Search(r)
			if err != nil {
				Error(w, r, err)
				return
			}
			JSON(w, r, http.StatusOK, []any{c, p.Limit, p.Offset, o, search, r.URL.Query().Get("other")})
		})},
	}
	return Wrap(NewMux(append(routes, extra...)), Options{RequestTimeout: timeout, Log: slog.New(slog.DiscardHandler)})
}

func TestInvalidTextInPathAndQuery(t *testing.T) {
	h := wrapped(0)
	tests := []struct {
		target string
		status int
		msg    string
	}{
		{"/slug/kodansha", 200, ""},
		{"/slug/%FF%FE", 400, apperr.MsgInvalidText},
		{"/slug/a%00b", 400, apperr.MsgInvalidText},
		{"/list?client=1&search=%00", 400, apperr.MsgInvalidText},
		{"/list?client=1&search=%C3%28", 400, apperr.MsgInvalidText},
		{"/list?client=1&other=%FF", 400, apperr.MsgInvalidText}, // a parameter no helper parses
		{"/list?client=1&%00=x", 400, apperr.MsgInvalidText},
		{"/list?client=1&search=%25_%5C%27%22", 200, ""},
		{"/id/1", 200, ""},
		{"/id/01", 400, apperr.MsgMissingParams},
		{"/id/+1", 400, apperr.MsgMissingParams},
		{"/id/%201", 400, apperr.MsgMissingParams},
		{"/id/1%20", 400, apperr.MsgMissingParams},
		{"/id/9223372036854775808", 400, apperr.MsgMissingParams},
		{"/list?client=01", 400, apperr.MsgMissingParams},
		{"/list?client=%2B1", 400, apperr.MsgMissingParams},
	}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, tt.target, nil))
			if w.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", w.Code, tt.status, w.Body)
			}
			if tt.msg != "" {
				var resp Response
				if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil || resp.Data != tt.msg || resp.Code != tt.status {
					t.Fatalf("body %s, want the Response Model %q", w.Body, tt.msg)
				}
			}
		})
	}
}

// TestOwnTextRoute: an OwnText route's handler answers invalid text itself, whether
// the middleware wraps the function's mux or (as on the local server) the route's own
// handler; every other route's request, a request the mux takes elsewhere among them,
// is still refused before any handler.
func TestOwnTextRoute(t *testing.T) {
	answer := func(name string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Location", "/from/"+name)
			w.WriteHeader(http.StatusFound)
		})
	}
	own := Route{Pattern: "GET /own/{x}/callback", Mux: "GET /own/{x}/{action}", OwnText: true, Handler: answer("own")}
	other := Route{Pattern: "GET /own/link/{x}", Handler: answer("other")}
	log := Options{Log: slog.New(slog.DiscardHandler)}
	wirings := map[string]func(target string) http.Handler{
		"function's mux": func(string) http.Handler { return Wrap(NewMux([]Route{own, other}), log) },
		"route's handler": func(target string) http.Handler {
			if strings.HasPrefix(target, "/own/link/") {
				return Wrap(other.Served(), log)
			}
			return Wrap(own.Served(), log)
		},
	}
	tests := []struct {
		target string
		want   string // the handler that answers, or "" for the text layer's 400
	}{
		{"/own/a/callback?state=ok", "own"},
		{"/own/a/callback?state=%00", "own"},
		{"/own/a/callback?state=%FF", "own"},
		{"/own/a%00/callback", "own"},
		{"/own/link/a", "other"},
		{"/own/link/a?x=%00", ""},
		{"/own/link/a%FF", ""},
	}
	for name, wiring := range wirings {
		for _, tt := range tests {
			t.Run(name+tt.target, func(t *testing.T) {
				w := httptest.NewRecorder()
				wiring(tt.target).ServeHTTP(w, httptest.NewRequest(http.MethodGet, tt.target, nil))
				if tt.want == "" {
					var resp Response
					if w.Code != 400 || json.Unmarshal(w.Body.Bytes(), &resp) != nil || resp.Data != apperr.MsgInvalidText {
						t.Fatalf("%d %s, want the 400 %q", w.Code, w.Body, apperr.MsgInvalidText)
					}
					return
				}
				if got := w.Header().Get("Location"); w.Code != http.StatusFound || got != "/from/"+tt.want {
					t.Fatalf("%d at %q, want the %s route's answer", w.Code, got, tt.want)
				}
			})
		}
	}
}

// FuzzParams: whatever the path and query, the parameter helpers answer 200 or a 400
// Response Model, and what they pass on is valid text and canonical ids.
func FuzzParams(f *testing.F) {
	for _, s := range []string{"/id/1", "/id/01", "/id/+1", "/id/%201", "/slug/a%00", "/slug/%FF",
		"/list?client=1&limit=5&offset=2&order=name-desc&search=a", "/list?client=1&limit=-1",
		"/list?client=1&limit=99999999999999999999999", "/list?client=1&search=%25%5F", "/list?client=1%00"} {
		f.Add(s)
	}
	h := wrapped(0)
	f.Fuzz(func(t *testing.T, target string) {
		u, err := url.ParseRequestURI(target)
		if err != nil || !strings.HasPrefix(u.Path, "/") || u.Host != "" {
			t.Skip()
		}
		r := &http.Request{Method: http.MethodGet, URL: u, Header: http.Header{}, Host: "example.com", RequestURI: target}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r.WithContext(context.Background()))
		switch w.Code {
		case 200:
			if !utf8.Valid(w.Body.Bytes()) || strings.Contains(w.Body.String(), `\u0000`) {
				t.Fatalf("%q: passed on invalid text: %s", target, w.Body)
			}
			if strings.HasPrefix(u.Path, "/id/") {
				var id int64
				if err := json.Unmarshal(w.Body.Bytes(), &id); err != nil || strconv.FormatInt(id, 10) != strings.TrimPrefix(u.Path, "/id/") {
					t.Fatalf("%q: id %s is not the path's canonical id", target, w.Body)
				}
			}
		case http.StatusMovedPermanently, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
			// ServeMux's redirect to the cleaned path ("/a/../b", "//x").
		case 400, 404:
			var resp Response
			if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil || resp.Code != w.Code || resp.Data == "" {
				t.Fatalf("%q: %d without a Response Model: %s", target, w.Code, w.Body)
			}
		default:
			t.Fatalf("%q: status %d: %s", target, w.Code, w.Body)
		}
	})
}

// TestDeadline: a request's context ends at REQUEST_TIMEOUT or at the Lambda
// invocation's deadline minus deadlines.LambdaMargin, whichever comes first; a client that goes
// away does not cancel it.
func TestDeadline(t *testing.T) {
	var (
		got      context.Context
		leave    context.CancelFunc // the client going away mid-request
		errAfter error              // the handler's ctx.Err() once the client left
	)
	probe := Route{Pattern: "GET /probe", Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Context()
		leave()
		errAfter = got.Err()
		OK(w, r, "ok")
	})}
	tests := []struct {
		name    string
		timeout time.Duration
		parent  time.Duration // 0: no parent deadline
		want    time.Duration // from now; 0: none
	}{
		{"local", 30 * time.Second, 0, 30 * time.Second},
		{"lambda tighter", 30 * time.Second, 10 * time.Second, 10*time.Second - deadlines.LambdaMargin},
		{"timeout tighter", 3 * time.Second, 10 * time.Second, 3 * time.Second},
		{"lambda only", 0, 10 * time.Second, 10*time.Second - deadlines.LambdaMargin},
		{"none", 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := wrapped(tt.timeout, probe)
			ctx, cancel := context.WithCancel(context.Background())
			if tt.parent > 0 {
				ctx, cancel = context.WithTimeout(context.Background(), tt.parent)
			}
			leave = cancel
			start := time.Now()
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/probe", nil).WithContext(ctx))
			if errAfter != nil {
				t.Fatalf("the client's leaving reached the handler's context: %v", errAfter)
			}
			d, ok := got.Deadline()
			if tt.want == 0 {
				if ok {
					t.Fatalf("deadline %v, want none", d)
				}
				return
			}
			// A loose correctness bound, not a timing measurement.
			if !ok || d.Sub(start) > tt.want+time.Second || d.Sub(start) < tt.want-time.Second {
				t.Fatalf("deadline in %v, want about %v", d.Sub(start), tt.want)
			}
		})
	}
}
