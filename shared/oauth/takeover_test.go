package oauth_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mediacatalog/service/infra/local/standins/providertest"
	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/adminusers"
	"github.com/mediacatalog/service/shared/httpapi"
)

// adminGroup is the admin-users group over the env's database and sessions, logging
// to logs.
func (e *env) adminGroup(logs *bytes.Buffer) http.Handler {
	return httpapi.Wrap(httpapi.NewMux(adminusers.Routes(adminusers.Deps{Store: e.db.DB, Auth: e.sessions, LockTTL: time.Minute})),
		httpapi.Options{Log: slog.New(slog.NewJSONHandler(logs, nil))})
}

// linkedProviders is the linked_providers of the admin's detail of user id, as
// "provider:provider_username:by_session" items.
func linkedProviders(t *testing.T, admin http.Handler, cookie *http.Cookie, id int64) []string {
	t.Helper()
	rec := testenv.Do(t, admin, testenv.Request(http.MethodGet, fmt.Sprintf("/admin-users/id/%d", id), nil, cookie))
	if rec.Code != http.StatusOK {
		t.Fatalf("user detail: %d %s", rec.Code, rec.Body)
	}
	var u struct {
		Links []struct {
			Provider         string `json:"provider"`
			ProviderUsername string `json:"provider_username"`
			LinkedAt         string `json:"linked_at"`
			BySession        bool   `json:"by_session"`
		} `json:"linked_providers"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &u); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rec.Body.String(), `"linked_providers":`) {
		t.Errorf("the user detail has no linked_providers: %s", rec.Body)
	}
	out := []string{}
	for _, l := range u.Links {
		if _, err := time.Parse(time.RFC3339, l.LinkedAt); err != nil {
			t.Errorf("linked_at %q: %v", l.LinkedAt, err)
		}
		out = append(out, fmt.Sprintf("%s:%s:%v", l.Provider, l.ProviderUsername, l.BySession))
	}
	return out
}

// rolesOf is the names of user id's roles, by name.
func rolesOf(t *testing.T, e *env, id int64) string {
	t.Helper()
	return queryOne[string](t, e.db, `SELECT coalesce(string_agg(r.name, ',' ORDER BY r.name), '') FROM user_roles ur
		JOIN roles r ON r.id = ur.role_id WHERE ur.user_id = $1`, id)
}

// TestStolenCookieTakeoverUndone is the account takeover through a copy of a fresh
// cookie, end to end through the handlers and the provider stand-ins: the victim signs
// in with Google; the intruder, replaying her cookie within ten minutes, links his own
// GitHub and unlinks her Google; an admin then forces her logout. The logout removes
// the intruder's link although it is the account's only way to log in, and puts her
// Google back: her Google login is her own account again (roles and all), and the
// intruder's GitHub login signs up an account of his own holding only the default
// role. The admin's detail shows the links before and after, and every step is on the
// record. Were the intruder's link kept as the last way to log in, he would come back
// as her; were her Google not put back, her next login would sign up a stranger.
func TestStolenCookieTakeoverUndone(t *testing.T) {
	var logs bytes.Buffer
	e := newEnv(t, envOptions{logs: &logs})
	adminMux := e.adminGroup(&logs)
	admin := e.tokenOf(t, e.demoUser(t, "admin"))
	ada := e.login(t, providertest.Google, &adaGoogle)
	adaID := e.userOf(t, ada)
	execSQL(t, e.db, `INSERT INTO user_roles (user_id, role_id) SELECT $1, id FROM roles WHERE name = 'editor'`, adaID)

	// The intruder, with a copy of ada's cookie.
	e.wantRedirect(t, e.link(t, providertest.GitHub, ada, &malloryGitHub), "/settings", url.Values{"link_success": {"github"}})
	wantMessage(t, e.do(t, http.MethodDelete, "/auth/oauth/unlink/google", ada), http.StatusOK, "Provider unlinked successfully")
	if got := e.userOf(t, e.login(t, providertest.GitHub, &malloryGitHub)); got != adaID {
		t.Fatalf("before the logout the intruder's GitHub login is user %d, want ada %d", got, adaID)
	}
	if got := strings.Join(linkedProviders(t, adminMux, admin, adaID), " "); got != "github:Mallory:true" {
		t.Errorf("the admin sees ada's links %q, want github:Mallory:true", got)
	}

	rec := testenv.Do(t, adminMux, testenv.Request(http.MethodPost, fmt.Sprintf("/admin-users/logout/%d", adaID), nil, admin))
	wantMessage(t, rec, http.StatusOK, "User logged out successfully")

	if got := e.userOf(t, e.login(t, providertest.Google, &adaGoogle)); got != adaID {
		t.Errorf("after the forced logout ada's Google login is user %d, want her own account %d", got, adaID)
	}
	if got := e.userOf(t, e.login(t, providertest.GitHub, &malloryGitHub)); got == adaID {
		t.Errorf("after the forced logout the intruder's GitHub login is still ada (%d)", adaID)
	} else if roles := rolesOf(t, e, got); roles != "member" {
		t.Errorf("the intruder's new account %d holds %q, want member only", got, roles)
	}
	if got := rolesOf(t, e, adaID); got != "editor,member" {
		t.Errorf("ada's roles %q, want editor,member", got)
	}
	if got := strings.Join(linkedProviders(t, adminMux, admin, adaID), " "); got != "google:Ada Lovelace:false" {
		t.Errorf("after the logout the admin sees ada's links %q, want google:Ada Lovelace:false", got)
	}
	for _, want := range []string{
		fmt.Sprintf(`"action":"user.logout","target":{"kind":"user","id":%d},"changes":{"removed_links":["github"],"restored_links":["google"],"login_methods":["google"]}`, adaID),
		fmt.Sprintf(`"action":"user.unlink","target":{"kind":"user","id":%d},"changes":{"provider":"github","provider_username":"Mallory","by":"logout"}`, adaID),
		fmt.Sprintf(`"action":"user.restore-link","target":{"kind":"user","id":%d},"changes":{"provider":"google","provider_username":"Ada Lovelace","by":"logout","outcome":"restored"}`, adaID),
	} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("no record %s in\n%s", want, logs.String())
		}
	}
}

// TestTakeoverStandInAccount: after the intruder's unlink, the victim's Google login
// signed up a new user (ada-lovelace-2). The forced logout of her account moves her
// Google back from it: the provider account is hers (a cookie gives the intruder her
// session, never her Google), the new user was made by it after the unlink and holds
// only the default role, so it is her stand-in. It is left without a login, on the
// record for an admin to delete.
func TestTakeoverStandInAccount(t *testing.T) {
	var logs bytes.Buffer
	e := newEnv(t, envOptions{logs: &logs})
	adminMux := e.adminGroup(&logs)
	admin := e.tokenOf(t, e.demoUser(t, "admin"))
	ada := e.login(t, providertest.Google, &adaGoogle)
	adaID := e.userOf(t, ada)
	e.wantRedirect(t, e.link(t, providertest.GitHub, ada, &malloryGitHub), "/settings", url.Values{"link_success": {"github"}})
	wantMessage(t, e.do(t, http.MethodDelete, "/auth/oauth/unlink/google", ada), http.StatusOK, "Provider unlinked successfully")
	standIn := e.userOf(t, e.login(t, providertest.Google, &adaGoogle))
	if standIn == adaID {
		t.Fatal("ada's Google login after the unlink is still her account")
	}

	rec := testenv.Do(t, adminMux, testenv.Request(http.MethodPost, fmt.Sprintf("/admin-users/logout/%d", adaID), nil, admin))
	wantMessage(t, rec, http.StatusOK, "User logged out successfully")

	if got := e.userOf(t, e.login(t, providertest.Google, &adaGoogle)); got != adaID {
		t.Errorf("after the forced logout ada's Google login is user %d, want her own account %d", got, adaID)
	}
	if got := e.userOf(t, e.login(t, providertest.GitHub, &malloryGitHub)); got == adaID || got == standIn {
		t.Errorf("after the forced logout the intruder's GitHub login is user %d (ada %d, her stand-in %d)", got, adaID, standIn)
	}
	if got := linkedProviders(t, adminMux, admin, standIn); len(got) != 0 {
		t.Errorf("the stand-in keeps links %v", got)
	}
	for _, want := range []string{
		fmt.Sprintf(`"action":"user.restore-link","target":{"kind":"user","id":%d},"changes":{"provider":"google","provider_username":"Ada Lovelace","by":"logout","outcome":"moved","other_user":%d}`, adaID, standIn),
		fmt.Sprintf(`"action":"user.unlink","target":{"kind":"user","id":%d},"changes":{"provider":"google","provider_username":"Ada Lovelace","by":"logout","moved_to_user":%d}`, standIn, adaID),
	} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("no record %s in\n%s", want, logs.String())
		}
	}
}

// TestUnlinkNeedsRecentSignIn: an unlink, like a link start, needs a session signed in
// within ten minutes (oauth.LinkSignInWindow); an older one, such as a cookie copied
// days ago, is 401 Recent login required with an audit record of the refusal, and
// nothing is unlinked.
func TestUnlinkNeedsRecentSignIn(t *testing.T) {
	tests := []struct {
		name     string
		age      time.Duration // of the session's sign-in
		unlinked bool
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
			e.wantRedirect(t, e.link(t, providertest.GitHub, ada, &adaGitHub), "/settings", url.Values{"link_success": {"github"}})
			id, sid := e.userOf(t, ada), e.sessionOf(t, ada)
			execSQL(t, e.db, `UPDATE sessions SET created_at = now() - make_interval(secs => $2) WHERE id = $1::uuid`,
				sid, tc.age.Seconds())
			rec := e.do(t, http.MethodDelete, "/auth/oauth/unlink/google", ada)
			left := queryOne[string](t, e.db, `SELECT string_agg(provider, ',' ORDER BY provider) FROM oauth_connections WHERE user_id = $1`, id)
			refusal := fmt.Sprintf(`"actor_id":%d,"action":"refused","route":"DELETE /auth/oauth/unlink/{provider}"`, id)
			if tc.unlinked {
				wantMessage(t, rec, http.StatusOK, "Provider unlinked successfully")
				if left != "github" || strings.Contains(logs.String(), `"action":"refused"`) {
					t.Errorf("links left %q; records:\n%s", left, logs.String())
				}
				return
			}
			wantMessage(t, rec, http.StatusUnauthorized, "Recent login required")
			if left != "github,google" {
				t.Errorf("links left %q after a refused unlink, want github,google", left)
			}
			if !strings.Contains(logs.String(), refusal) {
				t.Errorf("no record %s in\n%s", refusal, logs.String())
			}
		})
	}
}
