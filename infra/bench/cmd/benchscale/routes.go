package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/mediacatalog/service/infra/local/demo"
	"github.com/mediacatalog/service/infra/tests/routefacts"
	"github.com/mediacatalog/service/shared/auth"
	"github.com/mediacatalog/service/shared/postgres"
)

// benchRoute is one entry of the benchmark: a request to send again and again, and its
// label, which names it the same way at every size (a deep page's offset, which differs
// from size to size, becomes <last page> or <middle page>; an id picked from the catalog
// is named by what it is). A write also says how to make request i and how to keep the
// data from drifting: the runner calls prepare before the requests (untimed), sends
// a multiple of cycle requests, and calls cleanup after.
type benchRoute struct {
	method string // GET when ""
	path   string // the request's path and query (request i's is target(i) when set)
	label  string
	// Writes.
	body    func(i int) string                            // request i's JSON body
	target  func(i int) string                            // request i's path, when they differ
	prepare func(ctx context.Context, requests int) error // makes what requests requests need
	cleanup func(ctx context.Context) error
	cycle   int // after a multiple of cycle requests the data is as it was
}

func (r benchRoute) verb() string {
	if r.method == "" {
		return "GET"
	}
	return r.method
}

// matches reports whether the route's path or label contains text.
func (r benchRoute) matches(text string) bool {
	return strings.Contains(r.path, text) || strings.Contains(r.label, text)
}

// catalogShape is what the routes need from the generated client: its large publisher
// (the first generated) with the number of its links, the number of publishers,
// contributors and users, and ids and names of representative rows.
type catalogShape struct {
	big, links, publishers, contributors, users int64
	blueMatches                                 int64 // the large publisher's links that search=Blue matches

	typicalPublisher string // slug of a publisher from the middle of the generated ones
	contributor      contributorRow
	user             userRow // a generated user from the middle, holding the default role
	nextUser         int64   // the first generated user's id (the avatars of many users)
	tag              int64   // a generated tag (its series count grows with the catalog)
	defaultRole      int64
	editor           roleRow // the demo editor role, edited by the benchmark
	permission       int64   // a built-in permission
	extraPermission  int64   // a permission the editor role lacks (added and removed again)
}

type contributorRow struct {
	id           int64
	first, last  string
	gender, kind *string
	public       bool
	links        []string
}

type userRow struct {
	id       int64
	username string
	verified bool
}

type roleRow struct {
	id                int64
	name, description string
}

func lookUpCatalog(ctx context.Context, db *postgres.DB) (catalogShape, error) {
	var c catalogShape
	q := db.Pool
	err := q.QueryRow(ctx, `SELECT p.id,
		(SELECT count(*) FROM series_publishers WHERE publisher_id = p.id),
		(SELECT count(*) FROM publishers WHERE client_id = $2),
		(SELECT count(*) FROM contributors WHERE client_id = $2),
		(SELECT count(*) FROM users)
		FROM publishers p WHERE p.slug = $1`,
		demo.GeneratedPublisherSlug(client, 1), client).Scan(&c.big, &c.links, &c.publishers, &c.contributors, &c.users)
	if err != nil {
		return c, fmt.Errorf("look up the catalog: %w", err)
	}
	c.typicalPublisher = demo.GeneratedPublisherSlug(client, int(max(1, c.publishers/2)))
	steps := []struct {
		what string
		sql  string
		args []any
		dest []any
	}{
		{"contributor", `SELECT id, first_name, coalesce(last_name, ''), gender, type, public,
				coalesce((SELECT array_agg(url ORDER BY id) FROM contributor_links WHERE contributor_id = c.id), '{}')
			FROM contributors c WHERE client_id = $1 AND slug = $2`,
			[]any{int64(client), fmt.Sprintf("g%d-contributor-%d", client, max(1, c.contributors/2))},
			[]any{&c.contributor.id, &c.contributor.first, &c.contributor.last, &c.contributor.gender,
				&c.contributor.kind, &c.contributor.public, &c.contributor.links}},
		{"user", `SELECT id, username, age_verified FROM users WHERE slug = $1`,
			[]any{fmt.Sprintf("g%d-user-%d", client, max(1, c.users/2))},
			[]any{&c.user.id, &c.user.username, &c.user.verified}},
		{"first user", `SELECT id FROM users WHERE slug = $1`, []any{fmt.Sprintf("g%d-user-1", client)}, []any{&c.nextUser}},
		{"tag", `SELECT id FROM tags WHERE client_id = $1 AND name = 'Generated tag 1'`, []any{int64(client)}, []any{&c.tag}},
		{"default role", `SELECT id FROM roles WHERE is_default`, nil, []any{&c.defaultRole}},
		{"Blue matches", `SELECT count(*) FROM series_publishers
				WHERE publisher_id = $1 AND client_id = $2 AND search LIKE search_pattern('Blue')`,
			[]any{c.big, int64(client)}, []any{&c.blueMatches}},
		{"editor role", `SELECT id, name, coalesce(description, '') FROM roles WHERE id = $1`, []any{demo.EditorRoleID},
			[]any{&c.editor.id, &c.editor.name, &c.editor.description}},
		{"permission", `SELECT id FROM permissions WHERE key = $1`, []any{auth.PermViewUsers}, []any{&c.permission}},
		{"extra permission", `SELECT id FROM permissions WHERE key = $1 AND id NOT IN
				(SELECT permission_id FROM role_permissions WHERE role_id = $2)`,
			[]any{auth.PermDeleteContributors, demo.EditorRoleID}, []any{&c.extraPermission}},
	}
	for _, s := range steps {
		if err := q.QueryRow(ctx, s.sql, s.args...).Scan(s.dest...); err != nil {
			return c, fmt.Errorf("look up the catalog's %s: %w", s.what, err)
		}
	}
	return c, nil
}

// pageSize is the page a list route is benched at, when the OpenAPI document gives it
// a limit: the frontend's.
const pageSize = 20

// fill is what a route's parameter is sent as on the generated client, and how an
// entry's label names it (the same at every size).
type fill struct{ value, label string }

// fills are the values of the read routes' parameters, by routefacts.ParamKey ("tags
// id", "?client"). A read route whose parameters all have one is benched with no entry
// of its own.
func fills(c catalogShape) map[string]fill {
	id := func(v int64, label string) fill { return fill{strconv.FormatInt(v, 10), label} }
	return map[string]fill{
		"?client":               {strconv.Itoa(client), strconv.Itoa(client)},
		"tags id":               id(c.tag, "<a generated tag>"),
		"publishers id":         id(c.big, "<the large publisher>"),
		"publishers slug":       {c.typicalPublisher, "<a typical publisher>"},
		"admin-contributors id": id(c.contributor.id, "<a generated contributor>"),
		"admin-users id":        id(c.user.id, "<a generated user>"),
		"admin-roles id":        id(c.defaultRole, "<the default role>"),
		"admin-permissions id":  id(c.permission, "<a built-in permission>"),
		"cdn id":                id(c.user.id, "<one user>"),
		"cdn res":               {"high", "high"},
	}
}

// api is what the benchmark derives its reads from: the route tables and the OpenAPI
// document's parameters.
type api struct {
	groups []routefacts.Group
	params map[string][]routefacts.Param
}

func loadAPI() (api, error) {
	groups, err := routefacts.Groups()
	if err != nil {
		return api{}, err
	}
	params, err := routefacts.Params()
	return api{groups, params}, err
}

// reads are an entry for every GET route of the tables: its path parameters and
// required query parameters filled from fills, a page of pageSize when it has a limit.
// The routes it cannot fill are in skipped, each with what it lacks.
func (a api) reads(c catalogShape) (reads []benchRoute, skipped map[string]string) {
	values, labels := map[string][]string{}, map[string][]string{}
	for key, f := range fills(c) {
		v := url.QueryEscape(f.value)
		if !strings.HasPrefix(key, "?") {
			v = url.PathEscape(f.value)
		}
		values[key], labels[key] = []string{v}, []string{f.label}
	}
	skipped = map[string]string{}
	for _, g := range a.groups {
		for _, rt := range g.Routes {
			if rt.Method() != "GET" {
				continue
			}
			params, ok := a.params[rt.Pattern]
			if !ok {
				skipped[rt.Pattern] = "not in the OpenAPI document"
				continue
			}
			paths, missing := routefacts.URLs(g.Name, rt, params, values)
			if missing != "" {
				skipped[rt.Pattern] = fmt.Sprintf("no value for its parameter %s in fills", missing)
				continue
			}
			named, _ := routefacts.URLs(g.Name, rt, params, labels)
			path, label := paths[0], named[0]
			if slices.ContainsFunc(params, func(p routefacts.Param) bool { return p.In == "query" && p.Name == "limit" }) {
				sep := "?"
				if strings.Contains(path, "?") {
					sep = "&"
				}
				page := fmt.Sprintf("%slimit=%d", sep, pageSize)
				path, label = path+page, label+page
			}
			reads = append(reads, benchRoute{path: path, label: label})
		}
	}
	return reads, skipped
}

// benchRoutes are every read route of the API on the generated client (api.reads), then
// the hand-made variants that a route's one entry does not show, and the admin writes
// that check access (see the exceptions in routes_test.go). The variants: the large
// publisher's publications in every order, with a search that matches an eighth of
// them and one that matches nothing, and deep; the publishers list's searches and deep
// pages; the admin lists' searches, filters and deep pages; a second row of some
// detail routes; labels that say what a read's answer holds. A variant on a derived
// entry's request takes its place (its label kept). The writes run as the demo full
// admin, each made repeatable by w (nil in tests that only list the routes).
func benchRoutes(a api, c catalogShape, w *writes) []benchRoute {
	routes, _ := a.reads(c)
	derived := len(routes)
	for _, x := range variants(c) {
		i := slices.IndexFunc(routes[:derived], func(r benchRoute) bool { return r.verb() == x.verb() && r.path == x.path })
		if i >= 0 && x.target == nil {
			routes[i] = x
			continue
		}
		routes = append(routes, x)
	}
	return append(routes, w.routes(c)...)
}

// variants are the reads benched besides each route's entry (benchRoutes).
func variants(c catalogShape) []benchRoute {
	// The last page, and the page across the middle: the deepest walk from either end.
	last := func(total int64) int64 { return max(0, total-20) }
	middle := func(total int64) int64 { return max(0, total/2-10) }
	plain := func(path string) benchRoute { return benchRoute{path: path, label: path} }
	named := func(path, label string) benchRoute { return benchRoute{path: path, label: label} }
	deep := func(path, label, where string, offset int64) benchRoute {
		return benchRoute{path: fmt.Sprintf("%s&offset=%d", path, offset), label: label + "&offset=<" + where + ">"}
	}
	// The large publisher's id differs from database to database: its label names it.
	pubs := fmt.Sprintf("/publisher/publications/%d?client=%d&limit=20", c.big, client)
	pubsLabel := fmt.Sprintf("/publisher/publications/<the large publisher>?client=%d&limit=20", client)
	publications := func(query string) benchRoute { return named(pubs+query, pubsLabel+query) }
	routes := []benchRoute{}
	for _, o := range []string{"name-asc", "name-desc", "added-asc", "added-desc"} {
		routes = append(routes, publications("&order="+o))
	}
	publishersPage := fmt.Sprintf("/publishers?client=%d&limit=20", client)
	contributorsDesc := fmt.Sprintf("/admin-contributors?client=%d&limit=20&order=name-desc", client)
	usersRegistered := "/admin-users?limit=20&order=registered-desc"
	return append(routes,
		publications("&search=Blue"),
		publications("&search=Blue&order=added-desc"),
		publications("&search=zzqx"),
		deep(pubs, pubsLabel, "last page", last(c.links)),
		deep(pubs, pubsLabel, "middle page", middle(c.links)),
		// A search's deep pages, past T: held to the absolute target only (printReport).
		deep(pubs+"&search=Blue", pubsLabel+"&search=Blue", "last page", last(c.blueMatches)),
		deep(pubs+"&search=Blue", pubsLabel+"&search=Blue", "middle page", middle(c.blueMatches)),
		publications("&user_lang=Japanese"),
		plain(publishersPage+"&order=name-asc"),
		plain(publishersPage+"&search=publisher"),
		plain(publishersPage+"&search=zzqx"),
		deep(publishersPage, publishersPage, "last page", last(c.publishers)),
		deep(publishersPage, publishersPage, "middle page", middle(c.publishers)),
		plain("/publishers?client=1"),
		named("/publisher/slug/"+demo.GeneratedPublisherSlug(client, 1), "/publisher/slug/<the large publisher>"),
		plain(fmt.Sprintf("/admin-contributors?client=%d&limit=20&search=ta", client)),
		plain(fmt.Sprintf("/admin-contributors?client=%d&limit=20&search=kobayashi", client)),
		deep(contributorsDesc, contributorsDesc, "last page", last(c.contributors)),
		deep(contributorsDesc, contributorsDesc, "middle page", middle(c.contributors)),
		plain("/admin-users?limit=20&search=otaku"),
		named(fmt.Sprintf("/admin-users?limit=20&role=%d", c.defaultRole), "/admin-users?limit=20&role=<the default role>"),
		deep(usersRegistered, usersRegistered, "last page", last(c.users)),
		deep(usersRegistered, usersRegistered, "middle page", middle(c.users)),
		named(fmt.Sprintf("/admin-users/id/%d", demo.AdminUserID), "/admin-users/id/<the demo admin>"),
		named("/auth/oauth/connections", "/auth/oauth/connections (the demo admin's, one linked)"),
		named(fmt.Sprintf("/user/avatar/%d", c.user.id), "/user/avatar/<one user> (reference and image cached)"),
		named(fmt.Sprintf("/user/avatar/%d/high", c.user.id), "/user/avatar/<one user>/high (cached)"),
		benchRoute{path: fmt.Sprintf("/user/avatar/%d", c.nextUser), label: "/user/avatar/<another user each request> (reference read)",
			target: func(i int) string { return fmt.Sprintf("/user/avatar/%d", c.nextUser+int64(i)%max(1, c.users-10)) }},
	)
}

// writes makes the admin writes repeatable: each run names its rows with its own tag,
// creates the throwaway rows the deletes need before they are timed, and removes what
// the adds made after.
type writes struct {
	db   *postgres.DB
	send func(ctx context.Context, method, path, body string) error // an untimed request as the admin
	tag  string                                                     // unique to the run
	pass int                                                        // counts the passes, for unique names
	ids  map[string][]int64                                         // throwaway rows by kind
}

func jsonBody(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only maps of plain values
	}
	return string(b)
}

// routes are the access-checked admin writes. Each leaves the data as it found it:
// edits alternate between two states (cycle 2), adds are removed after, deletes take
// rows made before the timing.
func (w *writes) routes(c catalogShape) []benchRoute {
	if w == nil {
		w = &writes{}
	}
	id := func(kind string, i int) string {
		ids := w.ids[kind]
		if i >= len(ids) {
			return "0" // not prepared: the request fails and says so
		}
		return strconv.FormatInt(ids[i], 10)
	}
	name := func(kind string, i int) string { return fmt.Sprintf("bench-%s-%s-%d-%d", kind, w.tag, w.pass, i) }
	prefix := func(kind string) string { return fmt.Sprintf("bench-%s-%s-%d-%%", kind, w.tag, w.pass) }
	user := c.user
	editor := c.editor
	con := c.contributor
	return []benchRoute{
		{method: "POST", path: fmt.Sprintf("/admin-users/edit/%d", user.id), cycle: 2,
			label: "POST /admin-users/edit/<a generated user> (age_verified toggled, the editor role added/removed)",
			body: func(i int) string {
				b := map[string]any{"username": user.username, "age_verified": i%2 == 0 != user.verified}
				if i%2 == 0 {
					b["added_roles"] = []int64{editor.id}
				} else {
					b["removed_roles"] = []int64{editor.id}
				}
				return jsonBody(b)
			}},
		{method: "POST", path: fmt.Sprintf("/admin-users/logout/%d", user.id), label: "POST /admin-users/logout/<a generated user>"},
		{method: "DELETE", path: "/admin-users/delete/<throwaway user>", label: "DELETE /admin-users/delete/<a throwaway user>",
			target:  func(i int) string { return "/admin-users/delete/" + id("user", i) },
			prepare: func(ctx context.Context, n int) error { return w.throwawayUsers(ctx, n) }},
		{method: "POST", path: fmt.Sprintf("/admin-roles/edit/%d", editor.id), cycle: 2,
			label: "POST /admin-roles/edit/<the editor role> (a permission added/removed)",
			body: func(i int) string {
				b := map[string]any{"name": editor.name, "description": editor.description}
				if i%2 == 0 {
					b["added_permissions"] = []int64{c.extraPermission}
				} else {
					b["removed_permissions"] = []int64{c.extraPermission}
				}
				return jsonBody(b)
			}},
		{method: "POST", path: "/admin-roles/add", label: "POST /admin-roles/add",
			body: func(i int) string {
				return jsonBody(map[string]string{"name": name("role", i), "description": "benchmark"})
			},
			cleanup: func(ctx context.Context) error {
				return w.exec(ctx, `DELETE FROM roles WHERE name LIKE 'bench-role-%'`)
			}},
		{method: "DELETE", path: "/admin-roles/delete/<throwaway role>", label: "DELETE /admin-roles/delete/<a throwaway role>",
			target: func(i int) string { return "/admin-roles/delete/" + id("role", i) },
			prepare: func(ctx context.Context, n int) error {
				return w.throwaway(ctx, "role", n, "POST", "/admin-roles/add", `SELECT id FROM roles WHERE name LIKE $1 ORDER BY id`,
					func(i int) string {
						return jsonBody(map[string]string{"name": name("role-d", i), "description": "benchmark"})
					}, prefix("role-d"))
			}},
		{method: "POST", path: "/admin-permissions/add", label: "POST /admin-permissions/add",
			body: func(i int) string {
				return jsonBody(map[string]string{"name": name("permission", i), "description": "benchmark"})
			},
			cleanup: func(ctx context.Context) error {
				return w.exec(ctx, `DELETE FROM permissions WHERE name LIKE 'bench-permission-%'`)
			}},
		{method: "POST", path: "/admin-permissions/edit/<throwaway permission>", cycle: 2,
			label:  "POST /admin-permissions/edit/<a throwaway permission> (description changed and back)",
			target: func(int) string { return "/admin-permissions/edit/" + id("permission-e", 0) },
			body: func(i int) string {
				return jsonBody(map[string]string{"name": "bench-permission-edited-" + w.tag, "description": "benchmark " + strconv.Itoa(i%2)})
			},
			prepare: func(ctx context.Context, _ int) error {
				return w.throwaway(ctx, "permission-e", 1, "POST", "/admin-permissions/add",
					`SELECT id FROM permissions WHERE name LIKE $1 ORDER BY id`,
					func(int) string {
						return jsonBody(map[string]string{"name": "bench-permission-edited-" + w.tag, "description": "benchmark 1"})
					}, "bench-permission-edited-"+w.tag)
			},
			cleanup: func(ctx context.Context) error {
				return w.exec(ctx, `DELETE FROM permissions WHERE name LIKE 'bench-permission-%'`)
			}},
		{method: "DELETE", path: "/admin-permissions/delete/<throwaway permission>", label: "DELETE /admin-permissions/delete/<a throwaway permission>",
			target: func(i int) string { return "/admin-permissions/delete/" + id("permission", i) },
			prepare: func(ctx context.Context, n int) error {
				return w.throwaway(ctx, "permission", n, "POST", "/admin-permissions/add",
					`SELECT id FROM permissions WHERE name LIKE $1 ORDER BY id`,
					func(i int) string {
						return jsonBody(map[string]string{"name": name("permission-d", i), "description": "benchmark"})
					}, prefix("permission-d"))
			}},
		{method: "POST", path: "/admin-contributors/add", label: "POST /admin-contributors/add",
			body: func(i int) string {
				return jsonBody(map[string]any{"first_name": "Bench", "last_name": name("contributor", i), "client": client})
			},
			cleanup: func(ctx context.Context) error {
				return w.exec(ctx, `DELETE FROM contributors WHERE client_id = $1 AND first_name = 'Bench'`, int64(client))
			}},
		{method: "POST", path: fmt.Sprintf("/admin-contributors/edit/%d", con.id), cycle: 2,
			label: "POST /admin-contributors/edit/<a generated contributor> (public toggled)",
			body: func(i int) string {
				return jsonBody(map[string]any{"first_name": con.first, "last_name": con.last, "gender": con.gender,
					"type": con.kind, "links": con.links, "public": i%2 == 0 != con.public})
			}},
		{method: "DELETE", path: "/admin-contributors/delete/<throwaway contributor>", label: "DELETE /admin-contributors/delete/<a throwaway contributor>",
			target: func(i int) string { return "/admin-contributors/delete/" + id("contributor", i) },
			prepare: func(ctx context.Context, n int) error {
				return w.throwaway(ctx, "contributor", n, "POST", "/admin-contributors/add",
					`SELECT id FROM contributors WHERE first_name = 'Bench' AND last_name LIKE $1 ORDER BY id`,
					func(i int) string {
						return jsonBody(map[string]any{"first_name": "Bench", "last_name": name("contributor-d", i), "client": client})
					}, prefix("contributor-d"))
			}},
	}
}

func (w *writes) exec(ctx context.Context, sql string, args ...any) error {
	_, err := w.db.Pool.Exec(ctx, sql, args...)
	return err
}

// throwaway makes n rows of a kind through the API's own add route (untimed, so that
// they are what the service would have made), then reads their ids: the
// pass's rows, found by sql with the LIKE pattern like.
func (w *writes) throwaway(ctx context.Context, kind string, n int, method, path, sql string, body func(int) string, like string) error {
	for i := range n {
		if err := w.send(ctx, method, path, body(i)); err != nil {
			return fmt.Errorf("make a throwaway %s: %w", kind, err)
		}
	}
	rows, err := w.db.Pool.Query(ctx, sql, like)
	if err != nil {
		return err
	}
	defer rows.Close()
	w.ids[kind] = w.ids[kind][:0]
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return err
		}
		w.ids[kind] = append(w.ids[kind], id)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(w.ids[kind]) != n {
		return fmt.Errorf("made %d throwaway %ss, found %d", n, kind, len(w.ids[kind]))
	}
	w.pass++
	return nil
}

// throwawayUsers inserts n users holding the default role (no route adds users: they
// come from OAuth sign-ins), their search text and counts kept by the tables' triggers.
func (w *writes) throwawayUsers(ctx context.Context, n int) error {
	prefix := fmt.Sprintf("bench-user-%s-%d-", w.tag, w.pass)
	w.pass++
	rows, err := w.db.Pool.Query(ctx, `
		WITH u AS (
			INSERT INTO users (slug, username)
			SELECT $1 || n, replace($1, '-', '_') || n FROM generate_series(1, $2::int) n
			RETURNING id),
		r AS (INSERT INTO user_roles (user_id, role_id) SELECT u.id, roles.id FROM u, roles WHERE roles.is_default)
		SELECT id FROM u ORDER BY id`, prefix, n)
	if err != nil {
		return err
	}
	defer rows.Close()
	w.ids["user"] = w.ids["user"][:0]
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return err
		}
		w.ids["user"] = append(w.ids["user"], id)
	}
	return rows.Err()
}

// linkAdminConnection gives the demo admin one linked provider account, so that the
// connections route returns a row (the demo data links none).
func linkAdminConnection(ctx context.Context, db *postgres.DB) error {
	_, err := db.Pool.Exec(ctx, `
		INSERT INTO oauth_connections (user_id, provider, provider_user_id, provider_username, provider_email)
		SELECT $1, 'github', 'bench-admin', 'bench-admin', 'admin@example.com'
		WHERE NOT EXISTS (SELECT 1 FROM oauth_connections WHERE user_id = $1)`, demo.AdminUserID)
	return err
}
