// Package metadata holds the component's identity, written by hand from
// metadata.yaml (mdatagen is not available to this build).
package metadata // import "github.com/otelcol-ttft/otelcol-ttft/processor/genaittftprocessor/internal/metadata"

import (
	"go.opentelemetry.io/collector/component"
)

var (
	// Type is the processor's component type. Never rename it.
	Type = component.MustNewType("genai_ttft")
	// ScopeName is the instrumentation scope of the processor's own telemetry.
	ScopeName = "github.com/otelcol-ttft/otelcol-ttft/processor/genaittftprocessor"
)

const (
	TracesStability = component.StabilityLevelAlpha
	LogsStability   = component.StabilityLevelAlpha
)
