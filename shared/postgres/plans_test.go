package postgres_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/namekey"
	"github.com/mediacatalog/service/shared/postgres"
)

// TestBoundedPlans: the statements that could read a whole table (a sequential scan or
// a count over every row of a table that grows with the users) read a bounded part of
// it by index (no sequential scan of it, at most 1,000 of its rows read as executed,
// those a filter removed included), on a database of 20,000 users with a session and the default
// role each, analyzed. docs/queries.md has their plans at 1M series.
func TestBoundedPlans(t *testing.T) {
	ctx := context.Background()
	db := testenv.NewDemoDB(t)
	db.Fixture(t, `INSERT INTO users (slug, username) SELECT 'bulk-' || g, 'Bulk User ' || g FROM generate_series(1, 20000) g`)
	db.Exec(t, `INSERT INTO user_roles SELECT id, 3 FROM users WHERE slug LIKE 'bulk-%'`)
	db.Exec(t, `INSERT INTO sessions (user_id, expires_at, revoked_at) SELECT id, now(), now() FROM users`)
	db.Exec(t, `UPDATE users SET profile_image = 'users/' || id || '/0123456789abcdef-01234567.png' WHERE id % 5000 = 0`)
	if _, err := namekey.Fill(ctx, db.Pool); err != nil {
		t.Fatal(err)
	}
	// Links and unlinks by session, as the forced logout reads them beside the sessions.
	db.Exec(t, `INSERT INTO oauth_connections (user_id, provider, provider_user_id, provider_username, linked_session)
		SELECT user_id, 'github', 'gh-' || user_id, 'x', id FROM sessions`)
	db.Exec(t, `INSERT INTO oauth_unlinks (user_id, provider, provider_user_id, provider_username, linked_at, unlinked_session)
		SELECT user_id, 'google', 'g-' || user_id, 'x', now(), id FROM sessions`)
	// Contributors, one slug taken twice among them, as an add of that name finds it.
	db.Exec(t, `INSERT INTO contributors (client_id, first_name, slug)
		SELECT 1, 'Bulk ' || g, 'bulk-' || g FROM generate_series(1, 20000) g
		UNION ALL VALUES (1, 'Taken', 'taken'), (1, 'Taken 2', 'taken-2'), (1, 'Taken 3', 'taken-3000000000000000000000000000000')`)
	db.Exec(t, `VACUUM ANALYZE users, user_roles, sessions, roles, oauth_connections, oauth_unlinks, contributors`)
	key := namekey.Key("bulk-user")
	tests := []struct {
		name   string
		sql    string
		args   []any
		tables []string // the tables no node may scan whole, nor aggregate every row of
	}{
		{"a user's deletion cascading to their sessions", `DELETE FROM sessions WHERE user_id = $1`, []any{int64(500)}, []string{"sessions"}},
		{"the sign-up's names keyed like its own", `
			SELECT coalesce(name_key, ''), CASE WHEN name_key IS NULL THEN username ELSE '' END FROM users
			WHERE name_key = $1 OR (name_key >= $2 AND name_key < $3) OR name_key IS NULL`,
			[]any{key, key + "-", key + "."}, []string{"users"}},
		{"a forced logout's removal of the links its revoked sessions made", `
			DELETE FROM oauth_connections c USING sessions s
			WHERE c.user_id = $1 AND s.id = c.linked_session AND s.user_id = $1 AND s.revoked_at IS NOT NULL`,
			[]any{int64(500)}, []string{"sessions", "oauth_connections"}},
		{"a forced logout's unlinks of revoked sessions", `
			SELECT DISTINCT ON (u.provider) u.provider, u.provider_user_id
			FROM oauth_unlinks u JOIN sessions s ON s.id = u.unlinked_session
			WHERE u.user_id = $1 AND s.user_id = $1 AND s.revoked_at IS NOT NULL
			ORDER BY u.provider, u.unlinked_at DESC, u.id DESC`, []any{int64(500)}, []string{"sessions", "oauth_unlinks"}},
		{"the roles list's number of users", `SELECT r.id, r.user_count FROM roles r ORDER BY lower(r.name), r.id`, nil, []string{"user_roles"}},
		{"is the actor a full admin", `SELECT EXISTS (SELECT 1 FROM user_roles ur JOIN roles r ON r.id = ur.role_id
			WHERE ur.user_id = $1 AND r.full_admin)`, []any{int64(1)}, []string{"user_roles"}},
		{"is the default role a full admin's", `
			SELECT EXISTS (SELECT 1 FROM user_roles fa
			               JOIN user_roles ur ON ur.user_id = fa.user_id AND ur.role_id = $1
			               WHERE fa.role_id = ANY ($2))`, []any{int64(3), []int64{1}}, []string{"user_roles"}},
		{"the next rows with a picture (make reconcile-images)", `
			SELECT id, profile_image FROM users WHERE profile_image IS NOT NULL AND id > $1
			ORDER BY id LIMIT $2`, []any{int64(0), 1000}, []string{"users"}},
		{"the pictures of a page's owners (make reconcile-images)", `
			SELECT id, profile_image FROM users WHERE id = ANY($1) AND profile_image IS NOT NULL`,
			[]any{[]int64{5000, 10000, 7}}, []string{"users"}},
		{"a taken contributor slug's next suffix", strings.ReplaceAll(postgres.NextSlugSuffix, "$4", "$1"),
			[]any{"taken"}, []string{"contributors"}},
		{"a forced logout made again", `UPDATE sessions SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL`,
			[]any{int64(500)}, []string{"sessions"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tx, err := db.Pool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(ctx) //nolint:errcheck // the DELETE is undone
			var plan json.RawMessage
			if err := tx.QueryRow(ctx, `EXPLAIN (ANALYZE, FORMAT JSON) `+tt.sql, tt.args...).Scan(&plan); err != nil {
				t.Fatal(err)
			}
			var nodes []map[string]any
			var walk func(n map[string]any)
			walk = func(n map[string]any) {
				nodes = append(nodes, n)
				if kids, ok := n["Plans"].([]any); ok {
					for _, k := range kids {
						walk(k.(map[string]any))
					}
				}
			}
			var top []struct {
				Plan map[string]any `json:"Plan"`
			}
			if err := json.Unmarshal(plan, &top); err != nil {
				t.Fatal(err)
			}
			walk(top[0].Plan)
			for _, n := range nodes {
				table, _ := n["Relation Name"].(string)
				if !slices.Contains(tt.tables, table) {
					continue
				}
				if n["Node Type"] == "Seq Scan" {
					t.Errorf("a sequential scan of %s:\n%s", table, indent(plan))
				}
				rows, _ := n["Actual Rows"].(float64)
				removed, _ := n["Rows Removed by Filter"].(float64)
				loops, _ := n["Actual Loops"].(float64)
				if (rows+removed)*loops > 1000 {
					t.Errorf("%v rows of %s read:\n%s", (rows+removed)*loops, table, indent(plan))
				}
			}
		})
	}
}

func indent(b []byte) string {
	var v any
	_ = json.Unmarshal(b, &v)
	out, _ := json.MarshalIndent(v, "", " ")
	return strings.TrimSpace(string(out))
}
