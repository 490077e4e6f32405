package telemetry

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/trace"
)

// Namespace is the CloudWatch namespace of the service's metrics.
const Namespace = "MediaCatalog"

// The dimensions of every document: the function (its Lambda name, which carries the
// stack's, so that stacks sharing an account never share a metric), the route's pattern ("GET /tags",
// "unmatched" when no route took the request), its method and the status class
// ("2xx"…"5xx"). The request and trace ids are properties of the document, searchable
// in the logs, never dimensions (each value would be a metric of its own).
const (
	DimFunction    = "FunctionName"
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
	// MetricBreakerRefusals counts the dependency calls of a request that an open
	// circuit breaker refused at once (shared/dependency): a dependency known down.
	MetricBreakerRefusals = "BreakerRefusals"
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
// refusals, its state). Outside a request, or in a process that writes no EMF
// document (make run's server), it does nothing. Names are constants of the code,
// never data: each is a metric of its own.
func Add(ctx context.Context, name string, v float64) {
	if st := recorded(ctx); st != nil {
		st.values.add(name, UnitCount, v)
	}
}

// Time adds d to the request's time metric name, in milliseconds; as Add, only where
// a document will carry it.
func Time(ctx context.Context, name string, d time.Duration) {
	if st := recorded(ctx); st != nil {
		st.values.add(name, UnitMilliseconds, float64(d.Microseconds())/1000)
	}
}

// dimensionSets is DimensionSets in JSON, written once.
var dimensionSets = func() string {
	b, _ := json.Marshal(DimensionSets)
	return string(b)
}()

// emf writes the request's EMF document as one line. It is appended by hand: every
// request writes one, and encoding/json's map of it cost more than the request's spans.
func (st *request) emf(b []byte, method string, status int, duration float64, traceID trace.TraceID) []byte {
	st.values.mu.Lock()
	defer st.values.mu.Unlock()
	st.db.mu.Lock()
	dbTime, statements := float64(st.db.time.Microseconds())/1000, st.db.count
	st.db.mu.Unlock()
	refusals := 0
	if status == 403 {
		refusals = 1
	}
	b = append(b, `{"_aws":{"Timestamp":`...)
	b = strconv.AppendInt(b, time.Now().UnixMilli(), 10)
	b = append(b, `,"CloudWatchMetrics":[{"Namespace":"`+Namespace+`","Dimensions":`...)
	b = append(b, dimensionSets...)
	b = append(b, `,"Metrics":[{"Name":"`+MetricDuration+`","Unit":"`+UnitMilliseconds+`"},{"Name":"`+MetricDBTime+
		`","Unit":"`+UnitMilliseconds+`"},{"Name":"`+MetricStatements+`","Unit":"`+UnitCount+
		`"},{"Name":"`+MetricRefusals+`","Unit":"`+UnitCount+`"}`...)
	for _, v := range st.values.list {
		b = append(b, `,{"Name":`...)
		b = appendString(b, v.name)
		b = append(b, `,"Unit":"`...)
		b = append(b, v.unit...)
		b = append(b, `"}`...)
	}
	b = append(b, `]}]},"`+DimFunction+`":`...)
	b = appendString(b, metricFunction)
	b = append(b, `,"`+DimRoute+`":`...)
	b = appendString(b, st.route)
	b = append(b, `,"`+DimMethod+`":`...)
	b = appendString(b, method)
	b = append(b, `,"`+DimStatusClass+`":"`...)
	b = append(b, statusClass(status)...)
	b = append(b, `","`+MetricDuration+`":`...)
	b = strconv.AppendFloat(b, duration, 'f', -1, 64)
	b = append(b, `,"`+MetricDBTime+`":`...)
	b = strconv.AppendFloat(b, dbTime, 'f', -1, 64)
	b = append(b, `,"`+MetricStatements+`":`...)
	b = strconv.AppendInt(b, int64(statements), 10)
	b = append(b, `,"`+MetricRefusals+`":`...)
	b = strconv.AppendInt(b, int64(refusals), 10)
	for _, v := range st.values.list {
		b = append(b, ',')
		b = appendString(b, v.name)
		b = append(b, ':')
		b = strconv.AppendFloat(b, v.v, 'f', -1, 64)
	}
	b = append(b, `,"requestId":`...)
	b = appendString(b, st.requestID)
	b = append(b, `,"traceId":"`...)
	if traceID.IsValid() {
		b = appendXRayTraceID(b, traceID)
	}
	b = append(b, '"')
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(status), 10)
	return append(b, "}\n"...)
}

// appendXRayTraceID appends id in X-Ray's form (TraceID).
func appendXRayTraceID(b []byte, id trace.TraceID) []byte {
	b = append(b, "1-"...)
	b = hex.AppendEncode(b, id[:4])
	b = append(b, '-')
	return hex.AppendEncode(b, id[4:])
}

// appendString appends s as a JSON string.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b = append(b, '\\', byte(r))
		case r < 0x20:
			b = append(b, `\u00`...)
			b = append(b, "0123456789abcdef"[r>>4], "0123456789abcdef"[r&0xf])
		default:
			b = utf8.AppendRune(b, r)
		}
	}
	return append(b, '"')
}

func statusClass(status int) string {
	if status < 100 || status > 599 {
		return "5xx" // no answer written: the server's failure
	}
	return strconv.Itoa(status/100) + "xx"
}
