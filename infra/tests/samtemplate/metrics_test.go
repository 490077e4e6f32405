package samtemplate_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/mediacatalog/service/infra/tests/samtemplate"
	"github.com/mediacatalog/service/shared/routegroups"
	"github.com/mediacatalog/service/shared/telemetry"
)

// serviceMetrics are the metric names the code writes in telemetry.Namespace.
var serviceMetrics = []string{
	telemetry.MetricDuration, telemetry.MetricDBTime, telemetry.MetricStatements, telemetry.MetricRefusals,
	telemetry.MetricCacheHit, telemetry.MetricCacheMiss, telemetry.MetricImageTime, telemetry.MetricProviderErrors,
	telemetry.MetricBreakerRefusals,
	"InvalidationFailures", // shared/cdn's own document
}

// isDimensionSet reports whether names (in any order) are one of the code's
// dimension sets: a metric the template reads under other dimensions has no data.
func isDimensionSet(names []string) bool {
	slices.Sort(names)
	for _, set := range telemetry.DimensionSets {
		s := slices.Sorted(slices.Values(set))
		if slices.Equal(s, names) {
			return true
		}
	}
	return false
}

// TestServiceMetrics holds the alarms and the dashboard to the metrics the code writes:
// the namespace, each metric's name, its dimensions one of the sets every document
// declares, its FunctionName one of this stack's functions (a !Ref: the Lambda's own
// name, so that two stacks in one account never share a metric); the refusals and
// database-time alarms watch every function.
func TestServiceMetrics(t *testing.T) {
	tpl := loadTemplate(t)
	var functions []string // "!Ref <logical id>" of the route groups' functions
	for _, g := range routegroups.All() {
		for id, f := range tpl.Functions {
			if f.Name == g.Name {
				functions = append(functions, "!Ref "+id)
			}
		}
	}
	watched := map[string][]string{} // alarm -> functions
	for id, r := range tpl.Resources {
		if samtemplate.Scalar(samtemplate.Get(r, "Type")) != "AWS::CloudWatch::Alarm" {
			continue
		}
		mappings(samtemplate.Get(r, "Properties"), func(m *yaml.Node) {
			ns := samtemplate.Scalar(samtemplate.Get(m, "Namespace"))
			if ns == "" || strings.HasPrefix(ns, "AWS/") {
				return
			}
			if ns != telemetry.Namespace {
				t.Errorf("%s: namespace %q, the code writes %q", id, ns, telemetry.Namespace)
			}
			if name := samtemplate.Scalar(samtemplate.Get(m, "MetricName")); !slices.Contains(serviceMetrics, name) {
				t.Errorf("%s: metric %q is not one the code writes", id, name)
			}
			var names []string
			dims := samtemplate.Get(m, "Dimensions")
			for _, d := range dims.Content {
				name, value := samtemplate.Scalar(samtemplate.Get(d, "Name")), samtemplate.Scalar(samtemplate.Get(d, "Value"))
				names = append(names, name)
				if name == telemetry.DimFunction {
					if !slices.Contains(functions, value) {
						t.Errorf("%s: FunctionName %q is no !Ref of a function", id, value)
					}
					watched[id] = append(watched[id], value)
				}
			}
			if !isDimensionSet(names) {
				t.Errorf("%s: dimensions %v are not a set the code declares %v", id, names, telemetry.DimensionSets)
			}
		})
	}
	for _, id := range []string{"RefusalsAlarm", "DatabaseTimeAlarm"} {
		if got := slices.Sorted(slices.Values(watched[id])); !slices.Equal(got, slices.Sorted(slices.Values(functions))) {
			t.Errorf("%s watches %v, want every function", id, got)
		}
	}

	body := samtemplate.Scalar(samtemplate.Get(tpl.Resources["Dashboard"], "Properties", "DashboardBody"))
	searches := regexp.MustCompile(`SEARCH\('\{([^}]*)\} MetricName=\(?([^']*?)\)?'`).FindAllStringSubmatch(body, -1)
	if len(searches) < 4 {
		t.Fatalf("the dashboard searches %d of the service's metrics, want the routes' p99, database time, statements, refusals", len(searches))
	}
	for _, s := range searches {
		parts := strings.Split(s[1], ",")
		if parts[0] != telemetry.Namespace || !isDimensionSet(parts[1:]) {
			t.Errorf("dashboard search {%s}: not the namespace %s with a dimension set of the code", s[1], telemetry.Namespace)
		}
		for _, name := range regexp.MustCompile(`\\?"(\w+)\\?"`).FindAllStringSubmatch(s[2], -1) {
			if !slices.Contains(serviceMetrics, name[1]) {
				t.Errorf("dashboard search for %q: not a metric the code writes", name[1])
			}
		}
	}
}

// TestLogging: every function logs in Lambda's JSON format, and Lambda filters no
// higher than INFO, the level it gives the lines whose level it does not know (the
// EMF documents, the AUDIT records), which must never be dropped.
func TestLogging(t *testing.T) {
	tpl := loadTemplate(t)
	lc := samtemplate.Get(tpl.Root, "Globals", "Function", "LoggingConfig")
	if got := samtemplate.Scalar(samtemplate.Get(lc, "LogFormat")); got != "JSON" {
		t.Errorf("LoggingConfig.LogFormat %q", got)
	}
	for id, f := range tpl.Functions {
		if samtemplate.Get(f.Props, "LoggingConfig") != nil {
			t.Errorf("%s has a LoggingConfig of its own", id)
		}
	}
	levels := samtemplate.Get(tpl.Root, "Mappings", "LogLevels")
	for _, param := range []string{"debug", "info", "warn", "error"} {
		got := samtemplate.Scalar(samtemplate.Get(levels, param, "Lambda"))
		if want := map[bool]string{true: "DEBUG", false: "INFO"}[param == "debug"]; got != want {
			t.Errorf("LogLevel %s: ApplicationLogLevel %q, want %s", param, got, want)
		}
	}
}

// mappings calls f on every mapping node under n.
func mappings(n *yaml.Node, f func(*yaml.Node)) {
	if n == nil {
		return
	}
	if n.Kind == yaml.MappingNode {
		f(n)
	}
	for _, c := range n.Content {
		mappings(c, f)
	}
}
