package soak

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mediacatalog/service/infra/tests/routefacts"
	"github.com/mediacatalog/service/shared/httpapi"
)

// The demo data the workload relies on (infra/local/demo): the catalog of client 1, and the
// users admin (1), editor (2) and member (3), whose roles hold those names.
const (
	demoClient = 1
	adminUser  = 1
	memberUser = 3
	// noSuch is an id nothing has.
	noSuch = 987654321
)

// worker is one of the workload's loops; run repeats its cycle until ctx ends.
type worker interface {
	cycle(ctx context.Context) error
}

// backOff is the pause after a cycle that failed, as a client's before it tries again.
const backOff = 250 * time.Millisecond

func runWorker(ctx context.Context, w worker) {
	for ctx.Err() == nil {
		if err := w.cycle(ctx); err != nil && ctx.Err() == nil {
			select {
			case <-time.After(backOff):
			case <-ctx.Done():
			}
		}
	}
}

// read is one public read and its answer.
type read struct {
	class, path string
	want        int
}

// reader sends the public reads in random order, half of them with the ETag of
// their last answer (If-None-Match: 304 when unchanged).
type reader struct {
	cl    *client
	reads []read
	etags map[string]string
	rng   *rand.Rand
}

func (w *reader) cycle(ctx context.Context) error {
	r := w.reads[w.rng.IntN(len(w.reads))]
	c := call{class: r.class, method: http.MethodGet, path: r.path, want: []int{r.want}}
	if etag := w.etags[r.path]; etag != "" && w.rng.IntN(2) == 0 {
		c.header = ifNoneMatch(etag)
		if r.want == http.StatusOK {
			c.want = []int{http.StatusOK, http.StatusNotModified}
		}
	}
	a, err := w.cl.do(ctx, c)
	if err == nil && a.status == http.StatusOK {
		if etag := etagOf(a); etag != "" {
			w.etags[r.path] = etag
		}
	}
	return err
}

// publicReads lists the reads of the demo catalog: every public read of the route
// tables (a Cache policy) over the demo values of its parameters (routefacts.URLs), its
// 400 without a required query parameter and its 404 for an id nothing has where the
// OpenAPI document gives them; the lists also in each order, with searches and pages,
// and each publisher's publications by pages instead.
func publicReads(ctx context.Context, cl *client) ([]read, error) {
	tags, err := listOf[struct{ ID int64 }](ctx, cl, call{class: ClassPublic, method: http.MethodGet,
		path: "/tags?client=1", want: []int{http.StatusOK}})
	if err != nil {
		return nil, err
	}
	pubs, err := listOf[struct {
		ID   int64
		Slug string
	}](ctx, cl, call{class: ClassPublic, method: http.MethodGet, path: "/publishers?client=1", want: []int{http.StatusOK}})
	if err != nil {
		return nil, err
	}
	if len(tags) == 0 || len(pubs) == 0 {
		return nil, fmt.Errorf("the demo catalog has %d tags and %d publishers, want some of each", len(tags), len(pubs))
	}
	return demoReads(tags, pubs)
}

// demoReads are publicReads over the demo catalog's tags and publishers.
func demoReads(tags []struct{ ID int64 }, pubs []struct {
	ID   int64
	Slug string
}) ([]read, error) {
	values := map[string][]string{
		"?client": {strconv.Itoa(demoClient)},
		"cdn res": {"high", "scaled"},
	}
	for _, t := range tags {
		values["tags id"] = append(values["tags id"], strconv.FormatInt(t.ID, 10))
	}
	for _, p := range pubs {
		values["publishers id"] = append(values["publishers id"], strconv.FormatInt(p.ID, 10))
		values["publishers slug"] = append(values["publishers slug"], url.PathEscape(p.Slug))
	}
	for id := int64(adminUser); id <= memberUser; id++ {
		values["cdn id"] = append(values["cdn id"], strconv.FormatInt(id, 10))
	}
	ok := func(path string) read { return read{ClassPublic, path, http.StatusOK} }
	lists := map[string][]read{}
	for _, o := range []string{"name-asc", "name-desc", "added-asc", "added-desc"} {
		lists["GET /publishers"] = append(lists["GET /publishers"], ok("/publishers?client=1&order="+o))
	}
	lists["GET /publishers"] = append(lists["GET /publishers"], ok("/publishers?client=1"),
		ok("/publishers?client=1&search=a"), ok("/publishers?client=1&limit=3&offset=2"))
	for i, p := range pubs {
		pr := "GET /publisher/publications/{id}"
		lists[pr] = append(lists[pr], ok(fmt.Sprintf("/publisher/publications/%d?client=1&limit=5&offset=%d", p.ID, i%3)))
		if i < 3 {
			lists[pr] = append(lists[pr],
				ok(fmt.Sprintf("/publisher/publications/%d?client=1&search=a&order=added-desc", p.ID)),
				ok(fmt.Sprintf("/publisher/publications/%d?client=1&user_lang=Japanese", p.ID)))
		}
	}
	facts := api()
	var reads []read
	for _, g := range facts.groups {
		for _, rt := range g.Routes {
			if rt.Cache == "" || rt.Method() != http.MethodGet {
				continue
			}
			class := ClassPublic
			if rt.Cache == httpapi.CacheAvatar {
				class = ClassAvatar
			}
			params := facts.params[rt.Pattern]
			urls, missing := routefacts.URLs(g.Name, rt, params, values)
			if missing != "" {
				return nil, fmt.Errorf("%s: the soak has no demo value for its parameter %s", rt.Pattern, missing)
			}
			if l, ok := lists[rt.Pattern]; ok {
				reads = append(reads, l...)
			} else {
				for _, u := range urls {
					reads = append(reads, read{class, u, http.StatusOK})
				}
			}
			documents := func(status int) bool { return slices.Contains(facts.statuses[rt.Pattern], status) }
			for _, p := range params {
				if p.In == "query" && p.Required && documents(http.StatusBadRequest) {
					without := slices.DeleteFunc(slices.Clone(params), func(q routefacts.Param) bool { return q == p })
					u, _ := routefacts.URLs(g.Name, rt, without, values)
					reads = append(reads, read{class, u[0], http.StatusBadRequest})
				}
			}
			if i := slices.IndexFunc(params, func(p routefacts.Param) bool { return p.In == "path" }); i >= 0 && documents(http.StatusNotFound) {
				unknown := maps.Clone(values)
				unknown[routefacts.ParamKey(g.Name, params[i])] = []string{strconv.Itoa(noSuch)}
				u, _ := routefacts.URLs(g.Name, rt, params, unknown)
				reads = append(reads, read{class, u[0], http.StatusNotFound})
			}
		}
	}
	return reads, nil
}

// listOf sends c and decodes its JSON array.
func listOf[T any](ctx context.Context, cl *client, c call) ([]T, error) {
	at := time.Now()
	a, err := cl.do(ctx, c)
	if err != nil {
		return nil, err
	}
	return decode[[]T](cl, c, a, at)
}

// named is a role's or permission's id and name, as the lists give them.
type named struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

// idByName finds the id of the list's entry named name; its absence is a failed check.
func idByName(cl *client, c call, list []named, name string, at time.Time) (int64, error) {
	for _, n := range list {
		if n.Name == name {
			return n.ID, nil
		}
	}
	return 0, cl.check(false, c.class, c.route()+" lists "+name, at, "%s not among %d entries", name, len(list))
}

// admin is the base of the administrators' workers: a session of the demo admin, a
// name of its own (soak-<n>) and a count of its cycles, so that each cycle's rows
// have names no other cycle has used.
type admin struct {
	cl   *client
	name string
	n    int
	rng  *rand.Rand
}

func (w *admin) next() string {
	w.n++
	return fmt.Sprintf("%s-%d", w.name, w.n)
}

func (w *admin) do(ctx context.Context, class, method, path string, body any, want ...int) (answer, error) {
	return w.cl.do(ctx, call{class: class, method: method, path: path, body: body, admin: true, want: want})
}

func (w *admin) roleID(ctx context.Context, name string) (int64, error) {
	c := call{class: ClassAdminRead, method: http.MethodGet, path: "/admin-roles", admin: true, want: []int{http.StatusOK}}
	at := time.Now()
	roles, err := listOf[named](ctx, w.cl, c)
	if err != nil {
		return 0, err
	}
	return idByName(w.cl, c, roles, name, at)
}

// rolesWorker adds a permission and a role, renames both, grants the permission to
// the role, reads them back, meets the name conflict, deletes the permission while
// the role holds it, then the role.
type rolesWorker struct{ admin }

func (w *rolesWorker) cycle(ctx context.Context) error {
	name := w.next()
	perm, role := name+"-perm", name+"-role"
	if _, err := w.do(ctx, ClassAdminWrite, http.MethodPost, "/admin-permissions/add",
		map[string]string{"name": perm, "description": "soak permission"}, http.StatusOK); err != nil {
		return err
	}
	c := call{class: ClassAdminRead, method: http.MethodGet, path: "/admin-permissions", admin: true, want: []int{http.StatusOK}}
	at := time.Now()
	perms, err := listOf[named](ctx, w.cl, c)
	if err != nil {
		return err
	}
	pid, err := idByName(w.cl, c, perms, perm, at)
	if err != nil {
		return err
	}
	if _, err := w.do(ctx, ClassAdminRead, http.MethodGet, fmt.Sprintf("/admin-permissions/id/%d", pid), nil, http.StatusOK); err != nil {
		return err
	}
	if _, err := w.do(ctx, ClassAdminWrite, http.MethodPost, fmt.Sprintf("/admin-permissions/edit/%d", pid),
		map[string]string{"name": perm + "-e", "description": "soak permission, edited"}, http.StatusOK); err != nil {
		return err
	}
	if _, err := w.do(ctx, ClassAdminWrite, http.MethodPost, "/admin-roles/add",
		map[string]string{"name": role, "description": "soak role"}, http.StatusOK); err != nil {
		return err
	}
	rid, err := w.roleID(ctx, role)
	if err != nil {
		return err
	}
	if _, err := w.do(ctx, ClassAdminWrite, http.MethodPost, fmt.Sprintf("/admin-roles/edit/%d", rid),
		map[string]any{"name": role + "-e", "description": "soak role, edited", "added_permissions": []int64{pid}}, http.StatusOK); err != nil {
		return err
	}
	rc := call{class: ClassAdminRead, method: http.MethodGet, path: fmt.Sprintf("/admin-roles/id/%d", rid), admin: true, want: []int{http.StatusOK}}
	at = time.Now()
	a, err := w.cl.do(ctx, rc)
	if err != nil {
		return err
	}
	detail, err := decode[struct {
		Name        string  `json:"name"`
		Permissions []named `json:"permissions"`
	}](w.cl, rc, a, at)
	if err != nil {
		return err
	}
	if err := w.cl.check(detail.Name == role+"-e" && slices.ContainsFunc(detail.Permissions, func(p named) bool { return p.ID == pid }),
		ClassAdminRead, "role edit read back", at, "role %d: %+v, want %s-e granting %d", rid, detail, role, pid); err != nil {
		return err
	}
	if _, err := w.do(ctx, ClassAdminWrite, http.MethodPost, "/admin-roles/add",
		map[string]string{"name": role + "-e", "description": "the same name"}, http.StatusConflict); err != nil {
		return err
	}
	if _, err := w.do(ctx, ClassDelete, http.MethodDelete, fmt.Sprintf("/admin-permissions/delete/%d", pid), nil, http.StatusOK); err != nil {
		return err
	}
	if _, err := w.do(ctx, ClassDelete, http.MethodDelete, fmt.Sprintf("/admin-roles/delete/%d", rid), nil, http.StatusOK); err != nil {
		return err
	}
	_, err = w.do(ctx, ClassAdminRead, http.MethodGet, fmt.Sprintf("/admin-roles/id/%d", rid), nil, http.StatusNotFound)
	return err
}

// contributorsWorker adds a contributor, finds it by a search, edits it, uploads,
// deletes and uploads again its avatar, and deletes it with its avatar.
type contributorsWorker struct{ admin }

func (w *contributorsWorker) cycle(ctx context.Context) error {
	last := strings.ReplaceAll(w.next(), "-", " ")
	if _, err := w.do(ctx, ClassAdminWrite, http.MethodPost, "/admin-contributors/add",
		map[string]any{"first_name": "Soak", "last_name": last}, http.StatusOK); err != nil {
		return err
	}
	c := call{class: ClassAdminRead, method: http.MethodGet, admin: true, want: []int{http.StatusOK},
		path: "/admin-contributors?client=1&limit=5&search=" + url.QueryEscape(last)}
	at := time.Now()
	a, err := w.cl.do(ctx, c)
	if err != nil {
		return err
	}
	page, err := decode[struct {
		Contributors []struct {
			ID       int64   `json:"id"`
			LastName *string `json:"last_name"`
		} `json:"contributors"`
	}](w.cl, c, a, at)
	if err != nil {
		return err
	}
	var id int64
	for _, ct := range page.Contributors {
		if ct.LastName != nil && *ct.LastName == last {
			id = ct.ID
		}
	}
	if err := w.cl.check(id != 0, c.class, c.route()+" finds the added", at, "no contributor %q among %d", last, len(page.Contributors)); err != nil {
		return err
	}
	path := func(p string) string { return fmt.Sprintf(p, id) }
	steps := []struct {
		class, method, path string
		body                any
		want                int
	}{
		{ClassAdminRead, http.MethodGet, path("/admin-contributors/id/%d"), nil, http.StatusOK},
		{ClassAdminWrite, http.MethodPost, path("/admin-contributors/edit/%d"), map[string]any{
			"first_name": "Soak", "last_name": last, "gender": "female", "type": "person", "public": true,
			"links": []string{"https://example.com/" + url.PathEscape(last)},
		}, http.StatusOK},
		{ClassUpload, http.MethodPost, path("/admin-contributors/update-avatar/%d"), map[string]string{"image": picture(w.rng)}, http.StatusOK},
		{ClassAdminRead, http.MethodGet, path("/admin-contributors/id/%d"), nil, http.StatusOK},
		{ClassDelete, http.MethodDelete, path("/admin-contributors/delete-avatar/%d"), nil, http.StatusOK},
		// No avatar left: the contract's 500.
		{ClassDelete, http.MethodDelete, path("/admin-contributors/delete-avatar/%d"), nil, http.StatusInternalServerError},
		{ClassUpload, http.MethodPost, path("/admin-contributors/update-avatar/%d"), map[string]string{"image": picture(w.rng)}, http.StatusOK},
		{ClassAdminWrite, http.MethodPost, "/admin-contributors/add", map[string]any{"first_name": "Soak", "last_name": last}, http.StatusConflict},
		{ClassDelete, http.MethodDelete, path("/admin-contributors/delete/%d"), nil, http.StatusOK},
		{ClassAdminRead, http.MethodGet, path("/admin-contributors/id/%d"), nil, http.StatusNotFound},
	}
	for _, s := range steps {
		if _, err := w.do(ctx, s.class, s.method, s.path, s.body, s.want); err != nil {
			return err
		}
	}
	return nil
}

// usersWorker edits the demo member (renames, age verification, a role of its own
// added and then deleted while held), lists and finds users, and uploads and deletes
// the member's picture, checking that the avatar route serves each change at once.
type usersWorker struct{ admin }

func (w *usersWorker) cycle(ctx context.Context) error {
	name := w.next()
	role := name + "-role"
	avatar := fmt.Sprintf("/user/avatar/%d/high", memberUser)
	before, err := w.cl.do(ctx, call{class: ClassAvatar, method: http.MethodGet, path: avatar, want: []int{http.StatusOK}})
	if err != nil {
		return err
	}
	if _, err := w.do(ctx, ClassAdminWrite, http.MethodPost, "/admin-roles/add",
		map[string]string{"name": role, "description": "soak role"}, http.StatusOK); err != nil {
		return err
	}
	rid, err := w.roleID(ctx, role)
	if err != nil {
		return err
	}
	username := "member-" + name
	if _, err := w.do(ctx, ClassAdminWrite, http.MethodPost, fmt.Sprintf("/admin-users/edit/%d", memberUser),
		map[string]any{"username": username, "age_verified": w.n%2 == 0, "added_roles": []int64{rid}}, http.StatusOK); err != nil {
		return err
	}
	uc := call{class: ClassAdminRead, method: http.MethodGet, path: fmt.Sprintf("/admin-users/id/%d", memberUser), admin: true, want: []int{http.StatusOK}}
	at := time.Now()
	a, err := w.cl.do(ctx, uc)
	if err != nil {
		return err
	}
	user, err := decode[struct {
		Username string  `json:"username"`
		Roles    []named `json:"roles"`
	}](w.cl, uc, a, at)
	if err != nil {
		return err
	}
	if err := w.cl.check(user.Username == username && slices.ContainsFunc(user.Roles, func(r named) bool { return r.ID == rid }),
		ClassAdminRead, "user edit read back", at, "user %d: %+v, want %s holding role %d", memberUser, user, username, rid); err != nil {
		return err
	}
	for _, q := range []string{"order=registered-desc&limit=10", "search=" + url.QueryEscape(username), fmt.Sprintf("role=%d", rid), "order=name-asc&limit=2&offset=1"} {
		if _, err := w.do(ctx, ClassAdminRead, http.MethodGet, "/admin-users?"+q, nil, http.StatusOK); err != nil {
			return err
		}
	}
	if _, err := w.do(ctx, ClassAdminWrite, http.MethodPost, fmt.Sprintf("/admin-users/edit/%d", memberUser),
		map[string]any{"username": "admin"}, http.StatusConflict); err != nil {
		return err
	}
	if _, err := w.do(ctx, ClassUpload, http.MethodPost, fmt.Sprintf("/admin-users/update-image/%d", memberUser),
		map[string]string{"image": picture(w.rng)}, http.StatusOK); err != nil {
		return err
	}
	at = time.Now()
	after, err := w.cl.do(ctx, call{class: ClassAvatar, method: http.MethodGet, path: avatar,
		header: ifNoneMatch(etagOf(before)), want: []int{http.StatusOK, http.StatusNotModified}})
	if err != nil {
		return err
	}
	if err := w.cl.check(after.status == http.StatusOK && etagOf(after) != etagOf(before), ClassAvatar, "avatar serves the upload at once", at,
		"after the upload: %d with ETag %s, the picture before had %s", after.status, etagOf(after), etagOf(before)); err != nil {
		return err
	}
	if _, err := w.cl.do(ctx, call{class: ClassAvatar, method: http.MethodGet, path: avatar,
		header: ifNoneMatch(etagOf(after)), want: []int{http.StatusNotModified}}); err != nil {
		return err
	}
	// The role goes while the member holds it; the member keeps the default role.
	if _, err := w.do(ctx, ClassDelete, http.MethodDelete, fmt.Sprintf("/admin-roles/delete/%d", rid), nil, http.StatusOK); err != nil {
		return err
	}
	if _, err := w.do(ctx, ClassDelete, http.MethodDelete, fmt.Sprintf("/admin-users/delete-image/%d", memberUser), nil, http.StatusOK); err != nil {
		return err
	}
	// No picture left: the contract's 500.
	if _, err := w.do(ctx, ClassDelete, http.MethodDelete, fmt.Sprintf("/admin-users/delete-image/%d", memberUser), nil, http.StatusInternalServerError); err != nil {
		return err
	}
	_, err = w.do(ctx, ClassAdminRead, http.MethodGet, fmt.Sprintf("/admin-users/id/%d", noSuch), nil, http.StatusNotFound)
	return err
}

// oauthWorker logs in through a provider's stand-in (google and github in turn), which
// signs a user up the first time, links discord, lists and unlinks it; then the admin
// uploads the user's picture, forces a logout (the user's session then fails) and
// deletes the user, whose avatar is then 404.
type oauthWorker struct {
	admin
	stale []int64 // users a cycle made and could not delete: deleted first
}

func (w *oauthWorker) cycle(ctx context.Context) error {
	for len(w.stale) > 0 {
		id := w.stale[0]
		if _, err := w.do(ctx, ClassDelete, http.MethodDelete, fmt.Sprintf("/admin-users/delete/%d", id),
			nil, http.StatusOK, http.StatusNotFound); err != nil {
			return err
		}
		w.stale = w.stale[1:]
	}
	provider := []string{"google", "github"}[w.next2()]
	jar, err := cookiejar.New(nil)
	if err != nil {
		return err
	}
	user := &client{base: w.cl.base, http: withJar(w.cl.http, jar), rec: w.cl.rec, pace: w.cl.pace}
	q, err := w.flow(ctx, user, provider, "/auth/oauth/"+provider, "oauth_success")
	if err != nil {
		return err
	}
	at := time.Now()
	id, err := sessionUser(jar, w.cl.base)
	if err := w.cl.check(err == nil && q.Get("oauth_success") == "1", ClassOAuth, "login signs in", at, "%s login: %s, session: %v", provider, q.Encode(), err); err != nil {
		return err
	}
	w.stale = append(w.stale, id)
	conns := call{class: ClassOAuth, method: http.MethodGet, path: "/auth/oauth/connections", want: []int{http.StatusOK}}
	if _, err := user.do(ctx, conns); err != nil {
		return err
	}
	q, err = w.flow(ctx, user, "discord", "/auth/oauth/link/discord", "link_success")
	if err != nil {
		return err
	}
	if err := w.cl.check(q.Get("link_success") == "discord", ClassOAuth, "link links", time.Now(), "link discord to user %d: %s", id, q.Encode()); err != nil {
		return err
	}
	at = time.Now()
	linked, err := listOf[struct {
		Provider string `json:"provider"`
	}](ctx, user, conns)
	if err != nil {
		return err
	}
	if err := w.cl.check(len(linked) == 2, ClassOAuth, "connections list the link", at, "user %d's connections: %+v, want %s and discord", id, linked, provider); err != nil {
		return err
	}
	if _, err := user.do(ctx, call{class: ClassDelete, method: http.MethodDelete,
		path: "/auth/oauth/unlink/discord", want: []int{http.StatusOK}}); err != nil {
		return err
	}
	// The last login method stays.
	if _, err := user.do(ctx, call{class: ClassDelete, method: http.MethodDelete,
		path: "/auth/oauth/unlink/" + provider, want: []int{http.StatusBadRequest}}); err != nil {
		return err
	}
	steps := []struct {
		class, method, path string
		body                any
		want                int
	}{
		{ClassUpload, http.MethodPost, fmt.Sprintf("/admin-users/update-image/%d", id), map[string]string{"image": picture(w.rng)}, http.StatusOK},
		{ClassAvatar, http.MethodGet, fmt.Sprintf("/user/avatar/%d", id), nil, http.StatusOK},
		{ClassAdminWrite, http.MethodPost, fmt.Sprintf("/admin-users/logout/%d", id), nil, http.StatusOK},
	}
	for _, s := range steps {
		if _, err := w.do(ctx, s.class, s.method, s.path, s.body, s.want); err != nil {
			return err
		}
	}
	conns.want = []int{http.StatusUnauthorized}
	if _, err := user.do(ctx, conns); err != nil {
		return err
	}
	if _, err := w.do(ctx, ClassDelete, http.MethodDelete, fmt.Sprintf("/admin-users/delete/%d", id), nil, http.StatusOK); err != nil {
		return err
	}
	w.stale = w.stale[:len(w.stale)-1]
	_, err = w.cl.do(ctx, call{class: ClassAvatar, method: http.MethodGet, path: fmt.Sprintf("/user/avatar/%d", id), want: []int{http.StatusNotFound}})
	return err
}

func (w *oauthWorker) next2() int {
	w.n++
	return w.n % 2
}

// flow runs a login or link flow as a browser does: the start (302 to the provider),
// the stand-in's consent (Authorize), the callback (302 to the frontend), whose query
// it returns. An error redirect outside every fault is an unexpected answer.
func (w *oauthWorker) flow(ctx context.Context, user *client, provider, start, success string) (url.Values, error) {
	sc := call{class: ClassOAuth, method: http.MethodGet, path: start, want: []int{http.StatusFound}}
	a, err := user.do(ctx, sc)
	if err != nil {
		return nil, err
	}
	at := time.Now()
	consent, err := url.Parse(a.header.Get("Location"))
	if err != nil {
		return nil, w.cl.check(false, ClassOAuth, sc.route()+" redirect", at, "Location %q: %v", a.header.Get("Location"), err)
	}
	cq := consent.Query()
	cq.Set("consent", "allow")
	consent.RawQuery = cq.Encode()
	back, err := providerAnswer(ctx, user.http, consent.String())
	if ctx.Err() != nil {
		return nil, ctx.Err() // the soak ended under it, as in client.do: no answer of the service's
	}
	if err != nil {
		return nil, w.cl.check(false, ClassOAuth, provider+" stand-in consent", at, "%v", err)
	}
	cb, err := url.Parse(back)
	if err != nil || !strings.HasPrefix(back, w.cl.base+"/") {
		return nil, w.cl.check(false, ClassOAuth, provider+" stand-in consent", at, "redirect to %q, want the service's callback", back)
	}
	start2 := time.Now()
	cc := call{class: ClassOAuth, method: http.MethodGet, path: cb.RequestURI(), want: []int{http.StatusFound}}
	a, err = user.do(ctx, cc)
	if err != nil {
		return nil, err
	}
	q, _ := url.ParseQuery(locationQuery(a))
	if q.Get(success) == "" {
		// An error redirect: 302 as expected, yet the flow failed.
		w.cl.rec.failedFlow(outcome{Class: ClassOAuth, Route: cc.route(), Status: http.StatusFound,
			Detail: "redirect to " + a.header.Get("Location"), Start: start2, End: time.Now()})
		return nil, errAbandon
	}
	return q, nil
}

// providerAnswer requests the stand-in's consent URL and returns where it redirects.
func providerAnswer(ctx context.Context, hc *http.Client, consent string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, consent, nil)
	if err != nil {
		return "", err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return "", err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		return "", fmt.Errorf("the stand-in answered %s, want a redirect", resp.Status)
	}
	return resp.Header.Get("Location"), nil
}

func withJar(hc *http.Client, jar http.CookieJar) *http.Client {
	c := *hc
	c.Jar = jar
	return &c
}

// sessionUser reads the user id from the refreshToken the jar holds (the JWT's
// subject; the signature is the server's to check).
func sessionUser(jar http.CookieJar, base string) (int64, error) {
	u, err := url.Parse(base + "/auth/oauth/connections")
	if err != nil {
		return 0, err
	}
	for _, c := range jar.Cookies(u) {
		if c.Name != "refreshToken" {
			continue
		}
		parts := strings.Split(c.Value, ".")
		if len(parts) != 3 {
			return 0, fmt.Errorf("refreshToken is no JWT")
		}
		payload, err := base64.RawURLEncoding.DecodeString(parts[1])
		if err != nil {
			return 0, err
		}
		var claims struct {
			Sub string `json:"sub"`
		}
		if err := json.Unmarshal(payload, &claims); err != nil {
			return 0, err
		}
		return strconv.ParseInt(claims.Sub, 10, 64)
	}
	return 0, fmt.Errorf("no refreshToken cookie after the login")
}

// picture is a small image of random blocks, a JPEG or a PNG, as a data URL: each
// upload is a picture of its own.
func picture(rng *rand.Rand) string {
	const w, h = 192, 144
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for by := 0; by < h; by += 24 {
		for bx := 0; bx < w; bx += 24 {
			c := color.RGBA{uint8(rng.IntN(256)), uint8(rng.IntN(256)), uint8(rng.IntN(256)), 255}
			for y := by; y < by+24; y++ {
				for x := bx; x < bx+24; x++ {
					img.SetRGBA(x, y, c)
				}
			}
		}
	}
	var buf bytes.Buffer
	kind := "jpeg"
	if rng.IntN(2) == 0 {
		_ = jpeg.Encode(&buf, img, &jpeg.Options{Quality: 85})
	} else {
		kind = "png"
		_ = png.Encode(&buf, img)
	}
	return "data:image/" + kind + ";base64," + base64.StdEncoding.EncodeToString(buf.Bytes())
}
