package oauth_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mediacatalog/service/infra/local/standins/providertest"
	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/adminusers"
	"github.com/mediacatalog/service/shared/httpapi"
)

// mallory is the intruder's own GitHub account.
var malloryGitHub = providertest.User{ID: "6666", Login: "mallory", Name: "Mallory", Emails: []providertest.Email{{Email: "mallory@example.com", Primary: true, Verified: true}}}

// sessionOf is the session id of a refreshToken cookie.
func (e *env) sessionOf(t *testing.T, refresh *http.Cookie) string {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.AddCookie(refresh)
	p, err := e.sessions.Authenticate(req)
	if err != nil {
		t.Fatalf("authenticate: %v", err)
	}
	return p.SessionID
}

// TestLinkNeedsRecentSignIn: the link start demands a session signed in within the
// last ten minutes (oauth.LinkSignInWindow); an older session's cookie, such as one
// stolen days ago, is sent to /settings?link_error=login_required, with an audit
// record of the refusal, and no state is issued. Before, any valid cookie could link.
func TestLinkNeedsRecentSignIn(t *testing.T) {
	tests := []struct {
		name   string
		age    time.Duration // of the session's sign-in
		linked bool
	}{
		{"just signed in", 0, true},
		{"signed in nine minutes ago", 9 * time.Minute, true},
		{"signed in eleven minutes ago", 11 * time.Minute, false},
		{"signed in two days ago", 48 * time.Hour, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			e := newEnv(t, envOptions{logs: &logs})
			ada := e.login(t, providertest.Google, &adaGoogle)
			id, sid := e.userOf(t, ada), e.sessionOf(t, ada)
			execSQL(t, e.db, `UPDATE sessions SET created_at = now() - make_interval(secs => $2) WHERE id = $1::uuid`,
				sid, tc.age.Seconds())
			e.stand[providertest.GitHub].QueueUser(adaGitHub)
			rec := e.do(t, http.MethodGet, "/auth/oauth/link/github", ada)
			refusal := fmt.Sprintf(`"actor_id":%d,"action":"refused","route":"GET /auth/oauth/link/{provider}"`, id)
			if !tc.linked {
				e.wantRedirect(t, rec, "/settings", url.Values{"link_error": {"login_required"}})
				if cookieNamed(rec.Result().Cookies(), e.stateCookie) != nil {
					t.Error("a refused link start set a state cookie")
				}
				if !strings.Contains(logs.String(), refusal) {
					t.Errorf("no record %s in\n%s", refusal, logs.String())
				}
				return
			}
			if rec.Code != http.StatusFound || !strings.HasPrefix(rec.Header().Get("Location"), e.stand[providertest.GitHub].URL) {
				t.Fatalf("link start: %d to %s, want the consent page", rec.Code, rec.Header().Get("Location"))
			}
			sc := cookieNamed(rec.Result().Cookies(), e.stateCookie)
			e.wantRedirect(t, e.callback(t, consent(t, rec.Header().Get("Location")), ada, sc), "/settings", url.Values{"link_success": {"github"}})
			if strings.Contains(logs.String(), `"action":"refused"`) {
				t.Errorf("a refusal recorded:\n%s", logs.String())
			}
		})
	}
}

// TestForcedLogoutEndsProviderLogin is an account takeover: with the victim's
// refreshToken cookie, an intruder links his own GitHub account to her; an admin then
// logs her out. The forced logout removes the link that the revoked session made, so
// the intruder's GitHub login is no longer her account (it signs up a user of its
// own), while her own Google sign-up stays. Were the link kept, the intruder would
// come back as her, roles included.
func TestForcedLogoutEndsProviderLogin(t *testing.T) {
	var logs bytes.Buffer
	e := newEnv(t, envOptions{logs: &logs})
	admin := e.tokenOf(t, e.demoUser(t, "admin"))
	ada := e.login(t, providertest.Google, &adaGoogle)
	adaID := e.userOf(t, ada)
	// The intruder replays ada's cookie.
	e.wantRedirect(t, e.link(t, providertest.GitHub, ada, &malloryGitHub), "/settings", url.Values{"link_success": {"github"}})
	if got := e.userOf(t, e.login(t, providertest.GitHub, &malloryGitHub)); got != adaID {
		t.Fatalf("before the logout the intruder's login is user %d, want ada %d", got, adaID)
	}

	adminMux := httpapi.Wrap(httpapi.NewMux(adminusers.Routes(adminusers.Deps{Store: e.db.DB, Auth: e.sessions, LockTTL: time.Minute})),
		httpapi.Options{Log: slog.New(slog.NewJSONHandler(&logs, nil))})
	rec := testenv.Do(t, adminMux, testenv.Request(http.MethodPost, fmt.Sprintf("/admin-users/logout/%d", adaID), nil, admin))
	wantMessage(t, rec, http.StatusOK, "User logged out successfully")

	if got := e.userOf(t, e.login(t, providertest.GitHub, &malloryGitHub)); got == adaID {
		t.Error("after the forced logout the intruder's GitHub login is still ada")
	}
	if got := queryOne[string](t, e.db, `SELECT string_agg(provider, ',' ORDER BY provider) FROM oauth_connections WHERE user_id = $1`, adaID); got != "google" {
		t.Errorf("ada's providers %q, want google", got)
	}
	if got := e.userOf(t, e.login(t, providertest.Google, &adaGoogle)); got != adaID {
		t.Errorf("ada's own Google login is user %d, want %d", got, adaID)
	}
	want := fmt.Sprintf(`"action":"user.unlink","target":{"kind":"user","id":%d},"changes":{"provider":"github","provider_username":%q,"by":"logout"}`, adaID, malloryGitHub.Name)
	if !strings.Contains(logs.String(), want) {
		t.Errorf("no record %s in\n%s", want, logs.String())
	}
}
