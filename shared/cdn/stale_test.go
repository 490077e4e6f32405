package cdn_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/mediacatalog/service/infra/tests/tcpfreeze"
	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/cdn"
	"github.com/mediacatalog/service/shared/deadlines"
	"github.com/mediacatalog/service/shared/dependency"
	"github.com/mediacatalog/service/shared/httpapi"
	"github.com/mediacatalog/service/shared/postgres"
)

// TestStale: with the database frozen, a container serves the picture it last read a
// user's reference for, within StaleFor, with a one-minute Cache-Control and the same
// ETag; a user it never served, a read older than StaleFor, and a user whose change
// call it received since are 503 with Retry-After.
func TestStale(t *testing.T) {
	w := newWorld(t)
	u, err := url.Parse(w.db.URL)
	if err != nil || u.Host == "" {
		t.Skipf("the test database is not reached over TCP (%s): nothing to freeze", w.db.URL)
	}
	f := tcpfreeze.New(t, u.Host)
	u.Host = f.Addr()
	users, err := postgres.Open(context.Background(), u.String(),
		postgres.WithGuard(dependency.NewBreaker("postgres-stale", nil), deadlines.CallTimeout))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(users.Close)
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
