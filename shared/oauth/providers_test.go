package oauth_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/mediacatalog/service/shared/oauth"
)

func TestLoadProviders(t *testing.T) {
	const secret = "s3cr3t-value-never-logged"
	tests := []struct {
		name    string
		env     map[string]string
		offered []string
		log     []string // substrings of the log
	}{
		{
			name:    "none configured",
			env:     map[string]string{},
			offered: nil,
			log:     []string{`offered=[]`, `skipped="[google discord github]"`},
		},
		{
			name: "google only; github without a secret",
			env: map[string]string{
				"OAUTH_GOOGLE_CLIENT_ID": "g-id", "OAUTH_GOOGLE_CLIENT_SECRET": secret,
				"OAUTH_GITHUB_CLIENT_ID": "gh-id",
			},
			offered: []string{"google"},
			log:     []string{`offered=[google]`, `skipped="[discord github]"`},
		},
		{
			name: "all three",
			env: map[string]string{
				"OAUTH_GOOGLE_CLIENT_ID": "g", "OAUTH_GOOGLE_CLIENT_SECRET": secret,
				"OAUTH_DISCORD_CLIENT_ID": "d", "OAUTH_DISCORD_CLIENT_SECRET": secret,
				"OAUTH_GITHUB_CLIENT_ID": "gh", "OAUTH_GITHUB_CLIENT_SECRET": secret,
			},
			offered: []string{"google", "discord", "github"},
			log:     []string{`offered="[google discord github]"`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			got := oauth.LoadProviders(func(k string) string { return tc.env[k] }, nil, slog.New(slog.NewTextHandler(&buf, nil)))
			if len(got) != len(tc.offered) {
				t.Errorf("%d providers, want %v", len(got), tc.offered)
			}
			for _, name := range tc.offered {
				if p, ok := got[name]; !ok || p.Name() != name {
					t.Errorf("provider %s missing", name)
				}
			}
			for _, want := range tc.log {
				if !strings.Contains(buf.String(), want) {
					t.Errorf("log lacks %s:\n%s", want, buf.String())
				}
			}
			if strings.Contains(buf.String(), secret) {
				t.Error("the log holds a client secret")
			}
		})
	}
}
