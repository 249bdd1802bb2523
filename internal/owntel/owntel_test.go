package owntel

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

const testMetadata = `
type: test
telemetry:
  metrics:
    test_rows:
      enabled: true
      description: Rows read.
      unit: "{row}"
      sum:
        value_type: int
        monotonic: true
    test_series:
      enabled: true
      description: Series held.
      unit: "{series}"
      gauge:
        value_type: int
    test_untyped:
      enabled: true
      description: No instrument type.
      unit: "{call}"
`

func TestInstrumentsFromMetadata(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	meter := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)).Meter("test")
	var rows metric.Int64Counter
	var series metric.Int64Gauge
	require.NoError(t, Instruments(meter, []byte(testMetadata),
		map[string]*metric.Int64Counter{"test_rows": &rows}, map[string]*metric.Int64Gauge{"test_series": &series}))
	ctx := context.Background()
	rows.Add(ctx, 3, Attrs(attribute.String("reason", "x")))
	rows.Add(ctx, 2, AddOpts(attribute.String("reason", "x"))...)
	series.Record(ctx, 7)

	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(ctx, &rm))
	require.Len(t, rm.ScopeMetrics, 1)
	got := map[string]metricdata.Metrics{}
	for _, m := range rm.ScopeMetrics[0].Metrics {
		got[m.Name] = m
	}
	r := got["otelcol_test_rows"]
	assert.Equal(t, "Rows read.", r.Description)
	assert.Equal(t, "{row}", r.Unit)
	sum := r.Data.(metricdata.Sum[int64])
	require.Len(t, sum.DataPoints, 1, "both options carry the same attribute set")
	assert.Equal(t, int64(5), sum.DataPoints[0].Value)
	g := got["otelcol_test_series"]
	assert.Equal(t, "{series}", g.Unit)
	assert.Equal(t, int64(7), g.Data.(metricdata.Gauge[int64]).DataPoints[0].Value)
}

func TestInstrumentsRefuseWhatMetadataDoesNotList(t *testing.T) {
	meter := sdkmetric.NewMeterProvider().Meter("test")
	var c metric.Int64Counter
	var g metric.Int64Gauge
	err := Instruments(meter, []byte(testMetadata), map[string]*metric.Int64Counter{"test_missing": &c}, nil)
	assert.ErrorContains(t, err, "test_missing is not in metadata.yaml")
	err = Instruments(meter, []byte(testMetadata), map[string]*metric.Int64Counter{"test_series": &c}, nil)
	assert.ErrorContains(t, err, "test_series: metadata.yaml gives another type")
	err = Instruments(meter, []byte(testMetadata), nil, map[string]*metric.Int64Gauge{"test_rows": &g})
	assert.ErrorContains(t, err, "test_rows: metadata.yaml gives another type")
	err = Instruments(meter, []byte(testMetadata), map[string]*metric.Int64Counter{"test_untyped": &c}, nil)
	assert.ErrorContains(t, err, "test_untyped: metadata.yaml gives another type", "a counter needs its sum block")
	err = Instruments(meter, []byte(testMetadata), nil, map[string]*metric.Int64Gauge{"test_untyped": &g})
	assert.ErrorContains(t, err, "test_untyped: metadata.yaml gives another type", "a gauge needs its gauge block")
	assert.Error(t, Instruments(meter, []byte("telemetry: ["), nil, nil))
}

func TestWarnLimiterOnePerKeyPerInterval(t *testing.T) {
	core, logs := observer.New(zap.WarnLevel)
	logger := zap.New(core)
	l := NewWarnLimiter(time.Minute)
	t0 := time.Unix(1_700_000_000, 0)
	assert.False(t, l.Warn(logger, t0, "a", "first a"))
	assert.True(t, l.Warn(logger, t0.Add(59*time.Second), "a", "again a"), "within the interval")
	assert.False(t, l.Warn(logger, t0.Add(30*time.Second), "b", "first b"), "keys are limited apart")
	assert.False(t, l.Warn(logger, t0.Add(time.Minute), "a", "a after a minute"))
	var msgs []string
	for _, e := range logs.All() {
		msgs = append(msgs, e.Message)
	}
	assert.Equal(t, []string{"first a", "first b", "a after a minute"}, msgs)

	// Allow and Warn share one budget per key.
	assert.False(t, l.Allow(t0.Add(time.Minute+time.Second), "a"), "a was just logged")
	assert.True(t, l.Allow(t0.Add(time.Minute), "c"))
	assert.True(t, l.Warn(logger, t0.Add(time.Minute), "c", "c after Allow"))
	assert.True(t, l.Allow(t0.Add(2*time.Minute), "c"))
	assert.Len(t, logs.All(), 3)
}
