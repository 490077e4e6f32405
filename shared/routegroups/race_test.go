package routegroups_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mediacatalog/service/infra/local/demo"
	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/avatars/avatartest"
	"github.com/mediacatalog/service/shared/awsconfig"
	"github.com/mediacatalog/service/shared/httpapi"
	"github.com/mediacatalog/service/shared/images"
	"github.com/mediacatalog/service/shared/imageset"
	"github.com/mediacatalog/service/shared/namekey"
	"github.com/mediacatalog/service/shared/postgres"
	"github.com/mediacatalog/service/shared/s3store"
)

// The race table (TestRacingWrites): pairs of admin writes that touch the same rows,
// each raced through the handler the local server serves (every group on one mux,
// real sessions of two full admins, the test's own database and bucket).
//
// The pairs: every route that writes (and each detail read that takes an edit lock)
// has a footprint, the kinds of rows it changes and those it refers to (footprints);
// two routes conflict when one changes what the other changes or refers to, a route
// with itself included, and the table has a pair for every two routes that conflict
// (the test fails on one without). Some route pairs have more than one entry: a row
// renamed twice and two rows renamed into one name; a permission granted and one
// taken away while it is deleted.
//
// A pair is raced under schedules that interleave its two requests statement by
// statement, so that a check-then-write gap is hit every run rather than by chance:
// one request is held before the k-th database statement of its write (each query,
// batch and COMMIT after the session's check; holdTracer) while the other runs until
// it has answered or waits on a lock (pg_stat_activity), and is then let go; k runs
// from 1 until the held request answers before reaching it, each of the two requests
// being the held one. A gate then starts both behind the test's own locks on every
// row of the fixture (gated): the races inside one statement (a snapshot read before a
// row lock's wait) are hit there. Last, the pair runs twice with both let go at once.
//
// After every run: each answer is one the OpenAPI document allows and one the pair
// lists for the state the other request left (a name race or a double delete has
// exactly one success), with the route's message; no 5xx but the OpenAPI document's own (deleting
// a picture that is not there), no error logged but with it; exactly one audit record
// of the route's action for each acknowledged write and none for the others (two
// renames of one row: one record's before is the other's after); and the invariants
// (invariants, raceInvariants).

// holdKey marks a request's context with the hold it obeys.
type holdKey struct{}

// hold keeps a request before its at-th database statement until release is closed.
// Only the statements after the first (the session's check, before any write) count,
// and not a BEGIN: holding a request before one is holding it after the statement
// before (it holds no lock yet), so these points would repeat others.
type hold struct {
	at      int32
	seen    atomic.Int32 // statements sent
	counted atomic.Int32 // statements that count
	sql     string       // the statement it waits before, set before reached is closed
	reached chan struct{}
	release chan struct{}
}

func newHold(at int) *hold {
	return &hold{at: int32(at), reached: make(chan struct{}), release: make(chan struct{})}
}

func (h *hold) step(sql string) {
	if h.seen.Add(1) == 1 || strings.EqualFold(strings.TrimSpace(sql), "begin") {
		return
	}
	if h.counted.Add(1) == h.at {
		h.sql = sql
		close(h.reached)
		<-h.release
	}
}

// holdTracer is the pgx tracer of the race table's pool: it holds the statements of a
// request whose context carries a hold.
type holdTracer struct{}

func (holdTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if h, ok := ctx.Value(holdKey{}).(*hold); ok {
		h.step(d.SQL)
	}
	return ctx
}

func (holdTracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (holdTracer) TraceBatchStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	if h, ok := ctx.Value(holdKey{}).(*hold); ok {
		h.step(fmt.Sprintf("a batch of %d statements", d.Batch.Len()))
	}
	return ctx
}

func (holdTracer) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (holdTracer) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

// syncBuffer is the server's log, JSON lines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// take returns what was written since the last take.
func (b *syncBuffer) take() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := bytes.Clone(b.buf.Bytes())
	b.buf.Reset()
	return out
}

// secondAdminID is the second full admin of the race table.
const secondAdminID int64 = 50

type raceServer struct {
	*server
	watch  *pgxpool.Pool // the test's own connections: fixtures, checks, lock waits
	files  *s3store.Store
	logs   *syncBuffer
	admins [2]*http.Cookie // the demo admin and a second full admin
	upload string          // a picture as an upload's data URL
	pic    images.Result   // its renditions, for the fixtures' pictures
}

func newRaceServer(t *testing.T) *raceServer {
	t.Helper()
	ctx := context.Background()
	db := testenv.NewDemoDB(t, postgres.WithTracer(holdTracer{}))
	s3cfg := testenv.S3Config(t)
	logs := &syncBuffer{}
	// The cdn function is told of every picture change, as the local server tells it;
	// here it answers at once (its own wait and invalidation are not raced here).
	cdnSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		httpapi.OK(w, r, "Success")
	}))
	t.Cleanup(cdnSrv.Close)
	srv := newServerWith(t, serverOptions{db: db, log: slog.NewJSONHandler(logs, nil),
		extra: map[string]string{"S3_BUCKET": s3cfg.Bucket, "CDN_URL": cdnSrv.URL}})
	files, err := s3store.New(awsconfig.Load(s3cfg), s3store.Options{Bucket: s3cfg.Bucket, Endpoint: s3cfg.S3Endpoint})
	if err != nil {
		t.Fatal(err)
	}
	watch, err := pgxpool.New(ctx, db.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(watch.Close)
	s := &raceServer{server: srv, watch: watch, files: files, logs: logs}
	s.exec(t, fmt.Sprintf(`
		INSERT INTO users (id, slug, username, name_key) VALUES (%[1]d, 'admin-b', 'admin-b', %[2]s);
		INSERT INTO user_roles VALUES (%[1]d, %[3]d);
		UPDATE users SET profile_image = NULL;
		UPDATE contributors SET image = NULL`, secondAdminID, quote(namekey.Key("admin-b")), demo.AdminRoleID))
	s.admins = [2]*http.Cookie{srv.cookie, testenv.SessionCookie(t, srv.sessions, secondAdminID)}
	png := avatartest.PNG(t, 48, 32, false)
	s.upload = avatartest.DataURL("image/png", png)
	if s.pic, err = images.Process(s.upload, images.Limits{}); err != nil {
		t.Fatal(err)
	}
	return s
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func (s *raceServer) exec(t *testing.T, sql string, args ...any) {
	t.Helper()
	if _, err := s.watch.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%v\n%s", err, sql)
	}
}

// fixture is a round's own rows: each round of a pair starts from new ones.
//
//	permissions P, Q; roles R (grants Q), S (nobody holds it)
//	users U (holds R only, has a live session), V (holds the default role)
//	contributors C, D, E of client 1; relation Rel C->D; alias Alias of C
//	with pictures: U's profile image and C's avatar, stored in the bucket
type fixture struct {
	n                       int64
	P, Q, R, S, U, V        int64
	C, D, E, Rel, Alias     int64
	uName, vName            string // U's and V's usernames
	cLast, dLast, eLast     string // C's, D's and E's last names (first: Race)
	roleName, permName, neu string // fresh names of this round
}

func (s *raceServer) fixture(t *testing.T, n int64, pictures bool) fixture {
	t.Helper()
	base := 1_000_000 + n*10
	f := fixture{n: n, P: base + 1, Q: base + 2, R: base + 1, S: base + 2, U: base + 1, V: base + 2,
		C: base + 1, D: base + 2, E: base + 3, Rel: base + 1, Alias: base + 1,
		uName: fmt.Sprintf("race-u-%d", n), vName: fmt.Sprintf("race-v-%d", n),
		cLast: fmt.Sprintf("C-%d", n), dLast: fmt.Sprintf("D-%d", n), eLast: fmt.Sprintf("E-%d", n),
		roleName: fmt.Sprintf("race-role-%d", n), permName: fmt.Sprintf("race-perm-%d", n),
		neu: fmt.Sprintf("race-new-%d", n)}
	s.exec(t, fmt.Sprintf(`
		INSERT INTO permissions (id, name, description) VALUES (%[1]d, 'race-p-%[10]d', 'x'), (%[2]d, 'race-q-%[10]d', 'x');
		INSERT INTO roles (id, name, description) VALUES (%[3]d, 'race-r-%[10]d', 'x'), (%[4]d, 'race-s-%[10]d', 'x');
		INSERT INTO role_permissions VALUES (%[3]d, %[2]d);
		INSERT INTO users (id, slug, username, name_key) VALUES (%[5]d, %[11]s, %[11]s, %[12]s), (%[6]d, %[13]s, %[13]s, %[14]s);
		INSERT INTO user_roles VALUES (%[5]d, %[3]d), (%[6]d, %[15]d);
		INSERT INTO sessions (user_id, expires_at) VALUES (%[5]d, now() + interval '1 day');
		INSERT INTO contributors (id, client_id, first_name, last_name, slug)
		VALUES (%[7]d, 1, 'Race', %[16]s, 'race-c-%[10]d'), (%[8]d, 1, 'Race', %[17]s, 'race-d-%[10]d'), (%[9]d, 1, 'Race', %[18]s, 'race-e-%[10]d');
		INSERT INTO contributor_relations (id, contributor_id, related_id, type) VALUES (%[7]d, %[7]d, %[8]d, 'friend');
		INSERT INTO contributor_aliases (id, contributor_id, title, language) VALUES (%[7]d, %[7]d, 'Alias', 'en')`,
		f.P, f.Q, f.R, f.S, f.U, f.V, f.C, f.D, f.E, n,
		quote(f.uName), quote(namekey.Key(f.uName)), quote(f.vName), quote(namekey.Key(f.vName)), demo.MemberRoleID,
		quote(f.cLast), quote(f.dLast), quote(f.eLast)))
	if pictures {
		s.picture(t, imageset.Users, f.U)
		s.picture(t, imageset.Contributors, f.C)
	}
	return f
}

// clean removes what the runs made once they have been checked (the fixtures, the
// rows the requests added, every picture), so that every run starts from tables of
// the same size.
func (s *raceServer) clean(t *testing.T) {
	t.Helper()
	s.exec(t, `
		DELETE FROM users WHERE id >= 1000000;
		DELETE FROM roles WHERE id >= 1000000 OR name LIKE 'race-%';
		DELETE FROM permissions WHERE id >= 1000000 OR name LIKE 'race-%';
		DELETE FROM contributors WHERE id >= 1000000 OR lower(first_name) = 'race'`)
	ctx := context.Background()
	keys, err := s.files.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) > 0 {
		if err := s.files.Delete(ctx, keys...); err != nil {
			t.Fatal(err)
		}
	}
}

// picture stores a picture for the row and points the row at it.
func (s *raceServer) picture(t *testing.T, owner imageset.Owner, id int64) {
	t.Helper()
	set, err := imageset.NewImageSet(owner, id, s.pic.High.ContentType, s.pic.High.Data, s.pic.Scaled.Data)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, r := range []struct {
		key string
		img images.Rendition
	}{{set.Key(imageset.High), s.pic.High}, {set.Key(imageset.Scaled), s.pic.Scaled}} {
		if err := s.files.Put(ctx, r.key, r.img.Data, r.img.ContentType); err != nil {
			t.Fatal(err)
		}
	}
	table, column := "users", "profile_image"
	if owner == imageset.Contributors {
		table, column = "contributors", "image"
	}
	s.exec(t, fmt.Sprintf(`UPDATE %s SET %s = $1 WHERE id = $2`, table, column), set.Ref(), id)
}

// raceCall is one request of a pair.
type raceCall struct {
	route string // the route's pattern
	id    int64  // the path's {id}
	body  any
	by    int   // 0: the demo admin, 1: the second full admin
	ok    []int // the statuses it may answer, whichever state the other request left
}

// answer is what a call was answered.
type answer struct {
	call    raceCall
	rid     string // its request id
	reqBody []byte
	status  int
	header  http.Header
	body    []byte
}

func (c raceCall) target() (method, target string) {
	method, path, _ := strings.Cut(c.route, " ")
	return method, strings.Replace(path, "{id}", strconv.FormatInt(c.id, 10), 1)
}

func (s *raceServer) serve(c raceCall, rid string, h *hold) answer {
	method, target := c.target()
	a := answer{call: c, rid: rid}
	var body any
	if c.body != nil {
		a.reqBody, _ = json.Marshal(c.body)
		body = a.reqBody
	}
	req := testenv.Request(method, target, body, s.admins[c.by])
	ctx := httpapi.WithRequestID(context.Background(), rid)
	if h != nil {
		ctx = context.WithValue(ctx, holdKey{}, h)
	}
	req = req.WithContext(ctx)
	req.RemoteAddr = "192.0.2.9:4000"
	rec := httptest.NewRecorder()
	s.h.ServeHTTP(rec, req)
	a.status, a.header, a.body = rec.Code, rec.Header(), rec.Body.Bytes()
	return a
}

// schedule says how a run interleaves the pair: held is 0 (none: both at once), 1 (the
// first request held) or 2, before its statement at; or gate: both start while the
// test holds a lock on every row of the fixture, which it lets go once each request
// has answered or waits on a lock.
type schedule struct {
	held, at int
	gate     bool
}

func (sc schedule) String() string {
	switch {
	case sc.gate:
		return "both at once, behind the test's locks on the fixture's rows"
	case sc.held == 0:
		return "both at once"
	}
	return fmt.Sprintf("%s held before statement %d of its write", [...]string{"", "first", "second"}[sc.held], sc.at)
}

// waiters is the number of connections to the test's database that wait on a lock.
func (s *raceServer) waiters(t *testing.T) int {
	t.Helper()
	var n int
	if err := s.watch.QueryRow(context.Background(), `
		SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND backend_type = 'client backend' AND wait_event_type = 'Lock'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// gated runs both calls while the test's transaction holds every row of the fixture
// (FOR UPDATE, which every lock a write takes on a row waits for): each request goes as
// far as it can, with the snapshot of its statement, before the first commits.
func (s *raceServer) gated(t *testing.T, f fixture, calls [2]raceCall, rids [2]string) [2]answer {
	t.Helper()
	ctx := context.Background()
	tx, err := s.watch.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, fmt.Sprintf(`
		SELECT 1 FROM permissions WHERE id IN (%[1]d, %[2]d) ORDER BY id FOR UPDATE;
		SELECT 1 FROM roles WHERE id IN (%[3]d, %[4]d) ORDER BY id FOR UPDATE;
		SELECT 1 FROM users WHERE id IN (%[5]d, %[6]d) ORDER BY id FOR UPDATE;
		SELECT 1 FROM contributors WHERE id IN (%[7]d, %[8]d, %[9]d) ORDER BY id FOR UPDATE`,
		f.P, f.Q, f.R, f.S, f.U, f.V, f.C, f.D, f.E)); err != nil {
		t.Fatal(err)
	}
	var out [2]answer
	var answered atomic.Int32
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() {
			out[i] = s.serve(calls[i], rids[i], nil)
			answered.Add(1)
		})
	}
	deadline := time.Now().Add(15 * time.Second)
	for int(answered.Load())+s.waiters(t) < 2 {
		if time.Now().After(deadline) {
			t.Errorf("the requests neither answered nor waited on a lock in 15 s")
			break
		}
		time.Sleep(time.Millisecond)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	return out
}

// run races the pair's calls once under sc. It reports whether the held request
// answered before reaching its statement sc.at (then the other ran after it), and the
// statement it was held before.
func (s *raceServer) run(t *testing.T, f fixture, calls [2]raceCall, rids [2]string, sc schedule) ([2]answer, bool, string) {
	t.Helper()
	var out [2]answer
	if sc.gate {
		return s.gated(t, f, calls, rids), false, ""
	}
	if sc.held == 0 {
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range 2 {
			wg.Go(func() {
				<-start
				out[i] = s.serve(calls[i], rids[i], nil)
			})
		}
		close(start)
		wg.Wait()
		return out, false, ""
	}
	held, free := sc.held-1, 2-sc.held
	h := newHold(sc.at)
	defer func() {
		select {
		case <-h.release:
		default:
			close(h.release)
		}
	}()
	heldDone := make(chan struct{})
	go func() {
		defer close(heldDone)
		out[held] = s.serve(calls[held], rids[held], h)
	}()
	select {
	case <-h.reached:
	case <-heldDone:
		out[free] = s.serve(calls[free], rids[free], nil)
		return out, true, ""
	}
	freeDone := make(chan struct{})
	go func() {
		defer close(freeDone)
		out[free] = s.serve(calls[free], rids[free], nil)
	}()
	deadline := time.Now().Add(15 * time.Second)
wait:
	for {
		select {
		case <-freeDone:
			break wait
		case <-time.After(time.Millisecond):
		}
		if s.waiters(t) > 0 {
			break // with one request held in Go, the other waits for it
		}
		if time.Now().After(deadline) {
			t.Errorf("%s: the free request neither answered nor waited on a lock in 15 s", sc)
			break
		}
	}
	close(h.release)
	<-heldDone
	<-freeDone
	return out, false, h.sql
}

// routeAnswers are, for each route of the table, the message of each status it may
// answer in a race (an empty message: the answer is not a Response Model), and the
// action of the audit record of its success ("" for none).
var routeAnswers = map[string]struct {
	action   string
	messages map[int]string
}{
	"POST /admin-users/edit/{id}": {"user.edit", map[int]string{200: "User edited successfully",
		400: "Required parameters missing", 404: "User not found", 409: "Username already taken"}},
	"DELETE /admin-users/delete/{id}": {"user.delete", map[int]string{200: "User deleted successfully", 404: "User not found"}},
	"POST /admin-users/logout/{id}":   {"user.logout", map[int]string{200: "User logged out successfully", 404: "User not found"}},
	"POST /admin-users/update-image/{id}": {"user.image.update", map[int]string{200: "Profile image updated successfully",
		404: "User not found"}},
	"DELETE /admin-users/delete-image/{id}": {"user.image.delete", map[int]string{200: "Profile image deleted successfully",
		404: "User not found", 500: "Internal server error"}},
	"GET /admin-users/id/{id}": {"", map[int]string{200: "", 404: "User not found"}},
	"POST /admin-roles/edit/{id}": {"role.edit", map[int]string{200: "Role updated successfully",
		400: "Required parameters missing", 404: "Role not found", 409: "Role with the same name already exists"}},
	"POST /admin-roles/add": {"role.add", map[int]string{200: "Role added successfully", 409: "Role with the same name already exists"}},
	"DELETE /admin-roles/delete/{id}": {"role.delete", map[int]string{200: "Role deleted successfully", 404: "Role not found",
		405: "Cannot delete default role"}},
	"POST /admin-permissions/edit/{id}": {"permission.edit", map[int]string{200: "Permission updated successfully",
		404: "Permission not found", 409: "Permission with the same name already exists"}},
	"POST /admin-permissions/add": {"permission.add", map[int]string{200: "Permission added successfully",
		409: "Permission with the same name already exists"}},
	"DELETE /admin-permissions/delete/{id}": {"permission.delete", map[int]string{200: "Permission deleted successfully",
		404: "Permission not found"}},
	"POST /admin-contributors/add": {"contributor.add", map[int]string{200: "Contributor added successfully",
		409: "Contributor with this Name exists already."}},
	"POST /admin-contributors/edit/{id}": {"contributor.edit", map[int]string{200: "Contributor updated successfully",
		400: "Required parameters missing", 404: "Contributor not found", 409: "Contributor with this Name exists already."}},
	"DELETE /admin-contributors/delete/{id}": {"contributor.delete", map[int]string{200: "Contributor deleted successfully",
		404: "Contributor not found"}},
	"POST /admin-contributors/update-avatar/{id}": {"contributor.image.update", map[int]string{
		200: "Contributor avatar updated successfully", 404: "Contributor not found"}},
	"DELETE /admin-contributors/delete-avatar/{id}": {"contributor.image.delete", map[int]string{
		200: "Contributor avatar deleted successfully", 404: "Contributor not found",
		500: "An error occurred while deleting the contributor avatar"}},
	"GET /admin-contributors/id/{id}": {"", map[int]string{200: "", 404: "Contributor not found"}},
}

// footprints are what each write of the table changes and what it refers to (the rows
// whose existence or content it checks before it writes beside them), by kind of row.
// Two routes conflict when one changes what the other changes or refers to; the
// table has a pair for every two routes that conflict (TestRacingWrites checks it),
// a route with itself included.
var footprints = map[string]struct{ writes, refers []string }{
	"POST /admin-users/edit/{id}":           {[]string{"user", "username", "user-roles", "user-lock"}, []string{"role", "default-role"}},
	"DELETE /admin-users/delete/{id}":       {[]string{"user", "user-roles", "sessions", "user-picture", "user-lock"}, nil},
	"POST /admin-users/logout/{id}":         {[]string{"sessions"}, []string{"user"}},
	"POST /admin-users/update-image/{id}":   {[]string{"user-picture"}, []string{"user"}},
	"DELETE /admin-users/delete-image/{id}": {[]string{"user-picture"}, []string{"user"}},
	"GET /admin-users/id/{id}":              {[]string{"user-lock"}, []string{"user"}},
	"POST /admin-roles/edit/{id}":           {[]string{"role", "role-name", "grants"}, []string{"permission"}},
	"POST /admin-roles/add":                 {[]string{"role-name"}, nil},
	"DELETE /admin-roles/delete/{id}":       {[]string{"role", "grants", "user-roles"}, []string{"default-role"}},
	"POST /admin-permissions/edit/{id}":     {[]string{"permission", "permission-name"}, nil},
	"POST /admin-permissions/add":           {[]string{"permission-name"}, nil},
	"DELETE /admin-permissions/delete/{id}": {[]string{"permission", "grants"}, nil},
	"POST /admin-contributors/add":          {[]string{"contributor-name"}, nil},
	"POST /admin-contributors/edit/{id}": {[]string{"contributor", "contributor-name", "relations", "contributor-lock"},
		[]string{"contributor"}},
	"DELETE /admin-contributors/delete/{id}":        {[]string{"contributor", "relations", "contributor-picture", "contributor-lock"}, nil},
	"POST /admin-contributors/update-avatar/{id}":   {[]string{"contributor-picture"}, []string{"contributor"}},
	"DELETE /admin-contributors/delete-avatar/{id}": {[]string{"contributor-picture"}, []string{"contributor"}},
	"GET /admin-contributors/id/{id}":               {[]string{"contributor-lock"}, []string{"contributor"}},
}

// lockingReads are the admin reads that write: opening a detail takes its edit lock.
var lockingReads = map[string]bool{userDetail: true, contribDetail: true}

// conflicting lists every two routes (a route with itself too) that conflict by their
// footprints, as "A | B" with A <= B.
func conflicting() []string {
	routes := slices.Sorted(maps.Keys(footprints))
	meets := func(writes, other []string) bool {
		for _, w := range writes {
			if slices.Contains(other, w) {
				return true
			}
		}
		return false
	}
	var out []string
	for i, a := range routes {
		for _, b := range routes[i:] {
			fa, fb := footprints[a], footprints[b]
			if meets(fa.writes, append(slices.Clone(fb.writes), fb.refers...)) || meets(fb.writes, fa.refers) {
				out = append(out, a+" | "+b)
			}
		}
	}
	return out
}

// racePair is an entry of the table.
type racePair struct {
	name     string
	pictures bool // the fixture's U and C have pictures
	one      bool // exactly one of the two succeeds
	// chain names the field of the audit records' changes that two successes of the
	// pair both change: one's before must be the other's after (each saw the other's
	// write, in one order or the other).
	chain string
	calls func(f fixture) [2]raceCall
}

func (p racePair) routes(f fixture) string {
	c := p.calls(f)
	a, b := c[0].route, c[1].route
	if b < a {
		a, b = b, a
	}
	return a + " | " + b
}

const (
	editUser      = "POST /admin-users/edit/{id}"
	deleteUser    = "DELETE /admin-users/delete/{id}"
	logoutUser    = "POST /admin-users/logout/{id}"
	updateImage   = "POST /admin-users/update-image/{id}"
	deleteImage   = "DELETE /admin-users/delete-image/{id}"
	userDetail    = "GET /admin-users/id/{id}"
	editRole      = "POST /admin-roles/edit/{id}"
	addRole       = "POST /admin-roles/add"
	deleteRole    = "DELETE /admin-roles/delete/{id}"
	editPerm      = "POST /admin-permissions/edit/{id}"
	addPerm       = "POST /admin-permissions/add"
	deletePerm    = "DELETE /admin-permissions/delete/{id}"
	addContrib    = "POST /admin-contributors/add"
	editContrib   = "POST /admin-contributors/edit/{id}"
	deleteContrib = "DELETE /admin-contributors/delete/{id}"
	updateAvatar  = "POST /admin-contributors/update-avatar/{id}"
	deleteAvatar  = "DELETE /admin-contributors/delete-avatar/{id}"
	contribDetail = "GET /admin-contributors/id/{id}"
)

func ids(v ...int64) []int64 { return append([]int64{}, v...) }

func roleBody(name string, added, removed []int64) map[string]any {
	return map[string]any{"name": name, "description": "x", "added_permissions": added, "removed_permissions": removed}
}

func userBody(name string, added, removed []int64) map[string]any {
	return map[string]any{"username": name, "added_roles": added, "removed_roles": removed}
}

func nameBody(name string) map[string]any { return map[string]any{"name": name, "description": "x"} }

// contribBody edits a contributor of first name Race; more adds fields.
func contribBody(last string, more map[string]any) map[string]any {
	b := map[string]any{"first_name": "Race", "last_name": last}
	for k, v := range more {
		b[k] = v
	}
	return b
}

// racePairs is the table. Each call lists the statuses the state the other call may
// leave allows: 400 for a referred row that is gone (an unknown id in the body), 404
// for the path's row gone, 409 for a name the other took, and the OpenAPI document's 500 for a
// picture the other deleted.
var racePairs = []racePair{
	// Roles and permissions.
	{name: "grant a permission while it is deleted", calls: func(f fixture) [2]raceCall {
		return [2]raceCall{{route: editRole, id: f.R, body: roleBody(fmt.Sprintf("race-r-%d", f.n), ids(f.P), nil), ok: []int{200, 400}},
			{route: deletePerm, id: f.P, by: 1, ok: []int{200}}}
	}},
	{name: "take a permission away while it is deleted", calls: func(f fixture) [2]raceCall {
		return [2]raceCall{{route: editRole, id: f.R, body: roleBody(fmt.Sprintf("race-r-%d", f.n), nil, ids(f.Q)), ok: []int{200, 400}},
			{route: deletePerm, id: f.Q, by: 1, ok: []int{200}}}
	}},
	{name: "grant a permission while it is renamed", calls: func(f fixture) [2]raceCall {
		return [2]raceCall{{route: editRole, id: f.R, body: roleBody(fmt.Sprintf("race-r-%d", f.n), ids(f.P), nil), ok: []int{200}},
			{route: editPerm, id: f.P, by: 1, body: nameBody(f.permName), ok: []int{200}}}
	}},
	{name: "rename a role twice", chain: "name", calls: func(f fixture) [2]raceCall {
		return [2]raceCall{{route: editRole, id: f.R, body: roleBody(f.roleName, nil, nil), ok: []int{200}},
			{route: editRole, id: f.R, by: 1, body: roleBody(f.neu, nil, nil), ok: []int{200}}}
	}},
	{name: "rename two roles into one name", one: true, calls: func(f fixture) [2]raceCall {
		return [2]raceCall{{route: editRole, id: f.R, body: roleBody(f.roleName, nil, nil), ok: []int{200, 409}},
			{route: editRole, id: f.S, by: 1, body: roleBody(f.roleName, nil, nil), ok: []int{200, 409}}}
	}},
	{name: "rename a role into the name of a role being added", one: true, calls: func(f fixture) [2]raceCall {
		return [2]raceCall{{route: editRole, id: f.R, body: roleBody(f.roleName, nil, nil), ok: []int{200, 409}},
			{route: addRole, by: 1, body: nameBody(f.roleName), ok: []int{200, 409}}}
	}},
	{name: "add one role name twice", one: true, calls: func(f fixture) [2]raceCall {
		return [2]raceCall{{route: addRole, body: nameBody(f.roleName), ok: []int{200, 409}},
			{route: addRole, by: 1, body: nameBody(f.roleName), ok: []int{200, 409}}}
	}},
	{name: "edit a role while it is deleted", calls: func(f fixture) [2]raceCall {
		return [2]raceCall{{route: editRole, id: f.R, body: roleBody(f.roleName, ids(f.P), nil), ok: []int{200, 404}},
			{route: deleteRole, id: f.R, by: 1, ok: []int{200}}}
	}},
	{name: "delete a role twice", one: true, calls: func(f fixture) [2]raceCall {
		return [2]raceCall{{route: deleteRole, id: f.R, ok: []int{200, 404}}, {route: deleteRole, id: f.R, by: 1, ok: []int{200, 404}}}
	}},
	{name: "grant a role while it is deleted", calls: func(f fixture) [2]raceCall {
		return [2]raceCall{{route: editUser, id: f.U, body: userBody(f.uName, ids(f.S), nil), ok: []int{200, 400}},
			{route: deleteRole, id: f.S, by: 1, ok: []int{200}}}
	}},
	{name: "swap a user's only role while it is deleted", calls: func(f fixture) [2]raceCall {
		return [2]raceCall{{route: editUser, id: f.U, body: userBody(f.uName, ids(f.S), ids(f.R)), ok: []int{200, 400}},
			{route: deleteRole, id: f.R, by: 1, ok: []int{200}}}
	}},
	{name: "take a user's last role while the default role is deleted", calls: func(f fixture) [2]raceCall {
		return [2]raceCall{{route: editUser, id: f.V, body: userBody(f.vName, nil, ids(demo.MemberRoleID)), ok: []int{200}},
			{route: deleteRole, id: demo.MemberRoleID, by: 1, ok: []int{405}}}
	}},
	{name: "delete a role while its only holder is deleted", calls: func(f fixture) [2]raceCall {
		return [2]raceCall{{route: deleteRole, id: f.R, ok: []int{200}}, {route: deleteUser, id: f.U, by: 1, ok: []int{200}}}
	}},
	{name: "delete a permission while a role granting it is deleted", calls: func(f fixture) [2]raceCall {
		return [2]raceCall{{route: deletePerm, id: f.Q, ok: []int{200}}, {route: deleteRole, id: f.R, by: 1, ok: []int{200}}}
	}},
	{name: "rename a role while it is granted", calls: func(f fixture) [2]raceCall {
		return [2]raceCall{{route: editRole, id: f.S, body: roleBody(f.roleName, nil, nil), ok: []int{200}},
			{route: editUser, id: f.U, by: 1, body: userBody(f.uName, ids(f.S), nil), ok: []int{200}}}
	}},
	{name: "rename a permission twice", chain: "name", calls: func(f fixture) [2]raceCall {
		return [2]raceCall{{route: editPerm, id: f.P, body: nameBody(f.permName), ok: []int{200}},
			{route: editPerm, id: f.P, by: 1, body: nameBody(f.neu), ok: []int{200}}}
	}},
	{name: "rename two permissions into one name", one: true, calls: func(f fixture) [2]raceCall {
		return [2]raceCall{{route: editPerm, id: f.P, body: nameBody(f.permName), ok: []int{200, 409}},
			{route: editPerm, id: f.Q, by: 1, body: nameBody(f.permName), ok: []int{200, 409}}}
	}},
	{name: "rename a permission into the name of one being added", one: true, calls: func(f fixture) [2]raceCall {
		return [2]raceCall{{route: editPerm, id: f.P, body: nameBody(f.permName), ok: []int{200, 409}},
			{route: addPerm, by: 1, body: nameBody(f.permName), ok: []int{200, 409}}}
	}},
	{name: "add one permission name twice", one: true, calls: func(f fixture) [2]raceCall {
		return [2]raceCall{{route: addPerm, body: nameBody(f.permName), ok: []int{200, 409}},
			{route: addPerm, by: 1, body: nameBody(f.permName), ok: []int{200, 409}}}
	}},
	{name: "edit a permission while it is deleted", calls: func(f fixture) [2]raceCall {
		return [2]raceCall{{route: editPerm, id: f.P, body: nameBody(f.permName), ok: []int{200, 404}},
			{route: deletePerm, id: f.P, by: 1, ok: []int{200}}}
	}},
	{name: "delete a permission twice", one: true, calls: func(f fixture) [2]raceCall {
		return [2]raceCall{{route: deletePerm, id: f.P, ok: []int{200, 404}}, {route: deletePerm, id: f.P, by: 1, ok: []int{200, 404}}}
	}},

	// Users.
	{name: "rename two users into names that are one under the name rule", one: true, calls: func(f fixture) [2]raceCall {
		// Latin "race-…" and the same with a Cyrillic а: one name key (namekey), two
		// lowercased names (so no unique index of the table tells them apart).
		return [2]raceCall{{route: editUser, id: f.U, body: userBody(f.neu, nil, nil), ok: []int{200, 409}},
			{route: editUser, id: f.V, by: 1, body: userBody(strings.Replace(f.neu, "a", "\u0430", 1), nil, nil), ok: []int{200, 409}}}
	}},
	{name: "rename a user twice", chain: "username", calls: func(f fixture) [2]raceCall {
		return [2]raceCall{{route: editUser, id: f.U, body: userBody(f.neu, nil, nil), ok: []int{200}},
			{route: editUser, id: f.U, by: 1, body: userBody(f.roleName, nil, nil), ok: []int{200}}}
	}},
	{name: "edit a user while they are deleted", calls: func(f fixture) [2]raceCall {
		return [2]raceCall{{route: editUser, id: f.U, body: userBody(f.neu, ids(f.S), nil), ok: []int{200, 404}},
			{route: deleteUser, id: f.U, by: 1, ok: []int{200}}}
	}},
	{name: "delete a user twice", one: true, pictures: true, calls: func(f fixture) [2]raceCall {
		return [2]raceCall{{route: deleteUser, id: f.U, ok: []int{200, 404}}, {route: deleteUser, id: f.U, by: 1, ok: []int{200, 404}}}
	}},
	{name: "edit a user while they are logged out", calls: func(f fixture) [2]raceCall {
		return [2]raceCall{{route: editUser, id: f.U, body: userBody(f.neu, ids(f.S), nil), ok: []int{200}},
			{route: logoutUser, id: f.U, by: 1, ok: []int{200}}}
	}},
	{name: "log a user out while they are deleted", calls: func(f fixture) [2]raceCall {
		return [2]raceCall{{route: logoutUser, id: f.U, ok: []int{200, 404}}, {route: deleteUser, id: f.U, by: 1, ok: []int{200}}}
	}},
	{name: "log a user out twice", calls: func(f fixture) [2]raceCall {
		return [2]raceCall{{route: logoutUser, id: f.U, ok: []int{200}}, {route: logoutUser, id: f.U, by: 1, ok: []int{200}}}
	}},
	{name: "change a user's picture while they are deleted", pictures: true, calls: func(f fixture) [2]raceCall {
		return [2]raceCall{{route: updateImage, id: f.U, body: map[string]any{"image": raceUpload}, ok: []int{200, 404}},
			{route: deleteUser, id: f.U, by: 1, ok: []int{200}}}
	}},
	{name: "delete a user's picture while they are deleted", pictures: true, calls: func(f fixture) [2]raceCall {
		return [2]raceCall{{route: deleteImage, id: f.U, ok: []int{200, 404}}, {route: deleteUser, id: f.U, by: 1, ok: []int{200}}}
	}},
	{name: "change a user's picture twice", pictures: true, calls: func(f fixture) [2]raceCall {
		return [2]raceCall{{route: updateImage, id: f.U, body: map[string]any{"image": raceUpload}, ok: []int{200}},
			{route: updateImage, id: f.U, by: 1, body: map[string]any{"image": raceUpload}, ok: []int{200}}}
	}},
	{name: "change a user's picture while it is deleted", pictures: true, calls: func(f fixture) [2]raceCall {
		return [2]raceCall{{route: updateImage, id: f.U, body: map[string]any{"image": raceUpload}, ok: []int{200}},
			{route: deleteImage, id: f.U, by: 1, ok: []int{200}}}
	}},
	{name: "delete a user's picture twice", one: true, pictures: true, calls: func(f fixture) [2]raceCall {
		return [2]raceCall{{route: deleteImage, id: f.U, ok: []int{200, 500}}, {route: deleteImage, id: f.U, by: 1, ok: []int{200, 500}}}
	}},
	{name: "open a user's detail while they are deleted", calls: func(f fixture) [2]raceCall {
		return [2]raceCall{{route: userDetail, id: f.U, ok: []int{200, 404}}, {route: deleteUser, id: f.U, by: 1, ok: []int{200}}}
	}},
	{name: "edit a user while their picture changes", pictures: true, calls: func(f fixture) [2]raceCall {
		return [2]raceCall{{route: editUser, id: f.U, body: userBody(f.neu, nil, nil), ok: []int{200}},
			{route: updateImage, id: f.U, by: 1, body: map[string]any{"image": raceUpload}, ok: []int{200}}}
	}},
	{name: "edit a user while their picture is deleted", pictures: true, calls: func(f fixture) [2]raceCall {
		return [2]raceCall{{route: editUser, id: f.U, body: userBody(f.neu, nil, nil), ok: []int{200}},
			{route: deleteImage, id: f.U, by: 1, ok: []int{200}}}
	}},
	{name: "edit a user while another admin opens them", calls: func(f fixture) [2]raceCall {
		return [2]raceCall{{route: editUser, id: f.U, body: userBody(f.neu, nil, nil), ok: []int{200}},
			{route: userDetail, id: f.U, by: 1, ok: []int{200}}}
	}},
	{name: "open a user's detail twice", calls: func(f fixture) [2]raceCall {
		return [2]raceCall{{route: userDetail, id: f.U, ok: []int{200}}, {route: userDetail, id: f.U, by: 1, ok: []int{200}}}
	}},

	// Contributors.
	{name: "add one contributor name twice", one: true, calls: func(f fixture) [2]raceCall {
		body := map[string]any{"first_name": "Race", "last_name": f.neu}
		return [2]raceCall{{route: addContrib, body: body, ok: []int{200, 409}}, {route: addContrib, by: 1, body: body, ok: []int{200, 409}}}
	}},
	{name: "rename a contributor into the name of one being added", one: true, calls: func(f fixture) [2]raceCall {
		return [2]raceCall{{route: editContrib, id: f.C, body: contribBody(f.neu, nil), ok: []int{200, 409}},
			{route: addContrib, by: 1, body: map[string]any{"first_name": "race", "last_name": strings.ToUpper(f.neu)}, ok: []int{200, 409}}}
	}},
	{name: "rename two contributors into one name", one: true, calls: func(f fixture) [2]raceCall {
		return [2]raceCall{{route: editContrib, id: f.D, body: contribBody(f.neu, nil), ok: []int{200, 409}},
			{route: editContrib, id: f.E, by: 1, body: contribBody(f.neu, nil), ok: []int{200, 409}}}
	}},
	{name: "relate to a contributor while it is deleted", calls: func(f fixture) [2]raceCall {
		rel := []map[string]any{{"relation_id": f.E, "type": "friend"}}
		return [2]raceCall{{route: editContrib, id: f.C, body: contribBody(f.cLast, map[string]any{"added_relations": rel}), ok: []int{200, 400}},
			{route: deleteContrib, id: f.E, by: 1, ok: []int{200}}}
	}},
	{name: "point a relation at a contributor while it is deleted", calls: func(f fixture) [2]raceCall {
		rel := []map[string]any{{"id": f.Rel, "relation_id": f.E, "type": "friend"}}
		return [2]raceCall{{route: editContrib, id: f.C, body: contribBody(f.cLast, map[string]any{"modified_relations": rel}), ok: []int{200, 400}},
			{route: deleteContrib, id: f.E, by: 1, ok: []int{200}}}
	}},
	{name: "remove a relation while its target is deleted", calls: func(f fixture) [2]raceCall {
		return [2]raceCall{{route: editContrib, id: f.C, body: contribBody(f.cLast, map[string]any{"removed_relations": ids(f.Rel)}), ok: []int{200, 400}},
			{route: deleteContrib, id: f.D, by: 1, ok: []int{200}}}
	}},
	{name: "relate two contributors to each other", calls: func(f fixture) [2]raceCall {
		return [2]raceCall{{route: editContrib, id: f.D, body: contribBody(f.dLast, map[string]any{"added_relations": []map[string]any{{"relation_id": f.E, "type": "friend"}}}), ok: []int{200}},
			{route: editContrib, id: f.E, by: 1, body: contribBody(f.eLast, map[string]any{"added_relations": []map[string]any{{"relation_id": f.D, "type": "friend"}}}), ok: []int{200}}}
	}},
	{name: "remove one alias twice", one: true, calls: func(f fixture) [2]raceCall {
		body := contribBody(f.cLast, map[string]any{"removed_aliases": ids(f.Alias)})
		return [2]raceCall{{route: editContrib, id: f.C, body: body, ok: []int{200, 400}}, {route: editContrib, id: f.C, by: 1, body: body, ok: []int{200, 400}}}
	}},
	{name: "edit a contributor while it is deleted", calls: func(f fixture) [2]raceCall {
		body := contribBody(f.neu, map[string]any{"added_aliases": []map[string]any{{"title": "T", "language": "en"}}, "links": []string{"https://example.com/race"}})
		return [2]raceCall{{route: editContrib, id: f.C, body: body, ok: []int{200, 404}}, {route: deleteContrib, id: f.C, by: 1, ok: []int{200}}}
	}},
	{name: "delete a contributor twice", one: true, pictures: true, calls: func(f fixture) [2]raceCall {
		return [2]raceCall{{route: deleteContrib, id: f.C, ok: []int{200, 404}}, {route: deleteContrib, id: f.C, by: 1, ok: []int{200, 404}}}
	}},
	{name: "change an avatar while the contributor is deleted", pictures: true, calls: func(f fixture) [2]raceCall {
		return [2]raceCall{{route: updateAvatar, id: f.C, body: map[string]any{"image": raceUpload}, ok: []int{200, 404}},
			{route: deleteContrib, id: f.C, by: 1, ok: []int{200}}}
	}},
	{name: "delete an avatar while the contributor is deleted", pictures: true, calls: func(f fixture) [2]raceCall {
		return [2]raceCall{{route: deleteAvatar, id: f.C, ok: []int{200, 404}}, {route: deleteContrib, id: f.C, by: 1, ok: []int{200}}}
	}},
	{name: "change an avatar twice", pictures: true, calls: func(f fixture) [2]raceCall {
		return [2]raceCall{{route: updateAvatar, id: f.C, body: map[string]any{"image": raceUpload}, ok: []int{200}},
			{route: updateAvatar, id: f.C, by: 1, body: map[string]any{"image": raceUpload}, ok: []int{200}}}
	}},
	{name: "change an avatar while it is deleted", pictures: true, calls: func(f fixture) [2]raceCall {
		return [2]raceCall{{route: updateAvatar, id: f.C, body: map[string]any{"image": raceUpload}, ok: []int{200}},
			{route: deleteAvatar, id: f.C, by: 1, ok: []int{200}}}
	}},
	{name: "delete an avatar twice", one: true, pictures: true, calls: func(f fixture) [2]raceCall {
		return [2]raceCall{{route: deleteAvatar, id: f.C, ok: []int{200, 500}}, {route: deleteAvatar, id: f.C, by: 1, ok: []int{200, 500}}}
	}},
	{name: "open a contributor's detail while it is deleted", calls: func(f fixture) [2]raceCall {
		return [2]raceCall{{route: contribDetail, id: f.C, ok: []int{200, 404}}, {route: deleteContrib, id: f.C, by: 1, ok: []int{200}}}
	}},
	{name: "edit a contributor while its avatar changes", pictures: true, calls: func(f fixture) [2]raceCall {
		return [2]raceCall{{route: editContrib, id: f.C, body: contribBody(f.neu, nil), ok: []int{200}},
			{route: updateAvatar, id: f.C, by: 1, body: map[string]any{"image": raceUpload}, ok: []int{200}}}
	}},
	{name: "edit a contributor while its avatar is deleted", pictures: true, calls: func(f fixture) [2]raceCall {
		return [2]raceCall{{route: editContrib, id: f.C, body: contribBody(f.neu, nil), ok: []int{200}},
			{route: deleteAvatar, id: f.C, by: 1, ok: []int{200}}}
	}},
	{name: "edit a contributor while another admin opens it", calls: func(f fixture) [2]raceCall {
		return [2]raceCall{{route: editContrib, id: f.C, body: contribBody(f.neu, nil), ok: []int{200}},
			{route: contribDetail, id: f.C, by: 1, ok: []int{200}}}
	}},
	{name: "open a contributor's detail twice", calls: func(f fixture) [2]raceCall {
		return [2]raceCall{{route: contribDetail, id: f.C, ok: []int{200}}, {route: contribDetail, id: f.C, by: 1, ok: []int{200}}}
	}},
}

// raceUpload stands for the server's upload picture in a call's body.
const raceUpload = "<the test picture>"

// auditRecord is what the checks read of an audit record.
type auditRecord struct {
	Msg     string `json:"msg"`
	Level   string `json:"level"`
	Request string `json:"request_id"`
	Action  string `json:"action"`
	Target  struct {
		ID int64 `json:"id"`
	} `json:"target"`
	Changes map[string]json.RawMessage `json:"changes"`
	Error   string                     `json:"error"`
}

// change is a changed field of an audit record.
type change struct {
	Before, After any
}

// TestRacingWrites races every pair of the table (see the comment at the top of this
// file) and checks the answers and the invariants after each run.
func TestRacingWrites(t *testing.T) {
	s := newRaceServer(t)

	// The table has a pair for every two routes that conflict, and a footprint for
	// every admin write (and every read that takes an edit lock).
	covered := map[string]bool{}
	for _, p := range racePairs {
		covered[p.routes(fixture{})] = true
	}
	for _, c := range conflicting() {
		if !covered[c] {
			t.Errorf("routes %s conflict by their footprints and no pair races them", c)
		}
	}
	for _, rt := range s.routes {
		admin := strings.Contains(rt.Pattern, " /admin-")
		if admin && (rt.Method() != http.MethodGet || lockingReads[rt.Pattern]) {
			if _, ok := footprints[rt.Pattern]; !ok {
				t.Errorf("%s writes and has no footprint in the race table", rt.Pattern)
			}
		}
	}

	var n int64
	runs := 0
	begin := time.Now()
	for _, p := range racePairs {
		t.Run(p.name, func(t *testing.T) {
			// run races the pair once under sc, on a fixture of its own, and reports
			// whether the held request answered before reaching the statement.
			run := func(sc schedule) bool {
				t.Helper()
				n++
				runs++
				f := s.fixture(t, n, p.pictures)
				calls := p.calls(f)
				for i := range calls {
					if m, ok := calls[i].body.(map[string]any); ok && m["image"] == raceUpload {
						calls[i].body = map[string]any{"image": s.upload}
					}
				}
				rids := [2]string{fmt.Sprintf("race-%d-a", n), fmt.Sprintf("race-%d-b", n)}
				out, ranOut, held := s.run(t, f, calls, rids, sc)
				bad := s.check(t, p, out)
				s.clean(t)
				if len(bad) > 0 {
					where := sc.String()
					if held != "" {
						where += fmt.Sprintf(" (%.120s)", strings.Join(strings.Fields(held), " "))
					}
					t.Fatalf("%s:\n  %s", where, strings.Join(bad, "\n  "))
				}
				return ranOut
			}
			for held := 1; held <= 2; held++ {
				if held == 2 && p.symmetric() {
					break // holding the second is holding the first
				}
				for at := 1; !run(schedule{held: held, at: at}); at++ {
				}
			}
			run(schedule{gate: true})
			for range 2 {
				run(schedule{})
			}
		})
	}
	t.Logf("%d pairs over %d conflicting route pairs, %d runs in %s", len(racePairs), len(conflicting()), runs,
		time.Since(begin).Round(time.Millisecond))
}

// symmetric reports whether the pair's two calls are one call by two admins.
func (p racePair) symmetric() bool {
	c := p.calls(fixture{n: 1, U: 1, C: 1})
	a, _ := json.Marshal(c[0].body)
	b, _ := json.Marshal(c[1].body)
	return c[0].route == c[1].route && c[0].id == c[1].id && bytes.Equal(a, b) && slices.Equal(c[0].ok, c[1].ok)
}

// check holds a run's answers and the state after it to the rules, and returns what
// breaks them.
func (s *raceServer) check(t *testing.T, p racePair, out [2]answer) []string {
	t.Helper()
	var bad []string
	records := map[string][]auditRecord{}
	var errs []string
	sc := bufio.NewScanner(bytes.NewReader(s.logs.take()))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r auditRecord
		if json.Unmarshal(sc.Bytes(), &r) != nil {
			continue
		}
		if r.Msg == httpapi.AuditMessage {
			records[r.Request] = append(records[r.Request], r)
		}
		if r.Level == "ERROR" {
			errs = append(errs, fmt.Sprintf("logged error %q: %s", r.Msg, r.Error))
		}
	}
	successes := 0
	for i, a := range out {
		name := fmt.Sprintf("%s %s (%s)", [...]string{"first", "second"}[i], a.call.route, a.rid)
		ra := routeAnswers[a.call.route]
		method, target := a.call.target()
		var body any
		if a.reqBody != nil {
			body = a.reqBody
		}
		req := testenv.Request(method, target, body)
		testenv.CheckResponse(t, req, a.status, a.header, a.body)
		if a.status == 200 {
			successes++
		}
		msg, known := ra.messages[a.status]
		if !slices.Contains(a.call.ok, a.status) || !known {
			bad = append(bad, fmt.Sprintf("%s answered %d %.300s, want one of %v", name, a.status, a.body, a.call.ok))
			continue
		}
		if msg != "" {
			if m := testenv.Message(t, a.body); m.Data != msg || m.Code != a.status {
				bad = append(bad, fmt.Sprintf("%s answered %d %+v, want %q", name, a.status, m, msg))
			}
		}
		var acted int
		for _, r := range records[a.rid] {
			if r.Action == ra.action {
				acted++
				if a.call.id != 0 && r.Target.ID != a.call.id || r.Target.ID <= 0 {
					bad = append(bad, fmt.Sprintf("%s: audit record of %s on %d", name, r.Action, r.Target.ID))
				}
			} else if r.Action != "user.unlink" || a.call.route != logoutUser {
				bad = append(bad, fmt.Sprintf("%s: audit record of %s", name, r.Action))
			}
		}
		if want := map[bool]int{true: 1, false: 0}[a.status == 200 && ra.action != ""]; acted != want {
			bad = append(bad, fmt.Sprintf("%s answered %d and left %d audit records of %s, want %d", name, a.status, acted, ra.action, want))
		}
	}
	if p.chain != "" && out[0].status == 200 && out[1].status == 200 {
		var ch [2]change
		for i, a := range out {
			for _, r := range records[a.rid] {
				if r.Action == routeAnswers[a.call.route].action {
					_ = json.Unmarshal(r.Changes[p.chain], &ch[i])
				}
			}
		}
		if ch[0].Before != ch[1].After && ch[1].Before != ch[0].After {
			bad = append(bad, fmt.Sprintf("the two %s changes %v and %v: neither saw the other's", p.chain, ch[0], ch[1]))
		}
	}
	if p.one && successes != 1 {
		bad = append(bad, fmt.Sprintf("%d of the two succeeded, want exactly one: %d %.200s and %d %.200s",
			successes, out[0].status, out[0].body, out[1].status, out[1].body))
	}
	bad = append(bad, s.invariants(t)...)
	// A 500 of the OpenAPI document's own (a picture already deleted) is logged as an error; any
	// other logged error is a failure, and every one says why when something failed.
	if len(errs) > 0 && (len(bad) > 0 || !(out[0].status == 500 || out[1].status == 500)) {
		bad = append(bad, errs...)
	}
	return bad
}

// raceInvariants is one query listing what breaks the invariants of the database:
// exactly one default role; every user holds a role; names unique (roles,
// permissions, contributors of a client: the rules their unique indexes keep); every
// kept count and kept search text equal to a recount; the demo admin a full admin.
const raceInvariants = `
SELECT array_remove(ARRAY[
	(SELECT 'default roles: ' || count(*) FROM roles WHERE is_default HAVING count(*) <> 1),
	(SELECT 'users without a role: ' || string_agg(id::text, ',') FROM users u
	 WHERE NOT EXISTS (SELECT 1 FROM user_roles ur WHERE ur.user_id = u.id)),
	(SELECT 'role names twice: ' || string_agg(name, ',') FROM (SELECT name FROM roles GROUP BY 1 HAVING count(*) > 1) d),
	(SELECT 'permission names twice: ' || string_agg(name, ',') FROM (SELECT name FROM permissions GROUP BY 1 HAVING count(*) > 1) d),
	(SELECT 'contributor names twice: ' || string_agg(n, ',') FROM (
		SELECT client_id || ':' || lower(first_name) || ' ' || lower(coalesce(last_name, '')) AS n
		FROM contributors GROUP BY 1 HAVING count(*) > 1) d),
	(SELECT 'user_count ' || n || ', users ' || (SELECT count(*) FROM users) FROM user_count
	 WHERE n <> (SELECT count(*) FROM users)),
	(SELECT 'roles.user_count: ' || string_agg(r.id || ' keeps ' || r.user_count || ', holders ' || c.n, ',')
	 FROM roles r, LATERAL (SELECT count(*) AS n FROM user_roles ur WHERE ur.role_id = r.id) c WHERE r.user_count <> c.n),
	(SELECT 'roles.full_admin: ' || string_agg(id || ' keeps ' || full_admin, ',') FROM roles
	 WHERE full_admin IS DISTINCT FROM role_is_full_admin(id)),
	(SELECT 'clients.contributor_count: ' || string_agg(c.id || ' keeps ' || c.contributor_count || ', has ' || k.n, ',')
	 FROM clients c, LATERAL (SELECT count(*) AS n FROM contributors WHERE client_id = c.id) k WHERE c.contributor_count <> k.n),
	(SELECT 'clients.publisher_count: ' || string_agg(c.id || ' keeps ' || c.publisher_count || ', has ' || k.n, ',')
	 FROM clients c, LATERAL (SELECT count(*) AS n FROM publishers WHERE client_id = c.id) k WHERE c.publisher_count <> k.n),
	(SELECT 'contributor_search_grams: ' || string_agg(coalesce(k.client_id, g.client_id) || '/' || coalesce(k.gram, g.gram)
	         || ' keeps ' || coalesce(k.n, 0) || ', has ' || coalesce(g.n, 0), ',')
	 FROM (SELECT client_id, gram, n FROM contributor_search_grams WHERE n <> 0) k
	 FULL JOIN (SELECT c.client_id, g.gram, count(*) AS n FROM contributors c, search_grams(c.search) g(gram) GROUP BY 1, 2) g
	   ON g.client_id = k.client_id AND g.gram = k.gram
	 WHERE k.n IS DISTINCT FROM g.n),
	(SELECT 'contributors.search: ' || string_agg(id::text, ',') FROM contributors
	 WHERE search IS DISTINCT FROM contributor_search_text(first_name, last_name)),
	(SELECT 'users.search: ' || string_agg(id::text, ',') FROM users WHERE search IS DISTINCT FROM search_fold(username)),
	(SELECT 'the demo admin is no full admin' WHERE NOT EXISTS (
		SELECT 1 FROM user_roles ur JOIN roles r ON r.id = ur.role_id WHERE ur.user_id = 1 AND r.full_admin))
], NULL)`

// invariants returns what breaks the invariants after a run: raceInvariants; the
// usernames unique under the service's name rule (namekey), each kept key its name's;
// the pictures and the bucket one to one (each object a row's, each row's objects
// there).
func (s *raceServer) invariants(t *testing.T) []string {
	t.Helper()
	ctx := context.Background()
	var bad []string
	if err := s.watch.QueryRow(ctx, raceInvariants).Scan(&bad); err != nil {
		t.Fatal(err)
	}
	rows, _ := s.watch.Query(ctx, `SELECT id, username, name_key FROM users ORDER BY id`)
	users, err := pgx.CollectRows(rows, pgx.RowToStructByPos[struct {
		ID       int64
		Username string
		Key      *string
	}])
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]int64{}
	for _, u := range users {
		key := namekey.Key(u.Username)
		if other, ok := byKey[key]; ok {
			bad = append(bad, fmt.Sprintf("users %d and %d have names one under the name rule", other, u.ID))
		}
		byKey[key] = u.ID
		if u.Key != nil && *u.Key != key {
			bad = append(bad, fmt.Sprintf("user %d keeps name key %q, its name's is %q", u.ID, *u.Key, key))
		}
	}
	rows, _ = s.watch.Query(ctx, `SELECT profile_image FROM users WHERE profile_image IS NOT NULL
		UNION ALL SELECT image FROM contributors WHERE image IS NOT NULL`)
	refs, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, ref := range refs {
		set, err := imageset.ParseRef(ref)
		if err != nil {
			bad = append(bad, fmt.Sprintf("a row points at %q: %v", ref, err))
			continue
		}
		for _, k := range set.Keys() {
			want[k] = true
		}
	}
	keys, err := s.files.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if !want[k] {
			bad = append(bad, "object "+k+" is no row's picture")
		}
		delete(want, k)
	}
	for _, k := range slices.Sorted(maps.Keys(want)) {
		bad = append(bad, "a row points at "+k+", which the bucket does not hold")
	}
	sort.Strings(bad)
	return bad
}
