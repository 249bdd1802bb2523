package genaittftconnector // import "github.com/otelcol-ttft/otelcol-ttft/connector/genaittftconnector"

import (
	"math"
	"slices"
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
// failed_over, bucket kind) fed by histogram inputs: one sub-window per
// bucket layout, so a point of a layout the others share no bounds with
// cannot coarsen the window of the series' real traffic (one point with
// disjoint bounds made every quantile (0, +Inf] for a window's length).
type bucketSeries struct {
	seriesHead
	measuredAt string
	layouts    []*layoutWindow
}

// maxLayouts caps the sub-windows of one series: an upgrade that changes
// the layout needs two; more is a misconfiguration or a forger.
const maxLayouts = 4

// layoutWindow is the window of one bucket layout: explicit points with
// exactly these bounds, or exponential points of scale ≥ 0 (fine) or
// below (coarse: each bucket spans a factor of 4 or more).
type layoutWindow struct {
	bounds []float64
	coarse bool
	w      *bucketed.Window
}

// expoCoarse reports whether an exponential point's buckets are coarse.
func expoCoarse(d *bucketed.Dist) bool { return d.Scale < 0 }

func (lw *layoutWindow) holds(d *bucketed.Dist) bool {
	if d.Kind == bucketed.Exponential {
		return lw.coarse == expoCoarse(d)
	}
	return slices.Equal(lw.bounds, d.Bounds)
}

// refines reports whether merging lw into o loses none of o's resolution:
// lw's bounds include all of o's, or lw is fine where o is coarse.
func (lw *layoutWindow) refines(o *layoutWindow) bool {
	if lw.w.Kind() == bucketed.Exponential {
		return !lw.coarse || o.coarse
	}
	return sortedSubset(o.bounds, lw.bounds)
}

// sortedSubset reports whether every value of sorted a is in sorted b.
func sortedSubset(a, b []float64) bool {
	j := 0
	for _, v := range a {
		for j < len(b) && b[j] < v {
			j++
		}
		if j == len(b) || b[j] != v {
			return false
		}
		j++
	}
	return true
}

// layout returns the sub-window for d's layout, opened if need be; nil when
// maxLayouts live ones are open.
func (s *bucketSeries) layout(bs *bucketStore, d *bucketed.Dist, now time.Time) *layoutWindow {
	for _, lw := range s.layouts {
		if lw.holds(d) {
			return lw
		}
	}
	if len(s.layouts) >= maxLayouts {
		s.dropEmpty(now)
		if len(s.layouts) >= maxLayouts {
			return nil
		}
	}
	lw := &layoutWindow{coarse: d.Kind == bucketed.Exponential && expoCoarse(d),
		w: bucketed.NewWindow(d.Kind, bs.cfg.Window, bs.cfg.WindowSlices, bs.cfg.Histograms.MaxBuckets, now)}
	if d.Kind == bucketed.Explicit {
		lw.bounds = slices.Clone(d.Bounds)
	}
	s.layouts = append(s.layouts, lw)
	return lw
}

// dropEmpty closes the sub-windows that slid empty; it reports whether
// none is left.
func (s *bucketSeries) dropEmpty(now time.Time) bool {
	s.layouts = slices.DeleteFunc(s.layouts, func(lw *layoutWindow) bool { return lw.w.Empty(now) })
	return len(s.layouts) == 0
}

// merged is what the series' gauges show: the layout holding the most
// samples (the first opened on a tie), merged with every layout that
// refines it. Samples of other layouts are left out, as their points were
// counted (histogram_points{result=layout_apart}): merging them would only
// widen every interval to the bounds both layouts share. Nil when no
// sample is live.
func (s *bucketSeries) merged(now time.Time, maxBuckets int) *bucketed.Dist {
	if len(s.layouts) == 1 {
		return s.layouts[0].w.Snapshot(now)
	}
	snaps, best := s.snapshots(now)
	if best < 0 {
		return nil
	}
	d := snaps[best]
	for i, lw := range s.layouts {
		if i != best && snaps[i] != nil && lw.refines(s.layouts[best]) {
			d.Merge(snaps[i], maxBuckets)
		}
	}
	return d
}

// snapshots returns each layout's live samples and the index of the one
// holding most (the first on a tie; −1 when none holds any).
func (s *bucketSeries) snapshots(now time.Time) ([]*bucketed.Dist, int) {
	snaps := make([]*bucketed.Dist, len(s.layouts))
	best, bestN := -1, uint64(0)
	for i, lw := range s.layouts {
		if snaps[i] = lw.w.Snapshot(now); snaps[i] == nil {
			continue
		}
		if n := snaps[i].Total(); n > bestN {
			best, bestN = i, n
		}
	}
	return snaps, best
}

// apart reports whether lw's samples are left out of the series' gauges
// now: another layout holds more, and lw does not refine it.
func (s *bucketSeries) apart(lw *layoutWindow, now time.Time) bool {
	if len(s.layouts) < 2 {
		return false
	}
	_, best := s.snapshots(now)
	return best >= 0 && s.layouts[best] != lw && !lw.refines(s.layouts[best])
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
// labels and says what became of it: pointWindowed, pointLayoutApart, or
// "" when the cardinality limit or maxLayouts kept it out (counted in st).
func (bs *bucketStore) observe(tgt *target, inc *bucketed.Dist, measuredAt, observer string, failedOver bool, now time.Time, st *batchStats) string {
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
		return &bucketSeries{seriesHead: seriesHead{attrs: attrs}, measuredAt: measuredAt}
	})
	if !ok {
		return ""
	}
	lw := s.layout(bs, inc, now)
	if lw == nil {
		st.skip(skipLayoutLimit, 1)
		return ""
	}
	s.lastSeen = now
	lw.w.Add(inc, now)
	if s.apart(lw, now) {
		return pointLayoutApart
	}
	return pointWindowed
}

// expire drops the windows that slid empty.
func (bs *bucketStore) expire(now time.Time) {
	bs.series.expire(now, 0, func(s *bucketSeries) bool { return s.dropEmpty(now) })
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
func (bs *bucketStore) build(ms pmetric.MetricSlice, now time.Time, pause *pauser) {
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
		pause.maybe()
		d := s.merged(now, bs.cfg.Histograms.MaxBuckets)
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
