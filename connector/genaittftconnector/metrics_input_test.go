package genaittftconnector

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-ttft/otelcol-ttft/internal/bucketed"
	"github.com/otelcol-ttft/otelcol-ttft/internal/expohist"
	"github.com/otelcol-ttft/otelcol-ttft/internal/recommend"
	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

var bifrostBounds = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300}

// hp is one explicit-bucket data point of bifrost_stream_first_token_latency_seconds.
type hp struct {
	model        string
	start, ts    time.Time
	bounds       []float64
	counts       []uint64
	count        uint64 // 0: the sum of counts
	staleMarker  bool
	fallbackIdx  string
	temporality  pmetric.AggregationTemporality
	metricName   string
	extraLabels  map[string]string
	skipSetCount bool
}

func histMetrics(points ...hp) pmetric.Metrics {
	md := pmetric.NewMetrics()
	sm := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty()
	for _, p := range points {
		m := sm.Metrics().AppendEmpty()
		m.SetName(p.metricName)
		if p.metricName == "" {
			m.SetName("bifrost_stream_first_token_latency_seconds")
		}
		h := m.SetEmptyHistogram()
		h.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
		if p.temporality != pmetric.AggregationTemporalityUnspecified {
			h.SetAggregationTemporality(p.temporality)
		}
		dp := h.DataPoints().AppendEmpty()
		dp.Attributes().PutStr("provider", "openai")
		dp.Attributes().PutStr("model", p.model)
		fi := p.fallbackIdx
		if fi == "" {
			fi = "0"
		}
		dp.Attributes().PutStr("fallback_index", fi)
		for k, v := range p.extraLabels {
			dp.Attributes().PutStr(k, v)
		}
		if !p.start.IsZero() {
			dp.SetStartTimestamp(pcommon.NewTimestampFromTime(p.start))
		}
		dp.SetTimestamp(pcommon.NewTimestampFromTime(p.ts))
		b := p.bounds
		if b == nil {
			b = bifrostBounds
		}
		dp.ExplicitBounds().FromRaw(b)
		dp.BucketCounts().FromRaw(p.counts)
		n := p.count
		if n == 0 {
			for _, c := range p.counts {
				n += c
			}
		}
		dp.SetCount(n)
		if p.staleMarker {
			dp.SetFlags(pmetric.DefaultDataPointFlags.WithNoRecordedValue(true))
		}
	}
	return md
}

// counts17 puts n samples in bucket i of the 17 Bifrost buckets.
func counts17(kv ...uint64) []uint64 {
	c := make([]uint64, 17)
	for i := 0; i+1 < len(kv); i += 2 {
		c[kv[i]] += kv[i+1]
	}
	return c
}

func windowSamples(t *testing.T, md pmetric.Metrics, model string) float64 {
	t.Helper()
	ps := pointsWith(points(md, "ttft.window.samples"), map[string]any{record.KeyModel: model, attrResolution: "explicit_buckets"})
	if len(ps) == 0 {
		return 0
	}
	require.Len(t, ps, 1)
	return ps[0].value
}

// TestCumulativeIncrements: each cumulative point adds what grew since the
// last one; a restart (new start time) or a count that went down counts the
// point from zero; staleness markers and stale_after forget the series;
// out-of-order points are dropped.
func TestCumulativeIncrements(t *testing.T) {
	tel := componenttest.NewTelemetry()
	defer func() { require.NoError(t, tel.Shutdown(context.Background())) }()
	clock := clockwork.NewFakeClockAt(testStart)
	c, sink := newMetricsConnector(t, defaultConfig(), clock, tel)
	ctx := context.Background()
	t0 := testStart.Add(-time.Hour) // the producer started before the collector
	feed := func(p hp) {
		t.Helper()
		p.ts = clock.Now()
		require.NoError(t, c.ConsumeMetrics(ctx, histMetrics(p)))
		clock.Advance(15 * time.Second)
	}
	feed(hp{model: "m", start: t0, counts: counts17(7, 100)})        // baseline: started before us
	feed(hp{model: "m", start: t0, counts: counts17(7, 150, 8, 10)}) // +50 +10
	feed(hp{model: "m", start: t0, counts: counts17(7, 150, 8, 10)}) // unchanged
	feed(hp{model: "m", start: t0, counts: counts17(7, 20)})         // went down without a new start: reset, +20
	restart := clock.Now()
	feed(hp{model: "m", start: restart, counts: counts17(7, 5)})                                                                  // new start time: reset, +5
	feed(hp{model: "m", start: restart, counts: counts17(7, 4)})                                                                  // went down again: reset, +4
	require.NoError(t, c.ConsumeMetrics(ctx, histMetrics(hp{model: "m", start: restart, ts: testStart, counts: counts17(7, 9)}))) // out of order
	md := flushNow(t, c, sink)
	assert.Equal(t, float64(50+10+20+5+4), windowSamples(t, md, "m"))

	// A staleness marker (a failed scrape) keeps the last point: the same
	// producer's next point counts what grew, +996.
	feed(hp{model: "m", start: restart, counts: counts17(7, 4), staleMarker: true})
	feed(hp{model: "m", start: restart, counts: counts17(7, 1000)})
	// stale_after (15m) without any point forgets the series: a baseline.
	feed(hp{model: "n", start: t0, counts: counts17(7, 10)})
	clock.Advance(16 * time.Minute)
	c.flush(ctx)
	feed(hp{model: "n", start: t0, counts: counts17(7, 30)})
	md = flushNow(t, c, sink)
	assert.Equal(t, float64(89+996), windowSamples(t, md, "m"), "after the marker, what grew since 4 counts")
	assert.Equal(t, 0.0, windowSamples(t, md, "n"), "after stale_after, 30 is a new baseline")

	// A series that started after the collector counts from its first point.
	feed(hp{model: "fresh", start: clock.Now().Add(-time.Second), counts: counts17(7, 7)})
	md = flushNow(t, c, sink)
	assert.Equal(t, 7.0, windowSamples(t, md, "fresh"))

	assert.Equal(t, map[string]int64{pointBaseline: 3, pointWindowed: 6, pointUnchanged: 1, pointReset: 3, pointStale: 1},
		sumByAttr(t, tel, "otelcol_connector_genai_ttft_histogram_points", "result"))
	assert.Equal(t, map[string]int64{skipOutOfOrder: 1}, sumByAttr(t, tel, "otelcol_connector_genai_ttft_skipped", "reason"))
}

// TestForgettingOneSeriesHoldsBackOnlyItsReturn: stale_after of one series
// makes only that series' return a baseline (its first point may hold
// samples already windowed); a series first seen after it, that started
// after the collector, still counts whole. A staleness marker forgets
// nothing: the return counts what grew since the last point.
func TestForgettingOneSeriesHoldsBackOnlyItsReturn(t *testing.T) {
	clock := clockwork.NewFakeClockAt(testStart)
	c, sink := newMetricsConnector(t, defaultConfig(), clock, nil)
	ctx := context.Background()
	feed := func(p hp) {
		t.Helper()
		p.ts = clock.Now()
		require.NoError(t, c.ConsumeMetrics(ctx, histMetrics(p)))
		clock.Advance(15 * time.Second)
	}
	started := clock.Now().Add(time.Second) // after the collector, before the marker
	clock.Advance(time.Minute)
	feed(hp{model: "gone", start: started, counts: counts17(7, 3)})
	feed(hp{model: "gone", start: started, counts: counts17(7, 3), staleMarker: true})
	// Another sender's series, first seen now: started after the collector.
	feed(hp{model: "new", start: started, counts: counts17(7, 5)})
	// The marked series returns with its old start: 3 were windowed, +4 grew.
	feed(hp{model: "gone", start: started, counts: counts17(7, 7)})
	md := flushNow(t, c, sink)
	assert.Equal(t, 5.0, windowSamples(t, md, "new"), "another series' marker does not hold back a new series")
	assert.Equal(t, 7.0, windowSamples(t, md, "gone"), "the returning series counts what grew")

	// stale_after forgets only the silent series too.
	clock.Advance(16 * time.Minute) // both silent: both forgotten
	c.flush(ctx)
	feed(hp{model: "other", start: started, counts: counts17(7, 2)})
	feed(hp{model: "new", start: started, counts: counts17(7, 9)})
	// A restart of the forgotten series after it was forgotten counts whole.
	feed(hp{model: "gone", start: clock.Now().Add(-time.Second), counts: counts17(7, 1)})
	md = flushNow(t, c, sink)
	assert.Equal(t, 2.0, windowSamples(t, md, "other"))
	assert.Equal(t, 5.0, windowSamples(t, md, "new"), "the returning series' 9 is a baseline")
	assert.Equal(t, 8.0, windowSamples(t, md, "gone"), "a start after it was forgotten counts")
}

func TestInitialValueKeepAndDelta(t *testing.T) {
	cfg := defaultConfig()
	cfg.Histograms.InitialValue = initialKeep
	clock := clockwork.NewFakeClockAt(testStart)
	c, sink := newMetricsConnector(t, cfg, clock, nil)
	ctx := context.Background()
	require.NoError(t, c.ConsumeMetrics(ctx, histMetrics(hp{model: "kept", ts: testStart, counts: counts17(7, 3)})))
	// Delta points are increments already, whatever initial_value says.
	for i := 0; i < 2; i++ {
		require.NoError(t, c.ConsumeMetrics(ctx, histMetrics(hp{model: "delta", ts: testStart, counts: counts17(7, 3),
			temporality: pmetric.AggregationTemporalityDelta})))
	}
	md := flushNow(t, c, sink)
	assert.Equal(t, 3.0, windowSamples(t, md, "kept"))
	assert.Equal(t, 6.0, windowSamples(t, md, "delta"))
}

// TestBadHistogramInput: malformed points never panic, are counted by
// reason, and leave well-formed series intact.
func TestBadHistogramInput(t *testing.T) {
	tel := componenttest.NewTelemetry()
	defer func() { require.NoError(t, tel.Shutdown(context.Background())) }()
	clock := clockwork.NewFakeClockAt(testStart)
	c, sink := newMetricsConnector(t, defaultConfig(), clock, tel)
	delta := pmetric.AggregationTemporalityDelta
	nanBounds := slices.Clone(bifrostBounds)
	nanBounds[3] = math.NaN()
	unsorted := slices.Clone(bifrostBounds)
	unsorted[3], unsorted[4] = unsorted[4], unsorted[3]
	negative := slices.Clone(bifrostBounds)
	negative[0] = -1
	many := make([]float64, 10_000)
	for i := range many {
		many[i] = float64(i+1) * 1e-3
	}
	// A decreasing cumulative le count, as the receiver turns it into
	// per-bucket counts: the bucket wraps around.
	wrapped := counts17(7, 10)
	wrapped[8] = math.MaxUint64 - 4
	bad := []hp{
		{model: "nan", bounds: nanBounds, counts: counts17(7, 1), temporality: delta},
		{model: "unsorted", bounds: unsorted, counts: counts17(7, 1), temporality: delta},
		{model: "negative", bounds: negative, counts: counts17(7, 1), temporality: delta},
		{model: "decreasing", counts: wrapped, count: 5, temporality: delta},
		{model: "short", counts: []uint64{1, 2, 3}, temporality: delta},
		{model: "count-mismatch", counts: counts17(7, 10), count: 11, temporality: delta},
		{model: "many", bounds: many, counts: make([]uint64, 10_001), count: 1, temporality: delta},
	}
	bad[6].counts[5000] = 1
	ctx := context.Background()
	for _, p := range bad {
		p.ts = testStart
		require.NotPanics(t, func() { require.NoError(t, c.ConsumeMetrics(ctx, histMetrics(p))) }, p.model)
	}
	require.NoError(t, c.ConsumeMetrics(ctx, histMetrics(hp{model: "good", ts: testStart, counts: counts17(7, 5), temporality: delta})))

	// A non-histogram under a recognised name, and an exponential histogram with 10,000 buckets.
	md := pmetric.NewMetrics()
	ms := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics()
	g := ms.AppendEmpty()
	g.SetName("bifrost_stream_first_token_latency_seconds")
	g.SetEmptyGauge().DataPoints().AppendEmpty().SetDoubleValue(1)
	e := ms.AppendEmpty()
	e.SetName("gen_ai.client.operation.time_to_first_chunk")
	e.SetUnit("s")
	eh := e.SetEmptyExponentialHistogram()
	eh.SetAggregationTemporality(delta)
	edp := eh.DataPoints().AppendEmpty()
	edp.Attributes().PutStr("gen_ai.request.model", "wide-expo")
	edp.SetScale(8)
	edp.Positive().SetOffset(-1000)
	ones := make([]uint64, 10_000)
	for i := range ones {
		ones[i] = 1
	}
	edp.Positive().BucketCounts().FromRaw(ones)
	edp.SetCount(10_000)
	require.NotPanics(t, func() { require.NoError(t, c.ConsumeMetrics(ctx, md)) })

	out := flushNow(t, c, sink)
	assert.Equal(t, 5.0, windowSamples(t, out, "good"))
	for _, p := range bad {
		assert.Equal(t, 0.0, windowSamples(t, out, p.model), p.model)
	}
	wide := pointsWith(points(out, "ttft.window.samples"), map[string]any{record.KeyModel: "wide-expo"})
	require.Len(t, wide, 1)
	assert.Equal(t, 10_000.0, wide[0].value, "a 10,000-bucket exponential point is downscaled to max_buckets, not lost")
	for _, s := range c.agg.hin.windows.series.byKey {
		for _, lw := range s.layouts {
			assert.LessOrEqual(t, lw.w.SizeBytes(), 24*(1024*8+200)+1000, "a window stays within max_buckets per slice")
		}
	}
	assert.Equal(t, map[string]int64{
		skipInvalidBounds: 3, skipInvalidBuckets: 3, skipTooManyBuckets: 1, skipNotHistogram: 1,
	}, sumByAttr(t, tel, "otelcol_connector_genai_ttft_skipped", "reason"))
	assert.Equal(t, map[string]int64{pointWindowed: 2, pointDownscaled: 1},
		sumByAttr(t, tel, "otelcol_connector_genai_ttft_histogram_points", "result"))
}

// TestHistogramLabelFlood: 1M distinct models (100k under -race or -short)
// keep memory bounded by the cardinality limit and source_series_limit;
// the rest is counted, and a target that existed before keeps its data.
func TestHistogramLabelFlood(t *testing.T) {
	flood := 1_000_000
	if raceEnabled || testing.Short() {
		flood = 100_000
	}
	tel := componenttest.NewTelemetry()
	defer func() { require.NoError(t, tel.Shutdown(context.Background())) }()
	cfg := defaultConfig()
	clock := clockwork.NewFakeClockAt(testStart)
	c, sink := newMetricsConnector(t, cfg, clock, tel)
	ctx := context.Background()
	require.NoError(t, c.ConsumeMetrics(ctx, histMetrics(hp{model: "normal", ts: testStart, counts: counts17(7, 5),
		temporality: pmetric.AggregationTemporalityDelta})))

	const batch = 1000
	build := func(temporality pmetric.AggregationTemporality) (pmetric.Metrics, pmetric.HistogramDataPointSlice) {
		md := pmetric.NewMetrics()
		m := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
		m.SetName("bifrost_stream_first_token_latency_seconds")
		h := m.SetEmptyHistogram()
		h.SetAggregationTemporality(temporality)
		for i := 0; i < batch; i++ {
			dp := h.DataPoints().AppendEmpty()
			dp.Attributes().PutStr("provider", "openai")
			dp.Attributes().PutStr("model", "")
			dp.SetTimestamp(pcommon.NewTimestampFromTime(testStart))
			dp.ExplicitBounds().FromRaw(bifrostBounds)
			dp.BucketCounts().FromRaw(counts17(7, 1))
			dp.SetCount(1)
		}
		return md, h.DataPoints()
	}
	before := heapInUse()
	// Half the flood as delta points (straight into windows), half cumulative (source state first).
	for _, temp := range []pmetric.AggregationTemporality{pmetric.AggregationTemporalityDelta, pmetric.AggregationTemporalityCumulative} {
		md, dps := build(temp)
		for b := 0; b < flood/2/batch; b++ {
			for i := 0; i < batch; i++ {
				dps.At(i).Attributes().PutStr("model", fmt.Sprintf("flood-%d-%d", temp, b*batch+i))
			}
			require.NoError(t, c.ConsumeMetrics(ctx, md))
		}
	}
	after := heapInUse()
	counts := c.agg.seriesCounts()
	t.Logf("flood of %d models: heap %.1f MiB before, %.1f MiB after (delta %.1f MiB); series %v",
		flood, mib(before), mib(after), mib(after)-mib(before), counts)
	assert.Equal(t, int64(cfg.AggregationCardinalityLimit), counts[kindWindows], "windows stop at the cardinality limit")
	assert.Equal(t, int64(cfg.Histograms.SourceSeriesLimit), counts[kindHistogramSources], "source states stop at source_series_limit")
	assert.Less(t, mib(after)-mib(before), 128.0, "memory follows the limits, not the flood")

	skipped := sumByAttr(t, tel, "otelcol_connector_genai_ttft_skipped", "reason")
	assert.Equal(t, int64(flood/2-cfg.Histograms.SourceSeriesLimit), skipped[skipSourceSeriesLimit])
	over := sumByAttr(t, tel, "otelcol_connector_genai_ttft_overflowed", "kind")
	assert.Equal(t, int64(flood/2-(cfg.AggregationCardinalityLimit-1)), over["windows"])
	md := flushNow(t, c, sink)
	assert.Equal(t, 5.0, windowSamples(t, md, "normal"))

	// Forgotten, the flood leaves tombstones bounded by the same limit; a
	// second wave forgotten on top moves into the floor instead.
	clock.Advance(cfg.Histograms.StaleAfter + time.Minute)
	c.flush(ctx)
	assert.Len(t, c.agg.hin.forgotten, cfg.Histograms.SourceSeriesLimit)
	md, dps := build(pmetric.AggregationTemporalityCumulative)
	for i := 0; i < batch; i++ {
		dps.At(i).Attributes().PutStr("model", fmt.Sprintf("wave-%d", i))
		dps.At(i).SetTimestamp(pcommon.NewTimestampFromTime(clock.Now()))
	}
	require.NoError(t, c.ConsumeMetrics(ctx, md))
	clock.Advance(cfg.Histograms.StaleAfter + time.Minute)
	c.flush(ctx)
	assert.Len(t, c.agg.hin.forgotten, cfg.Histograms.SourceSeriesLimit)
	assert.Equal(t, clock.Now(), c.agg.hin.forgotFloor)
	// A window later the tombstones are gone, their time in the floor.
	clock.Advance(cfg.Window + time.Minute)
	c.flush(ctx)
	assert.Empty(t, c.agg.hin.forgotten)
	runtime.KeepAlive(c)
}

// TestExponentialHistogramOverOTLP: the semconv client metric as an OTel SDK
// exports it (delta exponential histogram) gives quantile bounds within 1%
// of the exact nearest-rank quantile where its scale allows (≥ 7), and an
// interval as wide as its scale where it does not.
func TestExponentialHistogramOverOTLP(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	vals := make([]float64, 100_000)
	for i := range vals {
		vals[i] = 0.6 * math.Exp(0.5*r.NormFloat64())
	}
	sorted := slices.Clone(vals)
	sort.Float64s(sorted)
	cfg := defaultConfig()
	cfg.Policies = append(cfg.Policies, cfgPolicyFirstChunk())
	for _, maxSize := range []int32{160, 2048} {
		t.Run(fmt.Sprint("max_size_", maxSize), func(t *testing.T) {
			var h expohist.Histogram
			h.Init(maxSize)
			for _, v := range vals {
				h.Update(v)
			}
			md := pmetric.NewMetrics()
			dp := clientExpoPoint(md, "chat-app", "gpt-4o")
			copyExpoHistogram(&h, dp, new([]uint64))

			clock := clockwork.NewFakeClockAt(testStart)
			c, sink := newMetricsConnector(t, cfg, clock, nil)
			require.NoError(t, c.ConsumeMetrics(context.Background(), md))
			out := flushNow(t, c, sink)
			base := map[string]any{record.KeyModel: "gpt-4o", record.KeyMeasuredAt: record.MeasuredAtFirstChunk,
				record.KeyObserver: record.ObserverClient, attrResolution: "exponential_buckets"}
			// The scale the connector keeps: the producer's, downscaled to fit max_buckets.
			eff := &bucketed.Dist{Kind: bucketed.Exponential, Scale: h.Scale(), Offset: h.Offset(), Counts: slices.Clone(h.BucketCounts())}
			eff.Trim()
			eff.Fit(cfg.Histograms.MaxBuckets)
			scale := eff.Scale
			width := bucketed.RelativeWidth(scale)
			for _, q := range []string{"0.5", "0.9", "0.99", "0.999"} {
				qf := map[string]float64{"0.5": 0.5, "0.9": 0.9, "0.99": 0.99, "0.999": 0.999}[q]
				exact := sorted[bucketed.Rank(qf, uint64(len(sorted)))-1]
				lo := value(t, out, "ttft.quantile", attrsWith(base, attrQuantile, q, attrQuantileBound, "lower"))
				hi := value(t, out, "ttft.quantile", attrsWith(base, attrQuantile, q, attrQuantileBound, "upper"))
				require.True(t, exact > lo && exact <= hi, "q=%s: exact %v outside (%v, %v]", q, exact, lo, hi)
				t.Logf("producer scale %d, kept at %d (bucket width %.2f%%) q=%s: exact %.5f ∈ (%.5f, %.5f]: -%.3f%% / +%.3f%%",
					h.Scale(), scale, 100*width, q, exact, lo, hi, 100*(exact-lo)/exact, 100*(hi-exact)/exact)
				if scale >= 7 {
					assert.LessOrEqual(t, (exact-lo)/exact, 0.01)
					assert.LessOrEqual(t, (hi-exact)/exact, 0.01)
				} else {
					assert.Greater(t, hi/lo-1, 0.01, "the interval shows the scale cannot give 1%")
				}
			}
			// The opted-in first-chunk policy recommends from the upper bound.
			rec := value(t, out, "ttft.timeout.recommended", attrsWith(base, attrPolicy, "chunk_cutoff"))
			cut := 0
			for _, v := range vals {
				if v > rec {
					cut++
				}
			}
			assert.LessOrEqual(t, float64(cut)/float64(len(vals)), 0.01)
		})
	}
}

func cfgPolicyFirstChunk() recommend.Policy {
	return recommend.Policy{Name: "chunk_cutoff", Signal: recommend.SignalTimeToFirstToken, Quantile: 0.99, Headroom: 1.25,
		RoundTo: 100 * time.Millisecond, MeasuredAt: []string{record.MeasuredAtFirstChunk}}
}

// A source series keeps a key of bounded size whatever its labels: a label
// of 64 KiB, different on each of 50 series, leaves keys of 33 bytes, and
// each series' second point still counts as its increment over the first.
func TestHistogramSourceKeysAreBounded(t *testing.T) {
	tel := componenttest.NewTelemetry()
	defer func() { require.NoError(t, tel.Shutdown(context.Background())) }()
	clock := clockwork.NewFakeClockAt(testStart)
	c, sink := newMetricsConnector(t, defaultConfig(), clock, tel)
	ctx := context.Background()
	const series = 50
	big := func(i int) map[string]string {
		return map[string]string{"pod": fmt.Sprintf("%d-%s", i, strings.Repeat("p", 64<<10))}
	}
	t0 := testStart.Add(-time.Hour)
	for _, n := range []uint64{10, 15} {
		for i := range series {
			require.NoError(t, c.ConsumeMetrics(ctx, histMetrics(hp{model: "m", start: t0, ts: clock.Now(),
				counts: counts17(7, n), extraLabels: big(i)})))
		}
		clock.Advance(15 * time.Second)
	}
	md := flushNow(t, c, sink)
	assert.Equal(t, float64(5*series), windowSamples(t, md, "m"), "each series' increment, 15 − 10")
	require.Len(t, c.agg.hin.sources, series)
	for k := range c.agg.hin.sources {
		assert.Len(t, k, 1+sha256.Size)
	}
}

// A histogram sender controls its counts and bounds (docs/architecture.md
// §10). Counts near 2^64 from two sources of one target, or one point of
// 2^63, must not wrap the window's sums (a window of 2,000 reading 499, a
// cut ratio of 3.7·10^16, a negative sample count), and a bucket bound of
// 10^300 s or the largest float must not become a recommendation: past
// derive::max_ttft_seconds a bucket says only "beyond".
func TestHistogramInputsCannotWrapOrStateAbsurdTimes(t *testing.T) {
	delta := pmetric.AggregationTemporalityDelta
	legit := hp{model: "m", counts: counts17(7, 2000)} // 2,000 samples in (0.5, 1]
	for name, tc := range map[string]struct {
		pts        []hp
		minSamples float64
		recommends bool
	}{
		"a forged source near 2^64 beside a real one": {[]hp{legit, {model: "m", counts: counts17(16, math.MaxUint64-1500), extraLabels: map[string]string{"instance": "evil"}}}, 2000, false},
		"one point of 2^63 samples":                   {[]hp{{model: "m", counts: counts17(7, 1<<63)}}, 1 << 62, true},
		"a bucket bound of 10^300 s":                  {[]hp{{model: "m", bounds: []float64{1e300}, counts: []uint64{2000, 0}}}, 2000, false},
		"a bucket bound of the largest float":         {[]hp{{model: "m", bounds: []float64{math.MaxFloat64}, counts: []uint64{2000, 0}}}, 2000, false},
		"the real source alone":                       {[]hp{legit}, 2000, true},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := defaultConfig()
			c, sink := newMetricsConnector(t, cfg, clockwork.NewFakeClockAt(testStart), nil)
			for _, p := range tc.pts {
				p.ts, p.temporality = testStart, delta
				require.NoError(t, c.ConsumeMetrics(context.Background(), histMetrics(p)))
			}
			md := flushNow(t, c, sink)
			samples := points(md, "ttft.window.samples")
			require.Len(t, samples, 1)
			assert.GreaterOrEqual(t, samples[0].value, tc.minSamples, "the window holds at least what was sent")
			for _, name := range []string{"ttft.quantile", "ttft.timeout.recommended", "ttft.timeout.cut_ratio"} {
				for _, p := range points(md, name) {
					assert.False(t, math.IsNaN(p.value) || math.IsInf(p.value, 0), "%s %v = %v", name, p.attrs, p.value)
					assert.GreaterOrEqual(t, p.value, 0.0, "%s %v", name, p.attrs)
					assert.LessOrEqual(t, p.value, cfg.Derive.MaxTTFTSeconds*2, "%s %v: no time past max_ttft_seconds (× headroom)", name, p.attrs)
					if name == "ttft.timeout.cut_ratio" {
						assert.LessOrEqual(t, p.value, 1.0, "%s %v", name, p.attrs)
					}
				}
			}
			recs := pointsWith(points(md, "ttft.timeout.recommended"), map[string]any{"ttft.policy": "gateway_cutoff"})
			assert.Equal(t, tc.recommends, len(recs) == 1, "gateway_cutoff: %v", recs)
		})
	}
}

// TestWideZeroThresholdIsRefused: a point whose zero bucket is wider than a
// microsecond is refused (invalid_bounds). Merged into the target's window
// with another source's real points, its threshold of 50 s had become
// every quantile's lower bound.
func TestWideZeroThresholdIsRefused(t *testing.T) {
	point := func(md pmetric.Metrics, service string, counts []uint64, zero uint64, threshold float64) {
		dp := clientExpoPoint(md, service, "m")
		dp.SetScale(3)
		dp.Positive().SetOffset(-3)
		dp.Positive().BucketCounts().FromRaw(counts)
		dp.SetZeroCount(zero)
		dp.SetZeroThreshold(threshold)
		var n uint64 = zero
		for _, c := range counts {
			n += c
		}
		dp.SetCount(n)
	}
	tel := componenttest.NewTelemetry()
	defer func() { require.NoError(t, tel.Shutdown(context.Background())) }()
	c, sink := newMetricsConnector(t, defaultConfig(), clockwork.NewFakeClockAt(testStart), tel)
	md := pmetric.NewMetrics()
	point(md, "legit", []uint64{2000}, 0, 0)
	point(md, "evil", nil, 1, 50)
	point(md, "prometheus-native", []uint64{10}, 1, math.Ldexp(1, -128))
	require.NoError(t, c.ConsumeMetrics(context.Background(), md))
	out := flushNow(t, c, sink)
	lower := value(t, out, "ttft.quantile", map[string]any{record.KeyModel: "m", attrQuantile: "0.5", attrQuantileBound: "lower"})
	upper := value(t, out, "ttft.quantile", map[string]any{record.KeyModel: "m", attrQuantile: "0.5", attrQuantileBound: "upper"})
	assert.Less(t, lower, upper, "an interval, not inverted")
	assert.Less(t, lower, 1.0)
	assert.Equal(t, int64(1), sumByAttr(t, tel, "otelcol_connector_genai_ttft_skipped", "reason")[skipInvalidBounds])
}

// clientExpoPoint appends to md, under a resource of service, one delta point
// of the semconv client TTFT metric (exponential, seconds) for openai's model,
// stamped at testStart, and returns it for its buckets.
func clientExpoPoint(md pmetric.Metrics, service, model string) pmetric.ExponentialHistogramDataPoint {
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr("service.name", service)
	m := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	m.SetName("gen_ai.client.operation.time_to_first_chunk")
	m.SetUnit("s")
	eh := m.SetEmptyExponentialHistogram()
	eh.SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
	dp := eh.DataPoints().AppendEmpty()
	dp.Attributes().PutStr("gen_ai.provider.name", "openai")
	dp.Attributes().PutStr("gen_ai.request.model", model)
	dp.SetTimestamp(pcommon.NewTimestampFromTime(testStart))
	return dp
}

// TestForeignLayoutCannotBlankAWindow: one point whose bucket layout shares
// no bound with the target's real traffic (explicit), or whose exponential
// scale is below 0, is windowed apart and left out of the target's gauges:
// merged, it had widened every quantile to (0, +Inf] and removed the
// recommendation for a window's length. A layout that refines the real
// one merges; a fifth layout is refused.
func TestForeignLayoutCannotBlankAWindow(t *testing.T) {
	delta := pmetric.AggregationTemporalityDelta
	q99 := func(t *testing.T, md pmetric.Metrics, res, bound string) []point {
		return pointsWith(points(md, "ttft.quantile"), map[string]any{record.KeyModel: "m", attrResolution: res,
			attrQuantile: "0.99", attrQuantileBound: bound})
	}
	t.Run("explicit", func(t *testing.T) {
		tel := componenttest.NewTelemetry()
		defer func() { require.NoError(t, tel.Shutdown(context.Background())) }()
		c, sink := newMetricsConnector(t, defaultConfig(), clockwork.NewFakeClockAt(testStart), tel)
		feed := func(p hp) {
			t.Helper()
			p.model, p.ts, p.temporality = "m", testStart, delta
			require.NoError(t, c.ConsumeMetrics(context.Background(), histMetrics(p)))
		}
		feed(hp{counts: counts17(7, 1000)})                                      // (0.5, 1]
		feed(hp{bounds: []float64{0.3, 0.7, 1.5}, counts: []uint64{0, 0, 0, 5}}) // shares no bound
		refined := append(slices.Clone(bifrostBounds), 0.75)
		slices.Sort(refined)
		refinedCounts := make([]uint64, len(refined)+1)
		refinedCounts[7] = 20 // (0.5, 0.75]
		feed(hp{bounds: refined, counts: refinedCounts})
		feed(hp{bounds: []float64{2}, counts: []uint64{1, 0}})
		feed(hp{bounds: []float64{3}, counts: []uint64{1, 0}}) // a fifth layout
		md := flushNow(t, c, sink)

		assert.Equal(t, 1020.0, windowSamples(t, md, "m"), "the real layout and the one refining it")
		up := q99(t, md, "explicit_buckets", "upper")
		require.Len(t, up, 1, "p99 keeps an upper bound")
		assert.Equal(t, 1.0, up[0].value)
		recs := pointsWith(points(md, "ttft.timeout.recommended"), map[string]any{record.KeyModel: "m", "ttft.policy": "gateway_cutoff"})
		assert.Len(t, recs, 1, "the recommendation stays")
		assert.Equal(t, map[string]int64{pointWindowed: 2, pointLayoutApart: 2},
			sumByAttr(t, tel, "otelcol_connector_genai_ttft_histogram_points", "result"))
		assert.Equal(t, int64(1), sumByAttr(t, tel, "otelcol_connector_genai_ttft_skipped", "reason")[skipLayoutLimit])
	})
	t.Run("a layout that outnumbers the first takes over", func(t *testing.T) {
		c, sink := newMetricsConnector(t, defaultConfig(), clockwork.NewFakeClockAt(testStart), nil)
		for _, p := range []hp{
			{counts: counts17(7, 100)},
			{bounds: []float64{0.3, 0.7, 1.5}, counts: []uint64{0, 300, 0, 0}}, // an upgrade's new layout
		} {
			p.model, p.ts, p.temporality = "m", testStart, delta
			require.NoError(t, c.ConsumeMetrics(context.Background(), histMetrics(p)))
		}
		md := flushNow(t, c, sink)
		assert.Equal(t, 300.0, windowSamples(t, md, "m"))
		up := q99(t, md, "explicit_buckets", "upper")
		require.Len(t, up, 1)
		assert.Equal(t, 0.7, up[0].value)
	})
	t.Run("exponential", func(t *testing.T) {
		c, sink := newMetricsConnector(t, defaultConfig(), clockwork.NewFakeClockAt(testStart), nil)
		md := pmetric.NewMetrics()
		real := clientExpoPoint(md, "app", "m")
		real.SetScale(5)
		real.Positive().SetOffset(-10)
		counts := make([]uint64, 20)
		for i := range counts {
			counts[i] = 50
		}
		real.Positive().BucketCounts().FromRaw(counts)
		real.SetCount(1000)
		coarse := clientExpoPoint(md, "other", "m")
		coarse.SetScale(-10)
		coarse.Positive().SetOffset(-1)
		coarse.Positive().BucketCounts().FromRaw([]uint64{1})
		coarse.SetCount(1)
		require.NoError(t, c.ConsumeMetrics(context.Background(), md))
		out := flushNow(t, c, sink)
		up := q99(t, out, "exponential_buckets", "upper")
		require.Len(t, up, 1)
		lo := q99(t, out, "exponential_buckets", "lower")
		require.Len(t, lo, 1)
		assert.InDelta(t, 1.0, up[0].value/lo[0].value, bucketed.RelativeWidth(5)+1e-9, "scale 5's resolution kept")
	})
}
