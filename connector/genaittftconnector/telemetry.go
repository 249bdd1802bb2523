package genaittftconnector // import "github.com/otelcol-ttft/otelcol-ttft/connector/genaittftconnector"

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/otelcol-ttft/otelcol-ttft/connector/genaittftconnector/internal/metadata"
	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// telemetry is the connector's own metrics (see metadata.yaml).
type telemetry struct {
	records     metric.Int64Counter
	skipped     metric.Int64Counter
	overflowed  metric.Int64Counter
	series      metric.Int64Gauge
	rateLimited metric.Int64Counter
	histPoints  metric.Int64Counter
	invalid     metric.Int64Counter
	outOfRange  metric.Int64Counter

	kindAttrs    [numSeriesKinds]metric.MeasurementOption
	invalidAttrs [record.NumInvalid]metric.MeasurementOption
}

func newTelemetry(set component.TelemetrySettings) (*telemetry, error) {
	meter := set.MeterProvider.Meter(metadata.ScopeName)
	t := &telemetry{}
	var err, e error
	t.records, e = meter.Int64Counter("otelcol_connector_genai_ttft_records",
		metric.WithDescription("Request records aggregated into series."), metric.WithUnit("{record}"))
	err = errors.Join(err, e)
	t.skipped, e = meter.Int64Counter("otelcol_connector_genai_ttft_skipped",
		metric.WithDescription("Spans or log records not aggregated, by reason."), metric.WithUnit("{record}"))
	err = errors.Join(err, e)
	t.overflowed, e = meter.Int64Counter("otelcol_connector_genai_ttft_overflowed",
		metric.WithDescription("Records that landed in an overflow series (windows: were not windowed) because aggregation_cardinality_limit was reached."),
		metric.WithUnit("{record}"))
	err = errors.Join(err, e)
	t.series, e = meter.Int64Gauge("otelcol_connector_genai_ttft_series",
		metric.WithDescription("Series held in memory at the last flush, by kind."), metric.WithUnit("{series}"))
	err = errors.Join(err, e)
	t.rateLimited, e = meter.Int64Counter("otelcol_connector_genai_ttft_logs_rate_limited",
		metric.WithDescription("Warnings suppressed by the log rate limit."), metric.WithUnit("{log}"))
	err = errors.Join(err, e)
	t.histPoints, e = meter.Int64Counter("otelcol_connector_genai_ttft_histogram_points",
		metric.WithDescription("Recognised TTFT histogram data points that were read, by result."), metric.WithUnit("{point}"))
	err = errors.Join(err, e)
	t.invalid, e = meter.Int64Counter("otelcol_connector_genai_ttft_invalid_records",
		metric.WithDescription("Records read back from ttft.* attributes that broke a bound or closed set, by reason; each was derived afresh from its own evidence, never aggregated as is."),
		metric.WithUnit("{record}"))
	err = errors.Join(err, e)
	t.outOfRange, e = meter.Int64Counter("otelcol_connector_genai_ttft_window_values_out_of_range",
		metric.WithDescription("Window samples outside the range the windows resolve to 1% (below 1 ns or more than 32 octaves under the slice's largest value): folded into the lowest bucket."),
		metric.WithUnit("{value}"))
	err = errors.Join(err, e)
	for i := range record.NumInvalid {
		t.invalidAttrs[i] = metric.WithAttributeSet(attribute.NewSet(attribute.String("reason", i.String())))
	}
	for i, n := range seriesKindNames {
		t.kindAttrs[i] = metric.WithAttributeSet(attribute.NewSet(attribute.String("kind", n)))
	}
	return t, err
}

// report adds one batch's counts; called outside the connector lock.
func (t *telemetry) report(ctx context.Context, signal string, st *batchStats) {
	sig := attribute.String("signal", signal)
	if st.records > 0 {
		t.records.Add(ctx, st.records, metric.WithAttributes(sig))
	}
	for reason, n := range st.skipped {
		t.skipped.Add(ctx, n, metric.WithAttributes(sig, attribute.String("reason", reason)))
	}
	for k, n := range st.overflowed {
		if n > 0 {
			t.overflowed.Add(ctx, n, t.kindAttrs[k])
		}
	}
	for why, n := range st.invalid {
		if n > 0 {
			t.invalid.Add(ctx, n, t.invalidAttrs[why])
		}
	}
	if st.logsLimited > 0 {
		t.rateLimited.Add(ctx, st.logsLimited)
	}
}

// reportHistPoints adds one metrics batch's data point results.
func (t *telemetry) reportHistPoints(ctx context.Context, points map[string]int64) {
	for result, n := range points {
		t.histPoints.Add(ctx, n, metric.WithAttributes(attribute.String("result", result)))
	}
}

func (t *telemetry) reportSeries(ctx context.Context, n [numSeriesKinds]int64) {
	for k, v := range n {
		t.series.Record(ctx, v, t.kindAttrs[k])
	}
}

// logLimiter lets one warning per key through per interval, so a flood of
// bad records cannot flood the log; the rest are counted.
type logLimiter struct {
	mu       sync.Mutex
	interval time.Duration
	last     map[string]time.Time
}

func newLogLimiter(interval time.Duration) *logLimiter {
	return &logLimiter{interval: interval, last: map[string]time.Time{}}
}

// warn logs msg unless key was logged within the interval; it reports
// whether the warning was suppressed.
func (l *logLimiter) warn(logger *zap.Logger, now time.Time, key, msg string, fields ...zap.Field) (suppressed bool) {
	l.mu.Lock()
	last, ok := l.last[key]
	if ok && now.Sub(last) < l.interval {
		l.mu.Unlock()
		return true
	}
	l.last[key] = now
	l.mu.Unlock()
	logger.Warn(msg, fields...)
	return false
}
