package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/catalog"
	"github.com/mediacatalog/service/shared/postgres"
)

// acctDB is a fresh database with the demo data (users admin 1, editor 2, member 3;
// roles admin 1, editor 2, member 3 (default); the fifteen permissions, ids 1 to 15),
// whose queries counter counts when it is not nil.
func acctDB(t *testing.T, counter *postgres.QueryCounter) *testenv.DB {
	t.Helper()
	var opts []postgres.Option
	if counter != nil {
		opts = append(opts, postgres.WithTracer(counter))
	}
	db := testenv.NewDemoDB(t, opts...)
	return db
}

func acctExec(t *testing.T, db *testenv.DB, sql string, args ...any) {
	t.Helper()
	if _, err := db.Pool.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func acctInt(t *testing.T, db *testenv.DB, sql string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := db.Pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// acctWant fails unless err has the code and message (a nil error when code is "").
func acctWant(t *testing.T, err error, code apperr.Code, msg string) {
	t.Helper()
	if code == "" {
		if err != nil {
			t.Fatalf("error %v, want none", err)
		}
		return
	}
	e, ok := apperr.As(err)
	if !ok || e.Code != code || (msg != "" && e.Message != msg) {
		t.Fatalf("error %v, want %s %q", err, code, msg)
	}
}

// acctRoles returns the ids of the roles of user id, by id.
func acctRoles(t *testing.T, db *testenv.DB, id int64) []int64 {
	t.Helper()
	rows, _ := db.Pool.Query(context.Background(), `SELECT role_id FROM user_roles WHERE user_id = $1 ORDER BY role_id`, id)
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

func TestUsersList(t *testing.T) {
	ctx := context.Background()
	var counter postgres.QueryCounter
	db := acctDB(t, &counter)
	// Two more users, registered at known times, one with an image and a lock on them.
	acctExec(t, db, `UPDATE users SET registered = ('2024-01-0' || id || ' 10:00Z')::timestamptz`)
	acctExec(t, db, `INSERT INTO users (id, slug, username, registered, profile_image) VALUES
		(10, 'zoe', 'Zoe', '2024-02-01 10:00Z', 'users/10/abc'),
		(11, 'adam_50%', 'adam_50%', '2024-02-02 10:00Z', NULL)`)
	acctExec(t, db, `INSERT INTO user_roles VALUES (10, 2), (10, 3), (11, 3)`)
	acctExec(t, db, `INSERT INTO user_locks (user_id, locked_by, expires_at) VALUES (10, 2, now() + interval '1 hour'),
		(11, 1, now() - interval '1 second')`)

	ids := func(p catalog.UserPage) string {
		s := ""
		for _, u := range p.Users {
			s += fmt.Sprintf("%d ", u.ID)
		}
		return s
	}
	tests := []struct {
		name    string
		q       catalog.UserQuery
		want    string
		total   int64
		queries int64
	}{
		{"default order is name-asc, case-insensitive", catalog.UserQuery{Limit: 100}, "11 1 2 3 10 ", 5, 1},
		{"name-desc", catalog.UserQuery{Order: catalog.UserOrderNameDesc, Limit: 100}, "10 3 2 1 11 ", 5, 1},
		{"registered-asc", catalog.UserQuery{Order: catalog.UserOrderRegisteredAsc, Limit: 100}, "1 2 3 10 11 ", 5, 1},
		{"registered-desc", catalog.UserQuery{Order: catalog.UserOrderRegisteredDesc, Limit: 100}, "11 10 3 2 1 ", 5, 1},
		{"search is a case-insensitive substring", catalog.UserQuery{Search: "EM", Limit: 100}, "3 ", 1, 1},
		{"search in name-desc", catalog.UserQuery{Search: "a", Order: catalog.UserOrderNameDesc, Limit: 100}, "1 11 ", 2, 1},
		{"search in registered-desc", catalog.UserQuery{Search: "A", Order: catalog.UserOrderRegisteredDesc, Limit: 100}, "11 1 ", 2, 1},
		{"search of a capitalised name", catalog.UserQuery{Search: "zO", Order: catalog.UserOrderNameDesc, Limit: 100}, "10 ", 1, 1},
		{"search page from the end", catalog.UserQuery{Search: "m", Limit: 1, Offset: 2}, "3 ", 3, 1},
		{"search wildcards are literal", catalog.UserQuery{Search: "_50%", Limit: 100}, "11 ", 1, 1},
		{"search for a lone wildcard", catalog.UserQuery{Search: "%", Limit: 100}, "11 ", 1, 1},
		{"role filter", catalog.UserQuery{Role: 2, Limit: 100}, "2 10 ", 2, 1},
		{"role filter and search", catalog.UserQuery{Role: 3, Search: "a", Limit: 100}, "11 ", 1, 1},
		{"unknown role", catalog.UserQuery{Role: 999, Limit: 100}, "", 0, 1},
		{"page", catalog.UserQuery{Limit: 2, Offset: 1}, "1 2 ", 5, 1},
		{"page past the end keeps the total", catalog.UserQuery{Limit: 2, Offset: 7}, "", 5, 1},
		{"limit 0", catalog.UserQuery{Limit: 0}, "", 5, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			counter.Reset()
			page, err := db.Users(ctx, tt.q)
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(page); got != tt.want || page.Total != tt.total {
				t.Errorf("users %q total %d, want %q total %d", got, page.Total, tt.want, tt.total)
			}
			if page.Users == nil {
				t.Error("users is nil, want an empty list")
			}
			if n := counter.Count(); n > tt.queries {
				t.Errorf("%d queries, want at most %d", n, tt.queries)
			}
		})
	}

	page, err := db.Users(ctx, catalog.UserQuery{Search: "o", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[int64]catalog.UserListItem{}
	for _, u := range page.Users {
		byID[u.ID] = u
	}
	zoe := byID[10]
	if zoe.Lock == nil || *zoe.Lock != (catalog.LockHolder{ID: 2, Username: "editor"}) {
		t.Errorf("Zoe's lock %+v, want editor", zoe.Lock)
	}
	if zoe.ProfileImage != "users/10/abc" || zoe.Slug != "zoe" || zoe.Registered.Month() != 2 {
		t.Errorf("Zoe %+v", zoe)
	}
	if len(zoe.Roles) != 2 || zoe.Roles[0].Name != "editor" || zoe.Roles[1].Name != "member" || zoe.Roles[1].Description == "" {
		t.Errorf("Zoe's roles %+v, want editor and member", zoe.Roles)
	}
	if page, _ := db.Users(ctx, catalog.UserQuery{Search: "adam", Limit: 1}); len(page.Users) != 1 ||
		page.Users[0].Lock != nil || page.Users[0].ProfileImage != "" {
		t.Errorf("adam %+v: want no lock (it expired) and profile image \"\"", page.Users)
	}
	if _, err := db.Users(ctx, catalog.UserQuery{Order: "age-asc"}); apperr.CodeOf(err) != apperr.Invalid {
		t.Errorf("unknown order: %v, want invalid", err)
	}
}

// TestUsersSearchFolded: a username search ignores case and accents: it
// matches the users whose folded username contains the folded term, and lists them in
// the order of their folded names, ties (two names can fold alike: "Émile", "Emile")
// broken by id, so every page of a walk one user at a time is determined and the walk
// meets every match once.
func TestUsersSearchFolded(t *testing.T) {
	db := acctDB(t, nil)
	ctx := context.Background()
	acctExec(t, db, `INSERT INTO users (id, slug, username) VALUES
		(20, 'pokemon-fan', 'Pokémon_Fan'), (21, 'pokemon-master', 'POKEMON_MASTER'),
		(22, 'emile', 'Émile'), (23, 'emile-2', 'Emile'), (24, 'emile-3', 'e' || U&'\0301' || 'mile_3'),
		(25, 'strasse', 'Straße'), (26, 'sofia', 'ΣΟΦΙΑ'), (27, 'wide', 'Ｐｏｋé'), (28, 'kana', 'ポケモン')`)
	tests := []struct {
		search string
		order  string
		want   string
	}{
		{"pokemon", "", "20 21 "},
		{"POKÉMON", "", "20 21 "},
		{"pokémon", catalog.UserOrderNameDesc, "21 20 "},
		{"Poke\u0301mon", "", "20 21 "},
		{"poke", "", "27 20 21 "},
		{"emile", "", "22 23 24 "},
		{"ÉMILE", catalog.UserOrderNameDesc, "24 23 22 "},
		{"é", "", ""},
		{"strasse", "", "25 "},
		{"ß", "", "25 "},
		{"σοφια", "", "26 "},
		{"ポケ", "", "28 "},
		{"ﾎﾟｹ", "", "28 "},
		{"Ｅｍｉｌ", "", "22 23 24 "},
		{"\u0301", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.search+" "+tt.order, func(t *testing.T) {
			want := db.Text(t, `SELECT coalesce(string_agg(id::text || ' ', '' ORDER BY n), '') FROM (
				SELECT id, row_number() OVER (ORDER BY search_fold(username), id) AS n FROM users
				WHERE strpos(search_fold(username), search_fold($1)) > 0) m`, tt.search)
			if tt.order == catalog.UserOrderNameDesc {
				want = db.Text(t, `SELECT coalesce(string_agg(id::text || ' ', '' ORDER BY n DESC), '') FROM (
					SELECT id, row_number() OVER (ORDER BY search_fold(username), id) AS n FROM users
					WHERE strpos(search_fold(username), search_fold($1)) > 0) m`, tt.search)
			}
			if tt.want != "" && want != tt.want {
				t.Fatalf("the rule gives %q, the case expects %q", want, tt.want)
			}
			page, err := db.Users(ctx, catalog.UserQuery{Search: tt.search, Order: tt.order, Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			for _, u := range page.Users {
				got += fmt.Sprintf("%d ", u.ID)
			}
			if got != want || page.Total != int64(strings.Count(want, " ")) {
				t.Errorf("users %q total %d, want %q", got, page.Total, want)
			}
			// One user per page, from either end: the same users in the same order.
			walked := ""
			for off := int64(0); off < page.Total; off++ {
				p, err := db.Users(ctx, catalog.UserQuery{Search: tt.search, Order: tt.order, Limit: 1, Offset: off})
				if err != nil {
					t.Fatal(err)
				}
				for _, u := range p.Users {
					walked += fmt.Sprintf("%d ", u.ID)
				}
			}
			if walked != want {
				t.Errorf("walked one by one: %q, want %q", walked, want)
			}
		})
	}
}

// TestUserCount: what the users list reads instead of computing it follows every
// statement that writes users: user_count (the baseline schema), the total of the list
// without a filter, and users.search, the folded username a search matches
// (migration 00022).
func TestUserCount(t *testing.T) {
	db := acctDB(t, nil)
	ctx := context.Background()
	steps := []struct{ name, sql string }{
		{"demo data", ``},
		{"added", `INSERT INTO users (slug, username) VALUES ('c1', 'C1'), ('c2', 'c2'), ('c3', 'c3')`},
		{"added with a search text of its own", `INSERT INTO users (slug, username, search) VALUES ('c4', 'Ürsula', 'x')`},
		{"added none", `INSERT INTO users (slug, username) SELECT 'x', 'x' WHERE false`},
		{"renamed", `UPDATE users SET username = username || '_'`},
		{"renamed in capitals", `UPDATE users SET username = 'MiXeD' WHERE slug = 'c3'`},
		{"search text written", `UPDATE users SET search = 'junk'`},
		{"other columns written", `UPDATE users SET age_verified = true`},
		{"deleted", `DELETE FROM users WHERE slug IN ('c1', 'c2')`},
		{"truncated", `TRUNCATE users CASCADE`},
		{"added after truncate", `INSERT INTO users (slug, username) VALUES ('d1', 'D1')`},
	}
	checks := []struct{ name, sql string }{
		{"user_count", `SELECT count(*) FROM user_count WHERE n <> (SELECT count(*) FROM users)`},
		{"search", `SELECT count(*) FROM users WHERE search IS DISTINCT FROM search_fold(username)`},
	}
	for _, step := range steps {
		if step.sql != "" {
			acctExec(t, db, step.sql)
		}
		for _, c := range checks {
			if n := acctInt(t, db, c.sql); n != 0 {
				t.Errorf("after %s: %d rows with a stale %s", step.name, n, c.name)
			}
		}
	}
	page, err := db.Users(ctx, catalog.UserQuery{Limit: 0})
	if err != nil || page.Total != 1 {
		t.Errorf("total %d, %v; want 1", page.Total, err)
	}
}

func TestUserDetail(t *testing.T) {
	ctx := context.Background()
	var counter postgres.QueryCounter
	db := acctDB(t, &counter)
	acctExec(t, db, `UPDATE roles SET description = NULL WHERE id = 2`)
	acctExec(t, db, `INSERT INTO sessions (user_id, expires_at, revoked_at) VALUES
		(1, now() + interval '1 day', NULL),
		(2, now() + interval '1 day', now()),
		(3, now() - interval '1 second', NULL)`)

	tests := []struct {
		id       int64
		loggedIn bool
		roles    int
	}{
		{1, true, 1},
		{2, false, 1}, // revoked
		{3, false, 1}, // expired
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.id), func(t *testing.T) {
			counter.Reset()
			u, err := db.User(ctx, tt.id, catalog.LockRequest{By: 1, TTL: 1e9})
			if err != nil {
				t.Fatal(err)
			}
			if n := counter.Count(); n != 1 {
				t.Errorf("%d queries, want 1", n)
			}
			if u.ID != tt.id || u.LoggedIn != tt.loggedIn || len(u.Roles) != tt.roles || u.ProfileImage != nil {
				t.Errorf("user %+v, want logged_in %v with %d role", u, tt.loggedIn, tt.roles)
			}
		})
	}
	u, _ := db.User(ctx, 2, catalog.LockRequest{})
	if u.Roles[0].Description != nil {
		t.Errorf("editor role description %q, want null", *u.Roles[0].Description)
	}
	_, err := db.User(ctx, 999, catalog.LockRequest{By: 1, TTL: 1e9})
	acctWant(t, err, apperr.NotFound, apperr.MsgUserNotFound)
	if n := acctInt(t, db, `SELECT count(*) FROM user_locks WHERE user_id = 999`); n != 0 {
		t.Errorf("%d locks on a missing user", n)
	}
}

func TestEditUser(t *testing.T) {
	ctx := context.Background()
	db := acctDB(t, nil)
	tests := []struct {
		name      string
		id        int64
		edit      catalog.UserEdit
		code      apperr.Code
		msg       string
		username  string // after the edit
		roles     []int64
		ageVerify bool
	}{
		{"rename and verify", 3, catalog.UserEdit{Username: "Member One", AgeVerified: true}, "", "", "Member One", []int64{3}, true},
		{"username taken, case-insensitively", 3, catalog.UserEdit{Username: "ADMIN"}, apperr.Conflict, postgres.MsgUsernameTaken, "Member One", []int64{3}, true},
		{"own username in another case", 3, catalog.UserEdit{Username: "member one", AgeVerified: true}, "", "", "member one", []int64{3}, true},
		{"add a role", 3, catalog.UserEdit{Username: "member", AddedRoles: []int64{2, 2}}, "", "", "member", []int64{2, 3}, false},
		{"unknown role changes nothing", 3, catalog.UserEdit{Username: "renamed", AgeVerified: true, AddedRoles: []int64{1, 99}}, apperr.Invalid, apperr.MsgMissingParams, "member", []int64{2, 3}, false},
		{"unknown removed role changes nothing", 3, catalog.UserEdit{Username: "renamed", RemovedRoles: []int64{-1}}, apperr.Invalid, apperr.MsgMissingParams, "member", []int64{2, 3}, false},
		{"remove then add", 3, catalog.UserEdit{Username: "member", AddedRoles: []int64{1}, RemovedRoles: []int64{1, 2}}, "", "", "member", []int64{1, 3}, false},
		{"removing every role leaves the default", 3, catalog.UserEdit{Username: "member", RemovedRoles: []int64{1, 3}}, "", "", "member", []int64{3}, false},
		{"removing the only role leaves the default", 2, catalog.UserEdit{Username: "editor", RemovedRoles: []int64{2}}, "", "", "editor", []int64{3}, false},
		{"unknown user", 999, catalog.UserEdit{Username: "ghost"}, apperr.NotFound, apperr.MsgUserNotFound, "", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := db.EditUser(ctx, tt.id, 1, tt.edit)
			acctWant(t, err, tt.code, tt.msg)
			if tt.id == 999 {
				return
			}
			u, err := db.User(ctx, tt.id, catalog.LockRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if u.Username != tt.username || u.AgeVerified != tt.ageVerify || fmt.Sprint(acctRoles(t, db, tt.id)) != fmt.Sprint(tt.roles) {
				t.Errorf("user %s age_verified %v roles %v, want %s %v %v",
					u.Username, u.AgeVerified, acctRoles(t, db, tt.id), tt.username, tt.ageVerify, tt.roles)
			}
		})
	}

	t.Run("no default role to fall back on", func(t *testing.T) {
		acctExec(t, db, `UPDATE roles SET is_default = false`)
		defer acctExec(t, db, `UPDATE roles SET is_default = true WHERE id = 3`)
		_, err := db.EditUser(ctx, 2, 1, catalog.UserEdit{Username: "editor", RemovedRoles: []int64{3}})
		if err == nil || apperr.CodeOf(err) != apperr.Internal {
			t.Fatalf("error %v, want an internal error", err)
		}
		if got := acctRoles(t, db, 2); fmt.Sprint(got) != "[3]" {
			t.Errorf("roles %v after a failed edit, want [3]", got)
		}
	})
}

// TestEditUserResult: the edit reports what it changed, for the audit record: the
// facts before and after, and the roles really granted (with the default role given
// to a user left without one) and taken away, not the ids asked for.
func TestEditUserResult(t *testing.T) {
	ctx := context.Background()
	db := acctDB(t, nil)
	acctExec(t, db, `INSERT INTO users (id, slug, username) VALUES (10, 'u10', 'u10')`)
	acctExec(t, db, `INSERT INTO user_roles VALUES (10, 2)`)
	res, err := db.EditUser(ctx, 10, 1, catalog.UserEdit{Username: "u10-new", AgeVerified: true,
		AddedRoles: []int64{2}, RemovedRoles: []int64{2, 1}})
	if err != nil {
		t.Fatal(err)
	}
	want := catalog.UserEditResult{
		Before: catalog.UserFacts{Username: "u10"}, After: catalog.UserFacts{Username: "u10-new", AgeVerified: true},
		AddedRoles: []int64{2}, RemovedRoles: []int64{2},
	}
	if fmt.Sprint(res) != fmt.Sprint(want) {
		t.Errorf("result %+v, want %+v", res, want)
	}
	res, err = db.EditUser(ctx, 10, 1, catalog.UserEdit{Username: "u10-new", AgeVerified: true, RemovedRoles: []int64{2}})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(res.AddedRoles, res.RemovedRoles) != "[3] [2]" {
		t.Errorf("roles added %v and removed %v, want the default role 3 for the removed 2", res.AddedRoles, res.RemovedRoles)
	}
}

func TestDeleteUserLeavesNoOrphans(t *testing.T) {
	ctx := context.Background()
	db := acctDB(t, nil)
	const id = 2 // editor
	acctExec(t, db, `UPDATE users SET profile_image = 'users/2/key' WHERE id = $1`, id)
	acctExec(t, db, `INSERT INTO sessions (user_id, expires_at) VALUES ($1, now() + interval '1 day')`, id)
	acctExec(t, db, `INSERT INTO oauth_connections (user_id, provider, provider_user_id, provider_username)
		VALUES ($1, 'github', '42', 'editor-gh')`, id)
	acctExec(t, db, `INSERT INTO user_locks (user_id, locked_by, expires_at) VALUES
		(3, $1, now() + interval '1 hour'), ($1, 1, now() + interval '1 hour')`, id)
	acctExec(t, db, `INSERT INTO contributor_locks (contributor_id, locked_by, expires_at)
		SELECT id, $1, now() + interval '1 hour' FROM contributors ORDER BY id LIMIT 1`, id)
	if n := acctInt(t, db, `SELECT count(*) FROM contributor_locks WHERE locked_by = $1`, id); n != 1 {
		t.Fatalf("%d contributor locks before, want 1 (the demo has contributors)", n)
	}

	if err := db.DeleteUser(ctx, id, 1); err != nil {
		t.Fatal(err)
	}
	orphans := acctInt(t, db, `SELECT
		(SELECT count(*) FROM users WHERE id = $1) +
		(SELECT count(*) FROM sessions WHERE user_id = $1) +
		(SELECT count(*) FROM oauth_connections WHERE user_id = $1) +
		(SELECT count(*) FROM user_roles WHERE user_id = $1) +
		(SELECT count(*) FROM user_locks WHERE user_id = $1 OR locked_by = $1) +
		(SELECT count(*) FROM contributor_locks WHERE locked_by = $1)`, id)
	if orphans != 0 {
		t.Errorf("%d rows still refer to the deleted user", orphans)
	}
	if n := acctInt(t, db, `SELECT count(*) FROM users`); n != 2 {
		t.Errorf("%d users left, want 2", n)
	}
	acctWant(t, db.DeleteUser(ctx, id, 1), apperr.NotFound, apperr.MsgUserNotFound)
	if err := db.DeleteUser(ctx, 3, 1); err != nil {
		t.Errorf("delete a user without image: %v", err)
	}
}

func TestLogoutUser(t *testing.T) {
	ctx := context.Background()
	db := acctDB(t, nil)
	acctExec(t, db, `INSERT INTO sessions (user_id, expires_at) VALUES
		(2, now() + interval '1 day'), (2, now() + interval '1 day'), (3, now() + interval '1 day')`)
	if _, err := db.LogoutUser(ctx, 2, 1); err != nil {
		t.Fatal(err)
	}
	if n := acctInt(t, db, `SELECT count(*) FROM sessions WHERE user_id = 2 AND revoked_at IS NULL`); n != 0 {
		t.Errorf("%d live sessions of the logged out user", n)
	}
	if n := acctInt(t, db, `SELECT count(*) FROM sessions WHERE user_id = 3 AND revoked_at IS NULL`); n != 1 {
		t.Errorf("%d live sessions of another user, want 1", n)
	}
	_, err := db.LogoutUser(ctx, 999, 1)
	acctWant(t, err, apperr.NotFound, apperr.MsgUserNotFound)
}

// TestLogoutUndoesSessionChanges: a forced logout undoes what the sessions it revokes,
// and sessions revoked (or expired) before, did to the account's provider links: the
// links they made go, even the last way to log in; the links they unlinked come back,
// unless a revoked session had made them too; a provider account meanwhile linked to
// another user moves back only from a stand-in (signed up by it after the link, with
// nothing but the default role). Each case gives user 3 (no password unless said)
// links and unlinks by session: "" none (the sign-up's link), live (revoked by the
// logout), old (revoked before), expired (never revoked).
func TestLogoutUndoesSessionChanges(t *testing.T) {
	ctx := context.Background()
	const live, old, expired, other = "00000000-0000-4000-8000-00000000000a", "00000000-0000-4000-8000-00000000000b",
		"00000000-0000-4000-8000-00000000000c", "00000000-0000-4000-8000-00000000000d"
	// jane is user 10, holding google-3: signed up by it (standIn), or otherwise.
	const (
		noJane = iota
		standIn
		janeWithRole
		janeLinkedIt
	)
	tests := []struct {
		name     string
		password bool
		links    []string // provider[/account]:session, in link order (the account: provider-3)
		unlinks  []string // provider:linked-by:unlinked-by, in unlink order
		jane     int
		removed  []string
		restored []string // provider:outcome
		left     string
		pending  int64 // unlinks still kept afterwards
		janeLeft string
	}{
		{name: "the intruder's link goes, the sign-up's stays", links: []string{"google:", "github:live"},
			removed: []string{"github"}, left: "google"},
		{name: "a link of a session revoked before goes too", links: []string{"google:", "discord:old", "github:live"},
			removed: []string{"discord", "github"}, left: "google"},
		{name: "a link of an expired session goes", links: []string{"google:", "github:expired"},
			removed: []string{"github"}, left: "google"},
		{name: "the last way to log in goes when a session made it", links: []string{"github:live", "discord:live"},
			removed: []string{"discord", "github"}, left: ""},
		{name: "with a password", password: true, links: []string{"github:live"},
			removed: []string{"github"}, left: "password"},
		{name: "an unlinked sign-up link comes back", links: []string{"github:live"}, unlinks: []string{"google::live"},
			removed: []string{"github"}, restored: []string{"google:restored"}, left: "google"},
		{name: "an unlink by a session revoked before is undone too", unlinks: []string{"google::old"},
			restored: []string{"google:restored"}, left: "google"},
		{name: "the latest unlink of a provider comes back", unlinks: []string{"google::old", "google::live"},
			restored: []string{"google:restored"}, left: "google"},
		{name: "a link sessions made and unlinked stays away", links: []string{"google:"}, unlinks: []string{"discord:live:live"},
			left: "google"},
		{name: "a stand-in account gives it back", links: []string{"github:live"}, unlinks: []string{"google::live"}, jane: standIn,
			removed: []string{"github"}, restored: []string{"google:moved"}, left: "google", janeLeft: ""},
		{name: "an account with roles keeps it", links: []string{"github:live"}, unlinks: []string{"google::live"}, jane: janeWithRole,
			removed: []string{"github"}, restored: []string{"google:linked_elsewhere"}, left: "", pending: 1, janeLeft: "google"},
		{name: "an account it was linked to keeps it", unlinks: []string{"google::live"}, jane: janeLinkedIt,
			restored: []string{"google:linked_elsewhere"}, left: "", pending: 1, janeLeft: "google"},
		{name: "another account of the provider is linked", links: []string{"google/google-other:"}, unlinks: []string{"google::live"}, jane: standIn,
			restored: []string{"google:already_linked"}, left: "google", pending: 1, janeLeft: "google"},
		{name: "no links", left: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db := acctDB(t, nil)
			acctExec(t, db, `DELETE FROM oauth_connections WHERE user_id = 3`)
			acctExec(t, db, `INSERT INTO sessions (id, user_id, created_at, expires_at, revoked_at) VALUES
				($1, 3, now(), now() + interval '1 day', NULL), ($2, 3, now() - interval '2 days', now() + interval '1 day', now() - interval '1 day'),
				($3, 3, now() - interval '40 days', now() - interval '10 days', NULL)`, live, old, expired)
			if tc.password {
				acctExec(t, db, `UPDATE users SET password_hash = 'x' WHERE id = 3`)
			}
			sessions := map[string]any{"": nil, "live": live, "old": old, "expired": expired}
			for i, l := range tc.links {
				provider, session, _ := strings.Cut(l, ":")
				provider, account, ok := strings.Cut(provider, "/")
				if !ok {
					account = provider + "-3"
				}
				acctExec(t, db, `INSERT INTO oauth_connections (user_id, provider, provider_user_id, provider_username, linked_at, linked_session)
					VALUES (3, $1, $4, $1 || ' name', now() - make_interval(mins => 10 - $2::int), $3::uuid)`, provider, i, sessions[session], account)
			}
			for i, u := range tc.unlinks {
				parts := strings.Split(u, ":")
				acctExec(t, db, `INSERT INTO oauth_unlinks (user_id, provider, provider_user_id, provider_username, linked_at, linked_session,
					unlinked_at, unlinked_session)
					VALUES (3, $1, $1 || '-3', $1 || ' name', now() - interval '30 days', $2::uuid, now() - make_interval(mins => 10 - $3::int), $4::uuid)`,
					parts[0], sessions[parts[1]], i, sessions[parts[2]])
			}
			if tc.jane != noJane {
				acctExec(t, db, `INSERT INTO users (id, slug, username) VALUES (10, 'jane-doe-2', 'jane-doe-2')`)
				acctExec(t, db, `INSERT INTO user_roles VALUES (10, 3)`)
				acctExec(t, db, `INSERT INTO sessions (id, user_id, expires_at) VALUES ($1, 10, now() + interval '1 day')`, other)
				var by any
				if tc.jane == janeLinkedIt {
					by = other
				}
				acctExec(t, db, `INSERT INTO oauth_connections (user_id, provider, provider_user_id, provider_username, linked_at, linked_session)
					SELECT 10, 'google', 'google-3', 'google name', registered, $1::uuid FROM users WHERE id = 10`, by)
				if tc.jane == janeWithRole {
					acctExec(t, db, `INSERT INTO user_roles VALUES (10, 2)`)
				}
			}
			out, err := db.LogoutUser(ctx, 3, 1)
			if err != nil {
				t.Fatal(err)
			}
			var removed, restored []string
			for _, l := range out.Removed {
				removed = append(removed, l.Provider)
				if l.ProviderUsername != l.Provider+" name" {
					t.Errorf("removed %+v: provider username", l)
				}
			}
			for _, l := range out.Restored {
				restored = append(restored, l.Provider+":"+l.Outcome)
				if wantOther := l.Outcome == catalog.RestoreMoved || l.Outcome == catalog.RestoreLinkedElsewhere; (l.OtherUser == 10) != wantOther {
					t.Errorf("restored %+v: other user", l)
				}
			}
			if !slices.Equal(removed, tc.removed) || !slices.Equal(restored, tc.restored) {
				t.Errorf("removed %v, restored %v; want %v, %v", removed, restored, tc.removed, tc.restored)
			}
			if got := strings.Join(out.Left, ","); got != tc.left {
				t.Errorf("left %q, want %q", got, tc.left)
			}
			if got := db.Text(t, `SELECT coalesce(string_agg(provider, ',' ORDER BY provider), '') FROM oauth_connections WHERE user_id = 3`); got != strings.TrimPrefix(tc.left, "password") {
				t.Errorf("links left %q, want %q", got, tc.left)
			}
			if n := acctInt(t, db, `SELECT count(*) FROM oauth_unlinks WHERE user_id = 3`); n != tc.pending {
				t.Errorf("%d unlinks kept, want %d", n, tc.pending)
			}
			if tc.jane != noJane {
				if got := db.Text(t, `SELECT coalesce(string_agg(provider, ','), '') FROM oauth_connections WHERE user_id = 10`); got != tc.janeLeft {
					t.Errorf("jane's links %q, want %q", got, tc.janeLeft)
				}
			}
			// A restored link is the one that was unlinked: its account, name and time.
			for _, l := range out.Restored {
				if l.Outcome != catalog.RestoreRestored && l.Outcome != catalog.RestoreMoved {
					continue
				}
				if n := acctInt(t, db, `SELECT count(*) FROM oauth_connections WHERE user_id = 3 AND provider = $1 AND provider_user_id = $1 || '-3'
					AND provider_username = $1 || ' name' AND linked_at < now() - interval '29 days' AND linked_session IS NULL`, l.Provider); n != 1 {
					t.Errorf("%s is not back as it was", l.Provider)
				}
			}
		})
	}
}

// TestLogoutRestoresOnceFree: a link left pending because another user holds the
// provider account comes back at a later forced logout, once that user is gone.
func TestLogoutRestoresOnceFree(t *testing.T) {
	ctx := context.Background()
	const live = "00000000-0000-4000-8000-00000000000a"
	db := acctDB(t, nil)
	acctExec(t, db, `INSERT INTO sessions (id, user_id, expires_at) VALUES ($1, 3, now() + interval '1 day')`, live)
	acctExec(t, db, `INSERT INTO oauth_unlinks (user_id, provider, provider_user_id, provider_username, linked_at, unlinked_session)
		VALUES (3, 'google', 'g-3', 'Member', now() - interval '30 days', $1)`, live)
	acctExec(t, db, `INSERT INTO users (id, slug, username) VALUES (10, 'member-2', 'member-2')`)
	acctExec(t, db, `INSERT INTO user_roles VALUES (10, 2)`)
	acctExec(t, db, `INSERT INTO oauth_connections (user_id, provider, provider_user_id, provider_username) VALUES (10, 'google', 'g-3', 'Member')`)
	for i, want := range []string{catalog.RestoreLinkedElsewhere, catalog.RestoreLinkedElsewhere, catalog.RestoreRestored} {
		if i == 2 {
			if err := db.DeleteUser(ctx, 10, 1); err != nil {
				t.Fatal(err)
			}
		}
		out, err := db.LogoutUser(ctx, 3, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Restored) != 1 || out.Restored[0].Outcome != want {
			t.Fatalf("logout %d: restored %+v, want google %s", i+1, out.Restored, want)
		}
	}
	if got := db.Text(t, `SELECT provider_user_id FROM oauth_connections WHERE user_id = 3`); got != "g-3" {
		t.Errorf("member's link %q, want g-3", got)
	}
	if n := acctInt(t, db, `SELECT count(*) FROM oauth_unlinks`); n != 0 {
		t.Errorf("%d unlinks kept after the restoration", n)
	}
}

// TestLogoutRacesSignUp: the victim's own login signs a stand-in up through her
// provider account while the forced logout puts it back to her account. The sign-up
// (here its rows, in a transaction held open) has inserted the account's link; the
// logout's insert waits for it, finds the account taken once it commits, and moves it
// back from the stand-in, never failing on the unique key.
func TestLogoutRacesSignUp(t *testing.T) {
	ctx := context.Background()
	const live = "00000000-0000-4000-8000-00000000000a"
	db := acctDB(t, nil)
	acctExec(t, db, `INSERT INTO sessions (id, user_id, expires_at) VALUES ($1, 3, now() + interval '1 day')`, live)
	acctExec(t, db, `INSERT INTO oauth_unlinks (user_id, provider, provider_user_id, provider_username, linked_at, unlinked_session)
		VALUES (3, 'google', 'g-3', 'Member', now() - interval '30 days', $1)`, live)
	signUp, err := db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer signUp.Rollback(ctx) //nolint:errcheck // after Commit, a no-op
	for _, sql := range []string{
		`INSERT INTO users (id, slug, username) VALUES (10, 'member-2', 'member-2')`,
		`INSERT INTO user_roles VALUES (10, 3)`,
		`INSERT INTO oauth_connections (user_id, provider, provider_user_id, provider_username) VALUES (10, 'google', 'g-3', 'Member')`,
	} {
		if _, err := signUp.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, 1)
	var out catalog.Logout
	go func() {
		var err error
		out, err = db.LogoutUser(ctx, 3, 1)
		done <- err
	}()
	waitForLockWaiters(t, db, 1)
	if err := signUp.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("logout: %v", err)
	}
	if len(out.Restored) != 1 || out.Restored[0].Outcome != catalog.RestoreMoved || out.Restored[0].OtherUser != 10 {
		t.Errorf("restored %+v, want google moved from user 10", out.Restored)
	}
	if got := db.Text(t, `SELECT string_agg(user_id::text, ',') FROM oauth_connections WHERE provider_user_id = 'g-3'`); got != "3" {
		t.Errorf("g-3 linked to %q, want 3", got)
	}
}

func TestGrantRole(t *testing.T) {
	ctx := context.Background()
	db := acctDB(t, nil)
	tests := []struct {
		user, role int64
		want       postgres.Grant
		code       apperr.Code
		msg        string
	}{
		{3, 1, postgres.Grant{Username: "member", RoleName: "admin", Granted: true}, "", ""},
		{3, 1, postgres.Grant{Username: "member", RoleName: "admin"}, "", ""},
		{999, 1, postgres.Grant{}, apperr.NotFound, apperr.MsgUserNotFound},
		{3, 999, postgres.Grant{}, apperr.NotFound, postgres.MsgRoleNotFound},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("user %d role %d", tt.user, tt.role), func(t *testing.T) {
			g, err := db.GrantRole(ctx, tt.user, tt.role)
			acctWant(t, err, tt.code, tt.msg)
			if g != tt.want {
				t.Errorf("grant %+v, want %+v", g, tt.want)
			}
		})
	}
	if got := acctRoles(t, db, 3); fmt.Sprint(got) != "[1 3]" {
		t.Errorf("member's roles %v, want [1 3]", got)
	}
	if name, err := db.UserName(ctx, 2); err != nil || name != "editor" {
		t.Errorf("UserName(2) = %q, %v; want editor", name, err)
	}
	_, err := db.UserName(ctx, 999)
	acctWant(t, err, apperr.NotFound, apperr.MsgUserNotFound)
}
