package telemetry

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"
)

// TestEMFDocument: the hand-written document is the JSON it means, with the request's
// added metrics declared and valued, and text that needs escaping escaped.
func TestEMFDocument(t *testing.T) {
	for _, tc := range []struct {
		name   string
		route  string
		status int
		add    map[string]float64
		want   map[string]any
	}{
		{"plain", "GET /tags", 200, nil, map[string]any{
			"Route": "GET /tags", "StatusClass": "2xx", "Statements": 2.0, "Refusals": 0.0, "status": 200.0}},
		{"refused, with metrics added", "POST /admin-roles/add", 403, map[string]float64{"CacheHit": 1, "BreakerOpen": 2},
			map[string]any{"Route": "POST /admin-roles/add", "StatusClass": "4xx", "Refusals": 1.0, "CacheHit": 1.0, "BreakerOpen": 2.0}},
		{"escaped", "GET /\"x\"\\\n", 500, nil, map[string]any{"Route": "GET /\"x\"\\\n", "StatusClass": "5xx"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &request{route: tc.route, requestID: "r-1"}
			traceID, _ := trace.TraceIDFromHex("5759e988bd862e3fe1be46a994272793")
			st.db.count = 2
			for k, v := range tc.add {
				st.values.add(k, UnitCount, v)
			}
			var doc map[string]any
			if err := json.Unmarshal(st.emf(nil, "GET", tc.status, 1.5, traceID), &doc); err != nil {
				t.Fatal(err)
			}
			for k, v := range tc.want {
				if !reflect.DeepEqual(doc[k], v) {
					t.Errorf("%s = %#v, want %#v", k, doc[k], v)
				}
			}
			aws := doc["_aws"].(map[string]any)["CloudWatchMetrics"].([]any)[0].(map[string]any)
			if aws["Namespace"] != Namespace || len(aws["Metrics"].([]any)) != 4+len(tc.add) {
				t.Errorf("declaration %v", aws)
			}
			if doc["requestId"] != "r-1" || doc["traceId"] != "1-5759e988-bd862e3fe1be46a994272793" || doc["Duration"] != 1.5 {
				t.Errorf("ids and duration: %v", doc)
			}
		})
	}
}

// TestDimensionsBounded: what a client chooses (an unknown path, a made-up method)
// never becomes a dimension's value: each value would be a metric of its own, billed.
func TestDimensionsBounded(t *testing.T) {
	var buf bufWriter
	metrics, function = &buf, "tags"
	defer func() { metrics, function = nil, "" }()
	h := Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
	}), func(*http.Request) string { return "r-1" })
	for _, tc := range []struct{ method, path, wantMethod string }{
		{"GET", "/no/such/path/8f3a", "GET"},
		{"FROBNICATE", "/tags", "other"},
	} {
		buf.b = nil
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(tc.method, tc.path, nil))
		var doc map[string]any
		if err := json.Unmarshal(buf.b, &doc); err != nil {
			t.Fatal(err)
		}
		if doc[DimRoute] != unmatched || doc[DimMethod] != tc.wantMethod {
			t.Errorf("%s %s: Route %v, Method %v; want %s, %s", tc.method, tc.path, doc[DimRoute], doc[DimMethod], unmatched, tc.wantMethod)
		}
	}
}

type bufWriter struct{ b []byte }

func (w *bufWriter) Write(p []byte) (int, error) { w.b = append(w.b, p...); return len(p), nil }

// TestAddWhereWritten: a request's added metrics are kept only in a process that writes
// its EMF document; make run's server, which writes none, keeps nothing.
func TestAddWhereWritten(t *testing.T) {
	saved := metrics
	t.Cleanup(func() { metrics = saved })
	for _, tc := range []struct {
		name   string
		writer *bufWriter
		want   []value
	}{
		{"no metric writer", nil, nil},
		{"EMF documents written", &bufWriter{}, []value{{MetricCacheHit, UnitCount, 2}, {MetricImageTime, UnitMilliseconds, 1.5}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			metrics = nil
			if tc.writer != nil {
				metrics = tc.writer
			}
			st := &request{Context: context.Background()}
			Add(st, MetricCacheHit, 1)
			Add(st, MetricCacheHit, 1)
			Time(st, MetricImageTime, 1500*time.Microsecond)
			if !reflect.DeepEqual(st.values.list, tc.want) {
				t.Errorf("values %v, want %v", st.values.list, tc.want)
			}
		})
	}
}
