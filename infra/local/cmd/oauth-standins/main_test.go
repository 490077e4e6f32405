package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mediacatalog/service/infra/local/standins/providertest"
	"github.com/mediacatalog/service/shared/oauth/providers"
)

// lines collects written lines for a reader on another goroutine.
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

// start runs the command until the test ends and returns the variables it exported.
func start(t *testing.T, args ...string) map[string]string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := &lines{}
	done := make(chan error, 1)
	go func() { done <- run(ctx, args, out, io.Discard) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})
	vars := map[string]string{}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		select {
		case err := <-done:
			t.Fatalf("run ended early: %v", err)
		default:
		}
		sc := bufio.NewScanner(strings.NewReader(out.String()))
		for sc.Scan() {
			k, v, ok := strings.Cut(strings.TrimPrefix(sc.Text(), "export "), "=")
			if !ok || !strings.HasPrefix(sc.Text(), "export OAUTH_") {
				t.Fatalf("unexpected output line %q", sc.Text())
			}
			vars[k] = v
		}
		if vars["OAUTH_GITHUB_EMAILS_URL"] != "" {
			return vars
		}
	}
	t.Fatalf("no github variables after 10s; output:\n%s", out.String())
	return nil
}

func TestStandIns(t *testing.T) {
	const api = "http://localhost:3999"
	vars := start(t, "-port", "0", "-auto", "-api", api)
	configured, skipped := providers.FromEnv(func(k string) string { return vars[k] }, nil)
	if len(skipped) > 0 || len(configured) != 3 {
		t.Fatalf("configured %d providers, skipped %v; want all three", len(configured), skipped)
	}
	verifier, challenge := providers.PKCE()
	for _, name := range providers.Names() {
		t.Run(name, func(t *testing.T) {
			p := configured[name]
			tests := []struct {
				name     string
				redirect string
				ok       bool
			}{
				{"login callback", api + "/auth/oauth/" + name + "/callback", true},
				{"link callback", api + "/auth/oauth/link/" + name + "/callback", true},
				{"unregistered address", "https://evil.example/callback", false},
			}
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					cb, err := providertest.Authorize(context.Background(), p.AuthCodeURL("state-123", challenge, tc.redirect))
					if !tc.ok && name == providers.GitHub {
						// GitHub sends a mismatch to the app's one registered callback.
						if err != nil || cb.Host != "localhost:3999" || cb.Path != "/auth/oauth" ||
							cb.Query().Get("error") != "redirect_uri_mismatch" || cb.Query().Has("code") {
							t.Fatalf("unregistered address: %v %v, want the registered callback with redirect_uri_mismatch", cb, err)
						}
						return
					}
					if !tc.ok {
						if err == nil {
							t.Fatalf("the stand-in redirected to an unregistered address: %s", cb)
						}
						return
					}
					if err != nil {
						t.Fatal(err)
					}
					profile, err := p.Exchange(context.Background(), cb.Query().Get("code"), verifier, tc.redirect)
					if err != nil || profile.Username != "Jane Doe" {
						t.Fatalf("exchange: %+v, %v; want the default account Jane Doe", profile, err)
					}
				})
			}
		})
	}
}

func TestConsentPageByDefault(t *testing.T) {
	vars := start(t, "-port", "0")
	_, challenge := providers.PKCE()
	configured, _ := providers.FromEnv(func(k string) string { return vars[k] }, nil)
	resp, err := http.Get(configured[providers.Discord].AuthCodeURL("state-123", challenge, "http://localhost:3000/auth/oauth/discord/callback"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `id="authorize"`) {
		t.Errorf("status %d, want the consent page with an Authorize link", resp.StatusCode)
	}
}

func TestRefusesNonLoopback(t *testing.T) {
	if err := run(context.Background(), []string{"-host", "0.0.0.0"}, io.Discard, io.Discard); err == nil {
		t.Error("run listened beyond loopback")
	}
}
