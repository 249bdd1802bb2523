package owntel

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// An entry with both a sum and a gauge block is neither a counter nor a
// gauge.
func TestInstrumentsRefuseBothTypes(t *testing.T) {
	const both = `
telemetry:
  metrics:
    test_both:
      description: Both blocks.
      unit: "1"
      sum:
        value_type: int
      gauge:
        value_type: int
`
	meter := sdkmetric.NewMeterProvider().Meter("test")
	var c metric.Int64Counter
	var g metric.Int64Gauge
	err := Instruments(meter, []byte(both), map[string]*metric.Int64Counter{"test_both": &c}, nil)
	assert.ErrorContains(t, err, "test_both: metadata.yaml gives another type")
	err = Instruments(meter, []byte(both), nil, map[string]*metric.Int64Gauge{"test_both": &g})
	assert.ErrorContains(t, err, "test_both: metadata.yaml gives another type")
}

// A gauge carries its metadata.yaml description.
func TestGaugeDescription(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	meter := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)).Meter("test")
	var series metric.Int64Gauge
	require.NoError(t, Instruments(meter, []byte(testMetadata), nil, map[string]*metric.Int64Gauge{"test_series": &series}))
	series.Record(context.Background(), 1)
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	require.Len(t, rm.ScopeMetrics, 1)
	require.Len(t, rm.ScopeMetrics[0].Metrics, 1)
	assert.Equal(t, "Series held.", rm.ScopeMetrics[0].Metrics[0].Description)
}
