package oauth_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/mediacatalog/service/infra/local/standins/providertest"
	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/auth"
	"github.com/mediacatalog/service/shared/catalog"
	"github.com/mediacatalog/service/shared/oauth"
)

// headerOf is a Lambda response's headers as an http.Header.
func headerOf(resp events.APIGatewayV2HTTPResponse) http.Header {
	h := http.Header{}
	for k, v := range resp.Headers {
		h.Set(k, v)
	}
	for k, vs := range resp.MultiValueHeaders {
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	return h
}

// setCookie is the cookie a Lambda response sets under name.
func setCookie(t *testing.T, resp events.APIGatewayV2HTTPResponse, name string) *http.Cookie {
	t.Helper()
	for _, raw := range resp.Cookies {
		c, err := http.ParseSetCookie(raw)
		if err != nil {
			t.Fatalf("Set-Cookie %q: %v", raw, err)
		}
		if c.Name == name {
			return c
		}
	}
	return nil
}

// withCookies replaces the event's cookies of the same names.
func withCookies(ev *events.APIGatewayV2HTTPRequest, cs ...*http.Cookie) {
	for _, c := range cs {
		kept := ev.Cookies[:0]
		for _, raw := range ev.Cookies {
			if !strings.HasPrefix(raw, c.Name+"=") {
				kept = append(kept, raw)
			}
		}
		ev.Cookies = append(kept, c.Name+"="+c.Value)
	}
}

// withQuery replaces the event's query string.
func withQuery(ev *events.APIGatewayV2HTTPRequest, q url.Values) {
	ev.RawQueryString = q.Encode()
	ev.QueryStringParameters = map[string]string{}
	for k := range q {
		ev.QueryStringParameters[k] = q.Get(k)
	}
}

// startEvent runs a start event and returns the stand-in's answer to the consent (the
// callback query) and the state cookie.
func startEvent(t *testing.T, e *env, name string, cookies ...*http.Cookie) (url.Values, *http.Cookie) {
	t.Helper()
	ev := testenv.Event(t, name)
	withCookies(&ev, cookies...)
	resp := testenv.Invoke(t, e.h, ev)
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("%s: status %d %s, want 302", name, resp.StatusCode, resp.Body)
	}
	sc := setCookie(t, resp, oauth.LocalStateCookie)
	if sc == nil {
		t.Fatalf("%s set no state cookie", name)
	}
	return consent(t, headerOf(resp).Get("Location")).Query(), sc
}

func TestEvents(t *testing.T) {
	e := newEnv(t, envOptions{})
	member := e.tokenOf(t, e.demoUser(t, "member"))
	e.stand[providertest.GitHub].QueueUser(adaGitHub)

	tests := []struct {
		event   string
		prepare func(t *testing.T, ev *events.APIGatewayV2HTTPRequest)
		status  int
		check   func(t *testing.T, resp events.APIGatewayV2HTTPResponse)
	}{
		{
			event:  "oauth/login.json",
			status: http.StatusFound,
			check: func(t *testing.T, resp events.APIGatewayV2HTTPResponse) {
				if loc := headerOf(resp).Get("Location"); !strings.HasPrefix(loc, e.stand[providertest.Google].AuthURL+"?") {
					t.Errorf("Location %s, want the google consent page", loc)
				}
				if setCookie(t, resp, oauth.LocalStateCookie) == nil {
					t.Error("no state cookie")
				}
			},
		},
		{
			event: "oauth/login-callback.json",
			prepare: func(t *testing.T, ev *events.APIGatewayV2HTTPRequest) {
				q, sc := startEvent(t, e, "oauth/login.json")
				withQuery(ev, q)
				withCookies(ev, sc)
			},
			status: http.StatusFound,
			check: func(t *testing.T, resp events.APIGatewayV2HTTPResponse) {
				if loc := headerOf(resp).Get("Location"); loc != e.frontend+"/login?oauth_success=1" {
					t.Errorf("Location %s", loc)
				}
				if c := setCookie(t, resp, auth.RefreshCookie); c == nil || c.Value == "" {
					t.Error("no refreshToken cookie")
				}
			},
		},
		{
			event:   "oauth/link.json",
			prepare: func(t *testing.T, ev *events.APIGatewayV2HTTPRequest) { withCookies(ev, member) },
			status:  http.StatusFound,
			check: func(t *testing.T, resp events.APIGatewayV2HTTPResponse) {
				if loc := headerOf(resp).Get("Location"); !strings.HasPrefix(loc, e.stand[providertest.GitHub].AuthURL+"?") {
					t.Errorf("Location %s, want the github consent page", loc)
				}
			},
		},
		{
			event: "oauth/link-callback.json",
			prepare: func(t *testing.T, ev *events.APIGatewayV2HTTPRequest) {
				q, sc := startEvent(t, e, "oauth/link.json", member)
				withQuery(ev, q)
				withCookies(ev, member, sc)
			},
			status: http.StatusFound,
			check: func(t *testing.T, resp events.APIGatewayV2HTTPResponse) {
				if loc := headerOf(resp).Get("Location"); loc != e.frontend+"/settings?link_success=github" {
					t.Errorf("Location %s", loc)
				}
			},
		},
		{
			event:   "oauth/connections.json",
			prepare: func(t *testing.T, ev *events.APIGatewayV2HTTPRequest) { withCookies(ev, member) },
			status:  http.StatusOK,
			check: func(t *testing.T, resp events.APIGatewayV2HTTPResponse) {
				var conns []catalog.Connection
				if err := json.Unmarshal(testenv.ResponseBody(t, resp), &conns); err != nil {
					t.Fatal(err)
				}
				if providersOf(conns) != "github" || conns[0].ProviderUsername != adaGitHub.Name {
					t.Errorf("connections %+v, want the linked github account", conns)
				}
			},
		},
		{
			event: "oauth/unlink.json",
			prepare: func(t *testing.T, ev *events.APIGatewayV2HTTPRequest) {
				// github is member's only login method until google is linked too.
				e.wantRedirect(t, e.link(t, providertest.Google, member, &adaGoogle), "/settings", url.Values{"link_success": {"google"}})
				withCookies(ev, member)
			},
			status: http.StatusOK,
			check: func(t *testing.T, resp events.APIGatewayV2HTTPResponse) {
				if r := responseModel(t, testenv.ResponseBody(t, resp)); r.Data != "Provider unlinked successfully" || r.Code != 200 {
					t.Errorf("body %+v", r)
				}
				if got := providersOf(connections(t, e, member)); got != "google" {
					t.Errorf("providers left: %s", got)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.event, func(t *testing.T) {
			ev := testenv.Event(t, tc.event)
			if ev.RequestContext.HTTP.SourceIP == "" || ev.RouteKey == "" {
				t.Fatal("the event lacks requestContext.http.sourceIp or routeKey")
			}
			if tc.prepare != nil {
				tc.prepare(t, &ev)
			}
			resp := testenv.Invoke(t, e.h, ev)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d %s, want %d", resp.StatusCode, testenv.ResponseBody(t, resp), tc.status)
			}
			if headerOf(resp).Get("RateLimit-Limit") == "" {
				t.Error("no RateLimit-Limit header")
			}
			tc.check(t, resp)
		})
	}
	t.Run("events as committed, without real tokens", func(t *testing.T) {
		for _, name := range []string{"oauth/login-callback.json", "oauth/link-callback.json"} {
			resp := testenv.Invoke(t, e.h, testenv.Event(t, name))
			if resp.StatusCode != http.StatusFound || !strings.Contains(headerOf(resp).Get("Location"), "_error=") {
				t.Errorf("%s: %d %s, want a redirect with an error reason", name, resp.StatusCode, headerOf(resp).Get("Location"))
			}
		}
		for _, name := range []string{"oauth/link.json", "oauth/connections.json", "oauth/unlink.json"} {
			if resp := testenv.Invoke(t, e.h, testenv.Event(t, name)); resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("%s: %d, want 401 with the placeholder cookie", name, resp.StatusCode)
			}
		}
	})
}
