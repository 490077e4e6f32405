package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mediacatalog/service/infra/local/localservices"
	"github.com/mediacatalog/service/infra/tests/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// lines collects what run writes, for a reader on another goroutine.
type lines struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// local is a running local server (make run) on the test's services.
type local struct {
	url      string            // http://localhost:<port>
	frontend string            // LOCAL_FRONTEND_URL: a page with id="frontend"
	env      map[string]string // the environment run was given
	db       *testenv.DB
	out      *lines
}

// startLocal runs the local server on a free port, on a fresh database and DynamoDB
// tables of its own, with env added to its environment, until the test ends.
func startLocal(t testing.TB, env map[string]string) *local {
	t.Helper()
	frontend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><title>Media Catalog</title><main id="frontend">Media Catalog frontend</main>`)
	}))
	t.Cleanup(frontend.Close)
	db := testenv.NewDB(t)
	suffix := strings.ToLower(rand.Text()[:8])
	l := &local{frontend: frontend.URL, db: db, out: &lines{}, env: map[string]string{
		"DATABASE_URL":       db.URL,
		"DYNAMODB_ENDPOINT":  testenv.DynamoEndpoint(t),
		"S3_ENDPOINT":        testenv.S3Endpoint(t),
		"OAUTH_STATE_TABLE":  "local-test-state-" + suffix,
		"RATE_LIMIT_TABLE":   "local-test-rate-" + suffix,
		"LOCAL_FRONTEND_URL": frontend.URL,
	}}
	maps.Copy(l.env, env)
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	args := []string{"-dir", t.TempDir(), "-port", "0"}
	go func() {
		done <- run(ctx, args, func(k string) string { return l.env[k] }, l.out, func(url string) { ready <- url })
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})
	select {
	case l.url = <-ready:
	case err := <-done:
		done <- err
		t.Fatalf("run ended before it was ready: %v\n%s", err, l.out)
	case <-time.After(3 * time.Minute):
		t.Fatalf("not ready after 3 minutes:\n%s", l.out)
	}
	return l
}

// get requests path without following redirects.
func (l *local) get(t *testing.T, path string, cookies ...*http.Cookie) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, l.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cookies {
		req.AddCookie(c)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(body)
}

// oauthLine is what run printed about provider.
func (l *local) oauthLine(provider string) string {
	for line := range strings.Lines(l.out.String()) {
		if strings.HasPrefix(line, "oauth "+provider+": ") {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

// TestOAuthOffered: a provider without credentials gets a local stand-in when
// DB_ENV=local, and only then; credentials in the environment win.
func TestOAuthOffered(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		// per provider: the start of the printed line ("" for none), and where
		// GET /auth/oauth/{provider} sends the browser ("" when it answers 400).
		want map[string][2]string
	}{
		{
			name: "no credentials: three stand-ins",
			want: map[string][2]string{
				"google":  {"oauth google: local stand-in at http://127.0.0.1:", "http://127.0.0.1:"},
				"discord": {"oauth discord: local stand-in at http://127.0.0.1:", "http://127.0.0.1:"},
				"github":  {"oauth github: local stand-in at http://127.0.0.1:", "http://127.0.0.1:"},
			},
		},
		{
			name: "credentials win",
			env:  map[string]string{"OAUTH_GOOGLE_CLIENT_ID": "real-id", "OAUTH_GOOGLE_CLIENT_SECRET": "real-secret"},
			want: map[string][2]string{
				"google":  {"oauth google: credentials from the environment", "https://accounts.google.com/"},
				"discord": {"oauth discord: local stand-in at http://127.0.0.1:", "http://127.0.0.1:"},
				"github":  {"oauth github: local stand-in at http://127.0.0.1:", "http://127.0.0.1:"},
			},
		},
		{
			name: "half the credentials: not offered",
			env:  map[string]string{"OAUTH_GITHUB_CLIENT_ID": "real-id"},
			want: map[string][2]string{
				"google":  {"oauth google: local stand-in at http://127.0.0.1:", "http://127.0.0.1:"},
				"discord": {"oauth discord: local stand-in at http://127.0.0.1:", "http://127.0.0.1:"},
				"github":  {"oauth github: not offered: set both OAUTH_GITHUB_CLIENT_ID and OAUTH_GITHUB_CLIENT_SECRET", ""},
			},
		},
		{
			name: "not DB_ENV=local: no stand-ins",
			env:  map[string]string{"DB_ENV": "staging", "JWT_SECRET": "a-staging-secret-of-at-least-thirty-two-bytes"},
			want: map[string][2]string{"google": {"", ""}, "discord": {"", ""}, "github": {"", ""}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := startLocal(t, tc.env)
			for provider, want := range tc.want {
				line := l.oauthLine(provider)
				if want[0] == "" && line != "" || !strings.HasPrefix(line, want[0]) {
					t.Errorf("%s: printed %q, want a line starting %q", provider, line, want[0])
				}
				if login := "log in at " + l.url + "/auth/oauth/" + provider; want[1] != "" && !strings.Contains(line, login) {
					t.Errorf("%s: the line %q does not say %q", provider, line, login)
				}
				resp, body := l.get(t, "/auth/oauth/"+provider)
				if want[1] == "" {
					if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "Unsupported provider") {
						t.Errorf("%s: GET /auth/oauth/%s: %d %s, want 400 Unsupported provider", provider, provider, resp.StatusCode, body)
					}
					continue
				}
				if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusFound || !strings.HasPrefix(loc, want[1]) {
					t.Errorf("%s: GET /auth/oauth/%s: %d to %q, want a redirect to %s...", provider, provider, resp.StatusCode, loc, want[1])
				}
			}
		})
	}
}

// TestLambdaFunctionsLinkNoLocalTools: the stand-ins and the docs page exist only in
// the local server; no Lambda function links them.
func TestLambdaFunctionsLinkNoLocalTools(t *testing.T) {
	root, err := localservices.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "list", "-deps", "./functions/...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range []string{
		"github.com/mediacatalog/service/infra/local/standins",
		"github.com/mediacatalog/service/infra/local/apidocs",
		"github.com/mediacatalog/service/infra/local/standins/providertest",
		"github.com/oauth2-proxy/mockoidc",
	} {
		for dep := range strings.Lines(string(out)) {
			if strings.TrimSpace(dep) == pkg {
				t.Errorf("a function links %s", pkg)
			}
		}
	}
	if !strings.Contains(string(out), "github.com/mediacatalog/service/shared/oauth\n") {
		t.Error("go list -deps ./functions/... does not list shared/oauth: the check above sees nothing")
	}
}
