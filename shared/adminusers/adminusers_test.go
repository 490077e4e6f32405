package adminusers_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/adminusers"
	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/auth"
	"github.com/mediacatalog/service/shared/catalog"
	"github.com/mediacatalog/service/shared/httpapi"
	"github.com/mediacatalog/service/shared/postgres"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// The stores the group's interfaces name are the real ones.
var (
	_ adminusers.Store = (*postgres.DB)(nil)
	_ auth.Guard       = (*auth.Sessions)(nil)
)

// server is the group's handler over a database with the demo data (users admin 1,
// editor 2, member 3), and the cookies of the demo users.
type server struct {
	*testenv.Group
	images *recordingImages
}

func newServer(t *testing.T) *server { return newServerCounting(t, 0) }

// newServerCounting is newServer with maxExact the store's threshold of exactly counted
// matches (0: the default).
func newServerCounting(t *testing.T, maxExact int64) *server {
	t.Helper()
	images := &recordingImages{}
	g := testenv.NewGroup(t, func(db *testenv.DB, sessions *auth.Sessions) []httpapi.Route {
		store := *db.DB
		store.MaxExact = maxExact
		return adminusers.Routes(adminusers.Deps{Store: &store, Auth: sessions, LockTTL: testenv.AuthConfig(t).LockTTL, Images: images})
	})
	return &server{Group: g, images: images}
}

// doMalformed is do for a request malformed on purpose that the server tolerates:
// the response is checked against the OpenAPI document, the request is not.
func (s *server) doMalformed(t *testing.T, method, target string, c *http.Cookie) (int, []byte) {
	t.Helper()
	rec := testenv.Do(t, s.Handler, testenv.Malformed(testenv.Request(method, target, nil, c)))
	return rec.Code, rec.Body.Bytes()
}

// users is every user with their roles, as JSON: what a failed write must leave alone.
func (s *server) users(t *testing.T) string {
	t.Helper()
	return s.DB.Text(t, `SELECT jsonb_agg(jsonb_build_object('u', to_jsonb(u),
		'roles', (SELECT jsonb_agg(role_id ORDER BY role_id) FROM user_roles WHERE user_id = u.id)) ORDER BY u.id)::text
		FROM users u`)
}

// recordingImages is the media side as the group sees it: it records the deleted users
// whose pictures it is asked to purge.
type recordingImages struct {
	mu     sync.Mutex
	purged []int64
	fail   bool
}

// The upload routes are the media code's, under test in images_test.go: here the
// instance is not a file service, so a request that reaches them answers 503.
func (r *recordingImages) Available() error {
	return apperr.New(apperr.Unavailable, apperr.MsgNoFileService)
}
func (r *recordingImages) MaxBodyBytes() int64 { return 0 }
func (r *recordingImages) UpdateUserImage(context.Context, int64, string) error {
	return errNotUnderTest
}
func (r *recordingImages) DeleteUserImage(context.Context, int64) error { return errNotUnderTest }

var errNotUnderTest = errors.New("the image routes are not under test here")

func (r *recordingImages) PurgeUsers(_ context.Context, id int64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.purged = append(r.purged, id)
	if r.fail {
		return errors.New("bucket unavailable")
	}
	return nil
}

type userList struct {
	Users    []catalog.UserListItem `json:"users"`
	Max      int64                  `json:"max"`
	MaxExact *bool                  `json:"max_exact"`
	From     int64                  `json:"from"`
	To       int64                  `json:"to"`
}

func TestListUsers(t *testing.T) {
	s := newServer(t)
	s.DB.Exec(t, `INSERT INTO users (id, slug, username, registered) VALUES (10, 'zed', 'Zed', '2020-01-01Z')`)
	s.DB.Exec(t, `INSERT INTO user_roles VALUES (10, 2)`)
	s.DB.Exec(t, `INSERT INTO user_locks (user_id, locked_by, expires_at) VALUES (3, 2, now() + interval '1 hour')`)
	tests := []struct {
		query         string
		users         string
		max, from, to int64
		lockOf3       string
	}{
		{"", "admin editor member Zed", 4, 0, 4, "editor"},
		{"?order=name-desc", "Zed member editor admin", 4, 0, 4, "editor"},
		{"?order=registered-asc&limit=2", "Zed admin", 4, 0, 2, ""},
		{"?order=registered-desc&limit=2&offset=1", "editor admin", 4, 1, 3, ""},
		{"?search=E&order=name-asc", "editor member Zed", 3, 0, 3, "editor"},
		{"?search=%20zE%20", "Zed", 1, 0, 1, ""},
		{"?role=2", "editor Zed", 2, 0, 2, ""},
		{"?role=2&search=zed", "Zed", 1, 0, 1, ""},
		{"?offset=10", "", 4, 10, 10, ""},
		{"?limit=99999999999999999999", "admin editor member Zed", 4, 0, 4, "editor"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			s.Counter.Reset()
			do := func() (int, []byte) { return s.Do(t, http.MethodGet, "/admin-users"+tt.query, nil, s.Admin) }
			if tt.query == "?limit=99999999999999999999" { // past int64: clamped, not refused
				do = func() (int, []byte) { return s.doMalformed(t, http.MethodGet, "/admin-users"+tt.query, s.Admin) }
			}
			status, body := do()
			if status != http.StatusOK {
				t.Fatalf("status %d: %s", status, body)
			}
			if n := s.Counter.Count(); n > 2 {
				t.Errorf("%d database round trips, want at most 2", n)
			}
			var got userList
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, u := range got.Users {
				names = append(names, u.Username)
				if u.ID == 3 {
					lock := ""
					if u.Lock != nil {
						lock = u.Lock.Username
					}
					if lock != tt.lockOf3 {
						t.Errorf("lock of member %q, want %q", lock, tt.lockOf3)
					}
				}
			}
			if strings.Join(names, " ") != tt.users || got.Max != tt.max || got.From != tt.from || got.To != tt.to {
				t.Errorf("users %q max %d from %d to %d, want %q %d %d %d",
					strings.Join(names, " "), got.Max, got.From, got.To, tt.users, tt.max, tt.from, tt.to)
			}
			if got.MaxExact == nil || !*got.MaxExact { // below the threshold: exact
				t.Errorf("max_exact %v, want true", got.MaxExact)
			}
			if !strings.Contains(string(body), `"users":[`) {
				t.Errorf("users is not an array: %s", body)
			}
		})
	}
}

// TestListUsersPastThreshold: with a threshold T of 2, a search or role filter
// matching more users reports max as a lower bound (at least T and to, max_exact
// false) on a full page, and exactly on a page shorter than its limit or within T of
// the end (a page at or past T counts up to offset+T); the list without a filter
// stays exact.
func TestListUsersPastThreshold(t *testing.T) {
	s := newServerCounting(t, 2)
	s.DB.Exec(t, `INSERT INTO users (id, slug, username, registered) VALUES (10, 'zed', 'Zed', '2020-01-01Z')`)
	s.DB.Exec(t, `INSERT INTO user_roles VALUES (10, 2)`)
	s.DB.Exec(t, `INSERT INTO users (id, slug, username, registered) VALUES (11, 'ed', 'Ed', '2020-01-02Z')`)
	s.DB.Exec(t, `INSERT INTO user_roles VALUES (11, 2)`)
	tests := []struct {
		query         string
		users         string
		max, from, to int64
		exact         bool
	}{
		{"?limit=2", "admin Ed", 5, 0, 2, true},
		{"?search=e&limit=1", "Ed", 2, 0, 1, false},
		{"?search=e&limit=2", "Ed editor", 2, 0, 2, false},
		{"?search=e&limit=3&offset=1", "editor member Zed", 4, 1, 4, false},
		{"?search=e&limit=4", "Ed editor member Zed", 4, 0, 4, false},
		{"?search=e&limit=5", "Ed editor member Zed", 4, 0, 4, true},
		{"?search=e&limit=1&offset=2", "member", 4, 2, 3, true},
		{"?search=e&offset=9", "", 4, 9, 9, true},
		{"?role=2&limit=1", "Ed", 2, 0, 1, false},
		{"?role=2&limit=1&offset=1", "editor", 2, 1, 2, false},
		{"?role=2&limit=1&offset=2", "Zed", 3, 2, 3, true},
		{"?role=2", "Ed editor Zed", 3, 0, 3, true},
		{"?role=2&search=z", "Zed", 1, 0, 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			status, body := s.Do(t, http.MethodGet, "/admin-users"+tt.query, nil, s.Admin)
			if status != http.StatusOK {
				t.Fatalf("status %d: %s", status, body)
			}
			var got userList
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, u := range got.Users {
				names = append(names, u.Username)
			}
			if strings.Join(names, " ") != tt.users || got.Max != tt.max || got.From != tt.from || got.To != tt.to ||
				got.MaxExact == nil || *got.MaxExact != tt.exact {
				t.Errorf("users %q max %d exact %s from %d to %d, want %q %d %t %d %d", strings.Join(names, " "),
					got.Max, body, got.From, got.To, tt.users, tt.max, tt.exact, tt.from, tt.to)
			}
		})
	}
}

func TestGetUser(t *testing.T) {
	s := newServer(t)
	s.Counter.Reset()
	status, body := s.Do(t, http.MethodGet, "/admin-users/id/2", nil, s.Admin)
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, body)
	}
	if n := s.Counter.Count(); n > 2 {
		t.Errorf("%d database round trips, want at most 2", n)
	}
	var u map[string]any
	if err := json.Unmarshal(body, &u); err != nil {
		t.Fatal(err)
	}
	// The editor logged in when the server was made; the detail has no lock field.
	if u["username"] != "editor" || u["slug"] != "editor" || u["logged_in"] != true || u["profile_image"] != nil ||
		u["age_verified"] != false || u["lock"] != nil {
		t.Errorf("user %s", body)
	}
	if _, ok := u["lock"]; ok {
		t.Errorf("the detail carries a lock: %s", body)
	}
	roles, _ := u["roles"].([]any)
	if len(roles) != 1 || roles[0].(map[string]any)["name"] != "editor" {
		t.Errorf("roles %v, want editor", u["roles"])
	}
}

// TestUserDetailListsLinks: the detail lists the user's linked providers (provider,
// provider_username, linked_at, and whether a session linked it, which a forced
// logout would remove), so an admin sees what a forced logout will leave; a user
// without any has an empty list.
func TestUserDetailListsLinks(t *testing.T) {
	s := newServer(t)
	s.DB.Exec(t, `DELETE FROM oauth_connections WHERE user_id IN (2, 3)`)
	s.DB.Exec(t, `INSERT INTO sessions (id, user_id, expires_at) VALUES ('00000000-0000-4000-8000-0000000000c1', 3, now() + interval '1 day')`)
	s.DB.Exec(t, `INSERT INTO oauth_connections (user_id, provider, provider_user_id, provider_username, provider_email, linked_at, linked_session) VALUES
		(3, 'google', 'g-3', 'Member M', 'member@example.com', '2026-01-02T03:04:05Z', NULL),
		(3, 'github', 'gh-3', 'mallory', NULL, '2026-02-03T04:05:06Z', '00000000-0000-4000-8000-0000000000c1')`)
	tests := []struct {
		id   int64
		want string
	}{
		{3, `[{"by_session":true,"linked_at":"2026-02-03T04:05:06Z","provider":"github","provider_username":"mallory"},` +
			`{"by_session":false,"linked_at":"2026-01-02T03:04:05Z","provider":"google","provider_username":"Member M"}]`},
		{2, `[]`},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.id), func(t *testing.T) {
			status, body := s.Do(t, http.MethodGet, fmt.Sprintf("/admin-users/id/%d", tc.id), nil, s.Admin)
			if status != http.StatusOK {
				t.Fatalf("status %d: %s", status, body)
			}
			var u map[string]json.RawMessage
			if err := json.Unmarshal(body, &u); err != nil {
				t.Fatal(err)
			}
			var links []map[string]any
			if err := json.Unmarshal(u["linked_providers"], &links); err != nil || links == nil {
				t.Fatalf("linked_providers %s: %v (detail %s)", u["linked_providers"], err, body)
			}
			for _, l := range links {
				at, err := time.Parse(time.RFC3339, fmt.Sprint(l["linked_at"]))
				if err != nil {
					t.Fatalf("linked_at %v: %v", l["linked_at"], err)
				}
				l["linked_at"] = at.UTC().Format(time.RFC3339)
			}
			if got, _ := json.Marshal(links); string(got) != tc.want {
				t.Errorf("linked_providers %s, want %s", got, tc.want)
			}
		})
	}
}

// TestDetailTakesTheEditLock: opening the detail with edit-users locks the user for the
// reader; another editor sees the lock and does not take it; a reader without
// edit-users takes nothing; an edit by the holder releases it.
func TestDetailTakesTheEditLock(t *testing.T) {
	s := newServer(t)
	viewer := testenv.SessionCookie(t, testenv.NewSessions(t, s.DB, s.Config), testenv.NewUser(t, s.DB, "viewer", auth.PermViewUsers))
	lockOf := func(id int64) string {
		_, body := s.Do(t, http.MethodGet, "/admin-users?limit=100", nil, s.Admin)
		var l userList
		_ = json.Unmarshal(body, &l)
		for _, u := range l.Users {
			if u.ID == id && u.Lock != nil {
				return u.Lock.Username
			}
		}
		return ""
	}
	steps := []struct {
		name    string
		method  string
		target  string
		body    any
		cookie  *http.Cookie
		holder3 string
	}{
		{"viewer opens", http.MethodGet, "/admin-users/id/3", nil, viewer, ""},
		{"editor opens", http.MethodGet, "/admin-users/id/3", nil, s.Editor, "editor"},
		{"admin opens too", http.MethodGet, "/admin-users/id/3", nil, s.Admin, "editor"},
		{"admin edits", http.MethodPost, "/admin-users/edit/3", map[string]any{"username": "member"}, s.Admin, "editor"},
		{"editor edits", http.MethodPost, "/admin-users/edit/3", map[string]any{"username": "member"}, s.Editor, ""},
		{"admin opens again", http.MethodGet, "/admin-users/id/3", nil, s.Admin, "admin"},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			if status, body := s.Do(t, st.method, st.target, st.body, st.cookie); status != http.StatusOK {
				t.Fatalf("status %d: %s", status, body)
			}
			if got := lockOf(3); got != st.holder3 {
				t.Errorf("lock held by %q, want %q", got, st.holder3)
			}
		})
	}
}

func TestEditUser(t *testing.T) {
	s := newServer(t)
	tests := []struct {
		name   string
		target string
		body   any
		status int
		msg    string
	}{
		{"edit", "/admin-users/edit/3", `{"username":" Member ","age_verified":true,"added_roles":[2],"removed_roles":[]}`, 200, adminusers.MsgUserEdited},
		{"defaults", "/admin-users/edit/3", `{"username":"member"}`, 200, adminusers.MsgUserEdited},
		{"nulls are defaults", "/admin-users/edit/3", `{"username":"member","age_verified":null,"added_roles":null,"removed_roles":null}`, 200, adminusers.MsgUserEdited},
		{"unknown fields are ignored", "/admin-users/edit/3", `{"username":"member","slug":"x"}`, 200, adminusers.MsgUserEdited},
		{"username taken", "/admin-users/edit/3", `{"username":"Editor"}`, 409, "Username already taken"},
		{"unknown user", "/admin-users/edit/999", `{"username":"ghost"}`, 404, apperr.MsgUserNotFound},
		{"unknown role", "/admin-users/edit/3", `{"username":"renamed","added_roles":[2,999]}`, 400, apperr.MsgMissingParams},
		{"unknown removed role", "/admin-users/edit/3", `{"username":"renamed","removed_roles":[0]}`, 400, apperr.MsgMissingParams},
		{"id not a number", "/admin-users/edit/abc", `{"username":"x"}`, 400, apperr.MsgMissingParams},
		{"id zero", "/admin-users/edit/0", `{"username":"x"}`, 400, apperr.MsgMissingParams},
		{"id negative", "/admin-users/edit/-3", `{"username":"x"}`, 400, apperr.MsgMissingParams},
		{"id too large", "/admin-users/edit/99999999999999999999", `{"username":"x"}`, 400, apperr.MsgMissingParams},
		{"no body", "/admin-users/edit/3", nil, 400, apperr.MsgMissingParams},
		{"malformed JSON", "/admin-users/edit/3", `{"username":`, 400, apperr.MsgMissingParams},
		{"JSON null", "/admin-users/edit/3", `null`, 400, apperr.MsgMissingParams},
		{"array", "/admin-users/edit/3", `[]`, 400, apperr.MsgMissingParams},
		{"trailing data", "/admin-users/edit/3", `{"username":"x"} {}`, 400, apperr.MsgMissingParams},
		{"no username", "/admin-users/edit/3", `{"age_verified":true}`, 400, apperr.MsgMissingParams},
		{"blank username", "/admin-users/edit/3", `{"username":"  "}`, 400, apperr.MsgMissingParams},
		{"username null", "/admin-users/edit/3", `{"username":null}`, 400, apperr.MsgMissingParams},
		{"username a number", "/admin-users/edit/3", `{"username":5}`, 400, apperr.MsgMissingParams},
		{"age_verified a string", "/admin-users/edit/3", `{"username":"x","age_verified":"yes"}`, 400, apperr.MsgMissingParams},
		{"added_roles a number", "/admin-users/edit/3", `{"username":"x","added_roles":2}`, 400, apperr.MsgMissingParams},
		{"added_roles of strings", "/admin-users/edit/3", `{"username":"x","added_roles":["2"]}`, 400, apperr.MsgMissingParams},
		{"removed_roles of fractions", "/admin-users/edit/3", `{"username":"x","removed_roles":[1.5]}`, 400, apperr.MsgMissingParams},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := s.users(t)
			status, body := s.Do(t, http.MethodPost, tt.target, tt.body, s.Admin)
			if status != tt.status {
				t.Fatalf("status %d, want %d: %s", status, tt.status, body)
			}
			if m := testenv.Message(t, body); m.Data != tt.msg || m.Code != tt.status {
				t.Errorf("body %s, want %q", body, tt.msg)
			}
			if status != http.StatusOK && s.users(t) != before {
				t.Errorf("a refused edit changed the users")
			}
		})
	}
	if got := s.DB.Text(t, `SELECT username || ' ' || age_verified || ' ' || (SELECT string_agg(role_id::text, ',' ORDER BY role_id) FROM user_roles WHERE user_id = 3) FROM users WHERE id = 3`); got != "member false 2,3" {
		t.Errorf("member is %q after the edits, want %q", got, "member false 2,3")
	}
}

// TestRenameFollowsSignUpRule: an admin's rename to a name that another user's equals
// up to case, compatibility forms or confusable characters is 409 Username already
// taken, as a sign-up never gets one; the user's own name in another case or a free
// name is fine. Before, "аdmin" (Cyrillic а) beside "admin" was 200.
func TestRenameFollowsSignUpRule(t *testing.T) {
	tests := []struct {
		name     string
		username string
		status   int
	}{
		{"Cyrillic а", "\u0430dmin", 409},
		{"fullwidth", "\uff41\uff44\uff4d\uff49\uff4e", 409},
		{"rn for m", "adrnin", 409},
		{"capitals", "ADMIN", 409},
		{"Cyrillic е in editor", "\u0435ditor", 409},
		{"like a name whose key is not written yet", "l\u0435gacy", 409},
		{"one's own name in capitals", "MEMBER", 200},
		{"a free name", "member-two", 200},
		{"a free name with a Cyrillic letter", "\u0436enya", 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t)
			// A user written by code that does not key names (a trigger clears the key).
			s.DB.Exec(t, `INSERT INTO users (slug, username) VALUES ('legacy', 'legacy')`)
			s.DB.Exec(t, `UPDATE users SET name_key = NULL WHERE username = 'legacy'`)
			before := s.users(t)
			status, body := s.Do(t, http.MethodPost, "/admin-users/edit/3", map[string]any{"username": tt.username}, s.Admin)
			if status != tt.status {
				t.Fatalf("rename to %q: %d %s, want %d", tt.username, status, body, tt.status)
			}
			if status == http.StatusConflict {
				if m := testenv.Message(t, body); m.Data != "Username already taken" {
					t.Errorf("body %s", body)
				}
				if s.users(t) != before {
					t.Error("a refused rename changed the users")
				}
			}
		})
	}
}

// TestParallelUsernameEdits: two editors rename two users to the same new name, or to
// names equal up to a confusable character, at once, twenty times: one gets 200, the
// other 409, never a 500.
func TestParallelUsernameEdits(t *testing.T) {
	s := newServer(t)
	for round := range 20 {
		names := []string{fmt.Sprintf("racer-%d", round), fmt.Sprintf("racer-%d", round)}
		if round%2 == 1 {
			names[1] = fmt.Sprintf("r\u0430cer-%d", round) // Cyrillic а
		}
		var wg sync.WaitGroup
		statuses := make([]int, 2)
		for i, target := range []int64{2, 3} {
			wg.Go(func() {
				statuses[i], _ = s.Do(t, http.MethodPost, fmt.Sprintf("/admin-users/edit/%d", target),
					map[string]any{"username": names[i], "added_roles": []int64{3}}, s.Admin)
			})
		}
		wg.Wait()
		if !(statuses[0] == 200 && statuses[1] == 409 || statuses[0] == 409 && statuses[1] == 200) {
			t.Fatalf("round %d: statuses %v, want one 200 and one 409", round, statuses)
		}
	}
}

func TestDeleteUser(t *testing.T) {
	s := newServer(t)
	s.DB.Exec(t, `UPDATE users SET profile_image = 'users/3/current' WHERE id = 3`)
	s.DB.Exec(t, `INSERT INTO oauth_connections (user_id, provider, provider_user_id, provider_username) VALUES (3, 'discord', '7', 'm')`)
	s.DB.Exec(t, `INSERT INTO user_locks (user_id, locked_by, expires_at) VALUES (2, 3, now() + interval '1 hour')`)
	// A deletion, and a deletion that finds the user gone (a retry), ask for the
	// purge of the user's pictures; a refused or malformed one does not.
	tests := []struct {
		name   string
		target string
		status int
		msg    string
		purged string
	}{
		{"delete", "/admin-users/delete/3", 200, adminusers.MsgUserDeleted, "[3]"},
		{"again", "/admin-users/delete/3", 404, apperr.MsgUserNotFound, "[3 3]"},
		{"id not a number", "/admin-users/delete/three", 400, apperr.MsgMissingParams, "[3 3]"},
		{"the last full admin", "/admin-users/delete/1", 403, apperr.MsgForbidden, "[3 3]"},
		{"the purge fails, the deletion stands", "/admin-users/delete/2", 200, adminusers.MsgUserDeleted, "[3 3 2]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s.images.fail = strings.Contains(tt.name, "fails")
			status, body := s.Do(t, http.MethodDelete, tt.target, nil, s.Admin)
			if status != tt.status || testenv.Message(t, body).Data != tt.msg {
				t.Fatalf("status %d %s, want %d %q", status, body, tt.status, tt.msg)
			}
			if got := fmt.Sprint(s.images.purged); got != tt.purged {
				t.Errorf("purged users %s, want %s", got, tt.purged)
			}
		})
	}
	orphans := s.DB.Text(t, `SELECT (
		(SELECT count(*) FROM users WHERE id IN (2, 3)) +
		(SELECT count(*) FROM sessions WHERE user_id IN (2, 3)) +
		(SELECT count(*) FROM oauth_connections WHERE user_id IN (2, 3)) +
		(SELECT count(*) FROM user_roles WHERE user_id IN (2, 3)) +
		(SELECT count(*) FROM user_locks WHERE user_id IN (2, 3) OR locked_by IN (2, 3)))::text`)
	if orphans != "0" {
		t.Errorf("%s rows still refer to the deleted users", orphans)
	}
}

func TestLogoutUser(t *testing.T) {
	s := newServer(t)
	tests := []struct {
		name   string
		target string
		status int
		msg    string
	}{
		{"logout", "/admin-users/logout/2", 200, adminusers.MsgUserLoggedOut},
		{"again", "/admin-users/logout/2", 200, adminusers.MsgUserLoggedOut},
		{"unknown user", "/admin-users/logout/999", 404, apperr.MsgUserNotFound},
		{"id not a number", "/admin-users/logout/2x", 400, apperr.MsgMissingParams},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := s.Do(t, http.MethodPost, tt.target, nil, s.Admin)
			if status != tt.status || testenv.Message(t, body).Data != tt.msg {
				t.Fatalf("status %d %s, want %d %q", status, body, tt.status, tt.msg)
			}
		})
	}
	// The editor's cookie stopped working at once; the admin's still works.
	if status, body := s.Do(t, http.MethodGet, "/admin-users", nil, s.Editor); status != 401 || testenv.Message(t, body).Data != apperr.MsgUnauthorized {
		t.Errorf("logged out editor: %d %s, want 401 Unauthorized", status, body)
	}
	if status, _ := s.Do(t, http.MethodGet, "/admin-users/id/2", nil, s.Admin); status != 200 {
		t.Errorf("admin after logging the editor out: %d", status)
	}
	_, body := s.Do(t, http.MethodGet, "/admin-users/id/2", nil, s.Admin)
	if !strings.Contains(string(body), `"logged_in":false`) {
		t.Errorf("editor detail %s, want logged_in false", body)
	}
}

func TestBadParameters(t *testing.T) {
	s := newServer(t)
	tests := []struct{ method, target string }{
		{http.MethodGet, "/admin-users?order=age-asc"},
		{http.MethodGet, "/admin-users?order="},
		{http.MethodGet, "/admin-users?limit=-1"},
		{http.MethodGet, "/admin-users?limit=ten"},
		{http.MethodGet, "/admin-users?offset=1.5"},
		{http.MethodGet, "/admin-users?role=editor"},
		{http.MethodGet, "/admin-users?role=0"},
		{http.MethodGet, "/admin-users?role=%202"}, // an id has one spelling
		{http.MethodGet, "/admin-users?role=2%20"},
		{http.MethodGet, "/admin-users?role=02"},
		{http.MethodGet, "/admin-users?role=%2B2"},
		{http.MethodGet, "/admin-users/id/abc"},
		{http.MethodGet, "/admin-users/id/0"},
		{http.MethodGet, "/admin-users/id/%20"},
		{http.MethodPost, "/admin-users/logout/-1"},
		{http.MethodDelete, "/admin-users/delete/1e3"},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.target, func(t *testing.T) {
			if tt.target == "/admin-users?order=" {
				// An empty order is no order: the default.
				status, body := s.doMalformed(t, tt.method, tt.target, s.Admin)
				if status != http.StatusOK {
					t.Fatalf("status %d: %s", status, body)
				}
				return
			}
			status, body := s.Do(t, tt.method, tt.target, nil, s.Admin)
			if status != http.StatusBadRequest || testenv.Message(t, body).Data != apperr.MsgMissingParams {
				t.Fatalf("status %d %s, want 400 %q", status, body, apperr.MsgMissingParams)
			}
		})
	}
}

func TestRoutesHookImages(t *testing.T) {
	patterns := func(d adminusers.Deps) []string {
		var ps []string
		for _, rt := range adminusers.Routes(d) {
			ps = append(ps, rt.Pattern)
		}
		return ps
	}
	sessions := testenv.NewSessions(t, testenv.NewDB(t), testenv.AuthConfig(t))
	without := patterns(adminusers.Deps{Auth: sessions})
	with := patterns(adminusers.Deps{Auth: sessions, Images: &recordingImages{}})
	if len(without) != 5 || len(with) != 7 {
		t.Fatalf("routes without images %v, with images %v", without, with)
	}
	if with[5] != "POST /admin-users/update-image/{id}" || with[6] != "DELETE /admin-users/delete-image/{id}" {
		t.Errorf("image routes %v", with[5:])
	}
	// Both image routes are behind edit-users: the member (no permission) is refused,
	// the editor reaches the upload handlers (503 from a media side that is not a file
	// service).
	s := newServer(t)
	for _, tt := range []struct {
		method, target string
		cookie         *http.Cookie
		status         int
	}{
		{http.MethodPost, "/admin-users/update-image/3", s.Member, http.StatusForbidden},
		{http.MethodDelete, "/admin-users/delete-image/3", s.Member, http.StatusForbidden},
		{http.MethodPost, "/admin-users/update-image/3", s.Editor, http.StatusServiceUnavailable},
		{http.MethodDelete, "/admin-users/delete-image/3", s.Editor, http.StatusServiceUnavailable},
	} {
		req := httptest.NewRequest(tt.method, tt.target, nil)
		req.AddCookie(tt.cookie)
		rec := httptest.NewRecorder()
		s.Handler.ServeHTTP(rec, req)
		if rec.Code != tt.status {
			t.Errorf("%s %s: %d, want %d", tt.method, tt.target, rec.Code, tt.status)
		}
	}
}

func TestPermissionMatrix(t *testing.T) {
	s := newServer(t)
	s.DB.Exec(t, `INSERT INTO users (id, slug, username) VALUES (20, 'doomed', 'doomed')`)
	rows := testenv.AuthMatrix{
		Handler: s.Handler,
		DB:      s.DB,
		Config:  s.Config,
		Routes: []testenv.AuthRoute{
			{Method: http.MethodGet, Path: "/admin-users", Permission: auth.PermViewUsers},
			{Method: http.MethodGet, Path: "/admin-users/id/3", Permission: auth.PermViewUsers},
			{Method: http.MethodPost, Path: "/admin-users/edit/3", Body: map[string]any{"username": "member"}, Permission: auth.PermEditUsers, Message: adminusers.MsgUserEdited},
			{Method: http.MethodDelete, Path: "/admin-users/delete/20", Permission: auth.PermDeleteUsers, Message: adminusers.MsgUserDeleted},
			{Method: http.MethodPost, Path: "/admin-users/logout/3", Permission: auth.PermEditUsers, Message: adminusers.MsgUserLoggedOut},
		},
	}.Run(t)
	t.Logf("permission matrix: %d rows (5 routes x 8 cases)", rows)
	if rows != 40 {
		t.Errorf("%d rows, want 40", rows)
	}
}

// TestLambdaEvents replays every event of the group through the Lambda adapter, with
// the demo admin's cookie in place of the placeholder.
func TestLambdaEvents(t *testing.T) {
	s := newServer(t)
	tests := []struct {
		event string
		check func(t *testing.T, body []byte)
	}{
		{"list-users.json", func(t *testing.T, body []byte) {
			var l userList
			if err := json.Unmarshal(body, &l); err != nil || l.Max != 2 || len(l.Users) != 2 || l.Users[0].Username != "member" {
				t.Errorf("list %s: want member then editor (registered-desc, search e)", body)
			}
		}},
		{"get-user.json", func(t *testing.T, body []byte) {
			if !strings.Contains(string(body), `"username":"editor"`) {
				t.Errorf("detail %s", body)
			}
		}},
		{"edit-user.json", wantMessage(adminusers.MsgUserEdited)},
		{"logout-user.json", wantMessage(adminusers.MsgUserLoggedOut)},
		{"delete-user.json", wantMessage(adminusers.MsgUserDeleted)},
	}
	for _, tt := range tests {
		t.Run(tt.event, func(t *testing.T) {
			resp := testenv.Invoke(t, s.Handler, testenv.AuthEvent(t, "admin-users/"+tt.event, s.Admin))
			body := testenv.ResponseBody(t, resp)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			tt.check(t, body)
		})
	}
}

func wantMessage(msg string) func(t *testing.T, body []byte) {
	return func(t *testing.T, body []byte) {
		t.Helper()
		if m := testenv.Message(t, body); m.Data != msg || m.Code != http.StatusOK {
			t.Errorf("body %s, want %q", body, msg)
		}
	}
}
