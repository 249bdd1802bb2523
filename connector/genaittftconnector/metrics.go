package genaittftconnector // import "github.com/otelcol-ttft/otelcol-ttft/connector/genaittftconnector"

import (
	"context"
	"math"
	"slices"
	"sort"
	"strconv"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.uber.org/zap"

	"github.com/otelcol-ttft/otelcol-ttft/internal/band"
	"github.com/otelcol-ttft/otelcol-ttft/internal/bucketed"
	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// Reasons a histogram data point was not windowed (own telemetry, signal=metrics).
const (
	skipNotTTFTMetric     = "not_ttft_metric"
	skipNotHistogram      = "not_histogram"
	skipInvalidBounds     = "invalid_bounds"
	skipInvalidBuckets    = "invalid_buckets"
	skipTooManyBuckets    = "too_many_buckets"
	skipOutOfOrder        = "out_of_order"
	skipSourceSeriesLimit = "source_series_limit"
	skipUnsupportedUnit   = "unsupported_unit"
	skipScopeSkipped      = "scope_skipped" // the source's skip_scopes name the metric's scope
	skipLayoutLimit       = "layout_limit"  // the target's window holds maxLayouts bucket layouts already
)

// What happened to a recognised, valid data point (histogram_points{result}).
const (
	pointWindowed   = "windowed"   // an increment entered a window
	pointBaseline   = "baseline"   // first point of a cumulative series, kept as the baseline only
	pointUnchanged  = "unchanged"  // no new samples since the last point
	pointReset      = "reset"      // counter reset or restart: the point counted from zero
	pointDownscaled = "downscaled" // an exponential point downscaled to fit max_buckets
	pointStale      = "stale"      // a staleness marker: the series' last point stays its baseline
	// pointLayoutApart: windowed under a bucket layout that another layout of
	// the target outnumbers and that does not refine it, so its samples are
	// left out of the target's gauges for now (histwindows.go).
	pointLayoutApart = "layout_apart"
)

// histStats counts one metrics batch beyond batchStats.
type histStats struct {
	points map[string]int64
}

func (h *histStats) add(result string) {
	if h.points == nil {
		h.points = map[string]int64{}
	}
	h.points[result]++
}

// histInput turns recognised TTFT histograms into per-interval increments
// and enters them into bucketed windows (histwindows.go).
type histInput struct {
	cfg     *Config
	table   map[string]*HistogramSource
	started time.Time
	sources map[string]*sourceState
	// forgotten is when each dropped source series was dropped (marker,
	// stale_after): its return's first point, if it started before then,
	// may hold samples already windowed, so auto keeps it as a baseline.
	// Only that series: another series' first point is not held back by it.
	// A tombstone lives one window; then, or when source_series_limit
	// tombstones are held, its time moves into forgotFloor, which holds
	// back every first point that started before it.
	forgotten   map[string]time.Time
	forgotFloor time.Time
	// resources are the resources (scrape targets: one per job and
	// instance) of the series in sources: for a first point without a
	// start time, whether an earlier scrape of its target lacked it.
	resources map[string]*resourceState
	windows   *bucketStore

	key   keyBuilder
	pairs []string
	rec   record.Record
}

// sourceState is the last cumulative point of one source series.
type sourceState struct {
	lastSeen time.Time
	start    pcommon.Timestamp
	ts       pcommon.Timestamp
	d        *bucketed.Dist
	res      *resourceState
}

// resourceState is what is known of one resource's points.
type resourceState struct {
	key       string
	firstTS   pcommon.Timestamp // of the first point seen from it
	firstSeen time.Time         // when that point came
	series    int               // its series in sources
	// blind: a new series of it was dropped (source_series_limit), so a
	// series missing from its earlier points may have been there.
	blind bool
}

func newHistInput(cfg *Config) *histInput {
	return &histInput{
		cfg:       cfg,
		table:     cfg.Histograms.table(),
		sources:   map[string]*sourceState{},
		forgotten: map[string]time.Time{},
		resources: map[string]*resourceState{},
		windows:   newBucketStore(cfg),
	}
}

// ConsumeMetrics aggregates the recognised TTFT histograms of a batch; other
// metrics are counted and ignored.
func (c *ttftConnector) ConsumeMetrics(ctx context.Context, md pmetric.Metrics) error {
	var st batchStats
	var hs histStats
	c.mu.Lock()
	now := c.clock.Now()
	c.agg.hin.consume(c.agg.tgt, md, now, &st, &hs)
	c.agg.tgt.res.forget()
	c.mu.Unlock()
	c.finishMetrics(ctx, &st, &hs)
	return nil
}

func (c *ttftConnector) finishMetrics(ctx context.Context, st *batchStats, hs *histStats) {
	now := c.clock.Now()
	var bad int64
	for _, r := range []string{skipInvalidBounds, skipInvalidBuckets, skipTooManyBuckets} {
		bad += st.skipped.get(r)
	}
	if bad > 0 && c.warnDue(now, "invalid_histogram", st) {
		c.logger.Warn("Skipped TTFT histogram points with unusable buckets",
			zap.Int64("points", bad))
	}
	if n := st.skipped.get(skipSourceSeriesLimit); n > 0 && c.warnDue(now, "source_series_limit", st) {
		c.logger.Warn("histograms::source_series_limit reached: points of new series are dropped",
			zap.Int("limit", c.cfg.Histograms.SourceSeriesLimit), zap.Int64("points", n))
	}
	if n := st.overflowed[kindWindows]; n > 0 && c.warnDue(now, "histogram_overflow", st) {
		c.logger.Warn("aggregation_cardinality_limit reached: histogram increments were not windowed",
			zap.Int("limit", c.cfg.AggregationCardinalityLimit), zap.Int64("points", n))
	}
	c.tel.report(ctx, "metrics", st)
	c.tel.reportHistPoints(ctx, hs.points)
}

func (h *histInput) consume(tgt *target, md pmetric.Metrics, now time.Time, st *batchStats, hs *histStats) {
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		rm := rms.At(i)
		res := rm.Resource().Attributes()
		tgt.res.use(res)
		resKey := ""
		sms := rm.ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			scope := sms.At(j).Scope().Name()
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				m := ms.At(k)
				src, ok := h.table[m.Name()]
				if !ok {
					st.skip(skipNotTTFTMetric, int64(dataPointCount(m)))
					continue
				}
				if src.skips(scope) {
					st.skip(skipScopeSkipped, int64(dataPointCount(m)))
					continue
				}
				if resKey == "" {
					resKey = sortedAttrs(res, &h.pairs)
				}
				scale := unitScale(m.Unit(), src.Unit)
				switch m.Type() {
				case pmetric.MetricTypeHistogram:
					hist := m.Histogram()
					cumulative := hist.AggregationTemporality() == pmetric.AggregationTemporalityCumulative
					dps := hist.DataPoints()
					for p := 0; p < dps.Len(); p++ {
						dp := dps.At(p)
						h.point(tgt, src, resKey, m.Name(), dp.Attributes(), dp.Flags(), dp.StartTimestamp(), dp.Timestamp(), cumulative,
							func() (*bucketed.Dist, string) { return explicitDist(dp, scale, h.cfg.Histograms.MaxBuckets) }, now, st, hs)
					}
				case pmetric.MetricTypeExponentialHistogram:
					eh := m.ExponentialHistogram()
					cumulative := eh.AggregationTemporality() == pmetric.AggregationTemporalityCumulative
					dps := eh.DataPoints()
					for p := 0; p < dps.Len(); p++ {
						dp := dps.At(p)
						h.point(tgt, src, resKey, m.Name(), dp.Attributes(), dp.Flags(), dp.StartTimestamp(), dp.Timestamp(), cumulative,
							func() (*bucketed.Dist, string) { return expoDist(dp, scale, h.cfg.Histograms.MaxBuckets, hs) }, now, st, hs)
					}
				default:
					st.skip(skipNotHistogram, int64(dataPointCount(m)))
				}
			}
		}
	}
}

// unitScale converts bounds to seconds: the metric's own unit if it names
// one we know, else the source row's.
func unitScale(metricUnit, rowUnit string) float64 {
	switch metricUnit {
	case "s":
		return 1
	case "ms":
		return 1e-3
	}
	if rowUnit == "ms" {
		return 1e-3
	}
	return 1
}

// point handles one data point: identify the source series, turn a
// cumulative point into the increment since the last one, window it.
func (h *histInput) point(tgt *target, src *HistogramSource, resKey, name string, attrs pcommon.Map, flags pmetric.DataPointFlags,
	start, ts pcommon.Timestamp, cumulative bool, read func() (*bucketed.Dist, string), now time.Time, st *batchStats, hs *histStats) {
	h.key.reset()
	h.key.str(name)
	h.key.str(resKey)
	h.key.str(sortedAttrs(attrs, &h.pairs))
	h.key.bound()
	if flags.NoRecordedValue() {
		// A staleness marker: the last scrape did not expose the series. A
		// failed scrape marks every series so, and a restarted producer
		// those it has not recreated yet. The last point stays the
		// baseline (stale_after forgets it): the same producer's next point
		// counts what grew meanwhile, a restarted one's is a reset.
		hs.add(pointStale)
		return
	}
	d, bad := read()
	if bad != "" {
		st.skip(bad, 1)
		return
	}
	inc := d
	if cumulative {
		prev, ok := h.sources[string(h.key.buf)]
		if !ok {
			key := string(h.key.buf)
			rkey := resourceKey(resKey)
			if len(h.sources) >= h.cfg.Histograms.SourceSeriesLimit {
				if rs := h.resources[rkey]; rs != nil {
					rs.blind = true
				}
				st.skip(skipSourceSeriesLimit, 1)
				return
			}
			rs := h.resource(rkey, ts, now)
			rs.series++
			h.sources[key] = &sourceState{lastSeen: now, start: start, ts: ts, d: d, res: rs}
			counts := h.countFirst(key, start, ts, rs, now)
			delete(h.forgotten, key) // the series is back: its state holds it
			if !counts {
				hs.add(pointBaseline)
				return
			}
		} else {
			if ts < prev.ts {
				st.skip(skipOutOfOrder, 1)
				return
			}
			var reset bool
			inc, reset = increment(prev, d, start)
			prev.lastSeen, prev.start, prev.ts, prev.d = now, start, ts, d
			if reset {
				hs.add(pointReset)
			}
		}
	}
	if inc.Total() == 0 {
		hs.add(pointUnchanged)
		return
	}
	h.target(src, attrs)
	tgt.resolve(&h.rec, attrs)
	failedOver := false
	if src.FailedOverLabel != "" {
		if n, err := strconv.ParseInt(attrString(attrs, src.FailedOverLabel), 10, 64); err == nil && n > 0 {
			failedOver = true
		}
	}
	result := h.windows.observe(tgt, inc, h.rec.MeasuredAt, src.Observer, failedOver, now, st)
	if result == "" {
		return
	}
	st.records += int64(inc.Total())
	hs.add(result)
}

// resourceKey is the key of h.resources for a resource's sorted attributes.
func resourceKey(resKey string) string {
	var kb keyBuilder
	kb.str(resKey)
	kb.bound()
	return string(kb.buf)
}

// resource returns the state of the resource whose key is key, opened with
// the point at ts if it is new.
func (h *histInput) resource(key string, ts pcommon.Timestamp, now time.Time) *resourceState {
	if rs, ok := h.resources[key]; ok {
		return rs
	}
	rs := &resourceState{key: key, firstTS: ts, firstSeen: now}
	h.resources[key] = rs
	return rs
}

// countFirst decides whether the first point of the cumulative series key,
// of resource rs, counts.
func (h *histInput) countFirst(key string, start, ts pcommon.Timestamp, rs *resourceState, now time.Time) bool {
	switch h.cfg.Histograms.InitialValue {
	case initialKeep:
		return true
	case initialDrop:
		return false
	}
	if start == 0 {
		// No start time: what the prometheus receiver delivers from a text
		// exposition without _created (Bifrost's). A series that an earlier
		// scrape of its target, seen here, did not hold began after that
		// scrape: all of its samples are newer than this collector and were
		// never counted. Not when it was seen and forgotten (its tombstone,
		// or one dropped since the target was first seen), nor when a new
		// series of the target was dropped (source_series_limit). Same
		// timestamp or same batch as the target's first point: part of
		// its first scrape, a baseline.
		_, seen := h.forgotten[key]
		return ts > rs.firstTS && now.After(rs.firstSeen) && !rs.blind && !seen && h.forgotFloor.Before(rs.firstSeen)
	}
	if start >= ts {
		return false
	}
	st := start.AsTime()
	if st.Before(h.started) || st.Before(h.forgotFloor) {
		return false
	}
	at, ok := h.forgotten[key]
	return !ok || !st.Before(at)
}

// raiseFloor moves forgotFloor up to t: a forgetting no tombstone keeps.
func (h *histInput) raiseFloor(t time.Time) {
	if t.After(h.forgotFloor) {
		h.forgotFloor = t
	}
}

// forget drops a source series' state and keeps when, for its return.
func (h *histInput) forget(key string, now time.Time) {
	if s := h.sources[key]; s != nil && s.res != nil {
		if s.res.series--; s.res.series <= 0 {
			delete(h.resources, s.res.key)
		}
	}
	delete(h.sources, key)
	if len(h.forgotten) < h.cfg.Histograms.SourceSeriesLimit {
		h.forgotten[key] = now
	} else {
		h.raiseFloor(now)
	}
}

// target fills the record with what the source row maps from the labels.
func (h *histInput) target(src *HistogramSource, attrs pcommon.Map) {
	h.rec = record.Record{PromptBand: band.Unknown, Observer: src.Observer}
	h.rec.Provider = firstLabel(attrs, src.ProviderLabels)
	if h.rec.Provider == "" {
		h.rec.Provider = src.Provider
	}
	h.rec.Model = firstLabel(attrs, src.ModelLabels)
	h.rec.Route = firstLabel(attrs, src.RouteLabels)
	h.rec.MeasuredAt = src.MeasuredAt
	if m, ok := src.MeasuredAtByProvider[h.rec.Provider]; ok {
		h.rec.MeasuredAt = m
	}
}

func firstLabel(attrs pcommon.Map, keys []string) string {
	for _, k := range keys {
		if v := attrString(attrs, k); v != "" {
			return v
		}
	}
	return ""
}

// increment is cur − prev. A restart (a new start time) or any count that
// went down is a reset: the producer counts from zero again, so the whole
// current point is new.
func increment(prev *sourceState, cur *bucketed.Dist, start pcommon.Timestamp) (*bucketed.Dist, bool) {
	if (start != 0 && prev.start != 0 && start != prev.start) || prev.d.Kind != cur.Kind {
		return cur, true
	}
	if cur.Kind == bucketed.Explicit {
		if !slices.Equal(prev.d.Bounds, cur.Bounds) {
			return cur, true // new layout: a restarted producer
		}
		inc := &bucketed.Dist{Kind: bucketed.Explicit, Bounds: cur.Bounds, Counts: make([]uint64, len(cur.Counts))}
		for j, c := range cur.Counts {
			if c < prev.d.Counts[j] {
				return cur, true
			}
			inc.Counts[j] = c - prev.d.Counts[j]
		}
		return inc, false
	}
	// Exponential: align both on the coarser scale, then subtract.
	p, c := prev.d.Clone(), cur.Clone()
	if p.Scale > c.Scale {
		p.Downscale(p.Scale - c.Scale)
	} else if c.Scale > p.Scale {
		c.Downscale(c.Scale - p.Scale)
	}
	if c.Zero < p.Zero {
		return cur, true
	}
	inc := &bucketed.Dist{Kind: bucketed.Exponential, Scale: c.Scale, Offset: c.Offset, Zero: c.Zero - p.Zero,
		ZeroThreshold: c.ZeroThreshold, Counts: slices.Clone(c.Counts)}
	for j, n := range p.Counts {
		idx := int64(p.Offset) + int64(j) - int64(c.Offset)
		if n == 0 {
			continue
		}
		if idx < 0 || idx >= int64(len(inc.Counts)) || inc.Counts[idx] < n {
			return cur, true
		}
		inc.Counts[idx] -= n
	}
	return inc, false
}

// explicitDist reads an explicit-bucket point in seconds, or says why not.
func explicitDist(dp pmetric.HistogramDataPoint, scale float64, maxBuckets int) (*bucketed.Dist, string) {
	nb, nc := dp.ExplicitBounds().Len(), dp.BucketCounts().Len()
	if nc == 0 {
		return nil, skipInvalidBuckets // count and sum only: nothing to locate a quantile in
	}
	if nc != nb+1 {
		return nil, skipInvalidBuckets
	}
	if nc > maxBuckets {
		return nil, skipTooManyBuckets
	}
	bounds := make([]float64, nb)
	for i := range bounds {
		bounds[i] = dp.ExplicitBounds().At(i) * scale
	}
	if !bucketed.ValidBounds(bounds) {
		return nil, skipInvalidBounds
	}
	counts := slices.Clone(dp.BucketCounts().AsRaw())
	var sum uint64
	for _, c := range counts {
		if sum+c < sum {
			return nil, skipInvalidBuckets
		}
		sum += c
	}
	if sum != dp.Count() {
		// A decreasing cumulative count in the exposition wraps a bucket
		// to a huge value; the buckets no longer add up to the count.
		return nil, skipInvalidBuckets
	}
	return &bucketed.Dist{Kind: bucketed.Explicit, Bounds: bounds, Counts: counts}, ""
}

// expoDist reads an exponential point (positive range; negative values are
// no TTFT), downscaled to fit maxBuckets.
func expoDist(dp pmetric.ExponentialHistogramDataPoint, scale float64, maxBuckets int, hs *histStats) (*bucketed.Dist, string) {
	if dp.Scale() < bucketed.MinScale || dp.Scale() > bucketed.MaxScale {
		return nil, skipInvalidBounds
	}
	if dp.Negative().BucketCounts().Len() > 0 {
		for _, c := range dp.Negative().BucketCounts().AsRaw() {
			if c > 0 {
				return nil, skipInvalidBounds // negative TTFT values
			}
		}
	}
	zt := dp.ZeroThreshold()
	if math.IsNaN(zt) || math.IsInf(zt, 0) || zt < 0 || zt > maxZeroThreshold {
		return nil, skipInvalidBounds
	}
	if scale != 1 {
		// Milliseconds: a change of unit is not a power of two, so the
		// buckets would no longer be base-2 buckets in seconds.
		return nil, skipUnsupportedUnit
	}
	pos := dp.Positive()
	if n := pos.BucketCounts().Len(); n > 1<<20 {
		return nil, skipTooManyBuckets // even reading it would cost too much
	}
	d := &bucketed.Dist{Kind: bucketed.Exponential, Scale: dp.Scale(), Offset: pos.Offset(), Zero: dp.ZeroCount(), ZeroThreshold: zt}
	var sum = d.Zero
	for _, c := range pos.BucketCounts().AsRaw() {
		if sum+c < sum {
			return nil, skipInvalidBuckets
		}
		sum += c
	}
	if int64(pos.Offset())+int64(pos.BucketCounts().Len()) > math.MaxInt32 {
		return nil, skipInvalidBounds
	}
	if sum != dp.Count() {
		return nil, skipInvalidBuckets
	}
	d.Counts = slices.Clone(pos.BucketCounts().AsRaw())
	d.Trim()
	if d.Fit(maxBuckets) {
		hs.add(pointDownscaled)
	}
	return d, ""
}

// maxZeroThreshold bounds an exponential point's zero bucket, [0, threshold]:
// SDKs use 0, Prometheus 2^-128. One wider than a microsecond holds times
// that are TTFTs, not zeros, and merged into a window (which keeps the
// widest threshold of its sources) it would bound every other source's
// lowest quantile: one point with threshold 50 put every lower bound at 50.
const maxZeroThreshold = 1e-6

// sortedAttrs renders a map as a stable key, whatever its insertion order.
func sortedAttrs(m pcommon.Map, buf *[]string) string {
	pairs := (*buf)[:0]
	m.Range(func(k string, v pcommon.Value) bool {
		pairs = append(pairs, k+"\x00"+v.AsString())
		return true
	})
	sort.Strings(pairs)
	*buf = pairs
	var kb keyBuilder
	kb.strs(pairs)
	return string(kb.buf)
}

func dataPointCount(m pmetric.Metric) int {
	switch m.Type() {
	case pmetric.MetricTypeGauge:
		return m.Gauge().DataPoints().Len()
	case pmetric.MetricTypeSum:
		return m.Sum().DataPoints().Len()
	case pmetric.MetricTypeHistogram:
		return m.Histogram().DataPoints().Len()
	case pmetric.MetricTypeExponentialHistogram:
		return m.ExponentialHistogram().DataPoints().Len()
	case pmetric.MetricTypeSummary:
		return m.Summary().DataPoints().Len()
	}
	return 0
}

// expire forgets source series not seen within stale_after, and
// tombstones older than a window.
func (h *histInput) expire(now time.Time) {
	for k, s := range h.sources {
		if now.Sub(s.lastSeen) > h.cfg.Histograms.StaleAfter {
			h.forget(k, now)
		}
	}
	for k, at := range h.forgotten {
		if now.Sub(at) > h.cfg.Window {
			delete(h.forgotten, k)
			h.raiseFloor(at)
		}
	}
}

type metricsConnector struct{ *instance }

func (c *metricsConnector) ConsumeMetrics(ctx context.Context, md pmetric.Metrics) error {
	return c.conn.ConsumeMetrics(ctx, md)
}
