package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/catalog"
)

// The facts of a role kept on its row (migration 00024), each against a recount.
const (
	// userCountDrift lists the roles whose kept user_count is not their number of holders.
	userCountDrift = `SELECT coalesce(string_agg(r.id || ':' || r.user_count || '<>' || c.n, ' ' ORDER BY r.id), '')
		FROM roles r, LATERAL (SELECT count(*) AS n FROM user_roles ur WHERE ur.role_id = r.id) c
		WHERE r.user_count <> c.n`
	// fullAdminRolesNow lists the roles flagged full_admin, "1 30".
	fullAdminRolesNow = `SELECT coalesce(string_agg(id::text, ' ' ORDER BY id), '') FROM roles WHERE full_admin`
	// fullAdminRecount lists the roles that alone grant every keyed permission, computed
	// afresh (not with the migration's function).
	fullAdminRecount = `SELECT coalesce(string_agg(r.id::text, ' ' ORDER BY r.id), '') FROM roles r
		WHERE EXISTS (SELECT 1 FROM permissions WHERE key IS NOT NULL)
		  AND NOT EXISTS (SELECT 1 FROM permissions p WHERE p.key IS NOT NULL
		                  AND NOT EXISTS (SELECT 1 FROM role_permissions rp WHERE rp.role_id = r.id AND rp.permission_id = p.id))`
)

// TestRoleUserCountKept: every kind of write of user_roles (sign-ups, grants, removals,
// a role's deletion moving its holders to the default role, a user's deletion, the
// operator's grant, bulk SQL) leaves each role's kept user_count equal to a recount.
func TestRoleUserCountKept(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		sql  []string
		want string // the roles' counts after, "1:1 2:1 3:2"
	}{
		{"the demo data", nil, "1:1 2:1 3:1"},
		{"a bulk insert of grants", []string{
			`INSERT INTO users (id, slug, username) SELECT g, 'u' || g, 'u' || g FROM generate_series(100, 149) g`,
			`INSERT INTO user_roles SELECT g, 3 FROM generate_series(100, 149) g`,
			`INSERT INTO user_roles SELECT g, 2 FROM generate_series(100, 109) g`,
		}, "1:1 2:11 3:51"},
		{"grants moved from one role to another", []string{
			`INSERT INTO users (id, slug, username) SELECT g, 'u' || g, 'u' || g FROM generate_series(100, 109) g`,
			`INSERT INTO user_roles SELECT g, 2 FROM generate_series(100, 109) g`,
			`UPDATE user_roles SET role_id = 3 WHERE role_id = 2 AND user_id >= 105`,
		}, "1:1 2:6 3:6"},
		{"users deleted", []string{
			`INSERT INTO users (id, slug, username) SELECT g, 'u' || g, 'u' || g FROM generate_series(100, 109) g`,
			`INSERT INTO user_roles SELECT g, r FROM generate_series(100, 109) g, (VALUES (2), (3)) v(r)`,
			`DELETE FROM users WHERE id >= 100 AND id < 104`,
		}, "1:1 2:7 3:7"},
		{"a role deleted", []string{
			`INSERT INTO roles (id, name) VALUES (20, 'doomed')`,
			`INSERT INTO user_roles VALUES (3, 20), (2, 20)`,
			`DELETE FROM roles WHERE id = 20`,
		}, "1:1 2:1 3:1"},
		{"truncated", []string{`TRUNCATE user_roles`}, "1:0 2:0 3:0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := testenv.NewDemoDB(t)
			for _, sql := range tt.sql {
				db.Exec(t, sql)
			}
			if got := db.Text(t, userCountDrift); got != "" {
				t.Errorf("kept counts differ from a recount: %s", got)
			}
			if got := db.Text(t, `SELECT string_agg(id || ':' || user_count, ' ' ORDER BY id) FROM roles`); got != tt.want {
				t.Errorf("counts %q, want %q", got, tt.want)
			}
		})
	}

	t.Run("concurrent sign-ups and admin writes", func(t *testing.T) {
		db := testenv.NewDemoDB(t)
		db.Exec(t, `INSERT INTO roles (id, name) VALUES (20, 'readers'), (21, 'doomed')`)
		db.Exec(t, `INSERT INTO users (id, slug, username) SELECT g, 'u' || g, 'u' || g FROM generate_series(100, 139) g`)
		db.Exec(t, `INSERT INTO user_roles SELECT g, 3 FROM generate_series(100, 139) g`)
		db.Exec(t, `INSERT INTO user_roles SELECT g, 21 FROM generate_series(100, 139, 2) g`)
		var wg sync.WaitGroup
		errs := make(chan error, 100)
		for i := range 12 {
			wg.Go(func() {
				_, err := db.OAuthLogin(ctx, catalog.ProviderAccount{Provider: "github",
					ProviderUserID: fmt.Sprint("race-", i), Username: "racer", UsernameBase: "racer"})
				errs <- err
			})
		}
		for u := int64(100); u < 112; u++ {
			wg.Go(func() {
				_, err := db.EditUser(ctx, u, 1, catalog.UserEdit{Username: fmt.Sprint("u", u),
					AddedRoles: []int64{20}, RemovedRoles: []int64{3}})
				errs <- err
			})
		}
		for u := int64(112); u < 116; u++ {
			wg.Go(func() {
				err := db.DeleteUser(ctx, u, 1)
				errs <- err
			})
		}
		wg.Go(func() {
			_, err := db.DeleteRole(ctx, 21, 1)
			errs <- err
		})
		wg.Go(func() {
			_, err := db.GrantRole(ctx, 120, 20)
			errs <- err
		})
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		if got := db.Text(t, userCountDrift); got != "" {
			t.Errorf("kept counts differ from a recount after concurrent writes: %s", got)
		}
		if got := db.Int(t, `SELECT user_count FROM roles WHERE id = 20`); got != 13 {
			t.Errorf("readers held by %d, want 13", got)
		}
	})
}

// TestSignUpsRacingDeletions: a sign-up takes the users' kept count, then the default
// role's (the users' trigger fires before user_roles'); a deletion of a user who holds
// the default role takes both too, in the same order (the cascade's user_roles trigger
// is queued after the users' count trigger), so the two never deadlock, and the counts
// stay right.
func TestSignUpsRacingDeletions(t *testing.T) {
	ctx := context.Background()
	db := testenv.NewDemoDB(t)
	db.Exec(t, `INSERT INTO users (id, slug, username) SELECT g, 'u' || g, 'u' || g FROM generate_series(100, 159) g`)
	db.Exec(t, `INSERT INTO user_roles SELECT g, 3 FROM generate_series(100, 159) g`)
	var wg sync.WaitGroup
	errs := make(chan error, 120)
	for i := range 60 {
		wg.Go(func() {
			_, err := db.OAuthLogin(ctx, catalog.ProviderAccount{Provider: "github",
				ProviderUserID: fmt.Sprint("racer-", i), Username: "racer", UsernameBase: fmt.Sprint("racer-", i)})
			errs <- err
		})
		wg.Go(func() {
			err := db.DeleteUser(ctx, int64(100+i), 1)
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if got := db.Text(t, userCountDrift); got != "" {
		t.Errorf("kept counts differ from a recount: %s", got)
	}
}

// TestRoleFullAdminKept: roles.full_admin is true exactly for the roles that alone
// grant every built-in (keyed) permission, after every kind of change of grants and
// permissions, a new built-in permission that a migration adds included.
func TestRoleFullAdminKept(t *testing.T) {
	// Role 30 copies the admin role's grants; role 31 has all of them but one.
	setup := []string{
		`INSERT INTO roles (id, name) VALUES (30, 'admin-copy'), (31, 'almost')`,
		`INSERT INTO role_permissions SELECT 30, id FROM permissions WHERE key IS NOT NULL`,
		`INSERT INTO role_permissions SELECT 31, id FROM permissions WHERE key IS NOT NULL AND key <> 'delete-roles'`,
	}
	tests := []struct {
		name string
		sql  []string
		want string
	}{
		{"the demo data and the setup", nil, "1 30"},
		{"a keyed permission removed from a role", []string{
			`DELETE FROM role_permissions WHERE role_id = 30 AND permission_id = (SELECT id FROM permissions WHERE key = 'view-users')`,
		}, "1"},
		{"the missing permission granted", []string{
			`INSERT INTO role_permissions SELECT 31, id FROM permissions WHERE key = 'delete-roles'`,
		}, "1 30 31"},
		{"a permission added through the API (no key) and granted changes nothing", []string{
			`INSERT INTO permissions (id, name) VALUES (90, 'view-series')`,
			`INSERT INTO role_permissions VALUES (31, 90)`,
		}, "1 30"},
		{"an added permission deleted changes nothing", []string{
			`INSERT INTO permissions (id, name) VALUES (90, 'view-series')`,
			`INSERT INTO role_permissions VALUES (1, 90), (30, 90)`,
			`DELETE FROM permissions WHERE id = 90`,
		}, "1 30"},
		{"a new built-in permission by a migration: granted to the full-admin roles", []string{
			`INSERT INTO permissions (name, key) VALUES ('view-series', 'view-series')`,
		}, "1 30"},
		{"a new built-in permission by a migration, granted to another role", []string{
			`INSERT INTO permissions (name, key) VALUES ('view-series', 'view-series')`,
			`INSERT INTO role_permissions SELECT 31, id FROM permissions WHERE key = 'view-series'`,
		}, "1 30"},
		{"a built-in permission gone: the role that lacked only it is one", []string{
			`DELETE FROM permissions WHERE key = 'delete-roles'`,
		}, "1 30 31"},
		{"a permission given a key", []string{
			`INSERT INTO permissions (id, name) VALUES (90, 'view-series')`,
			`INSERT INTO role_permissions VALUES (30, 90)`,
			`UPDATE permissions SET key = 'view-series' WHERE id = 90`,
		}, "1 30"},
		{"grants moved from a role to another", []string{
			`UPDATE role_permissions SET role_id = 31 WHERE role_id = 30 AND permission_id = (SELECT id FROM permissions WHERE key = 'delete-roles')`,
		}, "1 31"},
		{"a role's grants truncated", []string{`TRUNCATE role_permissions`}, ""},
		{"the role deleted", []string{`DELETE FROM roles WHERE id = 30`}, "1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := testenv.NewDemoDB(t)
			for _, sql := range append(append([]string{}, setup...), tt.sql...) {
				db.Exec(t, sql)
			}
			got, recount := db.Text(t, fullAdminRolesNow), db.Text(t, fullAdminRecount)
			if got != recount {
				t.Errorf("full_admin roles %q, a recount says %q", got, recount)
			}
			if got != tt.want {
				t.Errorf("full_admin roles %q, want %q", got, tt.want)
			}
		})
	}
}

// TestNewBuiltInPermissionKeepsFullAdmins adds built-in permissions as a migration
// does (an INSERT of permissions rows with a key, or a key given to an added one) and
// shows that every full admin stays one, with the new permission in their sessions'
// permissions, while no one else becomes one. Users: 1 (the admin role), 2 (role 30,
// a copy of it), 3 (role 31, short of delete-roles).
func TestNewBuiltInPermissionKeepsFullAdmins(t *testing.T) {
	ctx := context.Background()
	setup := []string{
		`INSERT INTO roles (id, name) VALUES (30, 'admin-copy'), (31, 'almost')`,
		`INSERT INTO role_permissions SELECT 30, id FROM permissions WHERE key IS NOT NULL`,
		`INSERT INTO role_permissions SELECT 31, id FROM permissions WHERE key IS NOT NULL AND key <> 'delete-roles'`,
		`DELETE FROM user_roles WHERE user_id IN (2, 3)`,
		`INSERT INTO user_roles VALUES (2, 30), (3, 31)`,
	}
	// fullAdmins lists the users who hold a full-admin role.
	const fullAdmins = `SELECT coalesce(string_agg(DISTINCT ur.user_id::text, ' '), '') FROM user_roles ur
		JOIN roles r ON r.id = ur.role_id WHERE r.full_admin`
	tests := []struct {
		name string
		sql  []string
		keys []string // the new built-in permissions
	}{
		{"one", []string{`INSERT INTO permissions (name, description, key) VALUES ('view-series', 'View series', 'view-series')`},
			[]string{"view-series"}},
		{"two in one statement", []string{`INSERT INTO permissions (name, key) VALUES ('view-series', 'view-series'), ('edit-series', 'edit-series')`},
			[]string{"view-series", "edit-series"}},
		{"and granted to the admin role by the migration as well", []string{
			`INSERT INTO permissions (name, key) VALUES ('view-series', 'view-series')`,
			`INSERT INTO role_permissions SELECT r.id, p.id FROM roles r, permissions p
			 WHERE r.name = 'admin' AND p.key = 'view-series' ON CONFLICT DO NOTHING`,
		}, []string{"view-series"}},
		{"an added permission given a key", []string{
			`INSERT INTO permissions (id, name) VALUES (90, 'view-series')`,
			`UPDATE permissions SET key = 'view-series' WHERE id = 90`,
		}, []string{"view-series"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := testenv.NewDemoDB(t)
			for _, sql := range setup {
				db.Exec(t, sql)
			}
			if got := db.Text(t, fullAdmins); got != "1 2" {
				t.Fatalf("full admins before %q, want \"1 2\"", got)
			}
			for _, sql := range tt.sql {
				db.Exec(t, sql)
			}
			if got := db.Text(t, fullAdmins); got != "1 2" {
				t.Errorf("full admins after %q, want \"1 2\"", got)
			}
			for _, user := range []int64{1, 2, 3} {
				sid := db.Text(t, `INSERT INTO sessions (user_id, expires_at) VALUES ($1, now() + interval '1 day') RETURNING id::text`, user)
				u, err := db.SessionUser(ctx, user, sid)
				if err != nil {
					t.Fatal(err)
				}
				for _, k := range tt.keys {
					if has := slices.Contains(u.Permissions, k); has != (user != 3) {
						t.Errorf("user %d holds %s: %v", user, k, has)
					}
				}
			}
		})
	}
}

// TestTagSeriesCountKept: tags.series_count (migration 00024) is the number of series of
// the tag's client that carry it, after every kind of write of links, series and tags
// (a series deleted with its links, a series or a tag moved to another client, a link
// to another client's series), and GET /tags/id/{id} answers it.
func TestTagSeriesCountKept(t *testing.T) {
	ctx := context.Background()
	// tagDrift lists the tags whose kept count is not a recount.
	const tagDrift = `SELECT coalesce(string_agg(t.id || ':' || coalesce(t.series_count::text, 'null') || '<>' || c.n, ' ' ORDER BY t.id), '')
		FROM tags t, LATERAL (SELECT count(*) AS n FROM series_tags st JOIN series s ON s.id = st.series_id
		                      WHERE st.tag_id = t.id AND s.client_id = t.client_id) c
		WHERE t.series_count IS DISTINCT FROM c.n`
	setup := []string{
		`INSERT INTO clients (id, name) VALUES (7, 'Seventh'), (8, 'Eighth')`,
		`INSERT INTO tags (id, client_id, name, type) VALUES (70, 7, 'seven-a', 'genre'), (71, 7, 'seven-b', 'genre'), (80, 8, 'eight', 'genre')`,
		`INSERT INTO series (id, client_id, name, slug, type) SELECT g, 7, 'S' || g, 's-' || g, 'manga' FROM generate_series(700, 719) g`,
		`INSERT INTO series (id, client_id, name, slug, type) SELECT g, 8, 'S' || g, 's-' || g, 'manga' FROM generate_series(800, 804) g`,
		`INSERT INTO series_tags SELECT g, 70 FROM generate_series(700, 719) g`,
		`INSERT INTO series_tags SELECT g, 71 FROM generate_series(700, 704) g`,
		`INSERT INTO series_tags SELECT g, 80 FROM generate_series(800, 804) g`,
		`INSERT INTO series_tags VALUES (800, 70)`, // another client's series: not counted
	}
	tests := []struct {
		name string
		sql  []string
		want string // "70:20 71:5 80:5"
	}{
		{"inserted", nil, "70:20 71:5 80:5"},
		{"links deleted", []string{`DELETE FROM series_tags WHERE tag_id = 70 AND series_id < 705`}, "70:15 71:5 80:5"},
		{"series deleted with their links", []string{`DELETE FROM series WHERE id IN (700, 701, 800)`}, "70:18 71:3 80:4"},
		{"links moved to another tag", []string{`UPDATE series_tags SET tag_id = 71 WHERE tag_id = 70 AND series_id >= 715`}, "70:15 71:10 80:5"},
		{"a series moved to another client", []string{`UPDATE series SET client_id = 8 WHERE id = 719`}, "70:19 71:5 80:5"},
		{"a tag moved to another client", []string{`UPDATE tags SET client_id = 8 WHERE id = 70`}, "70:1 71:5 80:5"},
		{"links truncated", []string{`TRUNCATE series_tags`}, "70:0 71:0 80:0"},
		{"the backfill of a tag not counted yet", []string{`UPDATE tags SET series_count = NULL WHERE id = 71`,
			`INSERT INTO series_tags VALUES (705, 71)`}, "70:20 71:null 80:5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := testenv.NewDemoDB(t)
			for _, sql := range append(append([]string{}, setup...), tt.sql...) {
				db.Exec(t, sql)
			}
			if got := db.Text(t, `SELECT string_agg(id || ':' || coalesce(series_count::text, 'null'), ' ' ORDER BY id) FROM tags WHERE id >= 70`); got != tt.want {
				t.Errorf("counts %q, want %q", got, tt.want)
			}
			if strings.Contains(tt.want, "null") {
				// Counted by the request until the backfill writes it.
				tag, err := db.TagByID(ctx, 71)
				if err != nil || tag.SeriesCount != 6 {
					t.Errorf("TagByID = %+v, %v; want 6 series", tag, err)
				}
				return
			}
			if got := db.Text(t, tagDrift); got != "" {
				t.Errorf("kept counts differ from a recount: %s", got)
			}
			tag, err := db.TagByID(ctx, 70)
			if err != nil {
				t.Fatal(err)
			}
			if want := db.Int(t, `SELECT series_count FROM tags WHERE id = 70`); int64(tag.SeriesCount) != want {
				t.Errorf("TagByID series_count %d, want %d", tag.SeriesCount, want)
			}
		})
	}
}
