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
	metricRowsSkipped   = "otelcol_receiver_llm_gateway_log_rows_skipped"
	metricRowsMapped    = "otelcol_receiver_llm_gateway_log_rows_mapped"
	metricRowsFolded    = "otelcol_receiver_llm_gateway_log_rows_folded"
	metricFallbackWaits = "otelcol_receiver_llm_gateway_log_fallback_waits"
	metricTTFTRejected  = "otelcol_receiver_llm_gateway_log_ttft_rejected"
)

// telemetry counts rows by fate through the collector's own MeterProvider.
type telemetry struct {
	skippedRows  metric.Int64Counter
	mappedRows   metric.Int64Counter
	foldedRows   metric.Int64Counter
	waits        metric.Int64Counter
	ttftRejects  metric.Int64Counter
	format       attribute.KeyValue
	formatOption metric.MeasurementOption

	mu      sync.Mutex
	options map[attribute.KeyValue]metric.MeasurementOption
}

func newTelemetry(set component.TelemetrySettings, format string) (*telemetry, error) {
	meter := set.MeterProvider.Meter(scopeName)
	f := attribute.String("format", format)
	t := &telemetry{
		format: f, formatOption: metric.WithAttributeSet(attribute.NewSet(f)),
		options: map[attribute.KeyValue]metric.MeasurementOption{},
	}
	for _, c := range []struct {
		dst              *metric.Int64Counter
		name, desc, unit string
	}{
		{&t.skippedRows, metricRowsSkipped, "Gateway rows skipped, by reason (column_count, bad_ttft, unknown_status, malformed_json, ...).", "{row}"},
		{&t.mappedRows, metricRowsMapped, "Gateway rows turned into request records.", "{row}"},
		{&t.foldedRows, metricRowsFolded, "Gateway rows folded into the record of another row of the same request (a fallback attempt and the request it served).", "{row}"},
		{&t.waits, metricFallbackWaits, "Requests whose rows were held for a linked fallback row, by how the wait ended (matched, expired, evicted, replaced, stopped).", "{request}"},
		{&t.ttftRejects, metricTTFTRejected, "Gateway rows whose TTFT was not kept, by reason (not_streamed, duration_as_ttft, after_end, first_token_at_end, timeout_first_token).", "{row}"},
	} {
		var err error
		if *c.dst, err = meter.Int64Counter(c.name, metric.WithDescription(c.desc), metric.WithUnit(c.unit)); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// option is the attribute set {format, kv}, built once per value.
func (t *telemetry) option(kv attribute.KeyValue) metric.MeasurementOption {
	t.mu.Lock()
	defer t.mu.Unlock()
	opt, ok := t.options[kv]
	if !ok {
		opt = metric.WithAttributeSet(attribute.NewSet(t.format, kv))
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
