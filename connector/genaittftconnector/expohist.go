package genaittftconnector // import "github.com/otelcol-ttft/otelcol-ttft/connector/genaittftconnector"

import (
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-ttft/otelcol-ttft/internal/expohist"
)

// copyExpoHistogram writes an aggregated histogram into a data point. The
// scale may be up to 20 here; Prometheus accepts 8 at most, and both the
// prometheus and prometheusremotewrite exporters downscale by merging
// buckets (scale > 8 → 8), so the data point stays valid for them. Scale
// never drops below -4 (their floor): 160 buckets at scale -4 span more than
// the whole float64 range. buf is scratch for the bucket counts, reused
// from data point to data point (FromRaw copies them).
func copyExpoHistogram(h *expohist.Histogram, dp pmetric.ExponentialHistogramDataPoint, buf *[]uint64) {
	dp.SetCount(h.Count())
	dp.SetSum(h.Sum())
	if h.Count() > 0 {
		dp.SetMin(h.Min())
		dp.SetMax(h.Max())
	}
	dp.SetZeroCount(h.ZeroCount())
	dp.SetScale(h.Scale())
	out := dp.Positive()
	out.SetOffset(h.Offset())
	*buf = h.AppendBucketCounts((*buf)[:0])
	out.BucketCounts().FromRaw(*buf)
	// Values are never negative (records with negative times are rejected),
	// so the negative range stays empty.
}
