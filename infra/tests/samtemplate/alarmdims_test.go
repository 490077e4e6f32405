package samtemplate_test

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/mediacatalog/service/shared/cdn"
	"github.com/mediacatalog/service/shared/telemetry"
)

// published: the sets of dimensions AWS publishes metrics under, for each namespace the
// template alarms on (a metric name, or "" for every metric of the namespace). An alarm
// on any other set watches a metric that never gets a data point, and with
// TreatMissingData notBreaching it never fires. Sources, AWS's documentation:
//   - AWS/ApiGateway, HTTP APIs: "Monitor CloudWatch metrics for HTTP APIs in API
//     Gateway" (apigateway/latest/developerguide/http-api-metrics.html): ApiId; ApiId,
//     Stage; and ApiId, Method, Resource, Stage, the route-level metrics, published only
//     for a stage with detailed metrics on. (Route is no dimension of HTTP APIs.)
//   - AWS/Lambda: "Types of metrics for Lambda functions"
//     (lambda/latest/dg/monitoring-metrics-types.html): FunctionName; FunctionName,
//     Resource (function:alias or :version); FunctionName, Resource, ExecutedVersion
//     (alias invocations only).
//   - AWS/DynamoDB: "DynamoDB Metrics and dimensions"
//     (amazondynamodb/latest/developerguide/metrics-dimensions.html): SystemErrors by
//     TableName, Operation; WriteThrottleEvents by TableName (and TableName,
//     GlobalSecondaryIndexName for an index).
//   - AWS/RDS, RDS Proxy: "Monitoring RDS Proxy metrics with Amazon CloudWatch"
//     (AmazonRDS/latest/UserGuide/rds-proxy.monitoring.html): ProxyName; ProxyName,
//     EndpointName; ProxyName, TargetGroup, Target; ProxyName, TargetGroup, TargetRole.
//   - MediaCatalog: the service's own, from its embedded metric format documents: the
//     cdn's invalidation failures (shared/cdn/metrics.go) and every request's
//     (shared/telemetry/metrics.go), each under its function's Lambda name.
var published = map[string]map[string][][]string{
	"AWS/ApiGateway": {"": {{"ApiId"}, {"ApiId", "Stage"}, {"ApiId", "Method", "Resource", "Stage"}}},
	"AWS/Lambda":     {"": {{"FunctionName"}, {"FunctionName", "Resource"}, {"ExecutedVersion", "FunctionName", "Resource"}}},
	"AWS/DynamoDB": {
		"SystemErrors":        {{"Operation", "TableName"}},
		"WriteThrottleEvents": {{"TableName"}, {"GlobalSecondaryIndexName", "TableName"}},
	},
	"AWS/RDS":      {"": {{"ProxyName"}, {"EndpointName", "ProxyName"}, {"ProxyName", "Target", "TargetGroup"}, {"ProxyName", "TargetGroup", "TargetRole"}}},
	"MediaCatalog": {"InvalidationFailures": {{cdn.MetricDimension}}, "": telemetry.DimensionSets},
}

// metricOf is one metric an alarm reads.
type metricOf struct {
	namespace, name string
	dims            map[string]any
}

// alarmMetrics lists the metrics an alarm's properties read: its own, or each
// MetricStat of its Metrics.
func alarmMetrics(p map[string]any) []metricOf {
	dims := func(v any) map[string]any {
		out := map[string]any{}
		for _, d := range anyList(v) {
			m := d.(map[string]any)
			out[fmt.Sprint(m["Name"])] = m["Value"]
		}
		return out
	}
	if ns, ok := p["Namespace"]; ok {
		return []metricOf{{fmt.Sprint(ns), fmt.Sprint(p["MetricName"]), dims(p["Dimensions"])}}
	}
	var out []metricOf
	for _, q := range anyList(p["Metrics"]) {
		ms, _ := q.(map[string]any)["MetricStat"].(map[string]any)
		if ms == nil {
			continue
		}
		m := ms["Metric"].(map[string]any)
		out = append(out, metricOf{fmt.Sprint(m["Namespace"]), fmt.Sprint(m["MetricName"]), dims(m["Dimensions"])})
	}
	return out
}

// TestAlarmDimensionsPublished: every metric every alarm of the transformed template
// reads is one AWS publishes (the table above): its dimension set is one of its
// namespace's; route-level API metrics come with detailed metrics on the stage; the
// service's own metric is counted per stack (the alarm names this stack's function).
func TestAlarmDimensionsPublished(t *testing.T) {
	for _, set := range paramSets {
		cfn, _ := transformed(t, set)
		alarms := cfn.OfType("AWS::CloudWatch::Alarm")
		if len(alarms) == 0 {
			t.Fatalf("%s: no alarms", set)
		}
		routeLevel := false
		for _, id := range alarms {
			for _, m := range alarmMetrics(cfn.Resources[id].Properties) {
				names := make([]string, 0, len(m.dims))
				for k := range m.dims {
					names = append(names, k)
				}
				sort.Strings(names)
				byMetric, ok := published[m.namespace]
				if !ok {
					t.Errorf("%s %s: namespace %s is not in the table of published metrics", set, id, m.namespace)
					continue
				}
				sets, ok := byMetric[m.name]
				if !ok {
					sets = byMetric[""]
				}
				if !slices.ContainsFunc(sets, func(s []string) bool { return slices.Equal(s, names) }) {
					t.Errorf("%s %s: %s %s by %v, which AWS does not publish (it publishes %v)", set, id, m.namespace, m.name, names, sets)
				}
				if m.namespace == "AWS/ApiGateway" && slices.Contains(names, "Method") {
					routeLevel = true
					if r := fmt.Sprint(m.dims["Resource"]); !strings.HasPrefix(r, "/") || strings.Contains(r, " ") {
						t.Errorf("%s %s: Resource %q is not a route's path", set, id, r)
					}
				}
				if fn := fmt.Sprint(m.dims[cdn.MetricDimension]); m.namespace == "MediaCatalog" && (!strings.HasPrefix(fn, "map[Ref:") || !strings.HasSuffix(fn, "Function]")) {
					t.Errorf("%s %s: %s=%v is not one of this stack's functions: another stack's metric would page here", set, id, cdn.MetricDimension, m.dims[cdn.MetricDimension])
				}
			}
		}
		if routeLevel {
			var stage map[string]any
			for _, id := range cfn.OfType("AWS::ApiGatewayV2::Stage") {
				stage = cfn.Resources[id].Properties
			}
			drs, _ := stage["DefaultRouteSettings"].(map[string]any)
			if drs["DetailedMetricsEnabled"] != true {
				t.Errorf("%s: alarms read route-level API metrics, but the stage's detailed metrics are %v", set, drs["DetailedMetricsEnabled"])
			}
		}
	}
}
