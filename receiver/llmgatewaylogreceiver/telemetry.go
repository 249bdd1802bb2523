package llmgatewaylogreceiver // import "github.com/otelcol-ttft/otelcol-ttft/receiver/llmgatewaylogreceiver"

import (
	"context"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

const scopeName = "github.com/otelcol-ttft/otelcol-ttft/receiver/llmgatewaylogreceiver"

// Internal telemetry names (metadata.yaml lists them).
const (
	metricRowsSkipped = "otelcol_receiver_llm_gateway_log_rows_skipped"
	metricRowsMapped  = "otelcol_receiver_llm_gateway_log_rows_mapped"
)

// telemetry counts rows by fate through the collector's own MeterProvider.
type telemetry struct {
	skippedRows metric.Int64Counter
	mappedRows  metric.Int64Counter
	format      attribute.KeyValue
	mappedOpt   metric.MeasurementOption

	mu      sync.Mutex
	reasons map[string]metric.MeasurementOption
}

func newTelemetry(set component.TelemetrySettings, format string) (*telemetry, error) {
	meter := set.MeterProvider.Meter(scopeName)
	skipped, err := meter.Int64Counter(metricRowsSkipped,
		metric.WithDescription("Gateway rows skipped, by reason (column_count, bad_ttft, unknown_status, malformed_json, ...)."),
		metric.WithUnit("{row}"))
	if err != nil {
		return nil, err
	}
	mapped, err := meter.Int64Counter(metricRowsMapped,
		metric.WithDescription("Gateway rows turned into request records."),
		metric.WithUnit("{row}"))
	if err != nil {
		return nil, err
	}
	f := attribute.String("format", format)
	return &telemetry{
		skippedRows: skipped, mappedRows: mapped, format: f,
		mappedOpt: metric.WithAttributeSet(attribute.NewSet(f)),
		reasons:   map[string]metric.MeasurementOption{},
	}, nil
}

func (t *telemetry) skipped(ctx context.Context, reason string) {
	t.mu.Lock()
	opt, ok := t.reasons[reason]
	if !ok {
		opt = metric.WithAttributeSet(attribute.NewSet(t.format, attribute.String("reason", reason)))
		t.reasons[reason] = opt
	}
	t.mu.Unlock()
	t.skippedRows.Add(ctx, 1, opt)
}

func (t *telemetry) mapped(ctx context.Context, n int64) { t.mappedRows.Add(ctx, n, t.mappedOpt) }
