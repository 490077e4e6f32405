package providertest_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/mediacatalog/service/infra/local/standins/providertest"
)

const redirect = "http://localhost:3000/auth/oauth/callback"

var scopes = map[string]string{
	providertest.Google:  "openid profile email",
	providertest.Discord: "identify email",
	providertest.GitHub:  "read:user user:email",
}

var names = []string{providertest.Google, providertest.Discord, providertest.GitHub}

func pkce() (verifier, challenge string) {
	verifier = strings.Repeat("v", 43)
	sum := sha256.Sum256([]byte(verifier))
	return verifier, base64.RawURLEncoding.EncodeToString(sum[:])
}

func authParams(srv *providertest.Server) url.Values {
	_, challenge := pkce()
	return url.Values{
		"client_id":             {srv.ClientID},
		"redirect_uri":          {redirect},
		"response_type":         {"code"},
		"scope":                 {scopes[srv.Provider]},
		"state":                 {"st"},
		"code_challenge":        {challenge},
		"code_challenge_method": {"S256"},
	}
}

var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func get(t *testing.T, raw string) *http.Response {
	t.Helper()
	resp, err := noRedirects.Get(raw)
	if err != nil {
		t.Fatalf("GET %s: %v", raw, err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestAuthorizeValidation(t *testing.T) {
	tests := []struct {
		name      string
		opts      []providertest.Option
		change    func(q url.Values)
		wantPage  bool   // an error page, no redirect
		wantError string // OAuth error on the redirect; "" for a code
	}{
		{name: "valid", change: func(url.Values) {}},
		{name: "unknown client", change: func(q url.Values) { q.Set("client_id", "someone-else") }, wantPage: true},
		{name: "no redirect_uri", change: func(q url.Values) { q.Del("redirect_uri") }, wantPage: true},
		{name: "relative redirect_uri", change: func(q url.Values) { q.Set("redirect_uri", "/callback") }, wantPage: true},
		{name: "unregistered redirect_uri", opts: []providertest.Option{providertest.WithRedirectURIs("https://elsewhere.example/cb")},
			change: func(url.Values) {}, wantPage: true},
		{name: "registered redirect_uri", opts: []providertest.Option{providertest.WithRedirectURIs(redirect)}, change: func(url.Values) {}},
		{name: "implicit flow", change: func(q url.Values) { q.Set("response_type", "token") }, wantError: "unsupported_response_type"},
		{name: "unknown scope", change: func(q url.Values) { q.Set("scope", q.Get("scope")+" admin:everything") }, wantError: "invalid_scope"},
		{name: "no scope", change: func(q url.Values) { q.Del("scope") }, wantError: "invalid_scope"},
		{name: "no state", change: func(q url.Values) { q.Del("state") }, wantError: "invalid_request"},
		{name: "no code_challenge", change: func(q url.Values) { q.Del("code_challenge") }, wantError: "invalid_request"},
		{name: "plain PKCE", change: func(q url.Values) { q.Set("code_challenge_method", "plain") }, wantError: "invalid_request"},
		{name: "no PKCE method", change: func(q url.Values) { q.Del("code_challenge_method") }, wantError: "invalid_request"},
		{name: "short challenge", change: func(q url.Values) { q.Set("code_challenge", "abc") }, wantError: "invalid_request"},
	}
	for _, name := range names {
		for _, tt := range tests {
			if name == providertest.GitHub && tt.name == "unregistered redirect_uri" {
				continue // GitHub redirects to its callback instead: TestGitHubRedirectURIs
			}
			t.Run(name+"/"+tt.name, func(t *testing.T) {
				srv := providertest.New(t, name, "cid", "csecret", tt.opts...)
				q := authParams(srv)
				tt.change(q)
				resp := get(t, srv.AuthURL+"?"+q.Encode())
				if tt.wantPage {
					if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" {
						t.Fatalf("got %s Location %q, want a 400 page without redirect", resp.Status, resp.Header.Get("Location"))
					}
					return
				}
				if resp.StatusCode != http.StatusFound {
					t.Fatalf("got %s, want 302", resp.Status)
				}
				loc, err := resp.Location()
				if err != nil {
					t.Fatal(err)
				}
				back := loc.Query()
				if !strings.HasPrefix(loc.String(), redirect+"?") {
					t.Errorf("redirected to %s, want %s", loc, redirect)
				}
				if tt.wantError == "" {
					if back.Get("code") == "" || back.Get("state") != "st" || back.Has("error") {
						t.Errorf("callback query %v, want code and state st", back)
					}
					return
				}
				if back.Get("error") != tt.wantError || back.Has("code") {
					t.Errorf("callback query %v, want error %s and no code", back, tt.wantError)
				}
				if q.Get("state") != "" && back.Get("state") != q.Get("state") {
					t.Errorf("state %q not carried back", q.Get("state"))
				}
			})
		}
	}
}

// code runs an authorization and returns its code.
func code(t *testing.T, srv *providertest.Server) string {
	t.Helper()
	back, err := providertest.Authorize(t.Context(), srv.AuthURL+"?"+authParams(srv).Encode())
	if err != nil {
		t.Fatal(err)
	}
	c := back.Query().Get("code")
	if c == "" {
		t.Fatalf("no code in %s", back)
	}
	return c
}

type tokenRequest struct {
	basic  bool // client credentials in Basic authentication instead of the form
	accept string
	change func(f url.Values)
}

func postToken(t *testing.T, srv *providertest.Server, tr tokenRequest) (*http.Response, []byte) {
	t.Helper()
	verifier, _ := pkce()
	form := url.Values{
		"grant_type":    {"authorization_code"},
		"code":          {code(t, srv)},
		"redirect_uri":  {redirect},
		"code_verifier": {verifier},
	}
	if !tr.basic {
		form.Set("client_id", srv.ClientID)
		form.Set("client_secret", srv.ClientSecret)
	}
	if tr.change != nil {
		tr.change(form)
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.TokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if tr.accept != "" {
		req.Header.Set("Accept", tr.accept)
	}
	if tr.basic {
		req.SetBasicAuth(url.QueryEscape(srv.ClientID), url.QueryEscape(srv.ClientSecret))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

func TestTokenEndpoint(t *testing.T) {
	tests := []struct {
		name       string
		provider   string
		req        tokenRequest
		wantStatus int
		wantError  string // "" for a token
		wantType   string // Content-Type prefix
	}{
		{"google form credentials", providertest.Google, tokenRequest{}, 200, "", "application/json"},
		{"google basic credentials", providertest.Google, tokenRequest{basic: true}, 200, "", "application/json"},
		{"google missing verifier", providertest.Google, tokenRequest{change: func(f url.Values) { f.Del("code_verifier") }}, 400, "invalid_grant", "application/json"},
		{"google wrong secret", providertest.Google, tokenRequest{change: func(f url.Values) { f.Set("client_secret", "x") }}, 401, "invalid_client", "application/json"},
		{"discord basic credentials", providertest.Discord, tokenRequest{basic: true}, 200, "", "application/json"},
		{"discord form credentials", providertest.Discord, tokenRequest{}, 200, "", "application/json"},
		{"discord missing verifier", providertest.Discord, tokenRequest{change: func(f url.Values) { f.Del("code_verifier") }}, 400, "invalid_grant", "application/json"},
		{"discord missing redirect_uri", providertest.Discord, tokenRequest{change: func(f url.Values) { f.Del("redirect_uri") }}, 400, "invalid_grant", "application/json"},
		{"discord wrong grant type", providertest.Discord, tokenRequest{change: func(f url.Values) { f.Set("grant_type", "password") }}, 400, "unsupported_grant_type", "application/json"},
		{"discord wrong secret", providertest.Discord, tokenRequest{change: func(f url.Values) { f.Set("client_secret", "x") }}, 401, "invalid_client", "application/json"},
		{"github JSON", providertest.GitHub, tokenRequest{accept: "application/json"}, 200, "", "application/json"},
		{"github form-encoded without Accept", providertest.GitHub, tokenRequest{}, 200, "", "application/x-www-form-urlencoded"},
		// GitHub documents client_id and client_secret as body parameters only.
		{"github basic credentials", providertest.GitHub, tokenRequest{basic: true, accept: "application/json"}, 200, "incorrect_client_credentials", "application/json"},
		{"github redirect_uri optional", providertest.GitHub, tokenRequest{accept: "application/json", change: func(f url.Values) { f.Del("redirect_uri") }}, 200, "", "application/json"},
		{"github wrong verifier answers 200 with an error", providertest.GitHub,
			tokenRequest{accept: "application/json", change: func(f url.Values) { f.Set("code_verifier", strings.Repeat("w", 43)) }}, 200, "bad_verification_code", "application/json"},
		{"github wrong secret", providertest.GitHub, tokenRequest{accept: "application/json", change: func(f url.Values) { f.Set("client_secret", "x") }}, 200, "incorrect_client_credentials", "application/json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := providertest.New(t, tt.provider, "cid", "csecret")
			resp, body := postToken(t, srv, tt.req)
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.wantStatus, body)
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, tt.wantType) {
				t.Fatalf("Content-Type %q, want %s", ct, tt.wantType)
			}
			fields := map[string]any{}
			if strings.HasPrefix(tt.wantType, "application/json") {
				if err := json.Unmarshal(body, &fields); err != nil {
					t.Fatalf("decode %s: %v", body, err)
				}
			} else {
				vals, err := url.ParseQuery(string(body))
				if err != nil {
					t.Fatalf("decode %s: %v", body, err)
				}
				for k := range vals {
					fields[k] = vals.Get(k)
				}
			}
			if tt.wantError != "" {
				if fields["error"] != tt.wantError || fields["access_token"] != nil {
					t.Fatalf("answer %s, want error %s", body, tt.wantError)
				}
				return
			}
			if tok, _ := fields["access_token"].(string); tok == "" || !strings.EqualFold(fields["token_type"].(string), "bearer") {
				t.Fatalf("answer %s, want a bearer access token", body)
			}
		})
	}
}

func TestProfileEndpointsNeedToken(t *testing.T) {
	tests := []struct {
		provider   string
		endpoint   func(*providertest.Server) string
		header     http.Header
		wantStatus int
	}{
		{providertest.Google, func(s *providertest.Server) string { return s.ProfileURL }, http.Header{}, 401},
		{providertest.Google, func(s *providertest.Server) string { return s.ProfileURL }, http.Header{"Authorization": {"Bearer nope"}}, 401},
		{providertest.Discord, func(s *providertest.Server) string { return s.ProfileURL }, http.Header{}, 401},
		{providertest.Discord, func(s *providertest.Server) string { return s.ProfileURL }, http.Header{"Authorization": {"Bearer nope"}}, 401},
		{providertest.GitHub, func(s *providertest.Server) string { return s.ProfileURL }, http.Header{"User-Agent": {"t"}}, 401},
		{providertest.GitHub, func(s *providertest.Server) string { return s.EmailsURL }, http.Header{"User-Agent": {"t"}, "Authorization": {"Bearer nope"}}, 401},
	}
	for _, tt := range tests {
		t.Run(tt.provider+" "+tt.header.Get("Authorization"), func(t *testing.T) {
			srv := providertest.New(t, tt.provider, "cid", "csecret")
			req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, tt.endpoint(srv), nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header = tt.header
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.wantStatus)
			}
		})
	}
}

func TestProfileDocuments(t *testing.T) {
	tests := []struct {
		name     string
		provider string
		scope    string
		user     providertest.User
		ua       string
		path     func(*providertest.Server) string
		want     map[string]any // expected fields; nil value: JSON null
		absent   []string
		status   int
	}{
		{
			name: "google userinfo", provider: providertest.Google, scope: "openid profile email",
			user: providertest.User{ID: "42", Name: "Ada Lovelace", Email: "ada@example.com", EmailVerified: true, Avatar: "https://pic/ada"},
			path: func(s *providertest.Server) string { return s.ProfileURL },
			want: map[string]any{"sub": "42", "name": "Ada Lovelace", "given_name": "Ada", "family_name": "Lovelace",
				"email": "ada@example.com", "email_verified": true, "picture": "https://pic/ada"},
			status: 200,
		},
		{
			name: "google userinfo without email scope", provider: providertest.Google, scope: "openid profile",
			user:   providertest.User{ID: "42", Name: "Ada", Email: "ada@example.com", EmailVerified: true},
			path:   func(s *providertest.Server) string { return s.ProfileURL },
			want:   map[string]any{"sub": "42", "name": "Ada"},
			absent: []string{"email", "email_verified"}, status: 200,
		},
		{
			name: "discord @me", provider: providertest.Discord, scope: "identify email",
			user: providertest.User{ID: "80351110224678912", Login: "nelly", Email: "nelly@example.com", EmailVerified: true},
			path: func(s *providertest.Server) string { return s.ProfileURL },
			want: map[string]any{"id": "80351110224678912", "username": "nelly", "global_name": nil,
				"avatar": nil, "email": "nelly@example.com", "verified": true},
			absent: []string{"discriminator"}, status: 200,
		},
		{
			name: "discord @me with the new usernames' discriminator", provider: providertest.Discord, scope: "identify",
			user:   providertest.User{ID: "1", Login: "nelly", Discriminator: "0"},
			path:   func(s *providertest.Server) string { return s.ProfileURL },
			want:   map[string]any{"id": "1", "discriminator": "0"},
			status: 200,
		},
		{
			name: "discord unversioned API", provider: providertest.Discord, scope: "identify",
			user:   providertest.User{ID: "1", Login: "nelly"},
			path:   func(s *providertest.Server) string { return s.URL + "/api/users/@me" },
			status: 404,
		},
		{
			name: "discord API v9", provider: providertest.Discord, scope: "identify",
			user:   providertest.User{ID: "1", Login: "nelly"},
			path:   func(s *providertest.Server) string { return s.URL + "/api/v9/users/@me" },
			want:   map[string]any{"id": "1"},
			status: 200,
		},
		{
			name: "google email_verified as text", provider: providertest.Google, scope: "openid email",
			user:   providertest.User{ID: "42", Email: "ada@example.com", EmailVerified: true, EmailVerifiedText: true},
			path:   func(s *providertest.Server) string { return s.ProfileURL },
			want:   map[string]any{"email": "ada@example.com", "email_verified": "true"},
			status: 200,
		},
		{
			name: "discord @me without email scope", provider: providertest.Discord, scope: "identify",
			user:   providertest.User{ID: "1", Login: "nelly", Email: "nelly@example.com", EmailVerified: true},
			path:   func(s *providertest.Server) string { return s.ProfileURL },
			want:   map[string]any{"id": "1"},
			absent: []string{"email", "verified"}, status: 200,
		},
		{
			name: "discord @me without identify scope", provider: providertest.Discord, scope: "email",
			user: providertest.User{ID: "1", Login: "nelly"},
			path: func(s *providertest.Server) string { return s.ProfileURL }, status: 401,
		},
		{
			name: "github user", provider: providertest.GitHub, scope: "read:user user:email", ua: "t",
			user:   providertest.User{ID: "583231", Login: "octocat", Avatar: "https://avatars/1"},
			path:   func(s *providertest.Server) string { return s.ProfileURL },
			want:   map[string]any{"id": float64(583231), "login": "octocat", "name": nil, "email": nil, "avatar_url": "https://avatars/1"},
			status: 200,
		},
		{
			name: "github public email is the public verified entry of the list", provider: providertest.GitHub, scope: "read:user user:email", ua: "t",
			user: providertest.User{ID: "1", Login: "octocat", Emails: []providertest.Email{
				{Email: "private@example.com", Primary: true, Verified: true, Visibility: "private"},
				{Email: "public@example.com", Verified: true, Visibility: "public"}}},
			path:   func(s *providertest.Server) string { return s.ProfileURL },
			want:   map[string]any{"email": "public@example.com"},
			status: 200,
		},
		{
			name: "github unverified address is never public", provider: providertest.GitHub, scope: "read:user user:email", ua: "t",
			user:   providertest.User{ID: "1", Login: "octocat", Email: "unverified@example.com"},
			path:   func(s *providertest.Server) string { return s.ProfileURL },
			want:   map[string]any{"email": nil},
			status: 200,
		},
		{
			name: "github user without User-Agent", provider: providertest.GitHub, scope: "read:user user:email",
			user: providertest.User{ID: "583231", Login: "octocat"},
			path: func(s *providertest.Server) string { return s.ProfileURL }, status: 403,
		},
		{
			name: "github emails without user:email scope", provider: providertest.GitHub, scope: "read:user", ua: "t",
			user: providertest.User{ID: "583231", Login: "octocat"},
			path: func(s *providertest.Server) string { return s.EmailsURL }, status: 404,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := providertest.New(t, tt.provider, "cid", "csecret")
			srv.QueueUser(tt.user)
			verifier, challenge := pkce()
			q := authParams(srv)
			q.Set("scope", tt.scope)
			q.Set("code_challenge", challenge)
			back, err := providertest.Authorize(t.Context(), srv.AuthURL+"?"+q.Encode())
			if err != nil {
				t.Fatal(err)
			}
			form := url.Values{"grant_type": {"authorization_code"}, "code": {back.Query().Get("code")}, "redirect_uri": {redirect},
				"code_verifier": {verifier}, "client_id": {srv.ClientID}, "client_secret": {srv.ClientSecret}}
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.TokenURL, strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Accept", "application/json")
			var tok struct {
				AccessToken string `json:"access_token"`
			}
			decode(t, req, &tok)
			req, _ = http.NewRequestWithContext(t.Context(), http.MethodGet, tt.path(srv), nil)
			req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
			if tt.ua != "" {
				req.Header.Set("User-Agent", tt.ua)
			} else if tt.provider == providertest.GitHub {
				req.Header["User-Agent"] = []string{""}
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.status)
			}
			if tt.status != http.StatusOK {
				return
			}
			got := map[string]any{}
			if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
				t.Fatal(err)
			}
			for k, v := range tt.want {
				if gv, ok := got[k]; !ok || gv != v {
					t.Errorf("%s = %#v (present %v), want %#v", k, gv, ok, v)
				}
			}
			for _, k := range tt.absent {
				if _, ok := got[k]; ok {
					t.Errorf("%s present, want absent", k)
				}
			}
		})
	}
}

func decode(t *testing.T, req *http.Request, dst any) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s: status %d", req.Method, req.URL, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(dst); err != nil {
		t.Fatal(err)
	}
}

var linkRE = regexp.MustCompile(`id="(authorize|cancel)" href="([^"]+)"`)

func TestConsentPage(t *testing.T) {
	tests := []struct {
		link      string
		wantError string
	}{
		{"authorize", ""},
		{"cancel", "access_denied"},
	}
	for _, name := range names {
		for _, tt := range tests {
			t.Run(name+"/"+tt.link, func(t *testing.T) {
				srv := providertest.New(t, name, "cid", "csecret", providertest.WithConsentPage())
				srv.QueueUser(providertest.User{ID: "7", Login: "grace", Name: "Grace Hopper"})
				resp := get(t, srv.AuthURL+"?"+authParams(srv).Encode())
				body, err := io.ReadAll(resp.Body)
				if err != nil {
					t.Fatal(err)
				}
				if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
					t.Fatalf("got %s %s, want the HTML consent page", resp.Status, resp.Header.Get("Content-Type"))
				}
				if !strings.Contains(string(body), "Grace Hopper") {
					t.Errorf("page does not name the queued user:\n%s", body)
				}
				links := map[string]string{}
				for _, m := range linkRE.FindAllStringSubmatch(string(body), -1) {
					links[m[1]] = html.UnescapeString(m[2])
				}
				href, ok := links[tt.link]
				if !ok {
					t.Fatalf("no %q link in:\n%s", tt.link, body)
				}
				base, _ := url.Parse(srv.AuthURL)
				target, err := base.Parse(href)
				if err != nil {
					t.Fatal(err)
				}
				back, err := providertest.Authorize(t.Context(), target.String())
				if err != nil {
					t.Fatal(err)
				}
				q := back.Query()
				if q.Get("state") != "st" || q.Get("error") != tt.wantError || (tt.wantError == "") != q.Has("code") {
					t.Fatalf("callback query %v, want state st, error %q", q, tt.wantError)
				}
			})
		}
	}
}

func TestEnv(t *testing.T) {
	tests := []struct {
		provider string
		want     []string
	}{
		{providertest.Google, []string{"CLIENT_ID", "CLIENT_SECRET", "AUTH_URL", "TOKEN_URL", "PROFILE_URL", "ISSUER"}},
		{providertest.Discord, []string{"CLIENT_ID", "CLIENT_SECRET", "AUTH_URL", "TOKEN_URL", "PROFILE_URL"}},
		{providertest.GitHub, []string{"CLIENT_ID", "CLIENT_SECRET", "AUTH_URL", "TOKEN_URL", "PROFILE_URL", "EMAILS_URL"}},
	}
	for _, tt := range tests {
		t.Run(tt.provider, func(t *testing.T) {
			srv := providertest.New(t, tt.provider, "cid", "csecret")
			env := srv.Env()
			if len(env) != len(tt.want) {
				t.Errorf("Env has %d variables, want %d: %v", len(env), len(tt.want), env)
			}
			prefix := "OAUTH_" + strings.ToUpper(tt.provider) + "_"
			for _, k := range tt.want {
				v := env[prefix+k]
				if v == "" {
					t.Errorf("%s%s missing", prefix, k)
				}
				if strings.HasSuffix(k, "_URL") && !strings.HasPrefix(v, srv.URL+"/") {
					t.Errorf("%s%s = %q, not on %s", prefix, k, v, srv.URL)
				}
			}
			if env[prefix+"CLIENT_ID"] != "cid" || env[prefix+"CLIENT_SECRET"] != "csecret" {
				t.Errorf("credentials in Env: %v", env)
			}
		})
	}
}

func TestStartWithoutTest(t *testing.T) {
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := ln.Addr().String()
			ln.Close()
			srv, stop, err := providertest.Start(name, "cid", "csecret", providertest.WithAddr(addr))
			if err != nil {
				t.Fatalf("Start: %v", err)
			}
			if srv.URL != "http://"+addr {
				t.Errorf("URL = %s, want http://%s", srv.URL, addr)
			}
			if _, err := providertest.Authorize(t.Context(), srv.AuthURL+"?"+authParams(srv).Encode()); err != nil {
				t.Errorf("authorize on a running stand-in: %v", err)
			}
			stop()
			stop() // a second stop is harmless
			if _, err := providertest.Authorize(t.Context(), srv.AuthURL+"?"+authParams(srv).Encode()); err == nil {
				t.Error("the stand-in still answers after stop")
			}
		})
	}
	if _, _, err := providertest.Start("gitlab", "cid", "csecret"); err == nil {
		t.Error("Start accepted an unknown provider")
	}
	if _, _, err := providertest.Start(providertest.Discord, "", "csecret"); err == nil {
		t.Error("Start accepted an empty client id")
	}
}

// TestGitHubRedirectURIs holds the GitHub stand-in to GitHub's rule for an OAuth
// app's one callback URL (docs.github.com, "Authorizing OAuth apps", Redirect URLs):
// subdirectories and subdomains of the callback pass, anything else is sent to the
// registered callback with error=redirect_uri_mismatch.
func TestGitHubRedirectURIs(t *testing.T) {
	const callback = "https://api.example.com/auth/oauth"
	tests := []struct {
		name, redirectURI string
		ok                bool
	}{
		{"the callback itself", callback, true},
		{"the login callback below it", callback + "/github/callback", true},
		{"the link callback below it", callback + "/link/github/callback", true},
		{"a subdomain", "https://eu.api.example.com/auth/oauth/github/callback", true},
		{"missing: the callback", "", true},
		{"a sibling path", "https://api.example.com/auth/oauthx/github/callback", false},
		{"a parent path", "https://api.example.com/auth", false},
		{"a path escaping with dot segments", callback + "/../other", false},
		{"another port", "https://api.example.com:8443/auth/oauth/github/callback", false},
		{"another scheme", "http://api.example.com/auth/oauth/github/callback", false},
		{"another host", "https://api.example.org/auth/oauth/github/callback", false},
		{"a host ending like it", "https://evilapi.example.com/auth/oauth/github/callback", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := providertest.New(t, providertest.GitHub, "cid", "csecret", providertest.WithRedirectURIs(callback))
			q := authParams(srv)
			if tt.redirectURI == "" {
				q.Del("redirect_uri")
			} else {
				q.Set("redirect_uri", tt.redirectURI)
			}
			resp := get(t, srv.AuthURL+"?"+q.Encode())
			loc, err := resp.Location()
			if resp.StatusCode != http.StatusFound || err != nil {
				t.Fatalf("got %s (%v), want a redirect", resp.Status, err)
			}
			back := loc.Query()
			target := loc.Scheme + "://" + loc.Host + loc.Path
			want := tt.redirectURI
			if !tt.ok || want == "" {
				want = callback
			}
			if target != want {
				t.Errorf("redirected to %s, want %s", target, want)
			}
			if tt.ok && (back.Get("code") == "" || back.Has("error")) {
				t.Errorf("query %v, want a code", back)
			}
			if !tt.ok && (back.Get("error") != "redirect_uri_mismatch" || back.Has("code") || back.Get("state") != "st") {
				t.Errorf("query %v, want error=redirect_uri_mismatch with the state", back)
			}
		})
	}
	t.Run("loopback callbacks take any port", func(t *testing.T) {
		srv := providertest.New(t, providertest.GitHub, "cid", "csecret", providertest.WithRedirectURIs("http://127.0.0.1:3000/auth/oauth"))
		q := authParams(srv)
		q.Set("redirect_uri", "http://127.0.0.1:4711/auth/oauth/github/callback")
		if loc, _ := get(t, srv.AuthURL+"?"+q.Encode()).Location(); loc == nil || loc.Port() != "4711" || !loc.Query().Has("code") {
			t.Errorf("redirected to %v, want the loopback address with a code", loc)
		}
	})
	t.Run("an OAuth app has one callback URL", func(t *testing.T) {
		if _, _, err := providertest.Start(providertest.GitHub, "cid", "csecret",
			providertest.WithRedirectURIs(callback+"/github/callback", callback+"/link/github/callback")); err == nil {
			t.Error("two callback URLs accepted")
		}
	})
}
