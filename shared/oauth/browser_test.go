package oauth_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/mediacatalog/service/infra/local/standins/providertest"
	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/auth"
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

	t.Run("login and link with each provider", func(t *testing.T) {
		browserLoginAndLink(t, e, apiURL, frontend.URL)
	})

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

// browserLoginAndLink signs up with each provider in a fresh browser, through the
// stand-in's consent page, then links the next provider to that account in the same
// browser: a full login and a full link flow per provider, against stand-ins that
// accept only what an operator registers (for GitHub, the one callback prefix).
func browserLoginAndLink(t *testing.T, e *env, apiURL, frontend string) {
	names := []string{providertest.Google, providertest.Discord, providertest.GitHub}
	accounts := map[string]func(n int) providertest.User{
		providertest.Google: func(n int) providertest.User {
			return providertest.User{ID: fmt.Sprintf("2050000000000000000%02d", n), Name: fmt.Sprintf("Browser %d", n)}
		},
		providertest.Discord: func(n int) providertest.User {
			return providertest.User{ID: fmt.Sprintf("8035111022467%04d", n), Login: fmt.Sprintf("browser.%d", n)}
		},
		providertest.GitHub: func(n int) providertest.User {
			return providertest.User{ID: fmt.Sprint(77000 + n), Login: fmt.Sprintf("browser-%d", n), Emails: []providertest.Email{}}
		},
	}
	consentAndLand := func(t *testing.T, browser context.Context, start string) string {
		t.Helper()
		if err := chromedp.Do(browser,
			chromedp.Navigate(start),
			chromedp.WaitVisible(chromedp.ID("authorize")),
			chromedp.Click(chromedp.ID("authorize")),
			chromedp.WaitVisible(chromedp.ID("frontend")),
		); err != nil {
			t.Fatalf("%s: consent and land on the frontend: %v", start, err)
		}
		landed, err := chromedp.Run(browser, chromedp.Location())
		if err != nil {
			t.Fatal(err)
		}
		return landed
	}
	for i, login := range names {
		link := names[(i+1)%len(names)]
		t.Run(login+" then "+link, func(t *testing.T) {
			e.stand[login].QueueUser(accounts[login](i))
			e.stand[link].QueueUser(accounts[link](i + 10))
			browser := testenv.Browser(t, 90*time.Second)
			if landed := consentAndLand(t, browser, apiURL+"/auth/oauth/"+login); landed != frontend+"/login?oauth_success=1" {
				t.Fatalf("login landed on %s", landed)
			}
			if landed := consentAndLand(t, browser, apiURL+"/auth/oauth/link/"+link); landed != frontend+"/settings?link_success="+link {
				t.Fatalf("link landed on %s", landed)
			}
			res, err := chromedp.Call(browser, network.GetCookies, network.GetCookiesParams{URLs: []string{apiURL + "/"}})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range res.Cookies {
				if c.Name == auth.RefreshCookie {
					conns := connections(t, e, &http.Cookie{Name: c.Name, Value: c.Value})
					want := []string{login, link}
					slices.Sort(want)
					got := strings.Split(providersOf(conns), ",")
					slices.Sort(got)
					if !slices.Equal(got, want) {
						t.Errorf("connections %v, want %v", got, want)
					}
					return
				}
			}
			t.Fatal("no refreshToken cookie after the login")
		})
	}
}
