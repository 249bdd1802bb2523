package bench

import (
	"context"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/translator/prometheusremotewrite"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-ttft/otelcol-ttft/connector/genaittftconnector"
	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// The exported exponential histograms (scale up to 20) must convert to valid
// Prometheus native histograms: the remote-write translator downscales to
// schema 8 and keeps every count.
func TestHistogramsConvertForRemoteWrite(t *testing.T) {
	td := Corpus(5000, 20, 3)
	// Extremes widen the range so the histograms downscale on their own too.
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	spans.At(0).Attributes().PutDouble(record.KeyTimeToFirstContent, 1e-6)
	spans.At(1).Attributes().PutDouble(record.KeyDuration, 3600)

	f := genaittftconnector.NewFactory()
	clock := clockwork.NewFakeClockAt(corpusStart)
	sink := new(consumertest.MetricsSink)
	c, err := f.CreateTracesToMetrics(clockwork.AddToContext(context.Background(), clock),
		connectortest.NewNopSettings(f.Type()), f.CreateDefaultConfig(), sink)
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, c.Start(ctx, nopHost{}))
	defer func() { require.NoError(t, c.Shutdown(ctx)) }()
	require.NoError(t, clock.BlockUntilContext(ctx, 1))
	require.NoError(t, c.ConsumeTraces(ctx, td))
	clock.Advance(15 * time.Second)
	require.Eventually(t, func() bool { return len(sink.AllMetrics()) == 1 }, 10*time.Second, time.Millisecond)
	md := sink.AllMetrics()[0]

	scales := map[int32]int{}
	var wantCount uint64
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		ms := rms.At(i).ScopeMetrics().At(0).Metrics()
		for j := 0; j < ms.Len(); j++ {
			if ms.At(j).Type() != pmetric.MetricTypeExponentialHistogram {
				continue
			}
			dps := ms.At(j).ExponentialHistogram().DataPoints()
			for k := 0; k < dps.Len(); k++ {
				scales[dps.At(k).Scale()]++
				wantCount += dps.At(k).Count()
			}
		}
	}
	t.Logf("exported scales (scale: data points): %v", scales)
	require.NotEmpty(t, scales)

	tss, err := prometheusremotewrite.FromMetrics(md, prometheusremotewrite.Settings{AddMetricSuffixes: true})
	require.NoError(t, err)
	var gotCount uint64
	histograms := 0
	for _, ts := range tss {
		for _, h := range ts.Histograms {
			histograms++
			assert.LessOrEqual(t, h.Schema, int32(8))
			assert.GreaterOrEqual(t, h.Schema, int32(-4))
			n := h.GetZeroCountInt()
			var cur int64
			for _, d := range h.PositiveDeltas {
				cur += d
				require.GreaterOrEqual(t, cur, int64(0), "bucket counts stay non-negative")
				n += uint64(cur)
			}
			assert.Equal(t, h.GetCountInt(), n, "buckets add up to the count")
			gotCount += n
		}
	}
	assert.Positive(t, histograms)
	assert.Equal(t, wantCount, gotCount, "no observation lost in conversion")
}
