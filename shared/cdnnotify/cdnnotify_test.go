package cdnnotify_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mediacatalog/service/infra/testenv"
	"github.com/mediacatalog/service/shared/cdn"
	"github.com/mediacatalog/service/shared/cdnnotify"
	"github.com/mediacatalog/service/shared/config"
	"github.com/mediacatalog/service/shared/httpapi"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func loadConfig(t *testing.T, env map[string]string) (config.Config, error) {
	t.Helper()
	return config.Load(func(k string) string { return env[k] })
}

// cdnHandler is the real cdn route group; the change route needs neither database nor
// bucket.
func cdnHandler() http.Handler {
	return httpapi.NewMux(cdn.Routes(cdn.Deps{CacheBytes: 1 << 20}))
}

func TestHTTPNotifier(t *testing.T) {
	var mu sync.Mutex
	var got []string
	status := http.StatusOK
	cdnRoutes := cdnHandler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.Path)
		s := status
		mu.Unlock()
		if s != http.StatusOK {
			httpapi.Message(w, r, s, "Internal server error")
			return
		}
		cdnRoutes.ServeHTTP(w, r)
	}))
	defer srv.Close()
	ctx := context.Background()

	n, err := cdnnotify.NewHTTPNotifier(srv.URL+"/", srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	if err := n.AvatarChanged(ctx, 42); err != nil {
		t.Fatalf("notify: %v", err)
	}
	if want := []string{"POST /user/avatar/change/42"}; len(got) != 1 || got[0] != want[0] {
		t.Errorf("cdn saw %v, want %v", got, want)
	}

	mu.Lock()
	status = http.StatusInternalServerError
	mu.Unlock()
	if err := n.AvatarChanged(ctx, 42); err == nil || !strings.Contains(err.Error(), "500") {
		t.Errorf("a 500 from the cdn: %v, want an error naming it", err)
	}

	// Nobody listening.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	_ = ln.Close()
	n, err = cdnnotify.NewHTTPNotifier(closed, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.AvatarChanged(ctx, 42); err == nil {
		t.Error("notifying a closed port succeeded")
	}

	for _, bad := range []string{"", "localhost:3000", "ftp://cdn.example", "http://"} {
		if _, err := cdnnotify.NewHTTPNotifier(bad, nil); err == nil {
			t.Errorf("NewHTTPNotifier(%q) accepted it", bad)
		}
	}
}

func TestNewNotifier(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string // the base the notifier posts to, "" for an error
	}{
		{"local: the API base", map[string]string{"DB_ENV": "local"}, "http://localhost:3000"},
		{"AWS: the API's URL", map[string]string{"API_URL": "https://api.example.com/"}, "https://api.example.com"},
		{"CDN_URL wins", map[string]string{"API_URL": "https://api.example.com", "CDN_URL": "http://127.0.0.1:3001"}, "http://127.0.0.1:3001"},
		{"CDN_URL not http(s)", map[string]string{"CDN_URL": "ftp://cdn.example.com"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := loadConfig(t, tc.env)
			if err != nil {
				t.Fatal(err)
			}
			var posted string
			client := &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
				posted = r.Method + " " + r.URL.String()
				return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader(`{"data":"Success","code":200}`))}, nil
			})}
			n, err := cdnnotify.NewNotifier(cfg, client)
			if tc.want == "" {
				if err == nil {
					t.Errorf("accepted %v", tc.env)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := n.AvatarChanged(context.Background(), 9); err != nil {
				t.Fatal(err)
			}
			if want := "POST " + tc.want + "/user/avatar/change/9"; posted != want {
				t.Errorf("posted %q, want %q", posted, want)
			}
		})
	}
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
