package awsapi_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mediacatalog/service/shared/awsapi"
	"github.com/mediacatalog/service/shared/awsapi/awsapitest"
)

// check reads the stand-in's answers: the status, and a Retryable flag in a header.
func check(resp *awsapi.Response) error {
	if resp.Status == http.StatusOK {
		return nil
	}
	return &awsapi.Error{Status: resp.Status, Code: "E" + strconv.Itoa(resp.Status), Retryable: resp.Header.Get("Retryable") == "yes"}
}

type answer struct {
	status    int
	retryable bool
}

func TestRetries(t *testing.T) {
	tests := []struct {
		name      string
		answers   []answer // the last one repeats
		wantCalls int32
		wantCode  string // "" for success
	}{
		{"success", []answer{{200, false}}, 1, ""},
		{"server error, then success", []answer{{503, false}, {200, false}}, 2, ""},
		{"throttled three times", []answer{{429, false}}, 3, "E429"},
		{"client error", []answer{{400, false}}, 1, "E400"},
		{"retryable client error, then success", []answer{{400, true}, {400, true}, {200, false}}, 3, ""},
		{"not found", []answer{{404, false}}, 1, "E404"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				awsapitest.VerifySignature(t, r, body, "svc", "eu-west-1")
				a := tt.answers[min(int(calls.Add(1))-1, len(tt.answers)-1)]
				if a.retryable {
					w.Header().Set("Retryable", "yes")
				}
				w.WriteHeader(a.status)
			}))
			defer srv.Close()
			c := awsapi.New("svc", "eu-west-1", srv.URL, os.Getenv)
			_, err := c.Do(context.Background(), awsapi.Request{Method: http.MethodPut, URL: c.Endpoint() + "/a/b?x=1", Body: []byte("payload")}, check)
			switch {
			case tt.wantCode == "" && err != nil:
				t.Errorf("Do: %v", err)
			case tt.wantCode != "" && !awsapi.IsCode(err, tt.wantCode):
				t.Errorf("Do: %v, want code %s", err, tt.wantCode)
			}
			if got := calls.Load(); got != tt.wantCalls {
				t.Errorf("%d attempts, want %d", got, tt.wantCalls)
			}
		})
	}
}

// A refused connection is tried again, and given up after three attempts, quickly.
func TestConnectionRefused(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	dead := srv.URL
	srv.Close()
	c := awsapi.New("svc", "eu-west-1", dead, os.Getenv)
	start := time.Now()
	_, err := c.Do(context.Background(), awsapi.Request{Method: http.MethodGet, URL: dead + "/"}, check)
	var e *awsapi.Error
	if err == nil || errors.As(err, &e) {
		t.Errorf("Do: %v, want a connection error", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("gave up after %v", d)
	}
}

// A cancelled context stops the retries.
func TestCancelled(t *testing.T) {
	var calls atomic.Int32
	ctx, cancel := context.WithCancel(context.Background())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		cancel()
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	c := awsapi.New("svc", "eu-west-1", srv.URL, os.Getenv)
	_, err := c.Do(ctx, awsapi.Request{Method: http.MethodGet, URL: srv.URL + "/"}, check)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Do: %v, want context.Canceled", err)
	}
	if calls.Load() != 1 {
		t.Errorf("%d attempts after the cancel, want 1", calls.Load())
	}
}
