package providers_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mediacatalog/service/infra/local/standins/providertest"
	"github.com/mediacatalog/service/shared/oauth/providers"
)

const callback = "http://localhost:3000/auth/oauth/%s/callback"

// stand-in starts the named provider's stand-in and the provider configured
// against it through FromEnv, as the service configures it.
func standIn(t *testing.T, name string, opts ...providertest.Option) (*providertest.Server, providers.Provider) {
	t.Helper()
	srv := providertest.New(t, name, "client-"+name, "secret-"+name, opts...)
	env := srv.Env()
	configured, skipped := providers.FromEnv(func(k string) string { return env[k] }, nil)
	p, ok := configured[name]
	if !ok {
		t.Fatalf("FromEnv did not configure %s (skipped %v) from %v", name, skipped, env)
	}
	return srv, p
}

// authorize runs the browser half of the flow and returns the query the
// provider sent back to the callback, and the PKCE verifier.
func authorize(t *testing.T, p providers.Provider) (url.Values, string) {
	t.Helper()
	verifier, challenge := providers.PKCE()
	const state = "csrf-state-123"
	back, err := providertest.Authorize(t.Context(), p.AuthCodeURL(state, challenge, redirectFor(p)))
	if err != nil {
		t.Fatalf("authorize: %v", err)
	}
	if got := back.Scheme + "://" + back.Host + back.Path; got != redirectFor(p) {
		t.Fatalf("redirected to %s, want %s", got, redirectFor(p))
	}
	q := back.Query()
	if q.Get("state") != state {
		t.Fatalf("state = %q, want %q", q.Get("state"), state)
	}
	return q, verifier
}

func redirectFor(p providers.Provider) string { return fmt.Sprintf(callback, p.Name()) }

// login runs the whole flow and returns the profile or the error.
func login(t *testing.T, p providers.Provider) (providers.Profile, error) {
	t.Helper()
	q, verifier := authorize(t, p)
	if err := providers.CallbackError(q); err != nil {
		return providers.Profile{}, err
	}
	return p.Exchange(t.Context(), q.Get("code"), verifier, redirectFor(p))
}

// flat is a Profile with its pointers spelled out, for comparison.
type flat struct {
	ID, Username, Email, Avatar string
	HasEmail, HasAvatar         bool
}

func flatten(p providers.Profile) flat {
	f := flat{ID: p.ProviderUserID, Username: p.Username}
	if p.Email != nil {
		f.Email, f.HasEmail = *p.Email, true
	}
	if p.AvatarURL != nil {
		f.Avatar, f.HasAvatar = *p.AvatarURL, true
	}
	return f
}

func want(id, username, email, avatar string) flat {
	return flat{ID: id, Username: username, Email: email, HasEmail: email != "", Avatar: avatar, HasAvatar: avatar != ""}
}

func TestExchangeProfile(t *testing.T) {
	tests := []struct {
		name     string
		provider string
		setup    func(*providertest.Server) // faults of the stand-in, before the login
		user     providertest.User
		want     flat
	}{
		{
			name:     "google",
			provider: providers.Google,
			user: providertest.User{ID: "108912345678901234567", Name: "Ada Lovelace", Email: "ada@example.com",
				EmailVerified: true, Avatar: "https://lh3.googleusercontent.com/a/ada=s96-c"},
			want: want("108912345678901234567", "Ada Lovelace", "ada@example.com", "https://lh3.googleusercontent.com/a/ada=s96-c"),
		},
		{
			name:     "google unverified email dropped",
			provider: providers.Google,
			user:     providertest.User{ID: "1001", Name: "Ben", Email: "ben@example.com", EmailVerified: false},
			want:     want("1001", "Ben", "", ""),
		},
		{
			name:     "discord uploaded avatar, global name preferred",
			provider: providers.Discord,
			user: providertest.User{ID: "80351110224678912", Login: "nelly", Name: "Nelly", Email: "nelly@example.com",
				EmailVerified: true, Avatar: "8342729096ea3675442027381ff50dfe"},
			want: want("80351110224678912", "Nelly", "nelly@example.com",
				"https://cdn.discordapp.com/avatars/80351110224678912/8342729096ea3675442027381ff50dfe.png"),
		},
		{
			name:     "discord animated avatar",
			provider: providers.Discord,
			user:     providertest.User{ID: "80351110224678912", Login: "nelly", Avatar: "a_1269e74af4df7417b13759eae50c83dc"},
			want: want("80351110224678912", "nelly", "",
				"https://cdn.discordapp.com/avatars/80351110224678912/a_1269e74af4df7417b13759eae50c83dc.gif"),
		},
		{
			name:     "discord default avatar, new username",
			provider: providers.Discord,
			user:     providertest.User{ID: "80351110224678912", Login: "nelly", Discriminator: "0"},
			// (80351110224678912 >> 22) % 6 == 5
			want: want("80351110224678912", "nelly", "", "https://cdn.discordapp.com/embed/avatars/5.png"),
		},
		{
			name:     "discord default avatar, legacy discriminator",
			provider: providers.Discord,
			user:     providertest.User{ID: "80351110224678912", Login: "nelly", Discriminator: "1337"},
			// 1337 % 5 == 2
			want: want("80351110224678912", "nelly", "", "https://cdn.discordapp.com/embed/avatars/2.png"),
		},
		{
			name:     "discord unverified email dropped",
			provider: providers.Discord,
			user:     providertest.User{ID: "41771983423143937", Login: "someone", Email: "someone@example.com", EmailVerified: false},
			// (41771983423143937 >> 22) % 6 == 0
			want: want("41771983423143937", "someone", "", "https://cdn.discordapp.com/embed/avatars/0.png"),
		},
		{
			name:     "github primary verified address over the public one",
			provider: providers.GitHub,
			user: providertest.User{ID: "583231", Login: "octocat", Name: "The Octocat",
				Avatar: "https://avatars.githubusercontent.com/u/583231?v=4",
				Emails: []providertest.Email{
					{Email: "octocat@github.com", Verified: true, Visibility: "public"},
					{Email: "other@example.com", Primary: true, Verified: true, Visibility: "private"}}},
			want: want("583231", "The Octocat", "other@example.com", "https://avatars.githubusercontent.com/u/583231?v=4"),
		},
		{
			name:     "github public address when the list has it verified and no primary is",
			provider: providers.GitHub,
			user: providertest.User{ID: "583231", Login: "octocat",
				Emails: []providertest.Email{
					{Email: "unverified@example.com", Primary: true, Verified: false},
					{Email: "octocat@github.com", Verified: true, Visibility: "public"}}},
			want: want("583231", "octocat", "octocat@github.com", ""),
		},
		{
			name:     "github user:email withheld: login without an email",
			provider: providers.GitHub,
			user: providertest.User{ID: "583231", Login: "octocat", Withhold: []string{"user:email"},
				Emails: []providertest.Email{{Email: "octocat@github.com", Primary: true, Verified: true, Visibility: "public"}}},
			want: want("583231", "octocat", "", ""),
		},
		{
			name:     "github /user/emails failing alone: login without an email",
			provider: providers.GitHub,
			setup:    func(s *providertest.Server) { s.FailNextEmails() },
			user: providertest.User{ID: "583231", Login: "octocat",
				Emails: []providertest.Email{{Email: "octocat@github.com", Primary: true, Verified: true, Visibility: "public"}}},
			want: want("583231", "octocat", "", ""),
		},
		{
			name:     "google issuer in its bare form",
			provider: providers.Google,
			setup:    func(s *providertest.Server) { s.AlterNextIDToken(providertest.IDTokenBareIssuer) },
			user:     providertest.User{ID: "1002", Name: "Cleo", Email: "cleo@example.com", EmailVerified: true},
			want:     want("1002", "Cleo", "cleo@example.com", ""),
		},
		{
			name:     "google email_verified as the text true",
			provider: providers.Google,
			user:     providertest.User{ID: "1003", Name: "Dan", Email: "dan@example.com", EmailVerified: true, EmailVerifiedText: true},
			want:     want("1003", "Dan", "dan@example.com", ""),
		},
		{
			name:     "google email_verified as the text false",
			provider: providers.Google,
			user:     providertest.User{ID: "1004", Name: "Eve", Email: "eve@example.com", EmailVerified: false, EmailVerifiedText: true},
			want:     want("1004", "Eve", "", ""),
		},
		{
			name:     "discord without a discriminator",
			provider: providers.Discord,
			user:     providertest.User{ID: "80351110224678912", Login: "nelly"},
			want:     want("80351110224678912", "nelly", "", "https://cdn.discordapp.com/embed/avatars/5.png"),
		},
		{
			name:     "github email from /user/emails primary verified",
			provider: providers.GitHub,
			user: providertest.User{ID: "9919", Login: "hubot", Avatar: "https://avatars.githubusercontent.com/u/9919?v=4",
				Emails: []providertest.Email{
					{Email: "secondary@example.com", Verified: true, Visibility: "private"},
					{Email: "primary@example.com", Primary: true, Verified: true, Visibility: "private"},
				}},
			want: want("9919", "hubot", "primary@example.com", "https://avatars.githubusercontent.com/u/9919?v=4"),
		},
		{
			name:     "github unverified primary dropped",
			provider: providers.GitHub,
			user: providertest.User{ID: "9919", Login: "hubot",
				Emails: []providertest.Email{
					{Email: "primary@example.com", Primary: true, Verified: false},
					{Email: "verified-secondary@example.com", Verified: true},
				}},
			want: want("9919", "hubot", "", ""),
		},
		{
			name:     "github no emails",
			provider: providers.GitHub,
			user:     providertest.User{ID: "1", Login: "mojombo", Emails: []providertest.Email{}},
			want:     want("1", "mojombo", "", ""),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, p := standIn(t, tt.provider)
			srv.QueueUser(tt.user)
			if tt.setup != nil {
				tt.setup(srv)
			}
			got, err := login(t, p)
			if err != nil {
				t.Fatalf("login: %v", err)
			}
			if f := flatten(got); f != tt.want {
				t.Errorf("profile\n got %+v\nwant %+v", f, tt.want)
			}
		})
	}
}

func TestExchangeFailures(t *testing.T) {
	tests := []struct {
		name string
		// run drives one attempt against the stand-in and returns its error.
		run  func(t *testing.T, srv *providertest.Server, p providers.Provider) error
		want error
	}{
		{
			name: "wrong verifier",
			run: func(t *testing.T, _ *providertest.Server, p providers.Provider) error {
				q, _ := authorize(t, p)
				other, _ := providers.PKCE()
				_, err := p.Exchange(t.Context(), q.Get("code"), other, redirectFor(p))
				return err
			},
			want: providers.ErrExchange,
		},
		{
			name: "denied at consent",
			run: func(t *testing.T, srv *providertest.Server, p providers.Provider) error {
				srv.QueueDenial()
				q, _ := authorize(t, p)
				if q.Has("code") {
					t.Errorf("a denial carried a code: %v", q)
				}
				return providers.CallbackError(q)
			},
			want: providers.ErrAccessDenied,
		},
		{
			name: "token endpoint failure",
			run: func(t *testing.T, srv *providertest.Server, p providers.Provider) error {
				srv.FailNextToken()
				_, err := login(t, p)
				return err
			},
			want: providers.ErrExchange,
		},
		{
			name: "profile endpoint failure",
			run: func(t *testing.T, srv *providertest.Server, p providers.Provider) error {
				srv.FailNextProfile()
				_, err := login(t, p)
				return err
			},
			want: providers.ErrProfile,
		},
		{
			name: "rate limited, the provider's JSON answer",
			run: func(t *testing.T, srv *providertest.Server, p providers.Provider) error {
				srv.RateLimitNext(providertest.RateLimitJSON)
				_, err := login(t, p)
				return err
			},
			want: providers.ErrRateLimited,
		},
		{
			name: "rate limited, an HTML page",
			run: func(t *testing.T, srv *providertest.Server, p providers.Provider) error {
				srv.RateLimitNext(providertest.RateLimitHTML)
				_, err := login(t, p)
				return err
			},
			want: providers.ErrRateLimited,
		},
		{
			name: "code replayed",
			run: func(t *testing.T, _ *providertest.Server, p providers.Provider) error {
				q, verifier := authorize(t, p)
				if _, err := p.Exchange(t.Context(), q.Get("code"), verifier, redirectFor(p)); err != nil {
					t.Fatalf("first exchange: %v", err)
				}
				_, err := p.Exchange(t.Context(), q.Get("code"), verifier, redirectFor(p))
				return err
			},
			want: providers.ErrExchange,
		},
		{
			name: "redirect address differs from the authorization request",
			run: func(t *testing.T, _ *providertest.Server, p providers.Provider) error {
				q, verifier := authorize(t, p)
				_, err := p.Exchange(t.Context(), q.Get("code"), verifier, "http://localhost:3000/auth/oauth/link/"+p.Name()+"/callback")
				return err
			},
			want: providers.ErrExchange,
		},
		{
			name: "wrong client secret",
			run: func(t *testing.T, srv *providertest.Server, _ providers.Provider) error {
				env := srv.Env()
				env["OAUTH_"+strings.ToUpper(srv.Provider)+"_CLIENT_SECRET"] = "not-the-secret"
				configured, _ := providers.FromEnv(func(k string) string { return env[k] }, nil)
				p := configured[srv.Provider]
				q, verifier := authorize(t, p)
				_, err := p.Exchange(t.Context(), q.Get("code"), verifier, redirectFor(p))
				return err
			},
			want: providers.ErrExchange,
		},
		{
			name: "unknown code",
			run: func(t *testing.T, _ *providertest.Server, p providers.Provider) error {
				_, verifier := providers.PKCE()
				_, err := p.Exchange(t.Context(), "made-up-code", verifier, redirectFor(p))
				return err
			},
			want: providers.ErrExchange,
		},
		{
			name: "empty code",
			run: func(t *testing.T, _ *providertest.Server, p providers.Provider) error {
				_, verifier := providers.PKCE()
				_, err := p.Exchange(t.Context(), "", verifier, redirectFor(p))
				return err
			},
			want: providers.ErrExchange,
		},
	}
	for _, name := range providers.Names() {
		for _, tt := range tests {
			t.Run(name+"/"+tt.name, func(t *testing.T) {
				srv, p := standIn(t, name)
				err := tt.run(t, srv, p)
				t.Logf("error: %v", err)
				if !errors.Is(err, tt.want) {
					t.Fatalf("error = %v, want %v", err, tt.want)
				}
				if strings.Contains(err.Error(), srv.ClientSecret) {
					t.Errorf("error text holds the client secret: %v", err)
				}
			})
		}
	}
}

func TestCallbackError(t *testing.T) {
	tests := []struct {
		query url.Values
		want  error
	}{
		{url.Values{"code": {"abc"}, "state": {"s"}}, nil},
		{url.Values{"error": {"access_denied"}, "state": {"s"}}, providers.ErrAccessDenied},
		{url.Values{"error": {"invalid_scope"}}, providers.ErrExchange},
		{url.Values{"error": {"server_error"}}, providers.ErrExchange},
	}
	for _, tt := range tests {
		t.Run(tt.query.Encode(), func(t *testing.T) {
			err := providers.CallbackError(tt.query)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("error = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("error = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestGoogleIDTokenChecked(t *testing.T) {
	srv := providertest.NewGoogle(t, "client-google", "secret-google")
	tests := []struct {
		name   string
		issuer string
		change providertest.IDTokenChange
		want   error
	}{
		{"issuer of the stand-in", srv.Issuer, 0, nil},
		{"other issuer", "https://accounts.google.com", 0, providers.ErrExchange},
		{"no ID token", srv.Issuer, providertest.IDTokenMissing, providers.ErrExchange},
		{"expired", srv.Issuer, providertest.IDTokenExpired, providers.ErrExchange},
		{"no expiry", srv.Issuer, providertest.IDTokenNoExpiry, providers.ErrExchange},
		{"issued to another client", srv.Issuer, providertest.IDTokenOtherAudience, providers.ErrExchange},
		{"authorized party another client", srv.Issuer, providertest.IDTokenOtherParty, providers.ErrExchange},
		{"several audiences, no authorized party", srv.Issuer, providertest.IDTokenNoPartyManyAudiences, providers.ErrExchange},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := providers.New(providers.Google, providers.Credentials{ClientID: srv.ClientID, ClientSecret: srv.ClientSecret},
				providers.Endpoints{AuthURL: srv.AuthURL, TokenURL: srv.TokenURL, ProfileURL: srv.ProfileURL, Issuer: tt.issuer}, nil)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			if tt.change != 0 {
				srv.AlterNextIDToken(tt.change)
			}
			_, err = login(t, p)
			if tt.want == nil && err != nil {
				t.Fatalf("login: %v", err)
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("error = %v, want %v", err, tt.want)
			}
		})
	}
}

// TestBounded: profile answers are size-limited and requests time out.
func TestBounded(t *testing.T) {
	huge := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"80351110224678912","username":"`)
		fmt.Fprint(w, strings.Repeat("x", 2<<20))
		fmt.Fprint(w, `"}`)
	}))
	t.Cleanup(huge.Close)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	t.Cleanup(slow.Close)
	notJSON := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html>maintenance</html>")
	}))
	t.Cleanup(notJSON.Close)

	srv := providertest.NewDiscord(t, "client-discord", "secret-discord")
	tests := []struct {
		name    string
		profile string
		timeout time.Duration
		want    error
	}{
		{"profile larger than the limit", huge.URL, 0, providers.ErrProfile},
		{"profile too slow", slow.URL, 200 * time.Millisecond, providers.ErrProfile},
		{"profile not JSON", notJSON.URL, 0, providers.ErrProfile},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var client *http.Client
			if tt.timeout > 0 {
				client = &http.Client{Timeout: tt.timeout}
			}
			p, err := providers.New(providers.Discord, providers.Credentials{ClientID: srv.ClientID, ClientSecret: srv.ClientSecret},
				providers.Endpoints{AuthURL: srv.AuthURL, TokenURL: srv.TokenURL, ProfileURL: tt.profile}, client)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			start := time.Now()
			_, err = login(t, p)
			t.Logf("error: %v", err)
			if !errors.Is(err, tt.want) {
				t.Fatalf("error = %v, want %v", err, tt.want)
			}
			if tt.timeout > 0 && time.Since(start) > 3*time.Second {
				t.Errorf("took %v with a %v timeout", time.Since(start), tt.timeout)
			}
		})
	}
}

func TestFromEnv(t *testing.T) {
	full := func(p string) map[string]string {
		return map[string]string{"OAUTH_" + p + "_CLIENT_ID": "id", "OAUTH_" + p + "_CLIENT_SECRET": "secret"}
	}
	merge := func(ms ...map[string]string) map[string]string {
		out := map[string]string{}
		for _, m := range ms {
			for k, v := range m {
				out[k] = v
			}
		}
		return out
	}
	tests := []struct {
		name        string
		env         map[string]string
		wantNames   []string
		wantSkipped []string
	}{
		{"nothing configured", nil, nil, []string{"google", "discord", "github"}},
		{"all configured", merge(full("GOOGLE"), full("DISCORD"), full("GITHUB")), []string{"discord", "github", "google"}, nil},
		{"discord only", full("DISCORD"), []string{"discord"}, []string{"google", "github"}},
		{"secret missing", map[string]string{"OAUTH_GITHUB_CLIENT_ID": "id"}, nil, []string{"google", "discord", "github"}},
		{"id missing", map[string]string{"OAUTH_GOOGLE_CLIENT_SECRET": "secret"}, nil, []string{"google", "discord", "github"}},
		{"blank values", map[string]string{"OAUTH_GOOGLE_CLIENT_ID": "  ", "OAUTH_GOOGLE_CLIENT_SECRET": " "}, nil, []string{"google", "discord", "github"}},
		{"bad endpoint override", merge(full("GITHUB"), map[string]string{"OAUTH_GITHUB_TOKEN_URL": "localhost:9000/token"}),
			nil, []string{"google", "discord", "github"}},
		{"lower-case names are not read", map[string]string{"OAUTH_github_CLIENT_ID": "id", "OAUTH_github_CLIENT_SECRET": "s"},
			nil, []string{"google", "discord", "github"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			configured, skipped := providers.FromEnv(func(k string) string { return tt.env[k] }, nil)
			var names []string
			for name, p := range configured {
				if p.Name() != name {
					t.Errorf("provider under %q is named %q", name, p.Name())
				}
				names = append(names, name)
			}
			slices.Sort(names)
			if !slices.Equal(names, tt.wantNames) {
				t.Errorf("configured = %v, want %v", names, tt.wantNames)
			}
			if !slices.Equal(skipped, tt.wantSkipped) {
				t.Errorf("skipped = %v, want %v", skipped, tt.wantSkipped)
			}
		})
	}
}

func TestAuthCodeURL(t *testing.T) {
	tests := []struct {
		provider string
		endpoint string
		scope    string
	}{
		{providers.Google, "https://accounts.google.com/o/oauth2/auth", "openid profile email"}, // golang.org/x/oauth2/endpoints
		{providers.Discord, "https://discord.com/oauth2/authorize", "identify email"},
		{providers.GitHub, "https://github.com/login/oauth/authorize", "read:user user:email"},
	}
	for _, tt := range tests {
		t.Run(tt.provider, func(t *testing.T) {
			p, err := providers.New(tt.provider, providers.Credentials{ClientID: "the-client", ClientSecret: "the-secret"}, providers.Endpoints{}, nil)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			verifier, challenge := providers.PKCE()
			redirect := "https://api.mediacatalog.app/auth/oauth/link/" + tt.provider + "/callback"
			raw := p.AuthCodeURL("state-1", challenge, redirect)
			u, err := url.Parse(raw)
			if err != nil {
				t.Fatalf("parse %q: %v", raw, err)
			}
			if got := u.Scheme + "://" + u.Host + u.Path; got != tt.endpoint {
				t.Errorf("endpoint = %s, want %s", got, tt.endpoint)
			}
			sum := sha256.Sum256([]byte(verifier))
			wantQuery := map[string]string{
				"client_id":             "the-client",
				"redirect_uri":          redirect,
				"response_type":         "code",
				"scope":                 tt.scope,
				"state":                 "state-1",
				"code_challenge":        base64.RawURLEncoding.EncodeToString(sum[:]),
				"code_challenge_method": "S256",
			}
			q := u.Query()
			for k, v := range wantQuery {
				if q.Get(k) != v {
					t.Errorf("%s = %q, want %q", k, q.Get(k), v)
				}
			}
			if strings.Contains(raw, "the-secret") || q.Has("code_verifier") {
				t.Errorf("consent URL leaks the secret or the verifier: %s", raw)
			}
		})
	}
}

func TestPKCE(t *testing.T) {
	seen := map[string]bool{}
	for i := range 20 {
		verifier, challenge := providers.PKCE()
		if len(verifier) < 43 || len(verifier) > 128 {
			t.Fatalf("verifier %d has length %d", i, len(verifier))
		}
		if strings.Trim(verifier, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~") != "" {
			t.Fatalf("verifier %q has characters outside RFC 7636's set", verifier)
		}
		sum := sha256.Sum256([]byte(verifier))
		if want := base64.RawURLEncoding.EncodeToString(sum[:]); challenge != want {
			t.Fatalf("challenge = %q, want %q", challenge, want)
		}
		if seen[verifier] {
			t.Fatalf("verifier repeated: %q", verifier)
		}
		seen[verifier] = true
	}
}

func TestNewRejects(t *testing.T) {
	creds := providers.Credentials{ClientID: "id", ClientSecret: "secret"}
	tests := []struct {
		name     string
		provider string
		creds    providers.Credentials
		ep       providers.Endpoints
	}{
		{"unknown provider", "gitlab", creds, providers.Endpoints{}},
		{"no secret", providers.Google, providers.Credentials{ClientID: "id"}, providers.Endpoints{}},
		{"relative token URL", providers.Discord, creds, providers.Endpoints{TokenURL: "/token"}},
		{"non-http profile URL", providers.GitHub, creds, providers.Endpoints{ProfileURL: "ftp://example.com/user"}},
		{"bad emails URL", providers.GitHub, creds, providers.Endpoints{EmailsURL: "::"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := providers.New(tt.provider, tt.creds, tt.ep, nil); err == nil {
				t.Fatal("New succeeded, want an error")
			}
		})
	}
}

func TestExchangeHonoursContext(t *testing.T) {
	_, p := standIn(t, providers.Discord)
	q, verifier := authorize(t, p)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := p.Exchange(ctx, q.Get("code"), verifier, redirectFor(p))
	if !errors.Is(err, providers.ErrExchange) || !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want ErrExchange wrapping context.Canceled", err)
	}
}

// TestConcurrentLogins runs logins side by side against one stand-in per
// provider; each must get its own user's profile back.
func TestConcurrentLogins(t *testing.T) {
	for _, name := range providers.Names() {
		t.Run(name, func(t *testing.T) {
			srv, p := standIn(t, name)
			const n = 8
			type result struct {
				profile providers.Profile
				err     error
			}
			results := make(chan result, n)
			codes := make(chan [2]string, n)
			for i := range n {
				srv.QueueUser(providertest.User{ID: fmt.Sprint(1000 + i), Login: fmt.Sprint("user", i)})
				q, verifier := authorize(t, p)
				codes <- [2]string{q.Get("code"), verifier}
			}
			close(codes)
			for c := range codes {
				go func() {
					profile, err := p.Exchange(t.Context(), c[0], c[1], redirectFor(p))
					results <- result{profile, err}
				}()
			}
			seen := map[string]bool{}
			for range n {
				r := <-results
				if r.err != nil {
					t.Errorf("exchange: %v", r.err)
					continue
				}
				seen[r.profile.ProviderUserID] = true
			}
			if len(seen) != n {
				t.Errorf("got %d distinct users, want %d: %v", len(seen), n, seen)
			}
		})
	}
}

// toStandIn sends every request, whatever its host, to the stand-in at base: the
// provider's real addresses, answered by the stand-in's rules.
type toStandIn struct{ base *url.URL }

func (rt toStandIn) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	r.URL.Scheme, r.URL.Host, r.Host = rt.base.Scheme, rt.base.Host, rt.base.Host
	return http.DefaultTransport.RoundTrip(r)
}

// TestRealEndpointPaths logs in with the providers' real addresses (no endpoint
// override), each request routed to the stand-in, which serves the real paths:
// Discord's profile call must name an API version the stand-in serves (v10), and
// GitHub's must be api.github.com's /user and /user/emails.
func TestRealEndpointPaths(t *testing.T) {
	for _, name := range []string{providers.Discord, providers.GitHub} {
		t.Run(name, func(t *testing.T) {
			srv := providertest.New(t, name, "client-"+name, "secret-"+name)
			base, err := url.Parse(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			client := &http.Client{Transport: toStandIn{base}}
			p, err := providers.New(name, providers.Credentials{ClientID: srv.ClientID, ClientSecret: srv.ClientSecret}, providers.Endpoints{}, client)
			if err != nil {
				t.Fatal(err)
			}
			verifier, challenge := providers.PKCE()
			authURL, err := url.Parse(p.AuthCodeURL("st", challenge, redirectFor(p)))
			if err != nil {
				t.Fatal(err)
			}
			authURL.Scheme, authURL.Host = base.Scheme, base.Host
			back, err := providertest.Authorize(t.Context(), authURL.String())
			if err != nil {
				t.Fatal(err)
			}
			profile, err := p.Exchange(t.Context(), back.Query().Get("code"), verifier, redirectFor(p))
			if err != nil {
				t.Fatalf("login with the real addresses: %v", err)
			}
			if profile.ProviderUserID == "" || profile.Email == nil {
				t.Errorf("profile %+v, want the stand-in's default user with an email", flatten(profile))
			}
		})
	}
}
