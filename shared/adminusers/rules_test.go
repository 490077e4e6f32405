package adminusers_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/adminpermissions"
	"github.com/mediacatalog/service/shared/adminroles"
	"github.com/mediacatalog/service/shared/adminusers"
	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/audit"
	"github.com/mediacatalog/service/shared/avatars"
	"github.com/mediacatalog/service/shared/avatars/avatartest"
	"github.com/mediacatalog/service/shared/httpapi"
)

// The kinds of actor and of target of the rule table (docs/access-rules.md).
const (
	fullAdmin = iota // a full admin: every built-in permission
	holder           // a delegated admin holding the write's permissions (route and affected ones), not a full admin
	lacker           // a delegated admin lacking them (view permissions only)
)

const (
	onFullAdmin = iota // another full admin, or a role one holds
	onOther            // an ordinary user, or a role one holds
	onSelf             // the actor, or a role the actor holds
)

// ruleTable is the access rule table of docs/access-rules.md, one row per admin write
// that changes authority or an account: want[actor kind][target kind] is the status.
// The fixture (ruleFixture) gives each kind its user and role:
//
//	actors:        full admin 1 (role 1, all), holder 12 (role 12), lacker 13 (role 13)
//	user targets:  full admin 11 (roles 30 + 31), other 3 (member), self
//	role targets:  31 (held by full admin 11: every built-in permission, which makes 11 one),
//	               20 (held by member 3: view-contributors), the actor's own role
var ruleTable = []struct {
	write string
	role  bool // the target is a role, not a user
	req   func(target int64, name string) (method, path string, body any)
	want  [3][3]int
}{
	{"user.edit username", false, func(id int64, name string) (string, string, any) {
		return "POST", fmt.Sprintf("/admin-users/edit/%d", id), map[string]any{"username": name + "-renamed"}
	}, [3][3]int{{200, 200, 200}, {403, 200, 200}, {403, 403, 403}}},
	{"user.edit age_verified", false, func(id int64, name string) (string, string, any) {
		return "POST", fmt.Sprintf("/admin-users/edit/%d", id), map[string]any{"username": name, "age_verified": true}
	}, [3][3]int{{200, 200, 200}, {403, 200, 200}, {403, 403, 403}}},
	{"user.edit roles (grant role 21)", false, func(id int64, name string) (string, string, any) {
		return "POST", fmt.Sprintf("/admin-users/edit/%d", id), map[string]any{"username": name, "added_roles": []int{21}}
	}, [3][3]int{{200, 200, 403}, {403, 200, 403}, {403, 403, 403}}},
	{"user.update-image", false, func(id int64, _ string) (string, string, any) {
		return "POST", fmt.Sprintf("/admin-users/update-image/%d", id),
			map[string]any{"image": rulePNG}
	}, [3][3]int{{200, 200, 200}, {403, 200, 200}, {403, 403, 403}}},
	{"user.delete-image", false, func(id int64, _ string) (string, string, any) {
		return "DELETE", fmt.Sprintf("/admin-users/delete-image/%d", id), nil
	}, [3][3]int{{200, 200, 200}, {403, 200, 200}, {403, 403, 403}}},
	{"user.logout", false, func(id int64, _ string) (string, string, any) {
		return "POST", fmt.Sprintf("/admin-users/logout/%d", id), nil
	}, [3][3]int{{200, 200, 200}, {403, 200, 200}, {403, 403, 403}}},
	{"user.delete", false, func(id int64, _ string) (string, string, any) {
		return "DELETE", fmt.Sprintf("/admin-users/delete/%d", id), nil
	}, [3][3]int{{200, 200, 200}, {403, 200, 200}, {403, 403, 403}}},
	{"role.edit remove a permission (view-contributors)", true, func(id int64, name string) (string, string, any) {
		return "POST", fmt.Sprintf("/admin-roles/edit/%d", id), map[string]any{"name": name, "removed_permissions": []int{12}}
	}, [3][3]int{{200, 200, 200}, {403, 200, 200}, {403, 403, 403}}},
	{"role.edit rename", true, func(id int64, name string) (string, string, any) {
		return "POST", fmt.Sprintf("/admin-roles/edit/%d", id), map[string]any{"name": name + "-renamed"}
	}, [3][3]int{{200, 200, 200}, {403, 200, 200}, {403, 403, 403}}},
	{"role.delete", true, func(id int64, _ string) (string, string, any) {
		return "DELETE", fmt.Sprintf("/admin-roles/delete/%d", id), nil
	}, [3][3]int{{200, 200, 200}, {403, 200, 200}, {403, 403, 403}}},
}

// ruleFixture is added to the demo data (admin 1, editor 2, member 3; roles 1 admin,
// 2 editor, 3 default). Every user has a live session and a profile image reference.
var ruleFixture = []string{
	`INSERT INTO users (id, slug, username) VALUES (11, 'admin2', 'admin2'), (12, 'holder', 'holder'), (13, 'lacker', 'lacker')`,
	`INSERT INTO roles (id, name) VALUES (30, 'admins-b'), (31, 'admins-c'), (12, 'holder-role'), (13, 'lacker-role'),
		(20, 'readers'), (21, 'extra')`,
	// Role 30: every built-in permission but view-contributors (12); role 31: every
	// built-in permission, a full-admin role (a full admin is a user who holds one).
	`INSERT INTO role_permissions (role_id, permission_id) SELECT r, id FROM permissions, (VALUES (30), (31)) v(r)
		WHERE key IS NOT NULL AND NOT (r = 30 AND id = 12)`,
	// holder: view/edit/delete users, view/edit/delete roles, view-contributors.
	// lacker: the view permissions only. readers and extra: view-contributors.
	`INSERT INTO role_permissions (role_id, permission_id) VALUES
		(12, 1), (12, 2), (12, 3), (12, 4), (12, 5), (12, 7), (12, 12),
		(13, 1), (13, 4), (13, 8), (13, 12), (20, 12), (21, 12)`,
	`INSERT INTO user_roles (user_id, role_id) VALUES (11, 30), (11, 31), (12, 12), (13, 13), (3, 20)`,
	`INSERT INTO sessions (user_id, expires_at) SELECT id, now() + interval '1 day' FROM users`,
	`UPDATE users SET profile_image = 'user/' || id || '/old'`,
}

var (
	ruleActors      = [3]int64{fullAdmin: 1, holder: 12, lacker: 13}
	ruleActorRoles  = [3]int64{fullAdmin: 1, holder: 12, lacker: 13}
	ruleActorNames  = [3]string{"full admin", "holder", "lacker"}
	ruleTargetNames = [3]string{"full admin", "other", "self"}
)

// ruleState is everything the rules guard, as one text: users with their names, age
// verification, images and live sessions, the roles and their grants and holders.
const ruleState = `SELECT concat_ws(' | ',
	(SELECT string_agg(id || ':' || username || ':' || age_verified || ':' || coalesce(profile_image, '-') || ':' ||
	        (SELECT count(*) FROM sessions s WHERE s.user_id = u.id AND s.revoked_at IS NULL), ' ' ORDER BY id) FROM users u),
	(SELECT string_agg(user_id || '>' || role_id, ' ' ORDER BY user_id, role_id) FROM user_roles),
	(SELECT string_agg(role_id || '>' || permission_id, ' ' ORDER BY role_id, permission_id) FROM role_permissions),
	(SELECT string_agg(id || ':' || name, ' ' ORDER BY id) FROM roles))`

// TestAccessRuleTable holds the code to the rule table: every admin write that changes
// authority or an account, by each kind of actor on each kind of target, on fresh
// data. A refusal changes nothing and leaves an AUDIT record naming the actor, the
// route and the target; an allowed write changes something and is recorded as done.
// A refused write puts nothing in the bucket (an image update is refused before its
// upload). The cells on a full admin matter most: a delegated admin (holder) must not
// rename a full admin, change their image or age verification, or remove a permission
// from (or delete) the role that makes them a full admin.
func TestAccessRuleTable(t *testing.T) {
	rulePNG = avatartest.DataURL("image/png", avatartest.PNG(t, 32, 32, false))
	cells := 0
	for _, row := range ruleTable {
		for actor := range 3 {
			for target := range 3 {
				want := row.want[actor][target]
				cells++
				t.Run(fmt.Sprintf("%s/%s on %s", row.write, ruleActorNames[actor], ruleTargetNames[target]), func(t *testing.T) {
					a := newRuleAccess(t)
					for _, sql := range ruleFixture {
						a.db.Exec(t, sql)
					}
					actorID := ruleActors[actor]
					var id int64
					switch {
					case row.role && target == onFullAdmin:
						id = 31
					case row.role && target == onOther:
						id = 20
					case row.role:
						id = ruleActorRoles[actor]
					case target == onFullAdmin:
						id = 11
					case target == onOther:
						id = 3
					default:
						id = actorID
					}
					table := "users"
					if row.role {
						table = "roles"
					}
					name := a.db.Text(t, fmt.Sprintf(`SELECT %s FROM %s WHERE id = $1`, map[bool]string{false: "username", true: "name"}[row.role], table), id)
					method, path, body := row.req(id, name)
					c := a.cookie(t, actorID)
					before := a.db.Text(t, ruleState)
					status, msg := a.do(t, c, method, path, body)
					if status != want {
						t.Fatalf("%s %s: %d %q, want %d", method, path, status, msg, want)
					}
					after := a.db.Text(t, ruleState)
					records := auditRecords(t, a.logs.String())
					switch want {
					case 403:
						if n := a.puts.Load(); n != 0 {
							t.Errorf("a refused write put %d objects in the bucket", n)
						}
						if msg != apperr.MsgForbidden {
							t.Errorf("message %q, want %q", msg, apperr.MsgForbidden)
						}
						if after != before {
							t.Errorf("a refused write changed\n%s\nto\n%s", before, after)
						}
						if !hasRecord(records, actorID, "refused", id) {
							t.Errorf("no refusal record of actor %d on %d:\n%s", actorID, id, a.logs.String())
						}
					case 200:
						if after == before {
							t.Error("an allowed write changed nothing")
						}
						if len(records) != 1 || records[0].Actor != actorID || records[0].Action == "refused" {
							t.Errorf("records %+v, want one of the write by %d", records, actorID)
						}
					}
				})
			}
		}
	}
	t.Logf("rule table: %d writes x 3 actor kinds x 3 target kinds = %d cells", len(ruleTable), cells)
}

// auditRecord is the part of an audit record the rule tests read.
type auditRecord struct {
	Actor  int64  `json:"actor_id"`
	Action string `json:"action"`
	Route  string `json:"route"`
	Target struct {
		ID int64 `json:"id"`
	} `json:"target"`
	Reason string `json:"reason"`
}

func auditRecords(t *testing.T, logs string) []auditRecord {
	t.Helper()
	var out []auditRecord
	sc := bufio.NewScanner(strings.NewReader(logs))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line struct {
			Msg   string `json:"msg"`
			Level string `json:"level"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		if line.Msg != audit.Message {
			continue
		}
		if line.Level != "AUDIT" {
			t.Errorf("audit record at level %q: %s", line.Level, sc.Text())
		}
		var r auditRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

func hasRecord(records []auditRecord, actor int64, action string, target int64) bool {
	for _, r := range records {
		if r.Actor == actor && r.Action == action && r.Target.ID == target && r.Route != "" {
			return true
		}
	}
	return false
}

// newRuleAccess is newAccess with the profile image routes (a fresh bucket, no cdn)
// and JSON logs that name the AUDIT level as the functions do.
func newRuleAccess(t *testing.T) *access {
	t.Helper()
	db := testenv.NewDemoDB(t)
	cfg := testenv.AuthConfig(t)
	sessions := testenv.NewSessions(t, db, cfg)
	files := &countingFiles{Files: testenv.NewS3Store(t)}
	svc := avatars.New(avatars.Deps{Files: files, Store: db.DB,
		Limits: testenv.ImageLimits, FileService: true})
	logs := &syncBuffer{}
	mux := httpapi.NewMux(
		adminusers.Routes(adminusers.Deps{Store: db.DB, Auth: sessions, LockTTL: cfg.LockTTL, Images: svc}),
		adminroles.Routes(adminroles.Deps{Store: db.DB, Auth: sessions}),
		adminpermissions.Routes(adminpermissions.Deps{Store: db.DB, Auth: sessions}),
	)
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.LevelKey && a.Value.Any() == httpapi.LevelAudit {
			return slog.String(slog.LevelKey, "AUDIT")
		}
		return a
	}}))
	h := httpapi.Wrap(mux, httpapi.Options{Log: log, CORSOrigins: cfg.CORSOrigins})
	return &access{h: h, db: db, sessions: sessions, logs: logs, puts: &files.puts}
}

// countingFiles is the bucket (the real S3 store) with a count of the objects put in
// it: a refused upload must not reach it at all, not even to be removed afterwards.
type countingFiles struct {
	avatars.Files
	puts atomic.Int64
}

func (f *countingFiles) Put(ctx context.Context, key string, data []byte, contentType string) error {
	f.puts.Add(1)
	return f.Files.Put(ctx, key, data, contentType)
}

// rulePNG is the image of the update-image row, made once by TestAccessRuleTable.
var rulePNG string
