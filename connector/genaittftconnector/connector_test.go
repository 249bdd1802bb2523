package genaittftconnector

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-ttft/otelcol-ttft/connector/genaittftconnector/internal/metadata"
	"github.com/otelcol-ttft/otelcol-ttft/internal/recommend"
	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

var gpt = req{provider: "openai", model: "gpt-4o", route: "support", ttft: 0.8, chunk: 0.05, gap: 0.3, duration: 3}

func with(r req, f func(*req)) req { f(&r); return r }

func repeat(r req, n int) []req {
	out := make([]req, n)
	for i := range out {
		out[i] = r
	}
	return out
}

// flushNow flushes and returns what the connector sent.
func flushNow(t *testing.T, c *ttftConnector, sink *consumertest.MetricsSink) pmetric.Metrics {
	t.Helper()
	before := len(sink.AllMetrics())
	c.flush(context.Background())
	all := sink.AllMetrics()
	if len(all) == before {
		return pmetric.NewMetrics()
	}
	return all[len(all)-1]
}

func TestTracesAndLogsShareOneAggregator(t *testing.T) {
	cfg := defaultConfig()
	set := connectortest.NewNopSettings(metadata.Type)
	sink := new(consumertest.MetricsSink)
	ctx := clockwork.AddToContext(context.Background(), clockwork.NewFakeClockAt(testStart))
	f := NewFactory()
	tc, err := f.CreateTracesToMetrics(ctx, set, cfg, sink)
	require.NoError(t, err)
	lc, err := f.CreateLogsToMetrics(ctx, set, cfg, sink)
	require.NoError(t, err)
	require.Same(t, tc.(*tracesConnector).sharedComponent, lc.(*logsConnector).sharedComponent)

	host := componenttest.NewNopHost()
	require.NoError(t, tc.Start(context.Background(), host))
	require.NoError(t, lc.Start(context.Background(), host))
	require.NoError(t, tc.ConsumeTraces(context.Background(), stampedTraces(gpt, gpt)))
	require.NoError(t, lc.ConsumeLogs(context.Background(), stampedLogs(gpt)))

	md := flushNow(t, tc.(*tracesConnector).conn, sink)
	assert.Equal(t, 3.0, value(t, md, "ttft.requests", map[string]any{record.KeyModel: "gpt-4o"}),
		"spans and gateway records of one target land in one ttft.requests series")
	assert.Equal(t, 2.0, value(t, md, "ttft.time_to_first_token", map[string]any{record.KeyObserver: "client"}))
	assert.Equal(t, 1.0, value(t, md, "ttft.time_to_first_token", map[string]any{record.KeyObserver: "gateway"}))

	require.NoError(t, tc.Shutdown(context.Background()))
	require.NoError(t, lc.Shutdown(context.Background()))

	// Once shut down, the same config builds a fresh connector.
	tc2, err := f.CreateTracesToMetrics(ctx, set, cfg, sink)
	require.NoError(t, err)
	assert.NotSame(t, tc.(*tracesConnector).sharedComponent, tc2.(*tracesConnector).sharedComponent)
	require.NoError(t, tc2.Shutdown(context.Background()))
}

func TestLifecycle(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, c *tracesConnector)
	}{
		{"shutdown without start", func(t *testing.T, c *tracesConnector) {
			require.NoError(t, c.Shutdown(context.Background()))
		}},
		{"shutdown twice", func(t *testing.T, c *tracesConnector) {
			require.NoError(t, c.Start(context.Background(), componenttest.NewNopHost()))
			require.NoError(t, c.Shutdown(context.Background()))
			require.NoError(t, c.Shutdown(context.Background()))
		}},
		{"start twice then shutdown", func(t *testing.T, c *tracesConnector) {
			require.NoError(t, c.Start(context.Background(), componenttest.NewNopHost()))
			require.NoError(t, c.conn.Start(context.Background(), componenttest.NewNopHost()))
			require.NoError(t, c.Shutdown(context.Background()))
		}},
		{"start after shutdown starts no ticker", func(t *testing.T, c *tracesConnector) {
			require.NoError(t, c.Shutdown(context.Background()))
			require.NoError(t, c.conn.Start(context.Background(), componenttest.NewNopHost()))
			require.NoError(t, c.conn.Shutdown(context.Background()))
		}},
		{"consume after shutdown", func(t *testing.T, c *tracesConnector) {
			require.NoError(t, c.Start(context.Background(), componenttest.NewNopHost()))
			require.NoError(t, c.Shutdown(context.Background()))
			require.NoError(t, c.ConsumeTraces(context.Background(), stampedTraces(gpt)))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// goleak (TestMain) proves the flush goroutine ended.
			set := connectortest.NewNopSettings(metadata.Type)
			tc, err := NewFactory().CreateTracesToMetrics(context.Background(), set, defaultConfig(), consumertest.NewNop())
			require.NoError(t, err)
			tt.run(t, tc.(*tracesConnector))
		})
	}
}

func TestCreateFailsOnInvalidDerive(t *testing.T) {
	cfg := defaultConfig()
	cfg.Derive.PromptBands = []int64{5, 1}
	_, err := NewFactory().CreateTracesToMetrics(context.Background(), connectortest.NewNopSettings(metadata.Type), cfg, consumertest.NewNop())
	require.Error(t, err)
}

func TestFlushOnTickerKeepsCumulativeStart(t *testing.T) {
	clock := clockwork.NewFakeClockAt(testStart)
	sink := new(consumertest.MetricsSink)
	c := newTestConnector(t, defaultConfig(), clock, sink)
	ctx := context.Background()
	require.NoError(t, c.Start(ctx, componenttest.NewNopHost()))
	defer func() { require.NoError(t, c.Shutdown(ctx)) }()
	require.NoError(t, clock.BlockUntilContext(ctx, 1), "the flush ticker is registered")

	require.NoError(t, c.ConsumeTraces(ctx, stampedTraces(gpt, gpt)))
	clock.Advance(14 * time.Second)
	time.Sleep(10 * time.Millisecond)
	assert.Empty(t, sink.AllMetrics(), "no flush before flush_interval")

	clock.Advance(time.Second)
	require.Eventually(t, func() bool { return len(sink.AllMetrics()) == 1 }, 5*time.Second, time.Millisecond)
	first := pointsWith(points(sink.AllMetrics()[0], "ttft.requests"), nil)
	require.Len(t, first, 1)
	assert.Equal(t, 2.0, first[0].value)
	assert.Equal(t, pcommon.NewTimestampFromTime(testStart), first[0].start, "start time is the series' creation")
	assert.Equal(t, pcommon.NewTimestampFromTime(testStart.Add(15*time.Second)), first[0].ts)
	assert.Equal(t, testInstanceID, first[0].attrs[attrCollectorInstanceID])

	require.NoError(t, c.ConsumeTraces(ctx, stampedTraces(gpt)))
	clock.Advance(15 * time.Second)
	require.Eventually(t, func() bool { return len(sink.AllMetrics()) == 2 }, 5*time.Second, time.Millisecond)
	second := points(sink.AllMetrics()[1], "ttft.requests")
	require.Len(t, second, 1)
	assert.Equal(t, 3.0, second[0].value, "cumulative")
	assert.Equal(t, first[0].start, second[0].start, "cumulative start time is fixed per series")
	assert.Equal(t, pcommon.NewTimestampFromTime(testStart.Add(30*time.Second)), second[0].ts)
}

func TestDeltaStartsEachIntervalAtThePreviousFlush(t *testing.T) {
	cfg := defaultConfig()
	cfg.AggregationTemporality = temporalityDelta
	clock := clockwork.NewFakeClockAt(testStart)
	sink := new(consumertest.MetricsSink)
	c := newTestConnector(t, cfg, clock, sink)
	defer func() { require.NoError(t, c.Shutdown(context.Background())) }()

	require.NoError(t, c.ConsumeTraces(context.Background(), stampedTraces(gpt, gpt)))
	clock.Advance(15 * time.Second)
	md := flushNow(t, c, sink)
	p := points(md, "ttft.requests")
	require.Len(t, p, 1)
	assert.Equal(t, 2.0, p[0].value)
	assert.Equal(t, pmetric.AggregationTemporalityDelta, mustMetric(t, md, "ttft.requests").Sum().AggregationTemporality())

	require.NoError(t, c.ConsumeTraces(context.Background(), stampedTraces(gpt)))
	clock.Advance(15 * time.Second)
	p2 := points(flushNow(t, c, sink), "ttft.requests")
	require.Len(t, p2, 1)
	assert.Equal(t, 1.0, p2[0].value, "delta counts only the new interval")
	assert.Equal(t, p[0].ts, p2[0].start, "a delta interval starts where the previous one ended")
}

func mustMetric(t *testing.T, md pmetric.Metrics, name string) pmetric.Metric {
	t.Helper()
	m, ok := findMetric(md, name)
	require.True(t, ok, name)
	return m
}

func TestWindowRotation(t *testing.T) {
	cfg := defaultConfig()
	cfg.Window = 4 * time.Hour
	cfg.WindowSlices = 4
	cfg.MinSamples = 1
	cfg.MetricsExpiration = 0 // only the window decides here
	clock := clockwork.NewFakeClockAt(testStart)
	sink := new(consumertest.MetricsSink)
	c := newTestConnector(t, cfg, clock, sink)
	defer func() { require.NoError(t, c.Shutdown(context.Background())) }()
	successful := map[string]any{attrCensored: false}

	require.NoError(t, c.ConsumeTraces(context.Background(), stampedTraces(with(gpt, func(r *req) { r.ttft = 1 }))))
	clock.Advance(3 * time.Hour)
	require.NoError(t, c.ConsumeTraces(context.Background(), stampedTraces(repeat(with(gpt, func(r *req) { r.ttft = 3 }), 2)...)))
	md := flushNow(t, c, sink)
	assert.Equal(t, 3.0, value(t, md, "ttft.window.samples", successful))
	assert.InDelta(t, 3.0, value(t, md, "ttft.quantile", map[string]any{attrQuantile: "0.5"}), 0.03)

	clock.Advance(59 * time.Minute) // 3h59: the first slice is still in the window
	assert.Equal(t, 3.0, value(t, flushNow(t, c, sink), "ttft.window.samples", successful))

	clock.Advance(time.Minute) // 4h: the first slice slides out
	md = flushNow(t, c, sink)
	assert.Equal(t, 2.0, value(t, md, "ttft.window.samples", successful))
	assert.Equal(t, 3.0, value(t, md, "ttft.requests", nil), "exported counters do not slide")

	clock.Advance(3 * time.Hour) // every sample slid out: the window series goes
	md = flushNow(t, c, sink)
	assert.Empty(t, points(md, "ttft.window.samples"))
	assert.Equal(t, 3.0, value(t, md, "ttft.requests", nil))
}

// TestExpiryDropsIdleSeriesWindowsLastTheirWindow: exported series go
// after metrics_expiration idle; a recommendation window keeps its samples
// for its whole length, so a quiet hour does not lose a 24h window.
func TestExpiryDropsIdleSeriesWindowsLastTheirWindow(t *testing.T) {
	cfg := defaultConfig()
	cfg.MetricsExpiration = time.Hour
	clock := clockwork.NewFakeClockAt(testStart)
	sink := new(consumertest.MetricsSink)
	c := newTestConnector(t, cfg, clock, sink)
	defer func() { require.NoError(t, c.Shutdown(context.Background())) }()
	claude := with(gpt, func(r *req) { r.provider, r.model = "anthropic", "claude" })
	isGPT := map[string]any{record.KeyModel: "gpt-4o"}
	isClaude := map[string]any{record.KeyModel: "claude"}

	require.NoError(t, c.ConsumeTraces(context.Background(), stampedTraces(gpt)))
	clock.Advance(50 * time.Minute)
	require.NoError(t, c.ConsumeTraces(context.Background(), stampedTraces(claude)))
	clock.Advance(10 * time.Minute) // gpt idle exactly 1h: kept
	md := flushNow(t, c, sink)
	for _, name := range []string{"ttft.requests", "ttft.time_to_first_token", "ttft.window.samples"} {
		assert.NotEmpty(t, pointsWith(points(md, name), isGPT), name)
	}

	clock.Advance(time.Second) // gpt idle 1h0m1s: its exported series dropped, claude's kept
	md = flushNow(t, c, sink)
	for _, name := range []string{"ttft.requests", "ttft.time_to_first_token", "ttft.duration"} {
		assert.Empty(t, pointsWith(points(md, name), isGPT), name)
		assert.NotEmpty(t, pointsWith(points(md, name), isClaude), name)
	}
	assert.Equal(t, 1.0, pointsWith(points(md, "ttft.window.samples"), map[string]any{record.KeyModel: "gpt-4o", attrCensored: false})[0].value,
		"the window still holds gpt's sample")
	assert.Equal(t, [numSeriesKinds]int64{1, 1, 2}, c.agg.seriesCounts(), "claude's histogram and counter, both window series")

	// 24h after its sample gpt's window slid empty and goes; claude's,
	// with a later sample, an hour later.
	require.NoError(t, c.ConsumeTraces(context.Background(), stampedTraces(claude)))
	clock.Advance(23*time.Hour + time.Minute)
	md = flushNow(t, c, sink)
	assert.Empty(t, pointsWith(points(md, "ttft.window.samples"), isGPT))
	assert.NotEmpty(t, pointsWith(points(md, "ttft.window.samples"), isClaude))
	clock.Advance(time.Hour)
	flushNow(t, c, sink)
	assert.Equal(t, [numSeriesKinds]int64{0, 0, 0}, c.agg.seriesCounts())

	// A returning target starts a new cumulative series.
	require.NoError(t, c.ConsumeTraces(context.Background(), stampedTraces(gpt)))
	p := pointsWith(points(flushNow(t, c, sink), "ttft.requests"), isGPT)
	require.Len(t, p, 1)
	assert.Equal(t, 1.0, p[0].value)
	assert.Equal(t, pcommon.NewTimestampFromTime(clock.Now()), p[0].start)
}

// The minimum-volume gate seen from outside: below max(min_samples,
// ceil(1/(1-q))) successful samples there is no ttft.quantile and no
// ttft.timeout.recommended for q, while ttft.window.samples is emitted.
func TestGateThroughConnector(t *testing.T) {
	cfg := defaultConfig() // min_samples 200; quantiles 0.5..0.999; policies q 0.999, 0.99, 0.999
	clock := clockwork.NewFakeClockAt(testStart)
	sink := new(consumertest.MetricsSink)
	c := newTestConnector(t, cfg, clock, sink)
	defer func() { require.NoError(t, c.Shutdown(context.Background())) }()

	feed := func(n int) {
		reqs := make([]req, n)
		for i := range reqs {
			reqs[i] = with(gpt, func(r *req) { r.ttft = 0.5 + float64(i%100)/100 })
		}
		require.NoError(t, c.ConsumeTraces(context.Background(), stampedTraces(reqs...)))
	}
	quantiles := func(md pmetric.Metrics) []string {
		var qs []string
		for _, p := range points(md, "ttft.quantile") {
			qs = append(qs, p.attrs[attrQuantile].(string))
		}
		return qs
	}
	policies := func(md pmetric.Metrics) []string {
		var ps []string
		for _, p := range points(md, "ttft.timeout.recommended") {
			ps = append(ps, p.attrs[attrPolicy].(string))
		}
		return ps
	}

	feed(199)
	md := flushNow(t, c, sink)
	assert.Equal(t, 199.0, value(t, md, "ttft.window.samples", map[string]any{attrCensored: false}))
	assert.Equal(t, 0.0, value(t, md, "ttft.window.samples", map[string]any{attrCensored: true}))
	assert.Empty(t, quantiles(md), "199 < min_samples")
	assert.Empty(t, policies(md))
	assert.Empty(t, points(md, "ttft.timeout.cut_ratio"))
	assert.Empty(t, points(md, "ttft.deadline.margin"))

	feed(1)
	md = flushNow(t, c, sink)
	assert.ElementsMatch(t, []string{"0.5", "0.9", "0.99"}, quantiles(md), "p99.9 needs 1000")
	assert.ElementsMatch(t, []string{"gateway_cutoff"}, policies(md), "first_token and idle (p99.9) need 1000")
	assert.Empty(t, points(md, "ttft.deadline.margin"), "the margin uses first_token")

	feed(799)
	assert.NotContains(t, quantiles(flushNow(t, c, sink)), "0.999", "999 < 1000")

	feed(1)
	md = flushNow(t, c, sink)
	assert.ElementsMatch(t, []string{"0.5", "0.9", "0.99", "0.999"}, quantiles(md))
	assert.ElementsMatch(t, []string{"first_token", "gateway_cutoff", "idle"}, policies(md))
	// p99.9 of 0.50..1.49 is 1.49; × 1.25 = 1.8625 → 1.9 s.
	firstToken := value(t, md, "ttft.timeout.recommended", map[string]any{attrPolicy: "first_token"})
	assert.InDelta(t, 1.9, firstToken, 1e-9)
	// margin = 30 s default deadline − 1.9 − p50 duration (3 s).
	assert.InDelta(t, 30-1.9-3, value(t, md, "ttft.deadline.margin", nil), 0.02)
}

// TestFailedOverRequestsStayOutOfTheRecommendation: a request that failed
// over has a TTFT that includes the first attempt's timeout; 0.2% of them
// must not move a per-attempt first-token timeout.
func TestFailedOverRequestsStayOutOfTheRecommendation(t *testing.T) {
	cfg := defaultConfig()
	sink := new(consumertest.MetricsSink)
	c := newTestConnector(t, cfg, clockwork.NewFakeClockAt(testStart), sink)
	defer func() { require.NoError(t, c.Shutdown(context.Background())) }()
	reqs := make([]req, 0, 1002)
	for i := range 1000 {
		reqs = append(reqs, with(gpt, func(r *req) { r.ttft = 0.5 + float64(i%100)/100 }))
	}
	for range 2 {
		reqs = append(reqs, with(gpt, func(r *req) { r.ttft, r.attempts, r.duration = 12.4, 2, 15 }))
	}
	require.NoError(t, c.ConsumeTraces(context.Background(), stampedTraces(reqs...)))
	md := flushNow(t, c, sink)
	assert.InDelta(t, 1.9, value(t, md, "ttft.timeout.recommended", map[string]any{attrPolicy: "first_token"}), 1e-9)
	assert.Equal(t, 1000.0, value(t, md, "ttft.window.samples", map[string]any{attrCensored: false}))
	assert.Equal(t, 2.0, value(t, md, "ttft.time_to_first_token", map[string]any{attrFailedOver: true}), "in the failed_over histogram")
}

func TestCensoringSwitch(t *testing.T) {
	// 10 successes at 1..10 s and 10 requests cut at 5 s by a first-token timeout.
	reqs := make([]req, 0, 20)
	for i := 1; i <= 10; i++ {
		reqs = append(reqs, with(gpt, func(r *req) { r.ttft, r.duration = float64(i), float64(i)+1 }))
		reqs = append(reqs, with(gpt, func(r *req) {
			r.outcome, r.ttft, r.chunk, r.gap, r.duration = record.OutcomeTimeoutFirstToken, -1, 0, 0, 5
		}))
	}
	tests := []struct {
		censoring    bool
		wantCensored float64
		wantP50      float64
	}{
		// Ignoring cut requests, the median of 1..10 is 5.
		{censoring: false, wantCensored: 0, wantP50: 5},
		// Counting them as "at least 5 s", the population above 5 s is 15 of
		// 20: the product-limit median is 7 s.
		{censoring: true, wantCensored: 10, wantP50: 7},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("censoring=%v", tt.censoring), func(t *testing.T) {
			cfg := defaultConfig()
			cfg.MinSamples = 1
			cfg.Censoring = tt.censoring
			sink := new(consumertest.MetricsSink)
			c := newTestConnector(t, cfg, clockwork.NewFakeClockAt(testStart), sink)
			defer func() { require.NoError(t, c.Shutdown(context.Background())) }()
			require.NoError(t, c.ConsumeTraces(context.Background(), stampedTraces(reqs...)))
			md := flushNow(t, c, sink)
			assert.Equal(t, tt.wantCensored, value(t, md, "ttft.window.samples", map[string]any{attrCensored: true}))
			assert.InDelta(t, tt.wantP50, value(t, md, "ttft.quantile", map[string]any{attrQuantile: "0.5"}), tt.wantP50*0.01)
		})
	}
}

// TestCensoringReachesTheFirstChunkClock: a source that measures at the
// first chunk (a gateway) reports a request cut before any chunk with no
// TTFT, so no clock; it is at least its cut time on either clock, and a
// first_chunk policy's tail must count it too.
func TestCensoringReachesTheFirstChunkClock(t *testing.T) {
	reqs := make([]req, 0, 20)
	for i := 1; i <= 10; i++ {
		reqs = append(reqs, with(gpt, func(r *req) {
			r.measuredAt, r.ttft, r.chunk, r.duration = record.MeasuredAtFirstChunk, float64(i), 0, float64(i)+1
		}))
		reqs = append(reqs, with(gpt, func(r *req) {
			r.outcome, r.ttft, r.chunk, r.gap, r.duration = record.OutcomeTimeoutFirstToken, -1, 0, 0, 5
		}))
	}
	cfg := defaultConfig()
	cfg.MinSamples = 1
	// A first-chunk policy on either signal sees the cuts.
	cfg.Policies = append(cfg.Policies,
		recommend.Policy{Name: "chunk_cutoff", Signal: recommend.SignalTimeToFirstToken, Quantile: 0.5, Headroom: 1, RoundTo: 100 * time.Millisecond, MeasuredAt: []string{record.MeasuredAtFirstChunk}},
		recommend.Policy{Name: "chunk_signal", Signal: recommend.SignalTimeToFirstChunk, Quantile: 0.5, Headroom: 1, RoundTo: 100 * time.Millisecond, MeasuredAt: []string{record.MeasuredAtFirstChunk}})
	require.NoError(t, cfg.Validate())
	sink := new(consumertest.MetricsSink)
	c := newTestConnector(t, cfg, clockwork.NewFakeClockAt(testStart), sink)
	defer func() { require.NoError(t, c.Shutdown(context.Background())) }()
	require.NoError(t, c.ConsumeTraces(context.Background(), stampedTraces(reqs...)))
	md := flushNow(t, c, sink)
	for _, p := range []string{"chunk_cutoff", "chunk_signal"} {
		assert.InDelta(t, 7.0, value(t, md, "ttft.timeout.recommended", map[string]any{record.KeyMeasuredAt: record.MeasuredAtFirstChunk, attrPolicy: p}), 0.1, p)
	}
	chunk := map[string]any{record.KeyMeasuredAt: record.MeasuredAtFirstChunk}
	assert.Equal(t, 10.0, value(t, md, "ttft.window.samples", map[string]any{record.KeyMeasuredAt: record.MeasuredAtFirstChunk, attrCensored: true}))
	assert.InDelta(t, 7.0, value(t, md, "ttft.quantile", map[string]any{record.KeyMeasuredAt: record.MeasuredAtFirstChunk, attrQuantile: "0.5"}), 0.07)
	assert.Len(t, pointsWith(points(md, "ttft.window.samples"), chunk), 2)

	// A target measured on the first-content clock only gets no
	// first_chunk series from its cuts.
	cfg2 := defaultConfig()
	cfg2.MinSamples = 1
	c2 := newTestConnector(t, cfg2, clockwork.NewFakeClockAt(testStart), new(consumertest.MetricsSink))
	defer func() { require.NoError(t, c2.Shutdown(context.Background())) }()
	require.NoError(t, c2.ConsumeTraces(context.Background(), stampedTraces(reqs[1])))
	md = flushNow(t, c2, c2.next.(*consumertest.MetricsSink))
	assert.NotEmpty(t, points(md, "ttft.window.samples"))
	assert.Empty(t, pointsWith(points(md, "ttft.window.samples"), chunk))
}

// TestCutAfterARoleChunkIsCensoredOnTheFirstContentClock: a request the
// stream instrumentation saw cut by a first-token timeout after a role-only
// chunk (ttft.chunk events, derived here) is a censored first_content
// observation at its cut time, as a request cut before any chunk is. It
// was censored at the role chunk (0.05 s) on the first_chunk clock, which
// no default policy reads: the first_content tail lost every such cut.
func TestCutAfterARoleChunkIsCensoredOnTheFirstContentClock(t *testing.T) {
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	for i := 0; i < 20; i++ {
		callSpan(spans, byte(i+1), 1, 0, "gpt-4.1", 1+float64(i)*0.01, 3)
	}
	for i := 0; i < 20; i++ {
		s := callSpan(spans, byte(i+101), 1, 0, "gpt-4.1", 0, 1) // the role chunk only
		s.Attributes().Remove("gen_ai.response.finish_reasons")
		s.Attributes().PutStr("error.type", "timeout")
		s.Status().SetCode(ptrace.StatusCodeError)
	}
	cfg := defaultConfig()
	cfg.MinSamples = 1
	sink := new(consumertest.MetricsSink)
	c := newTestConnector(t, cfg, clockwork.NewFakeClockAt(testStart), sink)
	defer func() { require.NoError(t, c.Shutdown(context.Background())) }()
	require.NoError(t, c.ConsumeTraces(context.Background(), td))
	md := flushNow(t, c, sink)
	assert.Equal(t, 20.0, value(t, md, "ttft.window.samples", map[string]any{record.KeyMeasuredAt: record.MeasuredAtFirstContent, attrCensored: true}))
	assert.Equal(t, 20.0, value(t, md, "ttft.window.samples", map[string]any{record.KeyMeasuredAt: record.MeasuredAtFirstContent, attrCensored: false}))
	assert.Empty(t, pointsWith(points(md, "ttft.window.samples"), map[string]any{record.KeyMeasuredAt: record.MeasuredAtFirstChunk}))
	// Half the requests were cut at 5 s, after every success: the median is
	// the slowest success (1.19 s), not the successes' own median (1.09 s).
	assert.InDelta(t, 1.19, value(t, md, "ttft.quantile", map[string]any{record.KeyMeasuredAt: record.MeasuredAtFirstContent, attrQuantile: "0.5"}), 0.005)
}

func TestSkipsWhatIsNotAStreamedRecord(t *testing.T) {
	notStreamed := false
	sink := new(consumertest.MetricsSink)
	c := newTestConnector(t, defaultConfig(), clockwork.NewFakeClockAt(testStart), sink)
	defer func() { require.NoError(t, c.Shutdown(context.Background())) }()
	td := stampedTraces(with(gpt, func(r *req) { r.streamed = &notStreamed }))
	// A span whose ttft.* values are unusable is derived afresh: with no
	// GenAI evidence of its own it yields no record.
	bad := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().AppendEmpty()
	bad.Attributes().PutStr(record.KeyOutcome, record.OutcomeComplete)
	bad.Attributes().PutDouble(record.KeyTimeToFirstContent, -1)
	require.NoError(t, c.ConsumeTraces(context.Background(), td))
	assert.Equal(t, 0, flushNow(t, c, sink).DataPointCount())
}

func TestCardinalityLimitOverflow(t *testing.T) {
	cfg := defaultConfig()
	cfg.AggregationCardinalityLimit = 3
	cfg.MinSamples = 1
	sink := new(consumertest.MetricsSink)
	c := newTestConnector(t, cfg, clockwork.NewFakeClockAt(testStart), sink)
	defer func() { require.NoError(t, c.Shutdown(context.Background())) }()
	var reqs []req
	for i := range 10 {
		reqs = append(reqs, with(gpt, func(r *req) { r.model = fmt.Sprintf("m%d", i) }))
	}
	reqs = append(reqs, repeat(with(gpt, func(r *req) { r.model = "m0" }), 5)...)
	require.NoError(t, c.ConsumeTraces(context.Background(), stampedTraces(reqs...)))
	md := flushNow(t, c, sink)

	overflow := map[string]any{attrOverflow: true}
	for _, name := range []string{"ttft.requests", "ttft.time_to_first_token", "ttft.duration"} {
		ps := points(md, name)
		assert.Len(t, ps, 4, "%s: 3 series + 1 overflow", name)
		assert.Equal(t, 7.0, value(t, md, name, overflow), name)
		assert.Equal(t, map[string]any{attrOverflow: true, attrCollectorInstanceID: testInstanceID},
			pointsWith(ps, overflow)[0].attrs, "%s: the overflow series carries only the marker (and the instance)", name)
		assert.Equal(t, 6.0, value(t, md, name, map[string]any{record.KeyModel: "m0"}), "%s: existing series keep counting", name)
	}
	assert.Len(t, points(md, "ttft.window.samples"), 6, "3 window series × (successful, censored); no overflow window")
}

type failingConsumer struct{ consumertest.MetricsSink }

func (*failingConsumer) ConsumeMetrics(context.Context, pmetric.Metrics) error {
	return errors.New("downstream refused")
}

func TestFlushSurvivesDownstreamError(t *testing.T) {
	c := newTestConnector(t, defaultConfig(), clockwork.NewFakeClockAt(testStart), &failingConsumer{})
	defer func() { require.NoError(t, c.Shutdown(context.Background())) }()
	require.NoError(t, c.ConsumeTraces(context.Background(), stampedTraces(gpt)))
	c.flush(context.Background())
	c.flush(context.Background()) // the second error is rate-limited, not a panic
	assert.Equal(t, int64(1), c.agg.seriesCounts()[kindRequests], "state survives a failed send")
}

// Dimensions resolved from resource attributes follow each resource of a
// batch, and each batch; values longer than maxDimValueLen are cut.
func TestResourceDimensionsAndLongValues(t *testing.T) {
	cfg := defaultConfig()
	cfg.Dimensions = append(cfg.Dimensions, "deployment.environment")
	cfg.MinSamples = 1
	sink := new(consumertest.MetricsSink)
	c := newTestConnector(t, cfg, clockwork.NewFakeClockAt(testStart), sink)
	defer func() { require.NoError(t, c.Shutdown(context.Background())) }()

	batch := func(envs ...string) ptrace.Traces {
		td := ptrace.NewTraces()
		for _, env := range envs {
			one := stampedTraces(gpt)
			if env != "" {
				one.ResourceSpans().At(0).Resource().Attributes().PutStr("deployment.environment", env)
			}
			one.ResourceSpans().MoveAndAppendTo(td.ResourceSpans())
		}
		return td
	}
	require.NoError(t, c.ConsumeTraces(context.Background(), batch("prod", "prod", "staging", "")))
	require.NoError(t, c.ConsumeTraces(context.Background(), batch("dev")))
	long := strings.Repeat("é", maxDimValueLen) // 2 bytes a rune
	require.NoError(t, c.ConsumeTraces(context.Background(), stampedTraces(with(gpt, func(r *req) { r.model = long }))))
	md := flushNow(t, c, sink)

	for env, want := range map[string]float64{"prod": 2, "staging": 1, "dev": 1} {
		assert.Equal(t, want, value(t, md, "ttft.requests", map[string]any{"deployment.environment": env}), env)
	}
	var noEnv float64
	for _, p := range points(md, "ttft.requests") {
		if _, ok := p.attrs["deployment.environment"]; !ok && p.attrs[record.KeyModel] == "gpt-4o" {
			noEnv += p.value
		}
	}
	assert.Equal(t, 1.0, noEnv, "a resource without the attribute omits it")
	clipped := long[:maxDimValueLen]
	assert.Equal(t, 1.0, value(t, md, "ttft.requests", map[string]any{record.KeyModel: clipped}))
	assert.True(t, utf8.ValidString(clipped))
}

// TestReleaseLeavesNothingOfTheBatch: the queue goes back to the pool with
// every slot a batch filled cleared (they point into the batch), after a
// batch of a few records and after one of more than a chunk.
func TestReleaseLeavesNothingOfTheBatch(t *testing.T) {
	c := newTestConnector(t, defaultConfig(), clockwork.NewFakeClockAt(testStart), consumertest.NewNop())
	defer func() { require.NoError(t, c.Shutdown(context.Background())) }()
	for _, n := range []int{3, chunkRecords + 5, 1} {
		p := c.takePending()
		var st batchStats
		c.deriver.Traces(corpus(n, 5, 7), func(res pcommon.Resource, span ptrace.Span, rec *record.Record) {
			c.add(p, &st, rec, span.Attributes(), res.Attributes())
		})
		require.Equal(t, int64(n), st.records+int64(len(p.items)), "records derived")
		c.release(p, &st)
		assert.Equal(t, int64(n), st.records, "every record aggregated")
		for i, it := range p.items[:cap(p.items)] {
			assert.Zero(t, it, "slot %d after a batch of %d", i, n)
		}
		assert.Zero(t, p.used)
	}
}

// TestTinyTimesDoNotCoarsenTheHistogram: a time under a nanosecond (a
// producer's 1e-300 s passes every bound: it is no negative, no NaN, not
// past the end) counts as zero, as the windows count it. As itself it
// dragged the exported histogram's scale from 6 to -3 for the whole series.
func TestTinyTimesDoNotCoarsenTheHistogram(t *testing.T) {
	scale := func(tiny bool) int32 {
		reqs := make([]req, 0, 1001)
		for i := 0; i < 1000; i++ {
			reqs = append(reqs, with(gpt, func(r *req) { r.ttft = 0.5 + float64(i)*0.001 }))
		}
		if tiny {
			reqs = append(reqs, with(gpt, func(r *req) { r.ttft, r.chunk = 1e-300, 0 }))
		}
		sink := new(consumertest.MetricsSink)
		c := newTestConnector(t, defaultConfig(), clockwork.NewFakeClockAt(testStart), sink)
		defer func() { require.NoError(t, c.Shutdown(context.Background())) }()
		require.NoError(t, c.ConsumeTraces(context.Background(), stampedTraces(reqs...)))
		m, ok := findMetric(flushNow(t, c, sink), "ttft.time_to_first_token")
		require.True(t, ok)
		dp := m.ExponentialHistogram().DataPoints().At(0)
		if tiny {
			assert.Equal(t, uint64(1), dp.ZeroCount(), "the tiny time is in the zero bucket")
		}
		return dp.Scale()
	}
	assert.Equal(t, scale(false), scale(true))
}

// A record cut by a first-token timeout is a TTFT of at least its cut
// time (docs/architecture.md §2), and no TTFT is above max_ttft_seconds
// (3600 s, §4/§10). Two requests of a window of 1,000 that claim to have
// been cut after 80,000 s (a duration within max_duration_seconds, so the
// record is valid) made the first_token recommendation 100,000 s: the
// censored cut entered the TTFT window unbounded. Now it is censored at
// max_ttft_seconds, still a true lower bound.
func TestCensoredCutIsBoundedByMaxTTFT(t *testing.T) {
	cfg := defaultConfig()
	cfg.Censoring = true
	sink := new(consumertest.MetricsSink)
	c := newTestConnector(t, cfg, clockwork.NewFakeClockAt(testStart), sink)
	defer func() { require.NoError(t, c.Shutdown(context.Background())) }()
	reqs := repeat(gpt, 1000)
	md0 := func() pmetric.Metrics {
		require.NoError(t, c.ConsumeTraces(context.Background(), stampedTraces(reqs...)))
		return flushNow(t, c, sink)
	}()
	before := value(t, md0, "ttft.timeout.recommended", map[string]any{attrPolicy: "first_token"})
	cut := with(gpt, func(r *req) {
		r.outcome, r.ttft, r.chunk, r.gap, r.duration = record.OutcomeTimeoutFirstToken, -1, 0, 0, 80000
	})
	require.NoError(t, c.ConsumeTraces(context.Background(), stampedTraces(cut, cut)))
	md := flushNow(t, c, sink)
	after := value(t, md, "ttft.timeout.recommended", map[string]any{attrPolicy: "first_token"})
	t.Logf("first_token recommendation: %v s before, %v s after two cut records", before, after)
	if after > 3600*1.25 {
		t.Errorf("first_token recommendation %v s: a TTFT lower bound above max_ttft_seconds (3600) reached the window", after)
	}
}

// TestConnectorCountsRefusedEvidence: with no processor in front, the
// connector derives the spans itself and counts the evidence it refuses in
// evidence_rejected, as the processor does; before, nothing counted it. The
// kind label tells a refused value from an ignored event (a ttft.chunk
// event before the span's start).
func TestConnectorCountsRefusedEvidence(t *testing.T) {
	for kind, refuse := range map[string]func(ptrace.Span){
		"value": func(s ptrace.Span) { s.Attributes().PutDouble("gen_ai.response.time_to_first_chunk", math.NaN()) },
		"event": func(s ptrace.Span) {
			ev := s.Events().AppendEmpty()
			ev.SetName("ttft.chunk")
			ev.SetTimestamp(pcommon.NewTimestampFromTime(testStart.Add(-time.Second)))
			ev.Attributes().PutStr("ttft.chunk.kind", "content")
		},
	} {
		t.Run(kind, func(t *testing.T) {
			tel := componenttest.NewTelemetry()
			defer func() { require.NoError(t, tel.Shutdown(context.Background())) }()
			c := newTestConnectorWith(t, testSettings(tel), defaultConfig(), clockwork.NewFakeClockAt(testStart), consumertest.NewNop())
			td := ptrace.NewTraces()
			s := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
			s.SetName("chat m")
			s.SetKind(ptrace.SpanKindClient)
			s.SetTraceID(pcommon.TraceID{1})
			s.SetSpanID(pcommon.SpanID{1})
			s.SetStartTimestamp(pcommon.NewTimestampFromTime(testStart))
			s.SetEndTimestamp(pcommon.NewTimestampFromTime(testStart.Add(2 * time.Second)))
			a := s.Attributes()
			a.PutStr("gen_ai.operation.name", "chat")
			a.PutStr("gen_ai.request.model", "m")
			a.PutBool("gen_ai.request.stream", true)
			refuse(s)
			require.NoError(t, c.ConsumeTraces(context.Background(), td))
			assert.Equal(t, map[string]int64{kind: 1}, sumByAttr(t, tel, "otelcol_connector_genai_ttft_evidence_rejected", "kind"))
			require.NoError(t, c.Shutdown(context.Background()))
		})
	}
}

// TestIdleCutsAreCensoredInTheIdleWindow: 1,000 streams with pauses of
// 0.50–1.49 s and 20 cut by an enforced idle timeout after 3 s of silence
// (their ttft.max_chunk_gap holds the pause they were cut in). Ignoring the
// cuts, the idle recommendation is p99.9 1.49 × 1.5 → 2.3 s, below the 3 s
// timeout that cut them, and the next window's would be lower still: the
// ratchet censoring stops for the first-token timeout. Counted as "paused
// at least 3 s", 2% of the window lies beyond the cutoff: the
// recommendation is the cut × 1.5, 4.5 s. The cut streams' first tokens
// and durations enter no window.
func TestIdleCutsAreCensoredInTheIdleWindow(t *testing.T) {
	reqs := make([]req, 0, 1020)
	for i := range 1000 {
		reqs = append(reqs, with(gpt, func(r *req) { r.gap = 0.5 + float64(i%100)/100 }))
	}
	for range 20 {
		reqs = append(reqs, with(gpt, func(r *req) { r.outcome, r.gap, r.duration = record.OutcomeTimeoutIdle, 3, 9 }))
	}
	for _, tc := range []struct {
		censoring bool
		idle      float64
	}{{false, 2.3}, {true, 4.5}} {
		t.Run(fmt.Sprintf("censoring=%v", tc.censoring), func(t *testing.T) {
			cfg := defaultConfig()
			cfg.Censoring = tc.censoring
			sink := new(consumertest.MetricsSink)
			c := newTestConnector(t, cfg, clockwork.NewFakeClockAt(testStart), sink)
			defer func() { require.NoError(t, c.Shutdown(context.Background())) }()
			require.NoError(t, c.ConsumeTraces(context.Background(), stampedTraces(reqs...)))
			md := flushNow(t, c, sink)
			assert.InDelta(t, tc.idle, value(t, md, "ttft.timeout.recommended", map[string]any{attrPolicy: "idle"}), 1e-9)
			assert.InDelta(t, 1.0, value(t, md, "ttft.timeout.recommended", map[string]any{attrPolicy: "first_token"}), 1e-9, "0.8 × 1.25: the cut streams' TTFTs are no samples")
			assert.Equal(t, 1000.0, value(t, md, "ttft.window.samples", map[string]any{attrCensored: false}))
			assert.Equal(t, 0.0, value(t, md, "ttft.window.samples", map[string]any{attrCensored: true}), "first-token cuts only")
		})
	}
}
