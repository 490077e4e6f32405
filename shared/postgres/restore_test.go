package postgres_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/catalog"
	"github.com/mediacatalog/service/shared/imageset"
)

// TestSessionCutoff: a session started before the sessions-valid-after mark is refused
// (Unauthorized) although its row is live; one started after it is accepted; the mark
// never moves back.
func TestSessionCutoff(t *testing.T) {
	ctx := context.Background()
	db := acctDB(t, nil)
	if at, err := db.SessionCutoff(ctx); err != nil || !at.IsZero() {
		t.Fatalf("a new database's mark %v (%v), want none", at, err)
	}
	before, err := db.CreateSession(ctx, 3, time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.SessionUser(ctx, 3, before); err != nil {
		t.Fatalf("a live session before any mark: %v", err)
	}
	mark, err := db.SetSessionCutoff(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.SessionUser(ctx, 3, before)
	acctWant(t, err, apperr.Unauthorized, apperr.MsgUnauthorized)
	if n := acctInt(t, db, `SELECT count(*) FROM sessions WHERE id = $1 AND revoked_at IS NULL`, before); n != 1 {
		t.Errorf("the mark changed the session's row (%d live)", n)
	}
	// Every statement that asks whether a session is live agrees: a session from before
	// the mark links and unlinks nothing, and does not count as logged in.
	acctExec(t, db, `INSERT INTO oauth_connections (user_id, provider, provider_user_id, provider_username)
		VALUES (3, 'discord', 'd-3', 'member')`)
	err = db.LinkProvider(ctx, 3, before, catalog.ProviderAccount{Provider: "github", ProviderUserID: "gh-3", Username: "member", UsernameBase: "member"})
	acctWant(t, err, apperr.Unauthorized, apperr.MsgUnauthorized)
	err = db.UnlinkProvider(ctx, 3, before, "discord")
	acctWant(t, err, apperr.Unauthorized, apperr.MsgUnauthorized)
	if u, err := db.User(ctx, 3, catalog.LockRequest{}); err != nil || u.LoggedIn {
		t.Errorf("user detail with only a session from before the mark: logged_in %v (%v), want false", u.LoggedIn, err)
	}
	after, err := db.CreateSession(ctx, 3, time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.SessionUser(ctx, 3, after); err != nil {
		t.Errorf("a session after the mark: %v", err)
	}
	acctExec(t, db, `UPDATE session_cutoff SET valid_after = valid_after + interval '1 hour'`)
	later, err := db.SessionCutoff(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := db.SetSessionCutoff(ctx); err != nil || !again.Equal(later) || !later.After(mark) {
		t.Errorf("the mark moved from %v back to %v (%v)", later, again, err)
	}
}

// TestRevocationsAgain: the operator's re-applied revocations change what they name
// and report what they found; none checks an access rule, and the role changes keep
// the default role of a user left without any.
func TestRevocationsAgain(t *testing.T) {
	ctx := context.Background()
	db := acctDB(t, nil)
	acctExec(t, db, `INSERT INTO sessions (user_id, expires_at) VALUES (2, now() + interval '1 day'), (2, now() + interval '1 day')`)
	if n, err := db.RevokeSessions(ctx, 2); err != nil || n != 2 {
		t.Errorf("revoked %d sessions (%v), want 2", n, err)
	}
	acctExec(t, db, `INSERT INTO oauth_connections (user_id, provider, provider_user_id, provider_username)
		VALUES (3, 'github', 'gh-3', 'member')`)
	for _, want := range []bool{true, false} {
		if had, err := db.RemoveLink(ctx, 3, "github"); err != nil || had != want {
			t.Errorf("remove the last link: had %v (%v), want %v", had, err, want)
		}
	}
	held, err := db.RemoveUserRoles(ctx, 2, []int64{2, 1})
	if err != nil || !slices.Equal(held, []int64{2}) {
		t.Errorf("removed roles %v (%v), want [2]", held, err)
	}
	if n := acctInt(t, db, `SELECT count(*) FROM user_roles WHERE user_id = 2 AND role_id = 3`); n != 1 {
		t.Error("a user left without a role lacks the default role")
	}
	perm := acctInt(t, db, `SELECT min(permission_id) FROM role_permissions WHERE role_id = 2`)
	removed, err := db.RemoveRolePermissions(ctx, 2, []int64{perm, 999})
	if err != nil || !slices.Equal(removed, []int64{perm}) {
		t.Errorf("removed permissions %v (%v), want [%d]", removed, err, perm)
	}
	acctExec(t, db, `UPDATE users SET profile_image = 'users/3/0123456789abcdef-01234567.png' WHERE id = 3`)
	if ref, err := db.PurgeUser(ctx, 3); err != nil || ref != "users/3/0123456789abcdef-01234567.png" {
		t.Errorf("purged user's picture %q (%v)", ref, err)
	}
	_, err = db.PurgeUser(ctx, 3)
	acctWant(t, err, apperr.NotFound, apperr.MsgUserNotFound)
	if any, err := db.AnyFullAdmin(ctx); err != nil || !any {
		t.Errorf("full admin left %v (%v)", any, err)
	}
}

// TestNamedImages: the rows that name a picture, by ids and in pages of id order.
func TestNamedImages(t *testing.T) {
	ctx := context.Background()
	db := acctDB(t, nil)
	acctExec(t, db, `UPDATE users SET profile_image = 'users/' || id || '/0123456789abcdef-01234567.png' WHERE id IN (1, 3)`)
	got, err := db.NamedImages(ctx, imageset.Users, []int64{1, 2, 3, 999})
	if err != nil || len(got) != 2 || got[3] != "users/3/0123456789abcdef-01234567.png" {
		t.Errorf("named images %v (%v)", got, err)
	}
	page, err := db.NamedImagesAfter(ctx, imageset.Users, 1, 10)
	if err != nil || len(page) != 1 || page[0].ID != 3 {
		t.Errorf("after 1: %v (%v)", page, err)
	}
	if _, err := db.NamedImages(ctx, "publishers", []int64{1}); err == nil {
		t.Error("no error for an owner without stored pictures")
	}
}
