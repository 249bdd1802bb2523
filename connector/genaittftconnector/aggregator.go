package genaittftconnector // import "github.com/otelcol-ttft/otelcol-ttft/connector/genaittftconnector"

import (
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-ttft/otelcol-ttft/connector/genaittftconnector/internal/metadata"
	"github.com/otelcol-ttft/otelcol-ttft/internal/expohist"
	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// histSeries holds the four exported histograms of one attribute set,
// indexed by signal.
type histSeries struct {
	seriesHead
	// start is each histogram's: under delta temporality it moves only
	// when that histogram writes a point, so a stream idle for a flush (or
	// a signal a record lacked, such as max_chunk_gap) goes on where its
	// last point ended. An exporter turning delta into cumulative (the
	// prometheus exporter) takes any other start as a reset.
	start [numSignals]pcommon.Timestamp
	h     [numSignals]expohist.Histogram

	// Links to the counter (by first_content_seen) and the window series its
	// key determines, so a record costs one key and one map lookup. Never
	// set on the overflow series, which mixes keys.
	req [2]*sumSeries
	win *winSeries
	own bool
}

// sumSeries is one ttft.requests counter.
type sumSeries struct {
	seriesHead
	start pcommon.Timestamp
	count uint64
}

// batchStats counts what one batch did, reported to own telemetry after the
// lock is released.
type batchStats struct {
	records     int64
	skipped     skips
	overflowed  [numSeriesKinds]int64
	logsLimited int64
	invalid     [record.NumInvalid]int64
}

func (s *batchStats) skip(reason string, n int64) { s.skipped.add(reason, n) }

// skips counts a batch's skipped records by reason. The reasons are the
// code's own constants, a few a batch, so they are kept in a short list
// searched in order rather than in a map each batch would allocate; a
// batch with more distinct reasons than the list holds puts the rest in
// a map.
type skips struct {
	n    int
	by   [8]skipCount
	more map[string]int64
}

type skipCount struct {
	reason string
	n      int64
}

func (s *skips) add(reason string, n int64) {
	if n == 0 {
		return
	}
	for i := range s.by[:s.n] {
		if s.by[i].reason == reason {
			s.by[i].n += n
			return
		}
	}
	if s.n < len(s.by) {
		s.by[s.n] = skipCount{reason, n}
		s.n++
		return
	}
	if s.more == nil {
		s.more = map[string]int64{}
	}
	s.more[reason] += n
}

// get is the count of reason.
func (s *skips) get(reason string) int64 {
	for _, c := range s.by[:s.n] {
		if c.reason == reason {
			return c.n
		}
	}
	return s.more[reason]
}

// all yields each reason with its count.
func (s *skips) all(yield func(string, int64) bool) {
	for _, c := range s.by[:s.n] {
		if !yield(c.reason, c.n) {
			return
		}
	}
	for r, n := range s.more {
		if !yield(r, n) {
			return
		}
	}
}

// aggregator holds every series. It is not safe for concurrent use: the
// connector serialises access with its lock.
type aggregator struct {
	cfg     *Config
	maxSize int32
	delta   bool

	// tgt is the record in hand's dimension values, handed to each store.
	tgt     *target
	hist    table[*histSeries]
	reqs    table[*sumSeries]
	windows *windowStore
	// hin is the metrics→metrics input and its bucketed windows (metrics.go).
	hin *histInput
}

func newAggregator(cfg *Config, instanceID string) (*aggregator, error) {
	if !cfg.IncludeCollectorInstanceID {
		instanceID = ""
	}
	limit := cfg.AggregationCardinalityLimit
	return &aggregator{
		cfg:     cfg,
		maxSize: cfg.ExponentialHistogramMaxSize,
		delta:   cfg.temporality() == pmetric.AggregationTemporalityDelta,
		tgt:     newTarget(cfg.Dimensions, instanceID),
		hist:    newTable[*histSeries](kindHistograms, limit, true),
		reqs:    newTable[*sumSeries](kindRequests, limit, true),
		windows: newWindowStore(cfg),
		hin:     newHistInput(cfg),
	}, nil
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
	a.tgt.res.use(resAttrs)
	a.tgt.resolve(rec, attrs)
	failedOver := rec.DidFailOver()

	// Exported histograms: the one lookup every record pays.
	k := a.hist.keyFor(a.tgt)
	k.str(rec.PromptBand)
	if code, ok := histCode(rec, failedOver); ok {
		k.buf = append(k.buf, code)
	} else {
		k.str(rec.Outcome)
		k.str(rec.MeasuredAt)
		k.str(rec.Observer)
		k.flag(failedOver)
	}
	hs, ok := a.hist.find()
	if !ok {
		ts := pcommon.NewTimestampFromTime(now)
		hs, _, _ = a.hist.add(a.tgt, 5, st, func(attrs pcommon.Map, own bool) *histSeries {
			if own {
				attrs.PutStr(record.KeyOutcome, rec.Outcome)
				putNonEmpty(attrs, record.KeyPromptBand, rec.PromptBand)
				putNonEmpty(attrs, record.KeyMeasuredAt, rec.MeasuredAt)
				putNonEmpty(attrs, record.KeyObserver, rec.Observer)
				attrs.PutBool(attrFailedOver, failedOver)
			}
			return a.newHistSeries(attrs, ts, own)
		})
	}
	hs.lastSeen, hs.unsent = now, true
	var sv signalValues
	sv.read(rec)
	for i := range hs.h {
		if sv.ok[i] {
			hs.h[i].UpdateCeil(sv.v[i], sv.k[i], sv.kok[i])
		}
	}

	// Request counter: the histogram key determines it up to first_content_seen.
	seen := rec.FirstContentSeen()
	si := 0
	if seen {
		si = 1
	}
	rs := hs.req[si]
	if rs == nil || rs.dead {
		var own bool
		rs, own = a.requestSeries(rec, seen, now, st)
		if hs.own && own {
			hs.req[si] = rs
		}
	}
	rs.lastSeen, rs.unsent = now, true
	rs.count++

	link := &hs.win
	if !hs.own {
		link = nil
	}
	a.windows.observe(a.tgt, link, rec, &sv, now, st)
}

// histCode codes rec's outcome, measured_at, observer and failed-over in
// one byte of the histogram series' key: four strings' appends fewer a
// record (docs/performance.md). A value outside their sets reports false
// (a record read back is validated first, and derivation writes only their
// values, so only tests have one), and the key then holds the four as they
// are: at least four bytes after the band, where a code is one, so the two
// forms never meet.
func histCode(rec *record.Record, failedOver bool) (code byte, ok bool) {
	switch rec.Outcome {
	case record.OutcomeComplete:
		code = 1
	case record.OutcomeError:
		code = 2
	case record.OutcomeClosed:
		code = 3
	case record.OutcomeTimeoutFirstToken:
		code = 4
	case record.OutcomeTimeoutIdle:
		code = 5
	case record.OutcomeTimeoutDeadline:
		code = 6
	default:
		return 0, false
	}
	switch rec.MeasuredAt {
	case "":
	case record.MeasuredAtFirstContent:
		code |= 1 << 3
	case record.MeasuredAtFirstChunk:
		code |= 2 << 3
	default:
		return 0, false
	}
	switch rec.Observer {
	case "":
	case record.ObserverClient:
		code |= 1 << 5
	case record.ObserverGateway:
		code |= 2 << 5
	case record.ObserverServer:
		code |= 3 << 5
	default:
		return 0, false
	}
	if failedOver {
		code |= 1 << 7
	}
	return code, true
}

// requestSeries finds or creates the ttft.requests series of a record, and
// reports whether it is the record's own (not the overflow series).
func (a *aggregator) requestSeries(rec *record.Record, seen bool, now time.Time, st *batchStats) (*sumSeries, bool) {
	k := a.reqs.keyFor(a.tgt)
	k.str(rec.Outcome)
	k.str(rec.PromptBand)
	k.flag(seen)
	rs, own, _ := a.reqs.get(a.tgt, 3, st, func(attrs pcommon.Map, own bool) *sumSeries {
		if own {
			attrs.PutStr(record.KeyOutcome, rec.Outcome)
			putNonEmpty(attrs, record.KeyPromptBand, rec.PromptBand)
			attrs.PutBool(attrFirstContentSeen, seen)
		}
		return &sumSeries{seriesHead: seriesHead{attrs: attrs}, start: pcommon.NewTimestampFromTime(now)}
	})
	return rs, own
}

func (a *aggregator) newHistSeries(attrs pcommon.Map, ts pcommon.Timestamp, own bool) *histSeries {
	hs := &histSeries{seriesHead: seriesHead{attrs: attrs}, own: own}
	for i := range hs.h {
		hs.h[i].Init(a.maxSize)
		hs.start[i] = ts
	}
	return hs
}

// expire drops series idle for longer than metrics_expiration, and
// window series once their samples all slid out of the window, however
// long that takes: a quiet hour must not lose a 24h window.
func (a *aggregator) expire(now time.Time) {
	exp := a.cfg.MetricsExpiration
	a.windows.expire(now)
	a.hin.expire(now)
	a.hin.windows.expire(now)
	a.hist.expire(now, exp, nil)
	a.reqs.expire(now, exp, nil)
}

// seriesCounts returns the series held per kind, for own telemetry.
func (a *aggregator) seriesCounts() [numSeriesKinds]int64 {
	var n [numSeriesKinds]int64
	n[kindHistograms] = int64(a.hist.len())
	n[kindRequests] = int64(a.reqs.len())
	n[kindWindows] = int64(a.windows.len() + a.hin.windows.len())
	n[kindHistogramSources] = int64(len(a.hin.sources))
	return n
}

// build writes every series into md at time now, resetting each delta
// series as it is written. It calls pause.maybe between series: the
// connector releases its lock there, so a flush over thousands of series
// never stalls ingest for longer than one short stretch (connector README,
// "Trust": "A flush lets ingest in"). A series created during a pause may wait for the next flush; a
// record observed during one lands in this flush or the next, never both.
func (a *aggregator) build(now time.Time, pause *pauser) pmetric.Metrics {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	sm := rm.ScopeMetrics().AppendEmpty()
	sm.Scope().SetName(metadata.ScopeName)
	ts := pcommon.NewTimestampFromTime(now)
	temporality := a.cfg.temporality()

	var hm [numSignals]pmetric.Metric
	var dps [numSignals]pmetric.ExponentialHistogramDataPointSlice
	for i := range hm {
		hm[i] = pmetric.NewMetric()
		hm[i].SetName(signals[i].metric)
		hm[i].SetDescription(signals[i].description)
		hm[i].SetUnit("s")
		eh := hm[i].SetEmptyExponentialHistogram()
		eh.SetAggregationTemporality(temporality)
		dps[i] = eh.DataPoints()
	}
	var buf []uint64
	a.hist.each(func(s *histSeries) {
		for i := range s.h {
			h := &s.h[i]
			if h.Count() == 0 {
				continue
			}
			dp := dps[i].AppendEmpty()
			s.attrs.CopyTo(dp.Attributes())
			dp.SetStartTimestamp(s.start[i])
			dp.SetTimestamp(ts)
			copyExpoHistogram(h, dp, &buf)
			if a.delta {
				h.Clear()
				s.start[i] = ts
			}
		}
		s.unsent = false
		pause.maybe()
	})
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
	a.reqs.each(func(s *sumSeries) {
		s.unsent = false
		if s.count > 0 {
			dp := sum.DataPoints().AppendEmpty()
			s.attrs.CopyTo(dp.Attributes())
			dp.SetStartTimestamp(s.start)
			dp.SetTimestamp(ts)
			dp.SetIntValue(int64(s.count))
			if a.delta {
				s.count, s.start = 0, ts
			}
		}
		pause.maybe()
	})
	if sum.DataPoints().Len() > 0 {
		m.MoveTo(sm.Metrics().AppendEmpty())
	}

	a.windows.build(sm.Metrics(), now, pause)
	a.hin.windows.build(sm.Metrics(), now, pause)
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
