package oauth_test

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/mediacatalog/service/infra/testenv"
	"github.com/mediacatalog/service/shared/auth"
	"github.com/mediacatalog/service/shared/oauth/providers/providertest"
)

// TestBrowserLogin drives headless chromium through a whole login: the service on a
// loopback server, the discord stand-in showing its consent page, and a stand-in
// frontend where the flow lands.
func TestBrowserLogin(t *testing.T) {
	frontend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><title>Media Catalog</title><main id="frontend">Media Catalog frontend</main>`)
	}))
	t.Cleanup(frontend.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	apiURL := "http://" + ln.Addr().String()
	e := newEnv(t, envOptions{frontend: frontend.URL, apiURL: apiURL, consentPage: true})
	api := httptest.NewUnstartedServer(e.h)
	api.Listener.Close()
	api.Listener = ln
	api.Start()
	t.Cleanup(api.Close)

	tests := []struct {
		name    string
		click   string // id of the consent page's link
		landing string // where the browser ends up
		cookie  bool   // whether the refreshToken cookie is set
	}{
		{"cancel", "cancel", frontend.URL + "/login?oauth_error=access_denied", false},
		{"authorize", "authorize", frontend.URL + "/login?oauth_success=1", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e.stand[providertest.Discord].QueueUser(adaDiscord)
			browser := testenv.Browser(t, 90*time.Second)

			if err := chromedp.Do(browser,
				chromedp.Navigate(apiURL+"/auth/oauth/discord"),
				chromedp.WaitVisible(chromedp.ID("authorize")),
			); err != nil {
				t.Fatalf("open the login: %v", err)
			}
			title, err := chromedp.Run(browser, chromedp.Title())
			if err != nil {
				t.Fatal(err)
			}
			if err := chromedp.Do(browser,
				chromedp.Click(chromedp.ID(tc.click)),
				chromedp.WaitVisible(chromedp.ID("frontend")),
			); err != nil {
				t.Fatalf("consent and land on the frontend: %v", err)
			}
			landed, err := chromedp.Run(browser, chromedp.Location())
			if err != nil {
				t.Fatal(err)
			}
			res, err := chromedp.Call(browser, network.GetCookies, network.GetCookiesParams{URLs: []string{apiURL + "/"}})
			if err != nil {
				t.Fatalf("read the browser's cookies: %v", err)
			}
			cookies := res.Cookies
			if !strings.Contains(title, "Discord") {
				t.Errorf("consent page title %q", title)
			}
			if landed != tc.landing {
				t.Fatalf("landed on %s, want %s", landed, tc.landing)
			}
			var refresh *network.Cookie
			for _, c := range cookies {
				if c.Name == auth.RefreshCookie {
					refresh = c
				}
			}
			if !tc.cookie {
				if refresh != nil {
					t.Error("a cancelled login set the refreshToken cookie")
				}
				return
			}
			if refresh == nil {
				t.Fatalf("no refreshToken cookie in the browser (cookies: %d)", len(cookies))
			}
			if !refresh.HTTPOnly || refresh.Path != "/" {
				t.Errorf("refreshToken cookie HttpOnly=%v Path=%s", refresh.HTTPOnly, refresh.Path)
			}
			id := e.userOf(t, &http.Cookie{Name: refresh.Name, Value: refresh.Value})
			conns := connections(t, e, &http.Cookie{Name: refresh.Name, Value: refresh.Value})
			if providersOf(conns) != "discord" || conns[0].ProviderUsername != adaDiscord.Name {
				t.Errorf("user %d has connections %+v, want the discord account", id, conns)
			}
			if u, _ := url.Parse(landed); u.Host != strings.TrimPrefix(frontend.URL, "http://") {
				t.Errorf("landed off the frontend: %s", landed)
			}
		})
	}
}
