package cdn

import (
	"log/slog"
	"time"

	"github.com/mediacatalog/service/shared/telemetry"
)

// MetricsNamespace is the CloudWatch namespace of the service's own metrics.
const MetricsNamespace = telemetry.Namespace

// recordFailure counts one failure under metric name as a CloudWatch embedded metric
// format log line: CloudWatch Logs turns the "_aws" member of a JSON log line into a
// metric, no API call from the function (template.yaml alarms on it). Written by hand
// because the format is this one object and the SDK has no EMF writer.
func recordFailure(log *slog.Logger, name string) {
	log.Error("metric "+name,
		"_aws", map[string]any{
			"Timestamp": time.Now().UnixMilli(),
			"CloudWatchMetrics": []map[string]any{{
				"Namespace":  MetricsNamespace,
				"Dimensions": [][]string{{"Function"}},
				"Metrics":    []map[string]string{{"Name": name, "Unit": "Count"}},
			}},
		},
		"Function", "cdn",
		name, 1)
}
