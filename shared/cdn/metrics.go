package cdn

import (
	"log/slog"
	"os"
	"time"

	"github.com/mediacatalog/service/shared/telemetry"
)

// MetricsNamespace is the CloudWatch namespace of the service's own metrics.
const MetricsNamespace = telemetry.Namespace

// MetricDimension is the one dimension of the service's own metrics: the function's
// name, which Lambda gives each function (AWS_LAMBDA_FUNCTION_NAME) and the template
// prefixes with the stack's, so that each stack's alarm counts its own failures only
// (several stacks may share an account). "cdn" where Lambda sets none (make run).
const MetricDimension = "FunctionName"

// recordFailure counts one failure under metric name as a CloudWatch embedded metric
// format log line: CloudWatch Logs turns the "_aws" member of a JSON log line into a
// metric, no API call from the function (template.yaml alarms on it). Written by hand
// because the format is this one object and the SDK has no EMF writer.
func recordFailure(log *slog.Logger, name string) {
	function := os.Getenv("AWS_LAMBDA_FUNCTION_NAME")
	if function == "" {
		function = "cdn"
	}
	log.Error("metric "+name,
		"_aws", map[string]any{
			"Timestamp": time.Now().UnixMilli(),
			"CloudWatchMetrics": []map[string]any{{
				"Namespace":  MetricsNamespace,
				"Dimensions": [][]string{{MetricDimension}},
				"Metrics":    []map[string]string{{"Name": name, "Unit": "Count"}},
			}},
		},
		MetricDimension, function,
		name, 1)
}
