// Package genaittftprocessor stamps each GenAI call span and log record
// with its request record (docs/architecture.md §4, §5): first-content TTFT where the
// telemetry supports it, first-chunk TTFT kept apart, outcome, prompt band,
// attempts and timeline, as ttft.* attributes.
package genaittftprocessor // import "github.com/otelcol-ttft/otelcol-ttft/processor/genaittftprocessor"

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processorhelper"

	"github.com/otelcol-ttft/otelcol-ttft/processor/genaittftprocessor/internal/metadata"
)

// The processor writes attributes and may remove events.
var capabilities = consumer.Capabilities{MutatesData: true}

// NewFactory returns the genai_ttft processor factory.
func NewFactory() processor.Factory {
	return processor.NewFactory(
		metadata.Type,
		func() component.Config { return createDefaultConfig() },
		processor.WithTraces(createTraces, metadata.TracesStability),
		processor.WithLogs(createLogs, metadata.LogsStability),
	)
}

func createTraces(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Traces) (processor.Traces, error) {
	p, err := newProcessor(set, cfg.(*Config))
	if err != nil {
		return nil, err
	}
	return processorhelper.NewTraces(ctx, set, cfg, next, p.processTraces,
		processorhelper.WithCapabilities(capabilities),
		processorhelper.WithShutdown(p.shutdown))
}

func createLogs(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Logs) (processor.Logs, error) {
	p, err := newProcessor(set, cfg.(*Config))
	if err != nil {
		return nil, err
	}
	return processorhelper.NewLogs(ctx, set, cfg, next, p.processLogs,
		processorhelper.WithCapabilities(capabilities),
		processorhelper.WithShutdown(p.shutdown))
}
