package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/catalog"
	"github.com/mediacatalog/service/shared/namekey"
	"github.com/mediacatalog/service/shared/postgres"
)

// connFixture: roles member (default, id 1) and admin (2); users alice (1, with a
// password) and bob (2, without); alice has google linked, bob github.
type connFixture struct {
	db      *testenv.DB
	counter *postgres.QueryCounter
}

const (
	connAlice int64 = 1
	connBob   int64 = 2
)

func newConnFixture(t *testing.T) connFixture {
	t.Helper()
	counter := &postgres.QueryCounter{}
	db := testenv.NewDB(t, postgres.WithTracer(counter))
	connExec(t, db, `
DELETE FROM roles; -- the day-0 roles of the migrations (00020): this fixture has its own
INSERT INTO roles (id, name, is_default) VALUES (1, 'member', true), (2, 'admin', false);
INSERT INTO users (id, slug, username, password_hash) VALUES
	(1, 'alice', 'alice', '$argon2id$v=19$m=65536,t=3,p=4$c2FsdA$aGFzaA'),
	(2, 'bob', 'bob', NULL);
INSERT INTO user_roles (user_id, role_id) VALUES (1, 2), (2, 1);
INSERT INTO oauth_connections (user_id, provider, provider_user_id, provider_username, provider_email, linked_at) VALUES
	(1, 'google', 'g-alice', 'Alice', 'alice@example.com', '2025-01-02T03:04:05Z'),
	(2, 'github', 'gh-bob', 'bob', NULL, '2025-02-03T04:05:06Z');
INSERT INTO sessions (id, user_id, expires_at, revoked_at) VALUES
	('`+aliceSession+`', 1, now() + interval '1 day', NULL),
	('`+aliceRevoked+`', 1, now() + interval '1 day', now()),
	('`+bobSession+`', 2, now() + interval '1 day', NULL);
SELECT setval(pg_get_serial_sequence(t, 'id'), 100) FROM unnest(ARRAY['users', 'roles', 'oauth_connections']) AS t;
`)
	counter.Reset()
	return connFixture{db: db, counter: counter}
}

func connExec(t *testing.T, db *testenv.DB, sql string, args ...any) {
	t.Helper()
	if _, err := db.Pool.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("exec %.80q: %v", sql, err)
	}
}

func connQuery[T any](t *testing.T, db *testenv.DB, sql string, args ...any) T {
	t.Helper()
	var v T
	if err := db.Pool.QueryRow(context.Background(), sql, args...).Scan(&v); err != nil {
		t.Fatalf("query %.80q: %v", sql, err)
	}
	return v
}

func strp(s string) *string { return &s }

func TestOAuthLoginCreatesUser(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name     string
		existing string // SQL run first
		account  catalog.ProviderAccount
		want     string // username and slug of the new user
	}{
		{
			name:    "the base as given",
			account: catalog.ProviderAccount{Provider: "google", ProviderUserID: "g-1", Username: "Jane Doe", UsernameBase: "jane-doe", Email: strp("jane@example.com")},
			want:    "jane-doe",
		},
		{
			name:    "the base lower-cased",
			account: catalog.ProviderAccount{Provider: "google", ProviderUserID: "g-4", Username: "Jane Doe", UsernameBase: "Jane-Doe"},
			want:    "jane-doe",
		},
		{
			name:     "taken case-insensitively, smallest free suffix",
			existing: `INSERT INTO users (slug, username) VALUES ('jd', 'Jane-Doe'), ('jd2', 'jane-doe-3')`,
			account:  catalog.ProviderAccount{Provider: "discord", ProviderUserID: "d-1", Username: "jane.doe", UsernameBase: "jane-doe"},
			want:     "jane-doe-2",
		},
		{
			name:     "slug of another user counts as taken",
			existing: `INSERT INTO users (slug, username) VALUES ('jane-doe', 'somebody')`,
			account:  catalog.ProviderAccount{Provider: "github", ProviderUserID: "gh-1", Username: "Jane Doe", UsernameBase: "jane-doe"},
			want:     "jane-doe-2",
		},
		{
			name:    "no base",
			account: catalog.ProviderAccount{Provider: "github", ProviderUserID: "gh-2", Username: "🙂"},
			want:    "github-user",
		},
		{
			name:     "no base, taken",
			existing: `INSERT INTO users (slug, username) VALUES ('discord-user', 'discord-user')`,
			account:  catalog.ProviderAccount{Provider: "discord", ProviderUserID: "d-2", Username: ""},
			want:     "discord-user-2",
		},
		// A sign-up never receives a name that differs from an existing one
		// only by case or by confusable characters, so a future admin's name cannot be
		// squatted in another script.
		{
			name:     "taken by a name in Cyrillic letters",
			existing: `INSERT INTO users (slug, username) VALUES ('x1', 'аdmin')`, // Cyrillic а
			account:  catalog.ProviderAccount{Provider: "github", ProviderUserID: "gh-5", Username: "admin", UsernameBase: "admin"},
			want:     "admin-2",
		},
		{
			name:     "taken by a name in Unicode capitals",
			existing: `INSERT INTO users (slug, username) VALUES ('x2', 'ΑDMIN'), ('x3', 'admin-２')`, // Greek Α, fullwidth 2
			account:  catalog.ProviderAccount{Provider: "github", ProviderUserID: "gh-6", Username: "Admin", UsernameBase: "admin"},
			want:     "admin-3",
		},
		{
			name:     "taken by a confusable spelling (rn for m, 1 for l)",
			existing: `INSERT INTO users (slug, username) VALUES ('x4', 'adrnin'), ('x5', 'ha1'), ('x6', 'ha1-2')`,
			account:  catalog.ProviderAccount{Provider: "github", ProviderUserID: "gh-7", Username: "hal", UsernameBase: "hal"},
			want:     "hal-3",
		},
		{
			name:     "the squatter signs up as a confusable of the admin",
			existing: `INSERT INTO users (slug, username) VALUES ('x7', 'admin')`,
			account:  catalog.ProviderAccount{Provider: "github", ProviderUserID: "gh-8", Username: "adrnin", UsernameBase: "adrnin"},
			want:     "adrnin-2",
		},
		{
			name:     "underscores kept",
			existing: `INSERT INTO users (slug, username) VALUES ('a_b', 'a_b'), ('axb-2', 'axb-2')`,
			account:  catalog.ProviderAccount{Provider: "github", ProviderUserID: "gh-3", Username: "a_b", UsernameBase: "a_b"},
			want:     "a_b-2",
		},
	}
	// Each case runs with the existing users' name keys not written yet (inserted by
	// SQL, as the previous release or an operator leaves them: the sign-up keys them
	// itself) and written (make migrate's fill: the sign-up reads them by index).
	for _, tc := range tests {
		for _, filled := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/keys filled %v", tc.name, filled), func(t *testing.T) {
				f := newConnFixture(t)
				if tc.existing != "" {
					connExec(t, f.db, tc.existing)
				}
				if filled {
					if _, err := namekey.Fill(ctx, f.db.Pool); err != nil {
						t.Fatal(err)
					}
					if n := connQuery[int64](t, f.db, `SELECT count(*) FROM users WHERE name_key IS NULL`); n != 0 {
						t.Fatalf("%d users without a key after the fill", n)
					}
				}
				signUp(t, f, tc.account, tc.want)
			})
		}
	}
}

// signUp signs the account up and checks the new user: named want (username and
// slug), its name key written, no password, the default role, the connection.
func signUp(t *testing.T, f connFixture, account catalog.ProviderAccount, want string) {
	t.Helper()
	ctx := context.Background()
	login, err := f.db.OAuthLogin(ctx, account)
	if err != nil {
		t.Fatalf("OAuthLogin: %v", err)
	}
	if !login.Created || login.Username != want {
		t.Fatalf("login = %+v, want a created user %q", login, want)
	}
	if key := connQuery[string](t, f.db, `SELECT coalesce(name_key, '<null>') FROM users WHERE id = $1`, login.UserID); key != namekey.Key(want) {
		t.Errorf("name_key = %q, want %q", key, namekey.Key(want))
	}
	slug := connQuery[string](t, f.db, `SELECT slug FROM users WHERE id = $1`, login.UserID)
	if slug != want {
		t.Errorf("slug = %q, want %q", slug, want)
	}
	if hasPassword := connQuery[bool](t, f.db, `SELECT password_hash IS NOT NULL FROM users WHERE id = $1`, login.UserID); hasPassword {
		t.Error("the new user has a password")
	}
	roles := connQuery[string](t, f.db, `
		SELECT string_agg(r.name, ',') FROM user_roles ur JOIN roles r ON r.id = ur.role_id WHERE ur.user_id = $1`, login.UserID)
	if roles != "member" {
		t.Errorf("roles = %q, want the default role member", roles)
	}
	owner := connQuery[int64](t, f.db, `
		SELECT user_id FROM oauth_connections WHERE provider = $1 AND provider_user_id = $2`,
		account.Provider, account.ProviderUserID)
	if owner != login.UserID {
		t.Errorf("connection belongs to user %d, want %d", owner, login.UserID)
	}
}

func TestOAuthLoginReusesUser(t *testing.T) {
	ctx := context.Background()
	f := newConnFixture(t)
	first, err := f.db.OAuthLogin(ctx, catalog.ProviderAccount{Provider: "discord", ProviderUserID: "d-9", Username: "Kai", UsernameBase: "kai"})
	if err != nil || !first.Created {
		t.Fatalf("first login = %+v, %v; want a created user", first, err)
	}
	tests := []struct {
		name    string
		account catalog.ProviderAccount
		want    catalog.OAuthLogin
	}{
		{
			name:    "new user logs in again with a changed profile",
			account: catalog.ProviderAccount{Provider: "discord", ProviderUserID: "d-9", Username: "Kai R.", Email: strp("kai@example.com"), AvatarURL: strp("https://cdn.example/kai.png")},
			want:    catalog.OAuthLogin{UserID: first.UserID, Username: "kai"},
		},
		{
			name:    "existing link",
			account: catalog.ProviderAccount{Provider: "google", ProviderUserID: "g-alice", Username: "Alice A.", Email: strp("a@example.com")},
			want:    catalog.OAuthLogin{UserID: connAlice, Username: "alice"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			users := connQuery[int64](t, f.db, `SELECT count(*) FROM users`)
			f.counter.Reset()
			got, err := f.db.OAuthLogin(ctx, tc.account)
			if err != nil {
				t.Fatalf("OAuthLogin: %v", err)
			}
			if got != tc.want {
				t.Errorf("login = %+v, want %+v", got, tc.want)
			}
			if n := f.counter.Count(); n != 1 {
				t.Errorf("a returning login took %d round trips, want 1", n)
			}
			if after := connQuery[int64](t, f.db, `SELECT count(*) FROM users`); after != users {
				t.Errorf("users: %d before, %d after", users, after)
			}
			var name string
			var email, avatar *string
			err = f.db.Pool.QueryRow(ctx, `
				SELECT provider_username, provider_email, provider_avatar FROM oauth_connections
				WHERE provider = $1 AND provider_user_id = $2`, tc.account.Provider, tc.account.ProviderUserID).
				Scan(&name, &email, &avatar)
			if err != nil {
				t.Fatal(err)
			}
			if name != tc.account.Username || !equalPtr(email, tc.account.Email) || !equalPtr(avatar, tc.account.AvatarURL) {
				t.Errorf("connection = %q %v %v, want the profile's %q %v %v", name, deref(email), deref(avatar),
					tc.account.Username, deref(tc.account.Email), deref(tc.account.AvatarURL))
			}
		})
	}
}

func equalPtr(a, b *string) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

func TestOAuthLoginNeverMatchesByEmail(t *testing.T) {
	f := newConnFixture(t)
	// alice's google address, from another provider account: a new user.
	login, err := f.db.OAuthLogin(context.Background(), catalog.ProviderAccount{
		Provider: "github", ProviderUserID: "gh-other", Username: "alice", UsernameBase: "alice", Email: strp("alice@example.com")})
	if err != nil {
		t.Fatal(err)
	}
	if !login.Created || login.UserID == connAlice || login.Username != "alice-2" {
		t.Errorf("login = %+v, want a new user alice-2", login)
	}
}

func TestOAuthLoginWithoutDefaultRole(t *testing.T) {
	f := newConnFixture(t)
	connExec(t, f.db, `UPDATE roles SET is_default = false`)
	_, err := f.db.OAuthLogin(context.Background(), catalog.ProviderAccount{Provider: "google", ProviderUserID: "g-x", Username: "X"})
	if err == nil || apperr.CodeOf(err) != apperr.Internal {
		t.Fatalf("err = %v, want an internal error", err)
	}
	if n := connQuery[int64](t, f.db, `SELECT count(*) FROM users`); n != 2 {
		t.Errorf("%d users after a failed sign-up, want 2 (nothing created)", n)
	}
}

func TestOAuthLoginConcurrent(t *testing.T) {
	ctx := context.Background()
	t.Run("same account creates one user", func(t *testing.T) {
		f := newConnFixture(t)
		const n = 8
		logins := make([]catalog.OAuthLogin, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				logins[i], errs[i] = f.db.OAuthLogin(ctx, catalog.ProviderAccount{Provider: "google", ProviderUserID: "g-race", Username: "Racer"})
			})
		}
		wg.Wait()
		created := 0
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("login %d: %v", i, errs[i])
			}
			if logins[i].UserID != logins[0].UserID {
				t.Errorf("login %d signed in user %d, login 0 user %d", i, logins[i].UserID, logins[0].UserID)
			}
			if logins[i].Created {
				created++
			}
		}
		if created != 1 {
			t.Errorf("%d logins created the user, want 1", created)
		}
	})
	t.Run("same display name gets distinct usernames", func(t *testing.T) {
		f := newConnFixture(t)
		const n = 6
		names := make([]string, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				var l catalog.OAuthLogin
				l, errs[i] = f.db.OAuthLogin(ctx, catalog.ProviderAccount{Provider: "github", ProviderUserID: fmt.Sprint("gh-", i), Username: "Twin", UsernameBase: "twin"})
				names[i] = l.Username
			})
		}
		wg.Wait()
		seen := map[string]bool{}
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("login %d: %v", i, errs[i])
			}
			if seen[names[i]] || !strings.HasPrefix(names[i], "twin") {
				t.Errorf("username %q: duplicate or not derived from the profile (all: %v)", names[i], names)
			}
			seen[names[i]] = true
		}
	})
}

// The fixture's sessions: a link is made by a live session of its user, and records it.
const (
	aliceSession = "00000000-0000-4000-8000-0000000000a1"
	aliceRevoked = "00000000-0000-4000-8000-0000000000a2"
	bobSession   = "00000000-0000-4000-8000-0000000000b1"
)

func TestLinkProvider(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		user    int64
		account catalog.ProviderAccount
		code    apperr.Code // "" for success
		is      error
		session string // "" for the user's live session
	}{
		{name: "second provider", user: connAlice, account: catalog.ProviderAccount{Provider: "github", ProviderUserID: "gh-alice", Username: "alice-gh", Email: strp("alice@users.example")}},
		{name: "account of another user", user: connAlice, account: catalog.ProviderAccount{Provider: "github", ProviderUserID: "gh-bob", Username: "bob"}, code: apperr.Conflict, is: catalog.ErrProviderInUse},
		{name: "provider already linked, other account", user: connAlice, account: catalog.ProviderAccount{Provider: "google", ProviderUserID: "g-alice-2", Username: "Alice 2"}, code: apperr.Conflict, is: catalog.ErrAlreadyLinked},
		{name: "same account again", user: connAlice, account: catalog.ProviderAccount{Provider: "google", ProviderUserID: "g-alice", Username: "Alice"}, code: apperr.Conflict, is: catalog.ErrAlreadyLinked},
		{name: "in use wins over already linked", user: connBob, account: catalog.ProviderAccount{Provider: "google", ProviderUserID: "g-alice", Username: "Alice"}, code: apperr.Conflict, is: catalog.ErrProviderInUse},
		{name: "unknown user", user: 999, account: catalog.ProviderAccount{Provider: "discord", ProviderUserID: "d-ghost", Username: "ghost"}, code: apperr.NotFound},
		{name: "by a revoked session", user: connAlice, session: aliceRevoked, account: catalog.ProviderAccount{Provider: "discord", ProviderUserID: "d-alice", Username: "alice#1"}, code: apperr.Unauthorized},
		{name: "by another user's session", user: connAlice, session: bobSession, account: catalog.ProviderAccount{Provider: "discord", ProviderUserID: "d-alice", Username: "alice#1"}, code: apperr.Unauthorized},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newConnFixture(t)
			before := connQuery[int64](t, f.db, `SELECT count(*) FROM oauth_connections`)
			session := map[int64]string{connAlice: aliceSession, connBob: bobSession}[tc.user]
			if tc.session != "" {
				session = tc.session
			}
			err := f.db.LinkProvider(ctx, tc.user, session, tc.account)
			after := connQuery[int64](t, f.db, `SELECT count(*) FROM oauth_connections`)
			if tc.code == "" {
				if err != nil {
					t.Fatalf("LinkProvider: %v", err)
				}
				owner := connQuery[int64](t, f.db, `SELECT user_id FROM oauth_connections WHERE provider = $1 AND provider_user_id = $2`,
					tc.account.Provider, tc.account.ProviderUserID)
				if owner != tc.user || after != before+1 {
					t.Errorf("owner %d (want %d), connections %d -> %d", owner, tc.user, before, after)
				}
				if by := connQuery[string](t, f.db, `SELECT linked_session::text FROM oauth_connections WHERE provider = $1 AND provider_user_id = $2`,
					tc.account.Provider, tc.account.ProviderUserID); by != session {
					t.Errorf("linked by session %s, want %s", by, session)
				}
				return
			}
			if apperr.CodeOf(err) != tc.code || (tc.is != nil && !errors.Is(err, tc.is)) {
				t.Fatalf("err = %v, want code %s wrapping %v", err, tc.code, tc.is)
			}
			if after != before {
				t.Errorf("connections %d -> %d after a refused link", before, after)
			}
		})
	}
}

func TestConnections(t *testing.T) {
	ctx := context.Background()
	f := newConnFixture(t)
	if err := f.db.LinkProvider(ctx, connAlice, aliceSession, catalog.ProviderAccount{Provider: "discord", ProviderUserID: "d-alice", Username: "alice#1"}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		user int64
		want []string // provider/username/email
	}{
		{name: "two providers, by name", user: connAlice, want: []string{"discord/alice#1/<nil>", "google/Alice/alice@example.com"}},
		{name: "one", user: connBob, want: []string{"github/bob/<nil>"}},
		{name: "none", user: 999, want: []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f.counter.Reset()
			conns, err := f.db.Connections(ctx, tc.user)
			if err != nil {
				t.Fatal(err)
			}
			if n := f.counter.Count(); n != 1 {
				t.Errorf("%d round trips, want 1", n)
			}
			if conns == nil {
				t.Error("nil list, want an empty one")
			}
			got := []string{}
			for _, c := range conns {
				got = append(got, c.Provider+"/"+c.ProviderUsername+"/"+deref(c.ProviderEmail))
				if c.LinkedAt.IsZero() {
					t.Errorf("%s: no linked_at", c.Provider)
				}
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("connections = %v, want %v", got, tc.want)
			}
		})
	}
	conns, _ := f.db.Connections(ctx, connAlice)
	if want := "2025-01-02T03:04:05Z"; conns[1].LinkedAt.UTC().Format("2006-01-02T15:04:05Z07:00") != want {
		t.Errorf("google linked_at = %v, want %s", conns[1].LinkedAt, want)
	}
}

func TestUnlinkProvider(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name     string
		setup    string
		user     int64
		provider string
		code     apperr.Code // "" for success
		msg      string
		session  string // "" for the user's live session
	}{
		{name: "password keeps a login method", user: connAlice, provider: "google"},
		{name: "another provider keeps a login method", setup: `INSERT INTO oauth_connections (user_id, provider, provider_user_id, provider_username) VALUES (2, 'discord', 'd-bob', 'bob')`,
			user: connBob, provider: "github"},
		{name: "only login method", user: connBob, provider: "github", code: apperr.Invalid, msg: "Cannot unlink the only login method"},
		{name: "not linked", user: connAlice, provider: "discord", code: apperr.NotFound, msg: "Provider not linked"},
		{name: "not linked, no other method", user: connBob, provider: "google", code: apperr.NotFound, msg: "Provider not linked"},
		{name: "unknown user", user: 999, provider: "google", code: apperr.NotFound, msg: "User not found"},
		{name: "by a revoked session", user: connAlice, provider: "google", session: aliceRevoked, code: apperr.Unauthorized, msg: "Unauthorized"},
		{name: "by another user's session", user: connAlice, provider: "google", session: bobSession, code: apperr.Unauthorized, msg: "Unauthorized"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newConnFixture(t)
			if tc.setup != "" {
				connExec(t, f.db, tc.setup)
			}
			session := map[int64]string{connAlice: aliceSession, connBob: bobSession}[tc.user]
			if tc.session != "" {
				session = tc.session
			}
			if session == "" {
				session = aliceSession
			}
			before := connQuery[int64](t, f.db, `SELECT count(*) FROM oauth_connections`)
			err := f.db.UnlinkProvider(ctx, tc.user, session, tc.provider)
			after := connQuery[int64](t, f.db, `SELECT count(*) FROM oauth_connections`)
			kept := connQuery[int64](t, f.db, `SELECT count(*) FROM oauth_unlinks`)
			if tc.code == "" {
				if err != nil {
					t.Fatalf("UnlinkProvider: %v", err)
				}
				if after != before-1 {
					t.Errorf("connections %d -> %d, want one fewer", before, after)
				}
				// The link as it was, with the session that unlinked it.
				if got := connQuery[string](t, f.db, `SELECT provider || ' ' || provider_user_id || ' ' || unlinked_session::text
					FROM oauth_unlinks WHERE user_id = $1`, tc.user); got != tc.provider+" "+map[string]string{"google": "g-alice", "github": "gh-bob"}[tc.provider]+" "+session {
					t.Errorf("unlink kept as %q", got)
				}
				return
			}
			if kept != 0 {
				t.Errorf("%d unlinks kept after a refused unlink", kept)
			}
			e, ok := apperr.As(err)
			if !ok || e.Code != tc.code || e.Message != tc.msg {
				t.Fatalf("err = %v, want %s %q", err, tc.code, tc.msg)
			}
			if after != before {
				t.Errorf("connections %d -> %d after a refused unlink", before, after)
			}
		})
	}
}

func TestUnlinkConcurrentKeepsOneMethod(t *testing.T) {
	ctx := context.Background()
	f := newConnFixture(t)
	connExec(t, f.db, `INSERT INTO oauth_connections (user_id, provider, provider_user_id, provider_username) VALUES (2, 'discord', 'd-bob', 'bob')`)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, p := range []string{"github", "discord"} {
		wg.Go(func() { errs[i] = f.db.UnlinkProvider(ctx, connBob, bobSession, p) })
	}
	wg.Wait()
	if left := connQuery[int64](t, f.db, `SELECT count(*) FROM oauth_connections WHERE user_id = 2`); left != 1 {
		t.Fatalf("bob has %d connections left (errors %v), want 1", left, errs)
	}
	refused := 0
	for _, err := range errs {
		if err != nil {
			if apperr.CodeOf(err) != apperr.Invalid {
				t.Errorf("unexpected error %v", err)
			}
			refused++
		}
	}
	if refused != 1 {
		t.Errorf("%d unlinks refused, want 1", refused)
	}
}

// TestLinkDuringLogout: a link whose session a forced logout revokes meanwhile is
// refused. The logout (here its statements, in a transaction held open) has locked the
// user's row; the link waits for it, then finds its session revoked. Without the wait,
// the link would be written by a session the logout had already dealt with, and
// survive it.
func TestLinkDuringLogout(t *testing.T) {
	ctx := context.Background()
	f := newConnFixture(t)
	tx, err := f.db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // after Commit, a no-op
	if _, err := tx.Exec(ctx, `SELECT 1 FROM users WHERE id = $1 FOR UPDATE`, connAlice); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- f.db.LinkProvider(ctx, connAlice, aliceSession, catalog.ProviderAccount{Provider: "discord", ProviderUserID: "d-alice", Username: "alice#1"})
	}()
	// Until the link waits for the user's row lock.
	for {
		var waiting bool
		if err := f.db.Pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock')`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the link did not wait for the logout: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	if _, err := tx.Exec(ctx, `UPDATE sessions SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL`, connAlice); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; apperr.CodeOf(err) != apperr.Unauthorized {
		t.Fatalf("link after the logout: %v, want Unauthorized", err)
	}
	if n := connQuery[int64](t, f.db, `SELECT count(*) FROM oauth_connections WHERE provider = 'discord'`); n != 0 {
		t.Errorf("%d discord links after the logout", n)
	}
}

// TestLogoutRacesAccountChanges: a forced logout against a concurrent link, unlink or
// login of the session it revokes (an intruder's copy of the victim's cookie), in both
// orders. A blocking transaction holds the victim's row, as a write of theirs would;
// the two writes queue behind it in the order given, and it lets them go. Whichever
// goes first, the victim (bob, who signed up with GitHub) is left with his own GitHub
// and no live session: a link waits and is undone, or finds its session revoked; an
// unlink waits and is undone, or is refused; a login through the intruder's link (found
// before the logout) starts a session the logout revokes, or finds the link gone.
func TestLogoutRacesAccountChanges(t *testing.T) {
	ctx := context.Background()
	mallory := catalog.ProviderAccount{Provider: "discord", ProviderUserID: "d-mallory", Username: "mallory"}
	ops := []struct {
		name  string
		setup bool // the intruder's discord is linked by bob's session before
		do    func(db *postgres.DB) error
		late  func(err error) bool // the op's error when the logout went first
	}{
		{"link", false, func(db *postgres.DB) error { return db.LinkProvider(ctx, connBob, bobSession, mallory) },
			func(err error) bool { return apperr.CodeOf(err) == apperr.Unauthorized }},
		{"unlink", true, func(db *postgres.DB) error { return db.UnlinkProvider(ctx, connBob, bobSession, "github") },
			func(err error) bool { return apperr.CodeOf(err) == apperr.Unauthorized }},
		{"login", true, func(db *postgres.DB) error {
			_, err := db.CreateLoginSession(ctx, connBob, mallory, time.Now().Add(time.Hour))
			return err
		}, func(err error) bool { return errors.Is(err, catalog.ErrLoginMoved) }},
	}
	for _, op := range ops {
		for _, logoutFirst := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, logout first %v", op.name, logoutFirst), func(t *testing.T) {
				f := newConnFixture(t)
				if op.setup {
					if err := f.db.LinkProvider(ctx, connBob, bobSession, mallory); err != nil {
						t.Fatal(err)
					}
				}
				blocker, err := f.db.Pool.Begin(ctx)
				if err != nil {
					t.Fatal(err)
				}
				defer blocker.Rollback(ctx) //nolint:errcheck // after Commit, a no-op
				if _, err := blocker.Exec(ctx, `SELECT 1 FROM users WHERE id = $1 FOR UPDATE`, connBob); err != nil {
					t.Fatal(err)
				}
				opDone, logoutDone := make(chan error, 1), make(chan error, 1)
				runOp := func() { go func() { opDone <- op.do(f.db.DB) }() }
				runLogout := func() {
					go func() {
						_, err := f.db.LogoutUser(ctx, connBob, connAlice)
						logoutDone <- err
					}()
				}
				first, second := runOp, runLogout
				if logoutFirst {
					first, second = runLogout, runOp
				}
				first()
				waitForLockWaiters(t, f.db, 1)
				second()
				waitForLockWaiters(t, f.db, 2)
				if err := blocker.Commit(ctx); err != nil {
					t.Fatal(err)
				}
				if err := <-logoutDone; err != nil {
					t.Fatalf("logout: %v", err)
				}
				opErr := <-opDone
				switch {
				case logoutFirst && !op.late(opErr):
					t.Errorf("%s after the logout: %v", op.name, opErr)
				case !logoutFirst && opErr != nil:
					t.Errorf("%s before the logout: %v", op.name, opErr)
				}
				if got := connQuery[string](t, f.db, `SELECT string_agg(provider_user_id, ',' ORDER BY provider) FROM oauth_connections WHERE user_id = $1`, connBob); got != "gh-bob" {
					t.Errorf("bob's links %q, want his own gh-bob", got)
				}
				if n := connQuery[int64](t, f.db, `SELECT count(*) FROM sessions WHERE user_id = $1 AND revoked_at IS NULL`, connBob); n != 0 {
					t.Errorf("%d live sessions of bob after the logout", n)
				}
			})
		}
	}
}

// waitForLockWaiters waits until n backends of the test's database wait for a lock.
func waitForLockWaiters(t *testing.T, db *testenv.DB, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var waiting int
		if err := db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d backends wait for a lock after 10 s, want %d", waiting, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
