package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/dependency"
	"github.com/mediacatalog/service/shared/httpapi"
)

// TestDependencyDown: a request that a dependency failed (its breaker open, so the call
// is refused, or a call that timed out) is answered with Retry-After: a read 503
// Service temporarily unavailable, a write the status and message its route gives an
// unexpected failure; a request whose dependencies answered keeps its 500 without
// Retry-After, and a client error stays what it is.
func TestDependencyDown(t *testing.T) {
	down := dependency.NewBreaker("down", nil)
	for range dependency.Trips {
		_, end, err := down.Begin(context.Background(), 0)
		if err != nil {
			t.Fatal(err)
		}
		end(context.DeadlineExceeded)
	}
	up := dependency.NewBreaker("up", nil)
	callDown := func(ctx context.Context) error {
		_, _, err := down.Begin(ctx, 0)
		return err
	}
	callTimesOut := func(ctx context.Context) error {
		_, end, err := up.Begin(ctx, 0)
		if err != nil {
			return err
		}
		err = fmt.Errorf("query: %w", context.DeadlineExceeded)
		end(err)
		return err
	}
	callFails := func(ctx context.Context) error {
		_, end, err := up.Begin(ctx, 0)
		if err != nil {
			return err
		}
		err = errors.New("not a dependency's fault")
		end(err)
		return err
	}
	tests := []struct {
		name       string
		method     string
		call       func(context.Context) error
		wrap       func(error) error
		status     int
		msg        string
		retryAfter bool
	}{
		{"a read, breaker open", "GET", callDown, nil, 503, apperr.MsgUnavailable, true},
		{"a read, a call timed out", "GET", callTimesOut, nil, 503, apperr.MsgUnavailable, true},
		{"a write, breaker open", "POST", callDown, nil, 500, apperr.MsgInternal, true},
		{"a write with its route's message", "DELETE", callDown,
			func(err error) error {
				return apperr.InternalAs(err, "An error occurred while deleting the contributor")
			},
			500, "An error occurred while deleting the contributor", true},
		{"a read, an ordinary failure", "GET", callFails, nil, 500, apperr.MsgInternal, false},
		{"a read, a 404 after a timeout", "GET", callTimesOut,
			func(err error) error { return apperr.Wrap(apperr.NotFound, "Thing not found", err) }, 404, "Thing not found", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := httpapi.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				err := tt.call(r.Context())
				if tt.wrap != nil {
					err = tt.wrap(err)
				}
				httpapi.Error(w, r, err)
			}), httpapi.Options{})
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(tt.method, "/things", strings.NewReader("{}"))
			req.Header.Set("Content-Type", "application/json")
			h.ServeHTTP(rec, req)
			var body httpapi.Response
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatalf("not a Response Model: %q", rec.Body)
			}
			if rec.Code != tt.status || body.Code != tt.status || body.Data != tt.msg {
				t.Errorf("%d %+v, want %d %q", rec.Code, body, tt.status, tt.msg)
			}
			if got := rec.Header().Get("Retry-After") != ""; got != tt.retryAfter {
				t.Errorf("Retry-After %q, want one: %v", rec.Header().Get("Retry-After"), tt.retryAfter)
			}
		})
	}
}
