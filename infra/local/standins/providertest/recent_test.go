package providertest

import (
	"context"
	"net/url"
	"strings"
	"testing"
)

// TestGrantsBounded: a stand-in that served many logins remembers only the newest
// maxGrants codes, tokens and (google) mockoidc sessions, so make run's memory does
// not grow with the logins it served; the newest still work, the oldest are unknown.
func TestGrantsBounded(t *testing.T) {
	for _, provider := range []string{Google, Discord, GitHub} {
		t.Run(provider, func(t *testing.T) {
			s := New(t, provider, "cid", "csecret")
			params := url.Values{
				"client_id":             {s.ClientID},
				"redirect_uri":          {"http://localhost:3000/auth/oauth/callback"},
				"response_type":         {"code"},
				"scope":                 {map[string]string{Google: "openid email", Discord: "identify", GitHub: "read:user"}[provider]},
				"state":                 {"st"},
				"code_challenge":        {strings.Repeat("A", 43)},
				"code_challenge_method": {"S256"},
			}
			var codes []string
			for range maxGrants + 10 {
				back, err := Authorize(context.Background(), s.AuthURL+"?"+params.Encode())
				if err != nil {
					t.Fatal(err)
				}
				codes = append(codes, back.Query().Get("code"))
			}
			if n := s.codes.len(); n > maxGrants {
				t.Errorf("%d codes remembered, want at most %d", n, maxGrants)
			}
			if s.oidc != nil && len(s.oidc.SessionStore.Store) > maxGrants {
				t.Errorf("mockoidc holds %d sessions, want at most %d", len(s.oidc.SessionStore.Store), maxGrants)
			}
			if _, ok := s.redeem(codes[0]); ok {
				t.Error("the oldest code was redeemed, want it forgotten")
			}
			g, ok := s.redeem(codes[len(codes)-1])
			if !ok {
				t.Fatal("the newest code was refused")
			}
			var tokens []string
			for range maxGrants + 10 {
				tokens = append(tokens, s.issueToken(g))
			}
			if n := s.tokens.len(); n > maxGrants {
				t.Errorf("%d tokens remembered, want at most %d", n, maxGrants)
			}
			if _, ok := s.session(tokens[0]); ok {
				t.Error("the oldest token was accepted, want it forgotten")
			}
			if _, ok := s.session(tokens[len(tokens)-1]); !ok {
				t.Error("the newest token was refused")
			}
		})
	}
}

func TestRecent(t *testing.T) {
	r := newRecent[int](3)
	for i, k := range []string{"a", "b", "c"} {
		if old := r.put(k, i); old != "" {
			t.Errorf("put %s forgot %q while not full", k, old)
		}
	}
	if _, ok := r.take("b"); !ok {
		t.Fatal("take b: missing")
	}
	tests := []struct{ put, forgotten string }{{"d", "a"}, {"e", "b"}, {"f", "c"}, {"g", "d"}}
	for _, tt := range tests {
		if old := r.put(tt.put, 0); old != tt.forgotten {
			t.Errorf("put %s forgot %q, want %q", tt.put, old, tt.forgotten)
		}
		if r.len() > 3 {
			t.Errorf("after put %s: %d entries, want at most 3", tt.put, r.len())
		}
	}
	for k, want := range map[string]bool{"a": false, "c": false, "e": true, "f": true, "g": true} {
		if _, ok := r.get(k); ok != want {
			t.Errorf("get %s: %v, want %v", k, ok, want)
		}
	}
}
