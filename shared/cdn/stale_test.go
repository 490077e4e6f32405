package cdn_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/mediacatalog/service/infra/local/demo"
	"github.com/mediacatalog/service/infra/tests/tcpfreeze"
	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/avatars/avatartest"
	"github.com/mediacatalog/service/shared/cdn"
	"github.com/mediacatalog/service/shared/deadlines"
	"github.com/mediacatalog/service/shared/dependency"
	"github.com/mediacatalog/service/shared/httpapi"
	"github.com/mediacatalog/service/shared/postgres"
)

// frozenUsers is a pool on the world's database through a relay that the test can
// freeze, guarded by a breaker of its own (named breaker) as the function's pool is.
func frozenUsers(t *testing.T, w *world, breaker string, opts ...postgres.Option) (*postgres.DB, *tcpfreeze.Relay) {
	t.Helper()
	u, err := url.Parse(w.db.URL)
	if err != nil || u.Host == "" {
		t.Skipf("the test database is not reached over TCP (%s): nothing to freeze", w.db.URL)
	}
	f := tcpfreeze.New(t, u.Host)
	u.Host = f.Addr()
	opts = append(opts, postgres.WithGuard(dependency.NewBreaker(breaker, nil), deadlines.CallTimeout))
	users, err := postgres.Open(context.Background(), u.String(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(users.Close)
	return users, f
}

// TestStale: with the database frozen, a container serves the picture it last read a
// user's reference for, within StaleFor, with a one-minute Cache-Control and the same
// ETag; a user it never served, a read older than StaleFor, and a user whose change
// call it received since are 503 with Retry-After.
func TestStale(t *testing.T) {
	w := newWorld(t)
	users, f := frozenUsers(t, w, "postgres-stale")
	handler := func(staleFor time.Duration) http.Handler {
		d := cdn.Deps{Users: users, Files: w.files, CacheBytes: 1 << 20, RefMaxAge: -1, StaleFor: staleFor}
		return httpapi.Wrap(httpapi.NewMux(cdn.Routes(d)), httpapi.Options{Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	}
	kept, expired := handler(0), handler(time.Nanosecond)
	path := func(id int64) string { return "/user/avatar/" + strconv.FormatInt(id, 10) }
	var before string // the ETag served before the freeze
	for _, h := range []http.Handler{kept, expired} {
		rec := get(t, h, path(w.jpegUser))
		if rec.Code != http.StatusOK {
			t.Fatalf("before the freeze: %d %s", rec.Code, rec.Body)
		}
		before = rec.Header().Get("ETag")
	}
	f.Freeze(true)
	t.Cleanup(func() { f.Freeze(false) })

	tests := []struct {
		name   string
		h      http.Handler
		change bool // the change call for the user reaches the container first
		id     int64
		status int
	}{
		{"served before the stall", kept, false, w.jpegUser, http.StatusOK},
		{"again, the breaker open", kept, false, w.jpegUser, http.StatusOK},
		{"never served", kept, false, w.pngUser, http.StatusServiceUnavailable},
		{"read longer ago than StaleFor", expired, false, w.jpegUser, http.StatusServiceUnavailable},
		{"changed since", kept, true, w.jpegUser, http.StatusServiceUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.change {
				rec := testenv.Do(t, tt.h, testenv.Request(http.MethodPost, "/user/avatar/change/"+strconv.FormatInt(tt.id, 10), nil))
				if rec.Code != http.StatusOK {
					t.Fatalf("the change call: %d %s", rec.Code, rec.Body)
				}
			}
			rec := get(t, tt.h, path(tt.id))
			if rec.Code != tt.status {
				t.Fatalf("%d %s, want %d", rec.Code, rec.Body, tt.status)
			}
			if tt.status != http.StatusOK {
				if rec.Header().Get("Retry-After") == "" {
					t.Error("a 503 without Retry-After")
				}
				return
			}
			if got := rec.Header().Get("Cache-Control"); got != httpapi.CacheAvatarUnconfirmed {
				t.Errorf("a stale picture's Cache-Control %q", got)
			}
			if got := rec.Header().Get("ETag"); got != before {
				t.Errorf("ETag %s, served before the stall %s", got, before)
			}
		})
	}
}

// holdEnd is a pgx tracer that, once armed, holds the end of the next statement: the
// statement has read its rows (its snapshot is taken) and its caller waits for release.
type holdEnd struct {
	armed   atomic.Bool
	ended   chan struct{} // closed when the held statement has read its rows
	release chan struct{}
}

func newHoldEnd() *holdEnd {
	return &holdEnd{ended: make(chan struct{}), release: make(chan struct{})}
}

func (h *holdEnd) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return ctx
}

func (h *holdEnd) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {
	if h.armed.CompareAndSwap(true, false) {
		close(h.ended)
		<-h.release
	}
}

// TestStaleForgets: what a container last read of a user is not served through a
// database stall once it no longer stands: after the container read User not found
// (the user deleted), and after the change call came while the container's read was
// in flight (the read may hold the replaced reference). Both are 503 with the database
// frozen, as for a container that never served the user.
func TestStaleForgets(t *testing.T) {
	w := newWorld(t)
	hold := newHoldEnd()
	users, f := frozenUsers(t, w, "postgres-stale-forgets", postgres.WithTracer(hold))
	handler := func() http.Handler {
		d := cdn.Deps{Users: users, Files: w.files, CacheBytes: 1 << 20, RefMaxAge: -1, StaleFor: time.Hour}
		return httpapi.Wrap(httpapi.NewMux(cdn.Routes(d)), httpapi.Options{Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	}
	path := func(id int64) string { return "/user/avatar/" + strconv.FormatInt(id, 10) }
	ctx := context.Background()

	// A container serves the member's picture, then reads them deleted.
	deleted := handler()
	w.upload(t, demo.MemberUserID, avatartest.Base64(avatartest.JPEG(t, 300, 300)))
	if rec := get(t, deleted, path(demo.MemberUserID)); rec.Code != http.StatusOK {
		t.Fatalf("before the deletion: %d %s", rec.Code, rec.Body)
	}
	if err := w.db.DeleteUser(ctx, demo.MemberUserID, demo.AdminUserID); err != nil {
		t.Fatal(err)
	}
	if rec := get(t, deleted, path(demo.MemberUserID)); rec.Code != http.StatusNotFound {
		t.Fatalf("after the deletion: %d %s, want 404", rec.Code, rec.Body)
	}

	// Another container, which holds the editor's picture, reads the editor's
	// reference again; the read has read the row when the picture is replaced and the
	// change call reaches that container; then it ends, and answers with the picture
	// it holds.
	raced := handler()
	if rec := get(t, raced, path(w.pngUser)); rec.Code != http.StatusOK {
		t.Fatalf("before the change: %d %s", rec.Code, rec.Body)
	}
	hold.armed.Store(true)
	answered := make(chan int)
	go func() {
		rec := httptest.NewRecorder()
		raced.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path(w.pngUser), nil))
		answered <- rec.Code
	}()
	<-hold.ended
	w.upload(t, w.pngUser, avatartest.Base64(avatartest.PNG(t, 200, 200, true)))
	if rec := testenv.Do(t, raced, testenv.Request(http.MethodPost, "/user/avatar/change/"+strconv.FormatInt(w.pngUser, 10), nil)); rec.Code != http.StatusOK {
		t.Fatalf("the change call: %d %s", rec.Code, rec.Body)
	}
	close(hold.release)
	if code := <-answered; code != http.StatusOK {
		t.Fatalf("the read the change call raced: %d", code)
	}

	f.Freeze(true)
	t.Cleanup(func() { f.Freeze(false) })
	tests := []struct {
		name string
		h    http.Handler
		id   int64
	}{
		{"read as deleted since", deleted, demo.MemberUserID},
		{"changed while read", raced, w.pngUser},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := get(t, tt.h, path(tt.id))
			if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" {
				t.Fatalf("%d %.80q (Retry-After %q), want 503 with Retry-After", rec.Code, rec.Body, rec.Header().Get("Retry-After"))
			}
		})
	}
}
