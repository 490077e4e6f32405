package main

import (
	"context"
	"encoding/json"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"gopkg.in/yaml.v3"

	"github.com/mediacatalog/service/infra/local/demo"
	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/auth"
	"github.com/mediacatalog/service/shared/config"
	"github.com/mediacatalog/service/shared/openapi"
)

const browserTimeout = 2 * time.Minute

// documentRoutes lists "METHOD /path" for every operation of the OpenAPI document.
func documentRoutes(t *testing.T) []string {
	t.Helper()
	var doc struct {
		Paths map[string]map[string]any `yaml:"paths"`
	}
	if err := yaml.Unmarshal(openapi.Document, &doc); err != nil {
		t.Fatal(err)
	}
	var routes []string
	for path, item := range doc.Paths {
		for method := range item {
			switch method {
			case "get", "put", "post", "delete", "options", "head", "patch", "trace":
				routes = append(routes, strings.ToUpper(method)+" "+path)
			}
		}
	}
	slices.Sort(routes)
	return routes
}

// requests records the address of every request the browser's page sends.
type requests struct {
	mu   sync.Mutex
	urls []string
}

func recordRequests(t *testing.T, browser context.Context) *requests {
	t.Helper()
	r := &requests{}
	if _, err := chromedp.Call(browser, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	err := chromedp.Listen(browser, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			r.mu.Lock()
			r.urls = append(r.urls, e.Request.URL)
			r.mu.Unlock()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// offHost lists the requests that went anywhere but host (host:port).
func (r *requests) offHost(host string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var off []string
	for _, u := range r.urls {
		p, err := url.Parse(u)
		if err != nil || p.Host != host {
			if !strings.HasPrefix(u, "data:") {
				off = append(off, u)
			}
		}
	}
	return off
}

// tryOut runs "Try it out" on the docs page for one operation (the element id
// Swagger UI gives it: operations-<tag>-<operationId>) with the given parameters,
// and returns the status and the body it shows.
func tryOut(t *testing.T, browser context.Context, opID string, params map[string]string) (string, string) {
	t.Helper()
	op := "#" + opID
	steps := []chromedp.Action[chromedp.Void]{
		chromedp.Click(chromedp.CSS(op + " .opblock-summary-control")),
		chromedp.Click(chromedp.CSS(op + " .try-out__btn")),
	}
	for name, value := range params {
		steps = append(steps, chromedp.SendKeys(chromedp.CSS(op+` tr[data-param-name="`+name+`"] input`), value))
	}
	steps = append(steps,
		chromedp.Click(chromedp.CSS(op+" button.execute")),
		chromedp.WaitVisible(chromedp.CSS(op+" .live-responses-table .response .response-col_status")),
	)
	if err := chromedp.Do(browser, steps...); err != nil {
		t.Fatalf("try out %s: %v", opID, err)
	}
	status, err := chromedp.Run(browser, chromedp.Text(chromedp.CSS(op+" .live-responses-table .response .response-col_status")))
	if err != nil {
		t.Fatal(err)
	}
	body, err := chromedp.Run(browser, chromedp.Evaluate[string](
		`document.querySelector("`+op+` .live-responses-table .response .response-col_description pre").textContent`))
	if err != nil {
		t.Fatalf("read the response body of %s: %v", opID, err)
	}
	return strings.TrimSpace(status), body
}

// sameJSON fails the test unless a and b hold the same JSON value.
func sameJSON(t *testing.T, what, got, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("%s: the page shows no JSON: %v\n%s", what, err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s: the page shows\n%s\nwant\n%s", what, got, want)
	}
}

// TestBrowserDocs: /docs lists every route of the OpenAPI document and loads nothing
// from elsewhere; "Try it out" sends requests to the local server and shows the
// answers, and a `make token` value given to the Authorize dialog makes the admin
// routes answer.
func TestBrowserDocs(t *testing.T) {
	l := startLocal(t, nil)
	token := makeToken(t, l, demo.AdminUserID)
	browser := testenv.Browser(t, browserTimeout)
	sent := recordRequests(t, browser)
	if err := chromedp.Do(browser,
		chromedp.Navigate(l.url+"/docs"),
		chromedp.WaitVisible(chromedp.CSS("#operations-tags-listTags")),
	); err != nil {
		t.Fatalf("open /docs: %v", err)
	}
	listed, err := chromedp.Run(browser, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll(".opblock")).map(b =>
		b.querySelector(".opblock-summary-method").textContent + " " + b.querySelector(".opblock-summary-path").dataset.path)`))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(listed)
	if want := documentRoutes(t); !slices.Equal(listed, want) {
		t.Errorf("the page lists %d operations, the document has %d:\npage: %v\ndocument: %v", len(listed), len(want), listed, want)
	}

	status, body := tryOut(t, browser, "operations-tags-listTags", map[string]string{"client": "1"})
	_, want := l.get(t, "/tags?client=1")
	if status != "200" {
		t.Errorf("GET /tags?client=1 from the page: status %s, want 200", status)
	}
	sameJSON(t, "GET /tags?client=1", body, want)

	const roles = "#operations-admin-roles-listRoles"
	if status, body := tryOut(t, browser, roles[1:], nil); status != "401" {
		t.Errorf("GET /admin-roles from the page before Authorize: %s %s, want 401", status, body)
	}
	if err := chromedp.Do(browser,
		chromedp.Click(chromedp.CSS(".auth-wrapper .btn.authorize")),
		chromedp.SendKeys(chromedp.CSS(".auth-container input"), token),
		chromedp.Click(chromedp.CSS(".auth-container .btn.modal-btn.auth.authorize")),
		chromedp.Click(chromedp.CSS(".auth-container .btn.modal-btn.auth.btn-done")),
		chromedp.Click(chromedp.CSS(roles+" button.execute")),
	); err != nil {
		t.Fatalf("authorize with the make token value and send GET /admin-roles again: %v", err)
	}
	status, err = chromedp.Run(browser, chromedp.Poll[string](`(() => {
		const s = document.querySelector("`+roles+` .live-responses-table .response .response-col_status");
		return s && s.textContent.trim() !== "401" && s.textContent.trim();
	})()`, chromedp.WithPollingTimeout(30*time.Second)))
	if err != nil || status != "200" {
		t.Errorf("GET /admin-roles from the page after Authorize: %q (%v), want 200", status, err)
	}

	host := strings.TrimPrefix(l.url, "http://")
	if off := sent.offHost(host); len(off) > 0 {
		t.Errorf("the page sent requests beyond %s: %v", host, off)
	}
}

// makeToken is what make token prints: the refreshToken of a session for the user,
// issued by auth.Sessions with the local server's configuration.
func makeToken(t *testing.T, l *local, userID int64) string {
	t.Helper()
	cfg, err := config.Load(func(k string) string {
		if k == "DB_ENV" {
			return "local"
		}
		return l.env[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	sessions, err := auth.NewSessions(l.db.DB, cfg)
	if err != nil {
		t.Fatal(err)
	}
	token, err := sessions.Issue(context.Background(), userID)
	if err != nil {
		t.Fatal(err)
	}
	return token.Refresh
}

// TestBrowserLogin logs in with google through the stand-in the local server started,
// as a frontend developer would on make run: the browser lands on the frontend with
// the refreshToken cookie, and the docs page's requests then carry it.
func TestBrowserLogin(t *testing.T) {
	l := startLocal(t, nil)
	browser := testenv.Browser(t, browserTimeout)
	if err := chromedp.Do(browser,
		chromedp.Navigate(l.url+"/auth/oauth/google"),
		chromedp.WaitVisible(chromedp.ID("authorize")),
		chromedp.Click(chromedp.ID("authorize")),
		chromedp.WaitVisible(chromedp.ID("frontend")),
	); err != nil {
		t.Fatalf("log in with the google stand-in: %v", err)
	}
	landed, err := chromedp.Run(browser, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	if want := l.frontend + "/login?oauth_success=1"; landed != want {
		t.Fatalf("landed on %s, want %s", landed, want)
	}
	res, err := chromedp.Call(browser, network.GetCookies, network.GetCookiesParams{URLs: []string{l.url + "/"}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(res.Cookies, func(c *network.Cookie) bool { return c.Name == auth.RefreshCookie && c.HTTPOnly }) {
		t.Fatalf("no HttpOnly refreshToken cookie for %s after the login", l.url)
	}

	if err := chromedp.Do(browser,
		chromedp.Navigate(l.url+"/docs"),
		chromedp.WaitVisible(chromedp.CSS("#operations-oauth-oauthConnections")),
	); err != nil {
		t.Fatalf("open /docs: %v", err)
	}
	status, body := tryOut(t, browser, "operations-oauth-oauthConnections", nil)
	var conns []struct {
		Provider string `json:"provider"`
	}
	if status != "200" || json.Unmarshal([]byte(body), &conns) != nil || len(conns) != 1 || conns[0].Provider != "google" {
		t.Errorf("GET /auth/oauth/connections from the page: %s %s, want 200 with the google connection", status, body)
	}
}
