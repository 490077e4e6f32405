package lambdahttp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/mediacatalog/service/shared/lambdahttp"
	"github.com/mediacatalog/service/shared/readiness"
)

// TestEntry: the Lambda entry answers the readiness payload with the function's
// readiness (not ready without one) and serves every API Gateway event through the
// handler, whatever fields it carries beside; a payload decodes as the runtime decodes
// it (JSON into Invocation).
func TestEntry(t *testing.T) {
	served := 0
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served++
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"data":"Success","code":200}`))
	})
	ready := func(context.Context) readiness.Result {
		return readiness.Result{Ready: true, Checks: []readiness.Check{{Name: "postgres", OK: true}}}
	}
	apiEvent, err := lambdahttp.Call{Method: "GET", RouteKey: "GET /tags", Path: "/tags", UserAgent: "t"}.Event()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		payload []byte
		ready   lambdahttp.Readiness
		want    string
		served  int
	}{
		{"a readiness probe", readiness.Payload, ready, `{"ready":true,"checks":[{"name":"postgres","ok":true,"ms":0}]}`, 0},
		{"a probe, no readiness", readiness.Payload, nil, `{"ready":false,"checks":[]}`, 0},
		{"an API event", apiEvent, ready, `"statusCode":200`, 1},
		{"an API event with the field null", append(apiEvent[:len(apiEvent)-1:len(apiEvent)-1], []byte(`,"readinessProbe":null}`)...), ready, `"statusCode":200`, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			served = 0
			var inv lambdahttp.Invocation
			if err := json.Unmarshal(tc.payload, &inv); err != nil {
				t.Fatal(err)
			}
			out, err := lambdahttp.Entry(h, tc.ready)(context.Background(), inv)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(out)
			if got := string(b); !strings.Contains(got, tc.want) || served != tc.served {
				t.Errorf("answer %s (handler served %d), want %s (%d)", got, served, tc.want, tc.served)
			}
		})
	}
}
