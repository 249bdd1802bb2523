package genaittftconnector // import "github.com/otelcol-ttft/otelcol-ttft/connector/genaittftconnector"

import (
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-ttft/otelcol-ttft/connector/genaittftconnector/internal/metadata"
	"github.com/otelcol-ttft/otelcol-ttft/internal/expohist"
	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// The exported histograms of one series, in metric order.
const (
	histTTFT = iota
	histFirstChunk
	histMaxChunkGap
	histDuration
	numHists
)

var histNames = [numHists]string{
	"ttft.time_to_first_token", "ttft.time_to_first_chunk", "ttft.max_chunk_gap", "ttft.duration",
}

var histDescriptions = [numHists]string{
	"Time to first token of streamed requests: first content where known, else first chunk (see ttft.measured_at).",
	"Time to the first streamed chunk of any kind, content or not.",
	"Longest pause between consecutive chunks after first content.",
	"Total duration of streamed requests.",
}

// histSeries holds the four exported histograms of one attribute set.
type histSeries struct {
	attrs    pcommon.Map
	start    pcommon.Timestamp
	lastSeen time.Time
	h        [numHists]expohist.Histogram

	// Links to the counter (by first_content_seen) and the window series its
	// key determines, so a record costs one key and one map lookup. Never
	// set on the overflow series, which mixes keys.
	req      [2]*sumSeries
	win      *winSeries
	overflow bool
}

// sumSeries is one ttft.requests counter.
type sumSeries struct {
	attrs    pcommon.Map
	start    pcommon.Timestamp
	lastSeen time.Time
	count    uint64
	// dead marks a dropped series so links to it are re-resolved.
	dead bool
}

// batchStats counts what one batch did, reported to own telemetry after the
// lock is released.
type batchStats struct {
	records     int64
	skipped     map[string]int64
	overflowed  [numSeriesKinds]int64
	logsLimited int64
	invalid     [record.NumInvalid]int64
}

func (s *batchStats) skip(reason string, n int64) {
	if n == 0 {
		return
	}
	if s.skipped == nil {
		s.skipped = map[string]int64{}
	}
	s.skipped[reason] += n
}

const (
	kindHistograms = iota
	kindRequests
	kindWindows
	kindHistogramSources // cumulative histogram series whose last point is kept (metrics.go)
	numSeriesKinds
)

var seriesKindNames = [numSeriesKinds]string{"histograms", "requests", "windows", "histogram_sources"}

// aggregator holds every series. It is not safe for concurrent use: the
// connector serialises access with its lock.
type aggregator struct {
	cfg        *Config
	dims       []dimension
	instanceID string
	maxSize    int32
	limit      int
	delta      bool

	hist         map[string]*histSeries
	histOverflow *histSeries
	reqs         map[string]*sumSeries
	reqOverflow  *sumSeries
	windows      *windowStore
	// hin is the metrics→metrics input and its bucketed windows (metrics.go).
	hin *histInput

	key  keyBuilder
	vals []string
	res  *resourceDims
}

func newAggregator(cfg *Config, instanceID string) (*aggregator, error) {
	ws, err := newWindowStore(cfg)
	if err != nil {
		return nil, err
	}
	a := &aggregator{
		cfg:     cfg,
		dims:    newDimensions(cfg.Dimensions),
		maxSize: cfg.ExponentialHistogramMaxSize,
		limit:   cfg.AggregationCardinalityLimit,
		delta:   cfg.temporality() == pmetric.AggregationTemporalityDelta,
		hist:    map[string]*histSeries{},
		reqs:    map[string]*sumSeries{},
		windows: ws,
		vals:    make([]string, len(cfg.Dimensions)),
		res:     newResourceDims(len(cfg.Dimensions)),
		hin:     newHistInput(cfg),
	}
	if cfg.IncludeCollectorInstanceID {
		a.instanceID = instanceID
	}
	return a, nil
}

// observe aggregates one request record. attrs are the span or log record
// attributes, resAttrs those of its resource.
func (a *aggregator) observe(rec *record.Record, attrs, resAttrs pcommon.Map, now time.Time, st *batchStats) {
	if rec.StreamedKnown && !rec.Streamed {
		// A non-streamed request has no TTFT; counting it would mix total
		// latency into a time-to-first-token metric.
		st.skip("not_streamed", 1)
		return
	}
	st.records++
	a.res.use(resAttrs)
	dimValues(a.dims, rec, attrs, a.res, a.vals)
	ts := pcommon.NewTimestampFromTime(now)
	failedOver := rec.DidFailOver()

	// Exported histograms: the one lookup every record pays.
	a.key.reset()
	a.key.strs(a.vals)
	a.key.str(rec.Outcome)
	a.key.str(rec.PromptBand)
	a.key.str(rec.MeasuredAt)
	a.key.str(rec.Observer)
	a.key.flag(failedOver)
	hs, ok := a.hist[string(a.key.buf)]
	if !ok {
		if len(a.hist) >= a.limit {
			st.overflowed[kindHistograms]++
			if a.histOverflow == nil {
				a.histOverflow = a.newHistSeries(a.overflowAttrs(), ts)
				a.histOverflow.overflow = true
			}
			hs = a.histOverflow
		} else {
			attrs := a.seriesAttrs(5)
			attrs.PutStr(record.KeyOutcome, rec.Outcome)
			putNonEmpty(attrs, record.KeyPromptBand, rec.PromptBand)
			putNonEmpty(attrs, record.KeyMeasuredAt, rec.MeasuredAt)
			putNonEmpty(attrs, record.KeyObserver, rec.Observer)
			attrs.PutBool(attrFailedOver, failedOver)
			hs = a.newHistSeries(attrs, ts)
			a.hist[string(a.key.buf)] = hs
		}
	}
	hs.lastSeen = now
	if v, ok := rec.TTFT(); ok {
		hs.h[histTTFT].Update(v)
	}
	if rec.HasTimeToFirstChunk {
		hs.h[histFirstChunk].Update(rec.TimeToFirstChunk)
	}
	if rec.HasMaxChunkGap {
		hs.h[histMaxChunkGap].Update(rec.MaxChunkGap)
	}
	if rec.HasDuration {
		hs.h[histDuration].Update(rec.Duration)
	}

	// Request counter: the histogram key determines it up to first_content_seen.
	seen := rec.FirstContentSeen()
	si := 0
	if seen {
		si = 1
	}
	rs := hs.req[si]
	if rs == nil || rs.dead {
		rs = a.requestSeries(rec, seen, ts, st)
		if !hs.overflow && rs != a.reqOverflow {
			hs.req[si] = rs
		}
	}
	rs.lastSeen = now
	rs.count++

	if !a.windows.observe(a, hs, rec, now) {
		st.overflowed[kindWindows]++
	}
}

// requestSeries finds or creates the ttft.requests series of a record.
func (a *aggregator) requestSeries(rec *record.Record, seen bool, ts pcommon.Timestamp, st *batchStats) *sumSeries {
	a.key.reset()
	a.key.strs(a.vals)
	a.key.str(rec.Outcome)
	a.key.str(rec.PromptBand)
	a.key.flag(seen)
	if rs, ok := a.reqs[string(a.key.buf)]; ok {
		return rs
	}
	if len(a.reqs) >= a.limit {
		st.overflowed[kindRequests]++
		if a.reqOverflow == nil {
			a.reqOverflow = &sumSeries{attrs: a.overflowAttrs(), start: ts}
		}
		return a.reqOverflow
	}
	attrs := a.seriesAttrs(3)
	attrs.PutStr(record.KeyOutcome, rec.Outcome)
	putNonEmpty(attrs, record.KeyPromptBand, rec.PromptBand)
	attrs.PutBool(attrFirstContentSeen, seen)
	rs := &sumSeries{attrs: attrs, start: ts}
	a.reqs[string(a.key.buf)] = rs
	return rs
}

func (a *aggregator) newHistSeries(attrs pcommon.Map, ts pcommon.Timestamp) *histSeries {
	hs := &histSeries{attrs: attrs, start: ts}
	for i := range hs.h {
		hs.h[i].Init(a.maxSize)
	}
	return hs
}

// seriesAttrs starts an attribute map with the dimensions and the instance id.
func (a *aggregator) seriesAttrs(extra int) pcommon.Map {
	attrs := pcommon.NewMap()
	attrs.EnsureCapacity(len(a.dims) + extra + 1)
	putDims(attrs, a.dims, a.vals)
	putNonEmpty(attrs, attrCollectorInstanceID, a.instanceID)
	return attrs
}

// overflowAttrs are the attributes of an overflow series: the marker only,
// as in spanmetrics, plus the instance id so replicas' overflow series stay
// apart.
func (a *aggregator) overflowAttrs() pcommon.Map {
	attrs := pcommon.NewMap()
	attrs.PutBool(attrOverflow, true)
	putNonEmpty(attrs, attrCollectorInstanceID, a.instanceID)
	return attrs
}

// expire drops series idle for longer than metrics_expiration, and
// window series whose samples all slid out of the window.
func (a *aggregator) expire(now time.Time) {
	exp := a.cfg.MetricsExpiration
	a.windows.expire(now, exp)
	a.hin.expire(now)
	a.hin.windows.expire(now, exp)
	if exp <= 0 {
		return
	}
	for k, s := range a.hist {
		if now.Sub(s.lastSeen) > exp {
			delete(a.hist, k)
		}
	}
	for k, s := range a.reqs {
		if now.Sub(s.lastSeen) > exp {
			s.dead = true
			delete(a.reqs, k)
		}
	}
	if a.histOverflow != nil && now.Sub(a.histOverflow.lastSeen) > exp {
		a.histOverflow = nil
	}
	if a.reqOverflow != nil && now.Sub(a.reqOverflow.lastSeen) > exp {
		a.reqOverflow.dead = true
		a.reqOverflow = nil
	}
}

// seriesCounts returns the series held per kind, for own telemetry.
func (a *aggregator) seriesCounts() [numSeriesKinds]int64 {
	var n [numSeriesKinds]int64
	n[kindHistograms] = int64(len(a.hist))
	if a.histOverflow != nil {
		n[kindHistograms]++
	}
	n[kindRequests] = int64(len(a.reqs))
	if a.reqOverflow != nil {
		n[kindRequests]++
	}
	n[kindWindows] = int64(a.windows.len() + a.hin.windows.len())
	n[kindHistogramSources] = int64(len(a.hin.sources))
	return n
}

// build writes every series into md at time now, resetting each delta
// series as it is written. It calls pause.maybe between series: the
// connector releases its lock there, so a flush over thousands of series
// never stalls ingest for longer than one short stretch (docs/architecture.md,
// "Trust"). A series created during a pause may wait for the next flush; a
// record observed during one lands in this flush or the next, never both.
func (a *aggregator) build(now time.Time, pause *pauser) pmetric.Metrics {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	sm := rm.ScopeMetrics().AppendEmpty()
	sm.Scope().SetName(metadata.ScopeName)
	ts := pcommon.NewTimestampFromTime(now)
	temporality := a.cfg.temporality()

	var hm [numHists]pmetric.Metric
	var dps [numHists]pmetric.ExponentialHistogramDataPointSlice
	for i := range hm {
		hm[i] = pmetric.NewMetric()
		hm[i].SetName(histNames[i])
		hm[i].SetDescription(histDescriptions[i])
		hm[i].SetUnit("s")
		eh := hm[i].SetEmptyExponentialHistogram()
		eh.SetAggregationTemporality(temporality)
		dps[i] = eh.DataPoints()
	}
	add := func(s *histSeries) {
		for i := range s.h {
			h := &s.h[i]
			if h.Count() == 0 {
				continue
			}
			dp := dps[i].AppendEmpty()
			s.attrs.CopyTo(dp.Attributes())
			dp.SetStartTimestamp(s.start)
			dp.SetTimestamp(ts)
			copyExpoHistogram(h, dp)
		}
		if a.delta {
			resetHist(s, ts)
		}
	}
	for _, s := range a.hist {
		add(s)
		pause.maybe()
	}
	if a.histOverflow != nil {
		add(a.histOverflow)
	}
	for i := range hm {
		if dps[i].Len() > 0 {
			hm[i].MoveTo(sm.Metrics().AppendEmpty())
		}
	}

	m := pmetric.NewMetric()
	m.SetName("ttft.requests")
	m.SetDescription("Streamed requests by outcome and prompt band, including those that never produced content.")
	m.SetUnit("{request}")
	sum := m.SetEmptySum()
	sum.SetIsMonotonic(true)
	sum.SetAggregationTemporality(temporality)
	addSum := func(s *sumSeries) {
		if s.count == 0 {
			return
		}
		dp := sum.DataPoints().AppendEmpty()
		s.attrs.CopyTo(dp.Attributes())
		dp.SetStartTimestamp(s.start)
		dp.SetTimestamp(ts)
		dp.SetIntValue(int64(s.count))
		if a.delta {
			s.count, s.start = 0, ts
		}
	}
	for _, s := range a.reqs {
		addSum(s)
		pause.maybe()
	}
	if a.reqOverflow != nil {
		addSum(a.reqOverflow)
	}
	if sum.DataPoints().Len() > 0 {
		m.MoveTo(sm.Metrics().AppendEmpty())
	}

	a.windows.build(a, sm.Metrics(), now, pause)
	a.hin.windows.build(sm.Metrics(), now)
	return md
}

// pauser runs release at most every pauseEvery of work: the connector's
// unlock-yield-lock between series of a flush.
type pauser struct {
	release func()
	last    time.Time
	// longest is the longest stretch between releases so far.
	longest time.Duration
}

// pauseEvery bounds how long one stretch of a flush holds the lock.
const pauseEvery = 500 * time.Microsecond

func (p *pauser) maybe() {
	if p == nil || p.release == nil {
		return
	}
	// Checked every series (~25 ns): checking every 16th let a stretch that
	// met a GC assist hold the lock for 100 ms at 5,000 adversarial series.
	if now := time.Now(); now.Sub(p.last) >= pauseEvery {
		p.longest = max(p.longest, now.Sub(p.last))
		p.release()
		p.last = time.Now()
	}
}

func resetHist(s *histSeries, ts pcommon.Timestamp) {
	for i := range s.h {
		s.h[i].Clear()
	}
	s.start = ts
}
