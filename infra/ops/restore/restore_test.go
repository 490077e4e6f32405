package restore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/mediacatalog/service/infra/ops/restore"
	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/audit"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// TestApply: on a database restored to T, the revocations the audit records after T
// name are made again (forced logout, unlink, roles and permissions taken away, a user
// deleted), those before T are not, the grants after T are listed with their command,
// every session from before is refused, and a second run finds everything done.
func TestApply(t *testing.T) {
	ctx := context.Background()
	db := testenv.NewDemoDB(t)
	db.Exec(t, `INSERT INTO users (id, slug, username) VALUES (40, 'intruder', 'intruder')`)
	db.Exec(t, `INSERT INTO oauth_connections (user_id, provider, provider_user_id, provider_username) VALUES (3, 'github', 'gh-3', 'member')`)
	if _, err := db.CreateSession(ctx, 2, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	sid3, err := db.CreateSession(ctx, 3, time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	perm := db.Int(t, `SELECT min(permission_id) FROM role_permissions WHERE role_id = 2`)

	var log bytes.Buffer
	rec := audit.CommandLogger(ctx, &log)
	// Before the restore point: already in the restored database, or undone by it.
	audit.RecordBy(rec, 1, "user.delete", "user", 3)
	time.Sleep(5 * time.Millisecond)
	point := time.Now()
	time.Sleep(5 * time.Millisecond)
	audit.RecordBy(rec, 1, "user.logout", "user", 2)
	audit.RecordBy(rec, 1, "user.unlink", "user", 3, slog.String("provider", "github"), slog.String("by", "logout"))
	audit.RecordBy(rec, 1, "user.edit", "user", 2, slog.Any("added_roles", []int64{1}), slog.Any("removed_roles", []int64{2}))
	audit.RecordBy(rec, 1, "role.edit", "role", 2, slog.Any("added_permissions", []int64{}), slog.Any("removed_permissions", []int64{perm}))
	audit.RecordBy(rec, 1, "contributor.edit", "contributor", 1)
	audit.RecordBy(rec, 1, "user.restore-link", "user", 2, slog.String("provider", "google"), slog.String("outcome", "restored"))
	audit.RecordBy(rec, 2, "refused", "user", 1)
	// As CloudWatch Logs exports it: the record is the event's message.
	var wrapped bytes.Buffer
	audit.RecordBy(audit.CommandLogger(ctx, &wrapped), 1, "user.delete", "user", 40)
	event, _ := json.Marshal(map[string]any{"timestamp": time.Now().UnixMilli(), "message": strings.TrimSpace(wrapped.String())})
	log.WriteString(`{"level":"INFO","msg":"request","status":200}` + "\nnot json\n" + string(event) + "\n")

	records, err := restore.Read(&log)
	if err != nil || len(records) != 9 {
		t.Fatalf("%d records (%v), want 9", len(records), err)
	}
	res, err := restore.Apply(ctx, db.DB, records, point, restore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	res.Write(&out)
	t.Log(out.String())
	if len(res.Applied) != 5 || len(res.ByHand) != 2 || !strings.Contains(res.ByHand[0], "make grant-role USER_ID=2 ROLE_ID=1") ||
		!strings.Contains(res.ByHand[1], "google link put back by a forced logout: POST /admin-users/logout/2 again") ||
		res.Others["contributor.edit"] != 1 || res.Others["refused"] != 0 {
		t.Errorf("applied %q, by hand %q, others %v", res.Applied, res.ByHand, res.Others)
	}
	for _, c := range []struct {
		what string
		sql  string
		want int64
	}{
		{"user 3, deleted before the point, is there", `SELECT count(*) FROM users WHERE id = 3`, 1},
		{"user 40, deleted after it, is not", `SELECT count(*) FROM users WHERE id = 40`, 0},
		{"user 2's live sessions", `SELECT count(*) FROM sessions WHERE user_id = 2 AND revoked_at IS NULL`, 0},
		{"user 3's github link", `SELECT count(*) FROM oauth_connections WHERE user_id = 3 AND provider = 'github'`, 0},
		{"user 2's editor role", `SELECT count(*) FROM user_roles WHERE user_id = 2 AND role_id = 2`, 0},
		{"user 2's admin role (a grant: not made again)", `SELECT count(*) FROM user_roles WHERE user_id = 2 AND role_id = 1`, 0},
		{"the permission taken from the editor role", `SELECT count(*) FROM role_permissions WHERE role_id = 2 AND permission_id = $1`, 0},
	} {
		args := []any{}
		if strings.Contains(c.sql, "$1") {
			args = append(args, perm)
		}
		if got := db.Int(t, c.sql, args...); got != c.want {
			t.Errorf("%s: %d, want %d", c.what, got, c.want)
		}
	}
	if _, err := db.SessionUser(ctx, 3, sid3); err == nil {
		t.Error("a session from before the restore is accepted")
	}
	if n := db.Int(t, `SELECT count(*) FROM session_cutoff WHERE valid_after > $1`, point); n != 1 {
		t.Error("the sessions-valid-after mark is not after the restore point")
	}
	again, err := restore.Apply(ctx, db.DB, records, point, restore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(again.Applied, "\n"), "user 40 deleted: already gone") ||
		!strings.Contains(strings.Join(again.Applied, "\n"), "github link of user 3 removed: already gone") {
		t.Errorf("second run: %q", again.Applied)
	}
}
