package telemetry

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"time"
)

// Namespace is the CloudWatch namespace of the service's metrics.
const Namespace = "MediaCatalog"

// The dimensions of every document: the function, the route's pattern ("GET /tags",
// "unmatched" when no route took the request), its method and the status class
// ("2xx"…"5xx"). The request and trace ids are properties of the document, searchable
// in the logs, never dimensions (each value would be a metric of its own).
const (
	DimFunction    = "Function"
	DimRoute       = "Route"
	DimMethod      = "Method"
	DimStatusClass = "StatusClass"
)

// DimensionSets are the aggregations CloudWatch keeps: per function (its alarms), per
// route (p99 per route on the dashboard), per route and status class.
var DimensionSets = [][]string{
	{DimFunction},
	{DimFunction, DimRoute, DimMethod},
	{DimFunction, DimRoute, DimMethod, DimStatusClass},
}

// The metrics every request reports, and those its work adds.
const (
	MetricDuration   = "Duration"     // ms, the request through the middleware
	MetricDBTime     = "DatabaseTime" // ms, the request's statements, added up
	MetricStatements = "Statements"   // count
	MetricRefusals   = "Refusals"     // count: 403 answers, the access rules' refusals
	MetricCacheHit   = "CacheHit"     // count: the cdn's image cache
	MetricCacheMiss  = "CacheMiss"
	MetricImageTime  = "ImageProcessingTime" // ms: decoding and scaling an upload
	// MetricProviderErrors counts OAuth provider calls that failed or answered 5xx.
	MetricProviderErrors = "ProviderErrors"
)

// maxMetrics bounds the names one document carries: EMF takes 100 per document.
const maxMetrics = 100

// UnitMilliseconds and UnitCount are the units Add and Time report.
const (
	UnitMilliseconds = "Milliseconds"
	UnitCount        = "Count"
)

// value is one metric of a request: its name, unit and the sum of what was added.
type value struct {
	name, unit string
	v          float64
}

// values are a request's metrics beyond the fixed ones, in the order first added.
type values struct {
	mu   sync.Mutex
	list []value
}

func (vs *values) add(name, unit string, v float64) {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	for i := range vs.list {
		if vs.list[i].name == name {
			vs.list[i].v += v
			return
		}
	}
	if len(vs.list) < maxMetrics-4 { // beside Duration, DatabaseTime, Statements, Refusals
		vs.list = append(vs.list, value{name, unit, v})
	}
}

// Add adds v to the request's metric name (a count: cache hits, a breaker's
// refusals, its state). Outside a request it does nothing. Names are constants of
// the code, never data: each is a metric of its own.
func Add(ctx context.Context, name string, v float64) {
	if st := stateOf(ctx); st != nil {
		st.values.add(name, UnitCount, v)
	}
}

// Time adds d to the request's time metric name, in milliseconds.
func Time(ctx context.Context, name string, d time.Duration) {
	if st := stateOf(ctx); st != nil {
		st.values.add(name, UnitMilliseconds, float64(d.Microseconds())/1000)
	}
}

// emf writes the request's EMF document as one line.
func (st *request) emf(method string, status int, duration float64) []byte {
	st.values.mu.Lock()
	defer st.values.mu.Unlock()
	st.db.mu.Lock()
	dbTime, statements := float64(st.db.time.Microseconds())/1000, st.db.count
	st.db.mu.Unlock()
	refusals := 0.0
	if status == 403 {
		refusals = 1
	}
	type metric struct {
		Name string `json:"Name"`
		Unit string `json:"Unit"`
	}
	ms := []metric{{MetricDuration, UnitMilliseconds}, {MetricDBTime, UnitMilliseconds},
		{MetricStatements, UnitCount}, {MetricRefusals, UnitCount}}
	doc := map[string]any{
		DimFunction: function, DimRoute: st.route, DimMethod: method, DimStatusClass: statusClass(status),
		MetricDuration: duration, MetricDBTime: dbTime, MetricStatements: statements, MetricRefusals: refusals,
		"requestId": st.requestID, "traceId": st.traceID, "status": status,
	}
	for _, v := range st.values.list {
		ms = append(ms, metric{v.name, v.unit})
		doc[v.name] = v.v
	}
	doc["_aws"] = map[string]any{
		"Timestamp": time.Now().UnixMilli(),
		"CloudWatchMetrics": []any{map[string]any{
			"Namespace": Namespace, "Dimensions": DimensionSets, "Metrics": ms,
		}},
	}
	b, _ := json.Marshal(doc)
	return append(b, '\n')
}

func statusClass(status int) string {
	if status < 100 || status > 599 {
		return "5xx" // no answer written: the server's failure
	}
	return strconv.Itoa(status/100) + "xx"
}
