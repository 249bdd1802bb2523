package genaittftconnector

import (
	"context"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-ttft/otelcol-ttft/internal/promfixture"
)

// bifrostBatch is the grown Bifrost exposition as the prometheus receiver
// delivers it (every family; 15 TTFT histogram points among them).
func bifrostBatch(b *testing.B, temporality pmetric.AggregationTemporality) pmetric.Metrics {
	raw := readFixture(b)
	grown, err := promfixture.Grow(raw, promfixture.BifrostTTFT, 2000, 0.3)
	if err != nil {
		b.Fatal(err)
	}
	md := promToMetrics(parseProm(b, grown), time.Time{}, testStart)
	ms := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
	for i := 0; i < ms.Len(); i++ {
		if ms.At(i).Type() == pmetric.MetricTypeHistogram {
			ms.At(i).Histogram().SetAggregationTemporality(temporality)
		}
	}
	return md
}

// BenchmarkConsumeMetricsBifrost: one scrape of the grown Bifrost exposition
// per op, TTFT points as delta increments, so every op windows all 15.
func BenchmarkConsumeMetricsBifrost(b *testing.B) {
	md := bifrostBatch(b, pmetric.AggregationTemporalityDelta)
	clock := clockwork.NewFakeClockAt(testStart)
	c, _ := newMetricsConnector(b, defaultConfig(), clock, nil)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = c.ConsumeMetrics(ctx, md)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*md.DataPointCount()), "ns/point")
}

// BenchmarkWalkMetricsBaseline visits every data point and attribute of the
// same batch and nothing else: the floor for any metrics consumer.
func BenchmarkWalkMetricsBaseline(b *testing.B) {
	md := bifrostBatch(b, pmetric.AggregationTemporalityDelta)
	b.ReportAllocs()
	b.ResetTimer()
	var n int
	for i := 0; i < b.N; i++ {
		ms := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
		for j := 0; j < ms.Len(); j++ {
			m := ms.At(j)
			var attrs []pcommon.Map
			switch m.Type() {
			case pmetric.MetricTypeHistogram:
				dps := m.Histogram().DataPoints()
				for k := 0; k < dps.Len(); k++ {
					attrs = append(attrs, dps.At(k).Attributes())
					n += dps.At(k).BucketCounts().Len()
				}
			case pmetric.MetricTypeGauge:
				dps := m.Gauge().DataPoints()
				for k := 0; k < dps.Len(); k++ {
					attrs = append(attrs, dps.At(k).Attributes())
				}
			}
			for _, a := range attrs {
				a.Range(func(k string, v pcommon.Value) bool { n += len(k) + len(v.Str()); return true })
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*md.DataPointCount()), "ns/point")
	_ = n
}
