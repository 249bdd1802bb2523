package genaittftconnector // import "github.com/otelcol-ttft/otelcol-ttft/connector/genaittftconnector"

import (
	"math"
	"strconv"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-ttft/otelcol-ttft/internal/band"
	"github.com/otelcol-ttft/otelcol-ttft/internal/bucketed"
	"github.com/otelcol-ttft/otelcol-ttft/internal/recommend"
	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
	"github.com/otelcol-ttft/otelcol-ttft/internal/window"
)

// Attributes of window gauges that come from bucketed (histogram) sources.
const (
	// attrQuantileBound says which bound of the quantile's interval a
	// ttft.quantile point is: lower (exclusive) or upper (inclusive).
	attrQuantileBound = "ttft.quantile.bound"
	// attrResolution says the series comes from buckets, not exact samples:
	// explicit_buckets or exponential_buckets.
	attrResolution = "ttft.resolution"
)

// bucketSeries is the window of one (dims, measured_at, observer,
// failed_over, bucket kind) fed by histogram inputs.
type bucketSeries struct {
	seriesHead
	measuredAt string
	w          *bucketed.Window
}

// bucketStore keeps the bucketed windows apart from the exact ones: a
// quantile from 16 buckets is an interval and must never be merged into a
// sketch of exact samples.
type bucketStore struct {
	cfg      *Config
	series   table[*bucketSeries]
	policies []recommend.Policy
	qlabels  []string
}

func newBucketStore(cfg *Config) *bucketStore {
	bs := &bucketStore{cfg: cfg, series: newTable[*bucketSeries](kindWindows, cfg.AggregationCardinalityLimit, false)}
	for _, p := range cfg.Policies {
		// Histograms hold the producer's TTFT only: policies on other
		// signals (chunk gaps, durations) have nothing to read here.
		if p.Signal == recommend.SignalTimeToFirstToken {
			bs.policies = append(bs.policies, p)
		}
	}
	for _, q := range cfg.Quantiles {
		bs.qlabels = append(bs.qlabels, strconv.FormatFloat(q, 'f', -1, 64))
	}
	return bs
}

func (bs *bucketStore) len() int { return bs.series.len() }

// observe enters an increment into the window of tgt and the source's
// labels; false when the cardinality limit kept it out.
func (bs *bucketStore) observe(tgt *target, inc *bucketed.Dist, measuredAt, observer string, failedOver bool, now time.Time, st *batchStats) bool {
	k := bs.series.keyFor(tgt)
	k.str(measuredAt)
	k.str(observer)
	k.flag(failedOver)
	k.buf = append(k.buf, byte(inc.Kind))
	s, _, ok := bs.series.get(tgt, 5, st, func(attrs pcommon.Map, _ bool) *bucketSeries {
		attrs.PutStr(record.KeyPromptBand, band.Unknown)
		attrs.PutStr(record.KeyMeasuredAt, measuredAt)
		attrs.PutStr(record.KeyObserver, observer)
		attrs.PutBool(attrFailedOver, failedOver)
		attrs.PutStr(attrResolution, inc.Kind.Resolution())
		return &bucketSeries{seriesHead: seriesHead{attrs: attrs}, measuredAt: measuredAt,
			w: bucketed.NewWindow(inc.Kind, bs.cfg.Window, bs.cfg.WindowSlices, bs.cfg.Histograms.MaxBuckets, now)}
	})
	if !ok {
		return false
	}
	s.lastSeen = now
	s.w.Add(inc, now)
	return true
}

// expire drops the windows that slid empty.
func (bs *bucketStore) expire(now time.Time) {
	bs.series.expire(now, 0, func(s *bucketSeries) bool { return s.w.Empty(now) })
}

// gaugeIn returns the gauge g in ms, appending it when absent, so
// bucketed points join the exact ones under one metric.
func gaugeIn(ms pmetric.MetricSlice, g gaugeSpec) pmetric.Metric {
	for i := 0; i < ms.Len(); i++ {
		if m := ms.At(i); m.Name() == g.name && m.Type() == pmetric.MetricTypeGauge {
			return m
		}
	}
	m := ms.AppendEmpty()
	newGauge(g).MoveTo(m)
	return m
}

// build appends the bucketed windows' gauges: samples, both bounds of each
// quantile, and per ttft policy the recommendation from the upper bound
// with its cut ratio (an upper bound too). No ttft.censored=true samples
// and no deadline margin: histograms carry neither outcomes nor durations.
func (bs *bucketStore) build(ms pmetric.MetricSlice, now time.Time) {
	if bs.series.len() == 0 {
		return
	}
	ts := pcommon.NewTimestampFromTime(now)
	var quantile, samples, recommended, cutRatio pmetric.Metric
	var have bool
	point := func(m pmetric.Metric, attrs pcommon.Map, v float64) pcommon.Map {
		dp := m.Gauge().DataPoints().AppendEmpty()
		attrs.CopyTo(dp.Attributes())
		dp.SetTimestamp(ts)
		dp.SetDoubleValue(v)
		return dp.Attributes()
	}
	bs.series.each(func(s *bucketSeries) {
		d := s.w.Snapshot(now)
		if d == nil || d.Total() == 0 {
			return
		}
		if !have {
			samples = gaugeIn(ms, gaugeSamples)
			quantile = gaugeIn(ms, gaugeQuantile)
			recommended = gaugeIn(ms, gaugeRecommended)
			cutRatio = gaugeIn(ms, gaugeCutRatio)
			have = true
		}
		n := d.Total()
		dp := samples.Gauge().DataPoints().AppendEmpty()
		s.attrs.CopyTo(dp.Attributes())
		dp.Attributes().PutBool(attrCensored, false)
		dp.SetTimestamp(ts)
		dp.SetIntValue(int64(min(n, math.MaxInt64)))
		for i, q := range bs.cfg.Quantiles {
			if n < window.MinSamples(q, bs.cfg.MinSamples) {
				continue
			}
			iv, ok := d.Quantile(q)
			if !ok {
				continue
			}
			iv = iv.Capped(bs.cfg.Derive.MaxTTFTSeconds)
			lo := point(quantile, s.attrs, iv.Lower)
			lo.PutStr(attrQuantile, bs.qlabels[i])
			lo.PutStr(attrQuantileBound, "lower")
			if !math.IsInf(iv.Upper, 1) {
				up := point(quantile, s.attrs, iv.Upper)
				up.PutStr(attrQuantile, bs.qlabels[i])
				up.PutStr(attrQuantileBound, "upper")
			}
		}
		for _, p := range bs.policies {
			if !p.Accepts(s.measuredAt) {
				continue
			}
			r := bucketed.Evaluate(p, d, bs.cfg.MinSamples, bs.cfg.Derive.MaxTTFTSeconds)
			if !r.OK {
				continue
			}
			ra := point(recommended, s.attrs, r.Seconds)
			ra.PutStr(attrPolicy, p.Name)
			ra.PutStr(attrQuantileBound, "upper")
			point(cutRatio, s.attrs, r.CutRatio).PutStr(attrPolicy, p.Name)
		}
	})
	// Drop gauges this call created but left empty.
	ms.RemoveIf(func(m pmetric.Metric) bool {
		return m.Type() == pmetric.MetricTypeGauge && m.Gauge().DataPoints().Len() == 0
	})
}
