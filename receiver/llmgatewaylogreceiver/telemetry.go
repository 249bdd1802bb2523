package llmgatewaylogreceiver // import "github.com/otelcol-ttft/otelcol-ttft/receiver/llmgatewaylogreceiver"

import (
	"context"
	_ "embed" // metadata.yaml
	"strings"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/otelcol-ttft/otelcol-ttft/internal/owntel"
)

const scopeName = "github.com/otelcol-ttft/otelcol-ttft/receiver/llmgatewaylogreceiver"

// Internal telemetry names (metadata.yaml lists them).
const (
	metricRowsSkipped   = "otelcol_receiver_llm_gateway_log_rows_skipped"
	metricRowsMapped    = "otelcol_receiver_llm_gateway_log_rows_mapped"
	metricRowsFolded    = "otelcol_receiver_llm_gateway_log_rows_folded"
	metricFallbackWaits = "otelcol_receiver_llm_gateway_log_fallback_waits"
	metricTTFTRejected  = "otelcol_receiver_llm_gateway_log_ttft_rejected"
	metricValuesRefused = "otelcol_receiver_llm_gateway_log_values_rejected"
)

// telemetry counts rows by fate through the collector's own MeterProvider.
type telemetry struct {
	skippedRows  metric.Int64Counter
	mappedRows   metric.Int64Counter
	foldedRows   metric.Int64Counter
	waits        metric.Int64Counter
	ttftRejects  metric.Int64Counter
	valueRejects metric.Int64Counter
	format       attribute.KeyValue
	formatOption metric.MeasurementOption

	mu      sync.Mutex
	options map[attribute.KeyValue]metric.MeasurementOption
}

// metadataYAML lists the own telemetry's names, descriptions and units.
//
//go:embed metadata.yaml
var metadataYAML []byte

func newTelemetry(set component.TelemetrySettings, format string) (*telemetry, error) {
	f := attribute.String("format", format)
	t := &telemetry{
		format: f, formatOption: owntel.Attrs(f),
		options: map[attribute.KeyValue]metric.MeasurementOption{},
	}
	err := owntel.Instruments(set.MeterProvider.Meter(scopeName), metadataYAML, map[string]*metric.Int64Counter{
		strings.TrimPrefix(metricRowsSkipped, owntel.Prefix):   &t.skippedRows,
		strings.TrimPrefix(metricRowsMapped, owntel.Prefix):    &t.mappedRows,
		strings.TrimPrefix(metricRowsFolded, owntel.Prefix):    &t.foldedRows,
		strings.TrimPrefix(metricFallbackWaits, owntel.Prefix): &t.waits,
		strings.TrimPrefix(metricTTFTRejected, owntel.Prefix):  &t.ttftRejects,
		strings.TrimPrefix(metricValuesRefused, owntel.Prefix): &t.valueRejects,
	}, nil)
	if err != nil {
		return nil, err
	}
	return t, nil
}

// option is the attribute set {format, kv}, built once per value.
func (t *telemetry) option(kv attribute.KeyValue) metric.MeasurementOption {
	t.mu.Lock()
	defer t.mu.Unlock()
	opt, ok := t.options[kv]
	if !ok {
		opt = owntel.Attrs(t.format, kv)
		t.options[kv] = opt
	}
	return opt
}

func (t *telemetry) skipped(ctx context.Context, reason string) {
	t.skippedRows.Add(ctx, 1, t.option(attribute.String("reason", reason)))
}

func (t *telemetry) mapped(ctx context.Context, n int64) { t.mappedRows.Add(ctx, n, t.formatOption) }

func (t *telemetry) folded(ctx context.Context, n int64) { t.foldedRows.Add(ctx, n, t.formatOption) }

func (t *telemetry) fallbackWait(ctx context.Context, result string) {
	t.waits.Add(ctx, 1, t.option(attribute.String("result", result)))
}

func (t *telemetry) ttftRejected(ctx context.Context, reason string) {
	t.ttftRejects.Add(ctx, 1, t.option(attribute.String("reason", reason)))
}

func (t *telemetry) valueRejected(ctx context.Context, reason string) {
	t.valueRejects.Add(ctx, 1, t.option(attribute.String("reason", reason)))
}
