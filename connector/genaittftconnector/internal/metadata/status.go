// Package metadata holds the component's identity, written by hand from
// metadata.yaml (mdatagen is not available to this build).
package metadata // import "github.com/otelcol-ttft/otelcol-ttft/connector/genaittftconnector/internal/metadata"

import (
	"go.opentelemetry.io/collector/component"
)

var (
	// Type is the connector's component type. Never rename it.
	Type = component.MustNewType("genai_ttft")
	// ScopeName is the instrumentation scope of the emitted and own metrics.
	ScopeName = "github.com/otelcol-ttft/otelcol-ttft/connector/genaittftconnector"
)

const (
	TracesToMetricsStability = component.StabilityLevelDevelopment
	LogsToMetricsStability   = component.StabilityLevelDevelopment
	TracesToLogsStability    = component.StabilityLevelDevelopment
	// MetricsToMetricsStability: TTFT histograms that gateways and servers export.
	MetricsToMetricsStability = component.StabilityLevelDevelopment
)
