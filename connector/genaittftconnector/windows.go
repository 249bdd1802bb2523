package genaittftconnector // import "github.com/otelcol-ttft/otelcol-ttft/connector/genaittftconnector"

import (
	"strconv"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-ttft/otelcol-ttft/internal/recommend"
	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
	"github.com/otelcol-ttft/otelcol-ttft/internal/window"
)

// winSeries holds the recommendation windows of one (dims, band,
// measured_at): one window per signal in use, so each window is keyed by
// (dims, band, measured_at, signal). They are separate from the exported
// histograms: they slide, and they keep the resolution p99.9 needs.
type winSeries struct {
	seriesHead // attrs: dims + band + measured_at (+ instance id)
	route      string
	measuredAt string
	w          [numSignals]*window.Window
}

// windowStore keeps every recommendation window and turns them into the
// gauges ttft.quantile, ttft.window.samples, ttft.timeout.recommended,
// ttft.timeout.cut_ratio and ttft.deadline.margin.
type windowStore struct {
	cfg       *Config
	used      [numSignals]bool
	routeDim  int // index of ttft.route among the dimensions, -1 if absent
	policies  []policyRef
	deadline  *recommend.Policy
	quantiles []string // formatted quantile labels
	series    table[*winSeries]
	// snaps are reused per signal: each window is merged once per flush.
	snaps      [numSignals]window.Snapshot
	minSamples int
}

type policyRef struct {
	p   recommend.Policy
	sig signal
}

func newWindowStore(cfg *Config) *windowStore {
	ws := &windowStore{
		cfg:        cfg,
		routeDim:   -1,
		series:     newTable[*winSeries](kindWindows, cfg.AggregationCardinalityLimit, false),
		minSamples: cfg.MinSamples,
	}
	ws.used[sigTTFT] = true
	for _, p := range cfg.Policies {
		sig, ok := signalNamed(p.Signal)
		if !ok {
			continue // rejected by Config.Validate
		}
		ws.used[sig] = true
		ws.policies = append(ws.policies, policyRef{p: p, sig: sig})
	}
	if cfg.Deadlines.Policy != "" {
		if p := cfg.policy(cfg.Deadlines.Policy); p != nil {
			ws.deadline = p
			ws.used[sigDuration] = true
		}
	}
	for i, d := range cfg.Dimensions {
		if d == record.KeyRoute {
			ws.routeDim = i
		}
	}
	for _, q := range cfg.Quantiles {
		ws.quantiles = append(ws.quantiles, strconv.FormatFloat(q, 'f', -1, 64))
	}
	return ws
}

func (ws *windowStore) len() int { return ws.series.len() }

// observe enters a record into its windows as recommend.WindowUse says
// (samples, censored observations, or not at all). The series is tgt's with
// the record's band and measured_at; *link caches it for the caller (link
// nil: no cache), whose own key determines it.
func (ws *windowStore) observe(tgt *target, link **winSeries, rec *record.Record, sv *signalValues, now time.Time, st *batchStats) {
	use, measuredAt, cut, hasCut := recommend.WindowUse(rec, ws.cfg.Censoring)
	if use == recommend.UseNone || (use == recommend.UseIdleCut && !ws.used[sigMaxChunkGap]) {
		// An idle cut enters only the longest-pause window: none is kept
		// when no policy reads it, and no series is made for it.
		return
	}
	var s *winSeries
	if link != nil {
		s = *link
	}
	// The link is the histogram series', whose key holds the record's
	// ttft.measured_at, not always the clock WindowUse files it under (a
	// cut after ttft.chunk events that carried nothing is first_content
	// data): a link to another clock's series is no hit.
	if s == nil || s.dead || s.measuredAt != measuredAt {
		var ok bool
		if s, ok = ws.get(tgt, rec.PromptBand, measuredAt, now, st); !ok {
			return
		}
		if link != nil {
			*link = s
		}
	}
	s.lastSeen = now
	if use == recommend.UseIdleCut {
		// Its longest pause is at least the one it was cut in; no pause
		// is above max_chunk_gap_seconds (the derivation's bound).
		ws.window(s, sigMaxChunkGap, now).ObserveCensored(min(cut, ws.cfg.Derive.MaxChunkGapSeconds), now)
		return
	}
	if use == recommend.UseCensored {
		if !hasCut {
			return
		}
		// A cut request's TTFT is at least its cut time, and no TTFT is
		// above max_ttft_seconds (docs/architecture.md §10): a cut claimed
		// later (a duration up to max_duration_seconds) is censored there,
		// still a true lower bound, so one record cannot make the
		// beyond-cutoff recommendation its own duration × headroom.
		cut = min(cut, ws.cfg.Derive.MaxTTFTSeconds)
		ws.window(s, sigTTFT, now).ObserveCensored(cut, now)
		if ws.used[sigFirstChunk] && !sv.ok[sigFirstChunk] {
			ws.window(s, sigFirstChunk, now).ObserveCensored(cut, now)
		}
		if _, hasTTFT := rec.TTFT(); !hasTTFT && !rec.HasTimeToFirstChunk {
			// Cut before any chunk: at least cut on the first-chunk
			// clock too. A source that measures there (a gateway) gives
			// its cut requests no clock; without this its first_chunk
			// tail would be truncated (docs/architecture.md §2).
			if fc := ws.find(tgt, rec.PromptBand, record.MeasuredAtFirstChunk); fc != nil && fc != s {
				fc.lastSeen = now
				fc.w[sigTTFT].ObserveCensored(cut, now)
				if ws.used[sigFirstChunk] {
					ws.window(fc, sigFirstChunk, now).ObserveCensored(cut, now)
				}
			}
		}
		return
	}
	for i, w := range s.w {
		if ws.used[i] && sv.ok[i] {
			if w == nil {
				w = ws.newWindow(s, signal(i), now)
			}
			w.ObserveCeil(sv.v[i], sv.k[i], sv.kok[i], now)
		}
	}
}

// keyFor starts the lookup of the window series of tgt, band and measuredAt.
func (ws *windowStore) keyFor(tgt *target, band, measuredAt string) {
	k := ws.series.keyFor(tgt)
	k.str(band)
	k.str(measuredAt)
}

func (ws *windowStore) get(tgt *target, band, measuredAt string, now time.Time, st *batchStats) (*winSeries, bool) {
	ws.keyFor(tgt, band, measuredAt)
	s, _, ok := ws.series.get(tgt, 2, st, func(attrs pcommon.Map, _ bool) *winSeries {
		putNonEmpty(attrs, record.KeyPromptBand, band)
		attrs.PutStr(record.KeyMeasuredAt, measuredAt)
		s := &winSeries{seriesHead: seriesHead{attrs: attrs}, measuredAt: measuredAt}
		if ws.routeDim >= 0 {
			s.route = tgt.vals[ws.routeDim]
		}
		// ttft.window.samples is emitted for every window series, even before
		// its first TTFT sample.
		ws.window(s, sigTTFT, now)
		return s
	})
	return s, ok
}

// find returns the window series of tgt, band and measuredAt if it exists.
// The table drops a dead series from its keys, so none is found.
func (ws *windowStore) find(tgt *target, band, measuredAt string) *winSeries {
	ws.keyFor(tgt, band, measuredAt)
	s, _ := ws.series.find()
	return s
}

func (ws *windowStore) window(s *winSeries, sig signal, now time.Time) *window.Window {
	if w := s.w[sig]; w != nil {
		return w
	}
	return ws.newWindow(s, sig, now)
}

func (ws *windowStore) newWindow(s *winSeries, sig signal, now time.Time) *window.Window {
	s.w[sig] = window.New(ws.cfg.Window, ws.cfg.WindowSlices, now)
	return s.w[sig]
}

// expire drops the window series whose windows slid empty.
func (ws *windowStore) expire(now time.Time) {
	ws.series.expire(now, 0, func(s *winSeries) bool {
		for _, w := range s.w {
			if w != nil && !w.Empty(now) {
				return false
			}
		}
		return true
	})
}

// takeOutOfRange returns the window samples outside the sketches' range
// since the last call (own telemetry).
func (ws *windowStore) takeOutOfRange() uint64 {
	var n uint64
	ws.series.each(func(s *winSeries) {
		for _, w := range s.w {
			if w != nil {
				n += w.TakeOutOfRange()
			}
		}
	})
	return n
}

type gauges struct {
	quantile, samples, recommended, cutRatio, margin pmetric.Metric
}

// gaugeSpec is a recommendation gauge's name, unit and description, the
// same whichever store (windows of derived records, windows of exported
// histograms) writes its points.
type gaugeSpec struct{ name, unit, desc string }

var (
	gaugeQuantile    = gaugeSpec{"ttft.quantile", "s", "Quantiles of time to first token over successful requests in the recommendation window; absent below the minimum-volume gate."}
	gaugeSamples     = gaugeSpec{"ttft.window.samples", "{request}", "Samples in the recommendation window: successful (ttft.censored=false) and cut by a first-token timeout (ttft.censored=true)."}
	gaugeRecommended = gaugeSpec{"ttft.timeout.recommended", "s", "Recommended timeout per policy; absent below the minimum-volume gate."}
	gaugeCutRatio    = gaugeSpec{"ttft.timeout.cut_ratio", "1", "Share of the window's requests that the recommended timeout would have cut."}
	gaugeMargin      = gaugeSpec{"ttft.deadline.margin", "s", "Deadline minus the first-token timeout minus the p50 of successful duration; negative means a failover cannot finish in time."}
)

func newGauge(g gaugeSpec) pmetric.Metric {
	m := pmetric.NewMetric()
	m.SetName(g.name)
	m.SetUnit(g.unit)
	m.SetDescription(g.desc)
	m.SetEmptyGauge()
	return m
}

// build appends the window gauges to ms.
func (ws *windowStore) build(ms pmetric.MetricSlice, now time.Time, pause *pauser) {
	g := gauges{
		quantile:    newGauge(gaugeQuantile),
		samples:     newGauge(gaugeSamples),
		recommended: newGauge(gaugeRecommended),
		cutRatio:    newGauge(gaugeCutRatio),
		margin:      newGauge(gaugeMargin),
	}
	ts := pcommon.NewTimestampFromTime(now)
	point := func(m pmetric.Metric, attrs pcommon.Map, v float64) pcommon.Map {
		dp := m.Gauge().DataPoints().AppendEmpty()
		attrs.CopyTo(dp.Attributes())
		dp.SetTimestamp(ts)
		dp.SetDoubleValue(v)
		return dp.Attributes()
	}
	censoring := ws.cfg.Censoring
	ws.series.each(func(s *winSeries) {
		pause.maybe()
		var taken [numSignals]bool
		snap := func(sig signal) *window.Snapshot {
			if !taken[sig] {
				s.w[sig].SnapshotInto(&ws.snaps[sig], now)
				taken[sig] = true
			}
			return &ws.snaps[sig]
		}
		if s.w[sigTTFT] != nil {
			ttft := snap(sigTTFT)
			sp := g.samples.Gauge().DataPoints()
			for _, c := range []bool{false, true} {
				n := ttft.Samples()
				if c {
					n = ttft.Censored()
				}
				dp := sp.AppendEmpty()
				s.attrs.CopyTo(dp.Attributes())
				dp.Attributes().PutBool(attrCensored, c)
				dp.SetTimestamp(ts)
				dp.SetIntValue(int64(n))
			}
			for i, q := range ws.cfg.Quantiles {
				if v, st := ttft.QuantileMin(q, ws.minSamples, censoring); st == window.OK {
					point(g.quantile, s.attrs, v).PutStr(attrQuantile, ws.quantiles[i])
				}
			}
		}
		for _, pr := range ws.policies {
			w := s.w[pr.sig]
			if w == nil || !pr.p.Accepts(s.measuredAt) {
				continue
			}
			sn := snap(pr.sig)
			r := recommend.Evaluate(pr.p, sn, ws.minSamples, censoring)
			if !r.OK {
				continue
			}
			point(g.recommended, s.attrs, r.Seconds).PutStr(attrPolicy, pr.p.Name)
			point(g.cutRatio, s.attrs, sn.CutRatio(r.Seconds)).PutStr(attrPolicy, pr.p.Name)
			if ws.deadline != nil && pr.p.Name == ws.deadline.Name && s.w[sigDuration] != nil {
				ws.addMargin(g.margin, s, snap(sigDuration), r.Seconds, point)
			}
		}
	})
	for _, m := range []pmetric.Metric{g.quantile, g.samples, g.recommended, g.cutRatio, g.margin} {
		if m.Gauge().DataPoints().Len() > 0 {
			m.MoveTo(ms.AppendEmpty())
		}
	}
}

// addMargin emits deadline − first-token timeout − p50 of successful duration,
// once the duration window passes the gate for p50.
func (ws *windowStore) addMargin(m pmetric.Metric, s *winSeries, dur *window.Snapshot, firstToken float64, point func(pmetric.Metric, pcommon.Map, float64) pcommon.Map) {
	p50, st := dur.QuantileMin(0.5, ws.minSamples, false)
	if st != window.OK {
		return
	}
	deadline := ws.cfg.deadline(s.route).Seconds()
	point(m, s.attrs, recommend.DeadlineMargin(deadline, firstToken, p50))
}
