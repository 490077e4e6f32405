package cdnnotify_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/awsconfig"
	"github.com/mediacatalog/service/shared/cdn"
	"github.com/mediacatalog/service/shared/cdnnotify"
	"github.com/mediacatalog/service/shared/config"
	"github.com/mediacatalog/service/shared/httpapi"
	"github.com/mediacatalog/service/shared/lambdahttp"
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

// lambdaStandIn speaks the Lambda Invoke API (POST /2015-03-31/functions/<name>/invocations)
// for the SDK's client pointed at it through its base endpoint, and runs the event
// through the real cdn function's Lambda entry.
type lambdaStandIn struct {
	t        *testing.T
	function string
	mu       sync.Mutex
	events   []events.APIGatewayV2HTTPRequest
	invTypes []string
	fail     string // "": run the cdn; "unhandled": a function error; "status": answer 500
}

func (l *lambdaStandIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/2015-03-31/functions/"+l.function+"/invocations" {
		w.Header().Set("X-Amzn-Errortype", "ResourceNotFoundException")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"Type":"User","message":"Function not found: `+r.URL.Path+`"}`)
		return
	}
	payload, _ := io.ReadAll(r.Body)
	var ev events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(payload, &ev); err != nil {
		l.t.Errorf("lambda stand-in: payload is not an API Gateway v2 event: %v", err)
	}
	l.mu.Lock()
	l.events = append(l.events, ev)
	l.invTypes = append(l.invTypes, r.Header.Get("X-Amz-Invocation-Type"))
	fail := l.fail
	l.mu.Unlock()
	w.Header().Set("X-Amz-Executed-Version", "$LATEST")
	switch fail {
	case "unhandled":
		w.Header().Set("X-Amz-Function-Error", "Unhandled")
		_, _ = io.WriteString(w, `{"errorMessage":"boom","errorType":"runtime.Error"}`)
		return
	case "status":
		_ = json.NewEncoder(w).Encode(events.APIGatewayV2HTTPResponse{StatusCode: 500, Body: `{"data":"Internal server error","code":500}`})
		return
	}
	resp, err := lambdahttp.Invoke(r.Context(), cdnHandler(), payload)
	if err != nil {
		l.t.Errorf("lambda stand-in: invoke: %v", err)
	}
	_ = json.NewEncoder(w).Encode(resp)
}

func TestLambdaNotifier(t *testing.T) {
	ctx := context.Background()
	stand := &lambdaStandIn{t: t, function: "media-catalog-cdn"}
	srv := httptest.NewServer(stand)
	defer srv.Close()
	cfg, err := loadConfig(t, map[string]string{"AVATAR_NOTIFIER": "lambda", "CDN_FUNCTION_NAME": stand.function,
		"AWS_ENDPOINT_URL_LAMBDA": srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	awsCfg := awsconfig.Load(cfg)
	n, err := cdnnotify.NewLambdaNotifier(awsCfg, stand.function, cfg.LambdaEndpoint)
	if err != nil {
		t.Fatal(err)
	}

	if err := n.AvatarChanged(ctx, 7); err != nil {
		t.Fatalf("notify: %v", err)
	}
	if len(stand.events) != 1 {
		t.Fatalf("%d invocations, want 1", len(stand.events))
	}
	ev := stand.events[0]
	if ev.Version != "2.0" || ev.RouteKey != "POST /user/avatar/change/{id}" || ev.RawPath != "/user/avatar/change/7" ||
		ev.PathParameters["id"] != "7" || ev.RequestContext.HTTP.Method != "POST" || ev.RequestContext.Stage != "$default" {
		t.Errorf("event %+v", ev)
	}
	if stand.invTypes[0] != "RequestResponse" {
		t.Errorf("invocation type %q, want RequestResponse", stand.invTypes[0])
	}

	for _, fail := range []string{"unhandled", "status"} {
		stand.mu.Lock()
		stand.fail = fail
		stand.mu.Unlock()
		if err := n.AvatarChanged(ctx, 7); err == nil {
			t.Errorf("%s: the notifier reported success", fail)
		}
	}

	n, err = cdnnotify.NewLambdaNotifier(awsCfg, "no-such-function", cfg.LambdaEndpoint)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.AvatarChanged(ctx, 7); err == nil {
		t.Error("invoking an unknown function succeeded")
	}
}

func TestNewNotifier(t *testing.T) {
	tests := []struct {
		name string
		o    cdnnotify.Options
		want string // the notifier's type, "" for an error
	}{
		{"http", cdnnotify.Options{Kind: "http", URL: "http://127.0.0.1:3000"}, "*cdnnotify.HTTPNotifier"},
		{"http without a URL", cdnnotify.Options{Kind: "http"}, ""},
		{"lambda", cdnnotify.Options{Kind: "lambda", Function: "cdn"}, "*cdnnotify.LambdaNotifier"},
		{"lambda without a function", cdnnotify.Options{Kind: "lambda"}, ""},
		{"neither", cdnnotify.Options{Kind: "sqs", Function: "cdn", URL: "http://127.0.0.1:3000"}, ""},
	}
	awsCfg := awsconfig.Load(config.Config{AWSRegion: "us-east-1"})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n, err := cdnnotify.NewNotifier(awsCfg, tc.o)
			got := ""
			if err == nil {
				got = typeName(n)
			}
			if got != tc.want {
				t.Errorf("notifier %q (error %v), want %q", got, err, tc.want)
			}
		})
	}
}

func typeName(v any) string {
	switch v.(type) {
	case *cdnnotify.HTTPNotifier:
		return "*cdnnotify.HTTPNotifier"
	case *cdnnotify.LambdaNotifier:
		return "*cdnnotify.LambdaNotifier"
	}
	return "other"
}
