package genaittftconnector

import (
	"context"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-ttft/otelcol-ttft/internal/recommend"
	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// Edges a mutation audit found no test pinning: each test here fails when
// the rule it names is broken in the connector's code.

// stampedSpan returns span i of a batch stampedTraces built, to add record
// keys req does not carry.
func stampedSpan(td ptrace.Traces, i int) pcommon.Map {
	return td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(i).Attributes()
}

// TestRequestsSplitByFirstContentSeen: two records of one histogram series
// (same outcome, band, clock, observer) that differ only in whether content
// came are two ttft.requests series, ttft.first_content_seen true and false.
func TestRequestsSplitByFirstContentSeen(t *testing.T) {
	sink := new(consumertest.MetricsSink)
	c := newTestConnector(t, defaultConfig(), clockwork.NewFakeClockAt(testStart), sink)
	defer func() { require.NoError(t, c.Shutdown(context.Background())) }()
	failed := with(gpt, func(r *req) {
		r.outcome, r.measuredAt, r.ttft, r.chunk, r.gap = record.OutcomeError, record.MeasuredAtFirstChunk, 0.3, 0, 0
	})
	td := stampedTraces(failed, failed, failed)
	stampedSpan(td, 0).PutInt(record.KeyContentChunks, 4) // content came, then the error
	require.NoError(t, c.ConsumeTraces(context.Background(), td))
	md := flushNow(t, c, sink)

	assert.Len(t, points(md, "ttft.time_to_first_token"), 1, "one histogram series")
	assert.Equal(t, 1.0, value(t, md, "ttft.requests", map[string]any{attrFirstContentSeen: true}))
	assert.Equal(t, 2.0, value(t, md, "ttft.requests", map[string]any{attrFirstContentSeen: false}))
}

// TestOverflowHistogramSeriesLinksNoOtherSeries: the histogram series'
// key is finer than the counter's and the window's (observer, clock,
// failed_over), so its table can overflow while theirs still have room. A
// record that lands in the overflow histogram series must still find its
// own counter and window series, or none: the overflow series mixes
// targets, and a link cached on it would count a later target's requests
// and samples as those of the first target that passed through it.
func TestOverflowHistogramSeriesLinksNoOtherSeries(t *testing.T) {
	cfg := defaultConfig()
	cfg.AggregationCardinalityLimit = 1
	cfg.MinSamples = 1
	sink := new(consumertest.MetricsSink)
	c := newTestConnector(t, cfg, clockwork.NewFakeClockAt(testStart), sink)
	defer func() { require.NoError(t, c.Shutdown(context.Background())) }()
	ctx := context.Background()
	claude := with(gpt, func(r *req) { r.provider, r.model = "anthropic", "claude" })

	// The app's span (observer client) takes the one place of each table.
	require.NoError(t, c.ConsumeTraces(ctx, stampedTraces(gpt)))
	// The gateway's record of the same target (observer gateway): a new
	// histogram key, so the overflow histogram series, but gpt's counter
	// and window.
	require.NoError(t, c.ConsumeLogs(ctx, stampedLogs(gpt)))
	// Another target's gateway record: the overflow histogram series
	// again, and no place for its counter or window.
	require.NoError(t, c.ConsumeLogs(ctx, stampedLogs(claude)))
	md := flushNow(t, c, sink)

	isGPT := map[string]any{record.KeyModel: "gpt-4o"}
	overflow := map[string]any{attrOverflow: true}
	assert.Equal(t, 2.0, value(t, md, "ttft.time_to_first_token", overflow))
	assert.Equal(t, 2.0, value(t, md, "ttft.requests", isGPT), "gpt's span and gateway record")
	assert.Equal(t, 1.0, value(t, md, "ttft.requests", overflow), "claude's record")
	assert.Equal(t, 2.0, value(t, md, "ttft.window.samples", map[string]any{record.KeyModel: "gpt-4o", attrCensored: false}),
		"claude's sample is not gpt's")
	assert.Len(t, points(md, "ttft.window.samples"), 2, "gpt's window series only")
}

// TestExpiryKeepsASeriesIdleExactlyMetricsExpiration: series idle for
// longer than metrics_expiration are dropped; one idle exactly that long,
// already exported, is kept (README: "idle for longer are dropped").
func TestExpiryKeepsASeriesIdleExactlyMetricsExpiration(t *testing.T) {
	cfg := defaultConfig()
	cfg.MetricsExpiration = time.Hour
	clock := clockwork.NewFakeClockAt(testStart)
	sink := new(consumertest.MetricsSink)
	c := newTestConnector(t, cfg, clock, sink)
	defer func() { require.NoError(t, c.Shutdown(context.Background())) }()

	require.NoError(t, c.ConsumeTraces(context.Background(), stampedTraces(gpt)))
	require.NotEmpty(t, points(flushNow(t, c, sink), "ttft.requests"), "exported once: nothing protects it from expiry now")
	clock.Advance(time.Hour)
	md := flushNow(t, c, sink)
	assert.Equal(t, 1.0, value(t, md, "ttft.requests", map[string]any{record.KeyModel: "gpt-4o"}), "idle exactly 1h: kept")
	assert.Equal(t, 1.0, value(t, md, "ttft.time_to_first_token", map[string]any{record.KeyModel: "gpt-4o"}))
	clock.Advance(time.Nanosecond)
	assert.Empty(t, points(flushNow(t, c, sink), "ttft.requests"), "idle longer: dropped")
}

// TestOverflowSeriesNeverExpiresWithoutExpiration: metrics_expiration 0
// keeps every exported series, the overflow series too.
func TestOverflowSeriesNeverExpiresWithoutExpiration(t *testing.T) {
	cfg := defaultConfig()
	cfg.MetricsExpiration = 0
	cfg.AggregationCardinalityLimit = 1
	clock := clockwork.NewFakeClockAt(testStart)
	sink := new(consumertest.MetricsSink)
	c := newTestConnector(t, cfg, clock, sink)
	defer func() { require.NoError(t, c.Shutdown(context.Background())) }()
	claude := with(gpt, func(r *req) { r.provider, r.model = "anthropic", "claude" })

	require.NoError(t, c.ConsumeTraces(context.Background(), stampedTraces(gpt, claude)))
	overflow := map[string]any{attrOverflow: true}
	require.Equal(t, 1.0, value(t, flushNow(t, c, sink), "ttft.requests", overflow))
	clock.Advance(48 * time.Hour)
	md := flushNow(t, c, sink)
	for _, name := range []string{"ttft.requests", "ttft.time_to_first_token"} {
		assert.Equal(t, 1.0, value(t, md, name, overflow), "%s: the overflow series is kept", name)
		assert.Equal(t, 1.0, value(t, md, name, map[string]any{record.KeyModel: "gpt-4o"}), name)
	}
	assert.Equal(t, int64(2), c.agg.seriesCounts()[kindRequests])
}

// TestCutAfterAChunkIsNoCutOnTheFirstChunkClock: a request cut by a
// first-token timeout after a chunk came was not cut before any chunk: it
// enters the target's first_chunk window as no censored observation (its
// first chunk came), only its own clock's window.
func TestCutAfterAChunkIsNoCutOnTheFirstChunkClock(t *testing.T) {
	cfg := defaultConfig()
	cfg.MinSamples = 1
	sink := new(consumertest.MetricsSink)
	c := newTestConnector(t, cfg, clockwork.NewFakeClockAt(testStart), sink)
	defer func() { require.NoError(t, c.Shutdown(context.Background())) }()
	ctx := context.Background()
	chunkClock := map[string]any{record.KeyMeasuredAt: record.MeasuredAtFirstChunk}

	// A gateway measuring at the first chunk opens the target's first_chunk series.
	require.NoError(t, c.ConsumeTraces(ctx, stampedTraces(with(gpt, func(r *req) {
		r.measuredAt, r.ttft, r.chunk = record.MeasuredAtFirstChunk, 0.4, 0
	}))))
	// Cut after a role-only chunk at 0.2 s, on the first-content clock.
	cut := with(gpt, func(r *req) {
		r.outcome, r.ttft, r.chunk, r.gap, r.duration = record.OutcomeTimeoutFirstToken, -1, 0.2, 0, 5
	})
	require.True(t, cut.record().HasTimeToFirstChunk)
	require.NoError(t, c.ConsumeTraces(ctx, stampedTraces(cut)))
	// Cut before any chunk: censored on both clocks.
	before := with(cut, func(r *req) { r.chunk = 0 })
	require.NoError(t, c.ConsumeTraces(ctx, stampedTraces(before)))
	md := flushNow(t, c, sink)

	assert.Equal(t, 2.0, value(t, md, "ttft.window.samples", map[string]any{record.KeyMeasuredAt: record.MeasuredAtFirstContent, attrCensored: true}))
	assert.Equal(t, 1.0, value(t, md, "ttft.window.samples", map[string]any{record.KeyMeasuredAt: record.MeasuredAtFirstChunk, attrCensored: true}),
		"only the cut before any chunk")
	assert.Equal(t, 1.0, value(t, md, "ttft.window.samples", map[string]any{record.KeyMeasuredAt: record.MeasuredAtFirstChunk, attrCensored: false}))
	assert.Len(t, pointsWith(points(md, "ttft.window.samples"), chunkClock), 2)
}

// TestFirstChunkSignalIgnoresCutsWhoseChunkCame: a time_to_first_chunk
// policy on the first_content clock reads the first-chunk window of that
// clock's series. A request cut after a role-only chunk (ttft.chunk events,
// first_content data censored at its duration) had its first chunk at
// 0.05 s: it is no "first chunk at least 5 s" there, which would put the
// median of the first-chunk window beyond every chunk that came.
func TestFirstChunkSignalIgnoresCutsWhoseChunkCame(t *testing.T) {
	cfg := defaultConfig()
	cfg.MinSamples = 1
	cfg.Policies = append(cfg.Policies, recommend.Policy{
		Name: "chunk_signal", Signal: recommend.SignalTimeToFirstChunk, Quantile: 0.5, Headroom: 1, RoundTo: time.Millisecond,
	})
	require.NoError(t, cfg.Validate())
	sink := new(consumertest.MetricsSink)
	c := newTestConnector(t, cfg, clockwork.NewFakeClockAt(testStart), sink)
	defer func() { require.NoError(t, c.Shutdown(context.Background())) }()

	reqs := make([]req, 0, 20)
	for i := range 10 {
		reqs = append(reqs, with(gpt, func(r *req) { r.ttft, r.chunk = 1, 0.05+float64(i)*0.01 }))
	}
	cut := with(gpt, func(r *req) {
		r.outcome, r.measuredAt, r.ttft, r.chunk, r.gap, r.duration = record.OutcomeTimeoutFirstToken, record.MeasuredAtFirstChunk, 0.05, 0, 0, 5
	})
	reqs = append(reqs, repeat(cut, 10)...)
	td := stampedTraces(reqs...)
	for i := 10; i < 20; i++ {
		stampedSpan(td, i).PutStr(record.KeySource, record.SourceChunkEvent)
	}
	require.NoError(t, c.ConsumeTraces(context.Background(), td))
	md := flushNow(t, c, sink)

	assert.Equal(t, 10.0, value(t, md, "ttft.window.samples", map[string]any{record.KeyMeasuredAt: record.MeasuredAtFirstContent, attrCensored: true}),
		"the cuts are first_content data")
	assert.InDelta(t, 0.09, value(t, md, "ttft.timeout.recommended", map[string]any{record.KeyMeasuredAt: record.MeasuredAtFirstContent, attrPolicy: "chunk_signal"}), 0.0025,
		"the median of the chunks that came (0.05 … 0.14 s)")
}

// TestDimValuesMendsEveryLengthAndPosition: dimValues reads short values
// a word at a time instead of calling clipValue; whatever the length and
// wherever a byte past ASCII sits, it gives what clipValue gives, so no
// invalid UTF-8 reaches a label.
func TestDimValuesMendsEveryLengthAndPosition(t *testing.T) {
	dims := []dimension{{name: record.KeyModel, field: fieldModel}}
	vals := make([]string, 1)
	res := newResourceDims(1)
	res.use(pcommon.NewMap())
	for n := 1; n <= 40; n++ {
		for i := 0; i < n; i++ {
			for _, c := range []byte{0x80, 0xc3, 0xff} {
				b := []byte(strings.Repeat("m", n))
				b[i] = c
				dimValues(dims, &record.Record{Model: string(b)}, pcommon.NewMap(), res, vals)
				assert.True(t, utf8.ValidString(vals[0]), "%q gave %q", b, vals[0])
				assert.Equal(t, clipValue(string(b)), vals[0], "%q", b)
			}
		}
	}
}

// TestRecordsResourceDropsServiceNameWhenItIsADimension: service.name
// named as a dimension travels on the record, not on the resource, so
// load_balancing (which reads resource attributes first) routes on the
// value the aggregating tier keys the series on (README, "Scale-out").
func TestRecordsResourceDropsServiceNameWhenItIsADimension(t *testing.T) {
	cfg := defaultConfig()
	cfg.Dimensions = append(cfg.Dimensions, "service.name")
	c, sink, _ := newRecordsConnector(t, cfg, clockwork.NewFakeClockAt(testStart))
	td, spans := newSpans("app")
	callSpan(spans, 1, 1, 0, "gpt-4.1", 0.8, 3).Attributes().PutStr("service.name", "app-span")
	require.NoError(t, c.ConsumeTraces(context.Background(), td))

	lrs := logRecords(sink)
	require.Len(t, lrs, 1)
	assert.Empty(t, sink.AllLogs()[0].ResourceLogs().At(0).Resource().Attributes().AsRaw())
	v, ok := lrs[0].Attributes().Get("service.name")
	require.True(t, ok)
	assert.Equal(t, "app-span", v.Str(), "the value the aggregating tier keys on: the span's before the resource's")
}

// TestCallMemoryUndoForgetsAKeyWhosePlaceIsGone: a refused batch that
// re-added a remembered key, and whose later adds evicted that key's
// earlier ring position, takes the key out: restored, it would name a ring
// position no longer there, and neither remember_for nor the ring would
// ever drop it.
func TestCallMemoryUndoForgetsAKeyWhosePlaceIsGone(t *testing.T) {
	m := newCallMemory(3, time.Minute)
	k := func(id byte) callKey { return callKey{pcommon.TraceID{1}, pcommon.SpanID{id}} }
	m.add(testStart, k(1), flagCall, 0) // position 0
	m.add(testStart, k(2), flagCall, 0) // position 1
	// The refused batch: k(1) again (position 2), then k(3), which evicts position 0.
	us := []memUndo{m.add(testStart, k(1), flagParent, 0), m.add(testStart, k(3), flagCall, 0)}
	m.undo(us)
	_, kept := m.entries[k(1)]
	assert.False(t, kept, "its earlier position was evicted")
	assert.Equal(t, 1, m.len(), "k(2) only")

	m.expire(testStart.Add(2 * time.Minute))
	assert.Equal(t, 0, m.len(), "remember_for drops every key")
}

// TestRecordsOuterCallAfterChildrenOfTwoResources: a span remembered as
// the parent of emitted calls keeps the resource of the first of them. The
// app's outer call that comes after its inner call and after a gateway's
// SERVER span under it (another resource, its own record) is the app call's
// outer part: dropped and counted, not emitted as a second record of it.
func TestRecordsOuterCallAfterChildrenOfTwoResources(t *testing.T) {
	c, sink, tel := newRecordsConnector(t, defaultConfig(), clockwork.NewFakeClockAt(testStart))
	ctx := context.Background()
	td, s := newSpans("app")
	callSpan(s, 1, 2, 1, "m", 0.8, 3)
	require.NoError(t, c.ConsumeTraces(ctx, td))
	td, s = newSpans("gateway")
	callSpan(s, 1, 3, 1, "m", 0.7, 3).SetKind(ptrace.SpanKindServer)
	require.NoError(t, c.ConsumeTraces(ctx, td))
	td, s = newSpans("app")
	callSpan(s, 1, 1, 0, "m", 0, 0)
	require.NoError(t, c.ConsumeTraces(ctx, td))

	assert.Len(t, logRecords(sink), 2, "the app's call and the gateway's")
	assert.Equal(t, map[string]int64{"outer": 1}, sumByAttr(t, tel, "otelcol_connector_genai_ttft_split_calls", "part"))
}

// TestRecordsWalkUpStopsAtAnotherResource: the walk from a call up through
// the batch's spans that are no calls stays in the call's resource, as
// derive's fold does. A call whose parent is another resource's span does
// not make that span's ancestor an enclosing call: the ancestor, a call of
// the first resource arriving later, is a call of its own.
func TestRecordsWalkUpStopsAtAnotherResource(t *testing.T) {
	c, sink, tel := newRecordsConnector(t, defaultConfig(), clockwork.NewFakeClockAt(testStart))
	ctx := context.Background()
	td, s := newSpans("app")
	callSpan(s, 1, 3, 2, "m", 0.8, 3)
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "proxy")
	hop := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty() // no call
	hop.SetName("POST /v1/chat/completions")
	hop.SetKind(ptrace.SpanKindServer)
	hop.SetTraceID(pcommon.TraceID{1, 1})
	hop.SetSpanID(pcommon.SpanID{1, 2})
	hop.SetParentSpanID(pcommon.SpanID{1, 1})
	require.NoError(t, c.ConsumeTraces(ctx, td))
	td, s = newSpans("app")
	callSpan(s, 1, 1, 0, "m", 0.9, 3)
	require.NoError(t, c.ConsumeTraces(ctx, td))

	assert.Len(t, logRecords(sink), 2)
	_, err := tel.GetMetric("otelcol_connector_genai_ttft_split_calls")
	assert.Error(t, err, "nothing split")
}

// TestRecordsRememberCallsForExactlyRememberFor: a call is remembered for
// records::remember_for: a batch delivered again that long after is a
// repeat; one delivered again later is emitted again.
func TestRecordsRememberCallsForExactlyRememberFor(t *testing.T) {
	cfg := defaultConfig()
	clock := clockwork.NewFakeClockAt(testStart)
	c, sink, _ := newRecordsConnector(t, cfg, clock)
	batch := func() ptrace.Traces {
		td, s := newSpans("app")
		callSpan(s, 1, 1, 0, "m", 0.8, 3)
		return td
	}
	require.NoError(t, c.ConsumeTraces(context.Background(), batch()))
	clock.Advance(cfg.Records.RememberFor)
	require.NoError(t, c.ConsumeTraces(context.Background(), batch()))
	assert.Len(t, logRecords(sink), 1, "remembered for exactly remember_for")
	clock.Advance(cfg.Records.RememberFor + time.Nanosecond) // from the repeat, which remembered it afresh
	require.NoError(t, c.ConsumeTraces(context.Background(), batch()))
	assert.Len(t, logRecords(sink), 2, "forgotten after")
}

// TestStopFlushGetsAtLeastFinalFlushTimeout: the flush at Shutdown is
// bounded by max(flush_interval, 5 s) (README, "Trust"): a short
// flush_interval does not cut a slow exporter's last send short.
func TestStopFlushGetsAtLeastFinalFlushTimeout(t *testing.T) {
	cfg := defaultConfig()
	cfg.FlushInterval = 10 * time.Millisecond
	var left []time.Duration
	next, err := consumer.NewMetrics(func(ctx context.Context, _ pmetric.Metrics) error {
		deadline, ok := ctx.Deadline()
		require.True(t, ok, "the stop's flush is bounded")
		left = append(left, time.Until(deadline))
		return nil
	})
	require.NoError(t, err)
	c := newTestConnector(t, cfg, clockwork.NewFakeClockAt(testStart), next)
	require.NoError(t, c.Start(context.Background(), componenttest.NewNopHost()))
	require.NoError(t, c.ConsumeTraces(context.Background(), stampedTraces(gpt)))
	require.NoError(t, c.Shutdown(context.Background()))
	require.Len(t, left, 1, "the stop's flush sent what was aggregated")
	assert.Greater(t, left[0], finalFlushTimeout-time.Second)
	assert.LessOrEqual(t, left[0], finalFlushTimeout)
}

// TestValidateRejectsMoreEdges: keys Validate must refuse, each named in
// its error.
func TestValidateRejectsMoreEdges(t *testing.T) {
	for _, tt := range []struct {
		name   string
		mutate func(*Config)
		err    string
	}{
		{"a zero route deadline", func(c *Config) { c.Deadlines.Routes = map[string]time.Duration{"support": 0} }, "deadlines::routes::support must be > 0"},
		{"the nested-call marker as a dimension", func(c *Config) { c.Dimensions = append(c.Dimensions, record.KeyNestedIn) }, `"ttft.nested_in" is a key of the request record`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := defaultConfig()
			tt.mutate(cfg)
			assert.ErrorContains(t, cfg.Validate(), tt.err)
		})
	}
}

// TestSamePointAgainIsUnchangedNotOutOfOrder: only a point older than the
// series' last is out of order; the same point delivered again (same
// timestamp) adds nothing and is counted unchanged.
func TestSamePointAgainIsUnchangedNotOutOfOrder(t *testing.T) {
	tel := componenttest.NewTelemetry()
	defer func() { require.NoError(t, tel.Shutdown(context.Background())) }()
	clock := clockwork.NewFakeClockAt(testStart)
	c, sink := newMetricsConnector(t, defaultConfig(), clock, tel)
	ctx := context.Background()
	t0 := testStart.Add(-time.Hour)
	require.NoError(t, c.ConsumeMetrics(ctx, histMetrics(hp{model: "m", start: t0, ts: clock.Now(), counts: counts17(7, 100)})))
	clock.Advance(15 * time.Second)
	again := hp{model: "m", start: t0, ts: clock.Now(), counts: counts17(7, 130)}
	require.NoError(t, c.ConsumeMetrics(ctx, histMetrics(again)))
	require.NoError(t, c.ConsumeMetrics(ctx, histMetrics(again)))
	assert.Equal(t, 30.0, windowSamples(t, flushNow(t, c, sink), "m"))
	assert.Equal(t, map[string]int64{pointBaseline: 1, pointWindowed: 1, pointUnchanged: 1},
		sumByAttr(t, tel, "otelcol_connector_genai_ttft_histogram_points", "result"))
	_, err := tel.GetMetric("otelcol_connector_genai_ttft_skipped")
	assert.Error(t, err, "nothing skipped as out_of_order")
}

// TestFirstPointStartingAtItsOwnTimestampIsABaseline: under
// initial_value auto, a first point whose start time is its own timestamp
// says nothing of when its counts began (a receiver that knows no start
// stamps the first point's own time there): it is the baseline, and the
// next point counts what grew.
func TestFirstPointStartingAtItsOwnTimestampIsABaseline(t *testing.T) {
	clock := clockwork.NewFakeClockAt(testStart)
	c, sink := newMetricsConnector(t, defaultConfig(), clock, nil)
	ctx := context.Background()
	clock.Advance(time.Minute) // after the connector started
	start := clock.Now()
	require.NoError(t, c.ConsumeMetrics(ctx, histMetrics(hp{model: "m", start: start, ts: start, counts: counts17(7, 100)})))
	clock.Advance(15 * time.Second)
	require.NoError(t, c.ConsumeMetrics(ctx, histMetrics(hp{model: "m", start: start, ts: clock.Now(), counts: counts17(7, 125)})))
	assert.Equal(t, 25.0, windowSamples(t, flushNow(t, c, sink), "m"), "what grew since the first point only")
}

// TestNewStartTimeIsARestartEvenWhenCountsGrew: a restarted producer
// (a new start time) counts from zero, so its whole point is new, even when
// every bucket holds more than the last point of its previous run did.
func TestNewStartTimeIsARestartEvenWhenCountsGrew(t *testing.T) {
	tel := componenttest.NewTelemetry()
	defer func() { require.NoError(t, tel.Shutdown(context.Background())) }()
	clock := clockwork.NewFakeClockAt(testStart)
	c, sink := newMetricsConnector(t, defaultConfig(), clock, tel)
	ctx := context.Background()
	require.NoError(t, c.ConsumeMetrics(ctx, histMetrics(hp{model: "m", start: testStart.Add(-time.Hour), ts: clock.Now(), counts: counts17(7, 100)})))
	clock.Advance(time.Minute)
	restart := clock.Now().Add(-30 * time.Second)
	require.NoError(t, c.ConsumeMetrics(ctx, histMetrics(hp{model: "m", start: restart, ts: clock.Now(), counts: counts17(7, 150)})))
	assert.Equal(t, 150.0, windowSamples(t, flushNow(t, c, sink), "m"))
	assert.Equal(t, map[string]int64{pointBaseline: 1, pointReset: 1, pointWindowed: 1},
		sumByAttr(t, tel, "otelcol_connector_genai_ttft_histogram_points", "result"))
}

// TestExponentialZeroCountDownIsAReset: a cumulative exponential point
// whose zero bucket went down is a reset, as any count that went down: the
// point counts whole, and the difference never wraps.
func TestExponentialZeroCountDownIsAReset(t *testing.T) {
	clock := clockwork.NewFakeClockAt(testStart)
	c, sink := newMetricsConnector(t, defaultConfig(), clock, nil)
	point := func(ts time.Time, zero uint64, counts ...uint64) pmetric.Metrics {
		md := pmetric.NewMetrics()
		dp := clientExpoPoint(md, "chat-app", "gpt-4o")
		md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics().At(0).ExponentialHistogram().
			SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
		dp.SetStartTimestamp(pcommon.NewTimestampFromTime(testStart.Add(-time.Hour)))
		dp.SetTimestamp(pcommon.NewTimestampFromTime(ts))
		dp.SetZeroCount(zero)
		dp.Positive().BucketCounts().FromRaw(counts)
		n := zero
		for _, v := range counts {
			n += v
		}
		dp.SetCount(n)
		return md
	}
	require.NoError(t, c.ConsumeMetrics(context.Background(), point(clock.Now(), 10, 5, 5))) // baseline
	clock.Advance(15 * time.Second)
	require.NoError(t, c.ConsumeMetrics(context.Background(), point(clock.Now(), 5, 8, 8)))
	md := flushNow(t, c, sink)
	assert.Equal(t, 21.0, value(t, md, "ttft.window.samples", map[string]any{record.KeyModel: "gpt-4o", attrResolution: "exponential_buckets"}))
}

// TestServerHistogramTakesItsRowsProvider: vLLM's histogram has no
// provider label; its row names the provider (vllm), which every series of
// it carries.
func TestServerHistogramTakesItsRowsProvider(t *testing.T) {
	clock := clockwork.NewFakeClockAt(testStart)
	c, sink := newMetricsConnector(t, defaultConfig(), clock, nil)
	require.NoError(t, c.ConsumeMetrics(context.Background(), histMetrics(hp{
		metricName: "vllm:time_to_first_token_seconds", temporality: pmetric.AggregationTemporalityDelta,
		ts: clock.Now(), counts: counts17(7, 10), extraLabels: map[string]string{"model_name": "llama-3"},
	})))
	md := flushNow(t, c, sink)
	assert.Equal(t, 10.0, value(t, md, "ttft.window.samples", map[string]any{
		record.KeyProvider: "vllm", record.KeyModel: "llama-3", record.KeyObserver: record.ObserverServer,
	}))
}

// TestLayoutTieKeepsTheFirstLayout: two bucket layouts of one target
// holding as many samples each: the gauges stay with the layout opened
// first, and the other's point is counted layout_apart (a new layout takes
// over once it holds more).
func TestLayoutTieKeepsTheFirstLayout(t *testing.T) {
	tel := componenttest.NewTelemetry()
	defer func() { require.NoError(t, tel.Shutdown(context.Background())) }()
	cfg := defaultConfig()
	cfg.MinSamples = 1
	clock := clockwork.NewFakeClockAt(testStart)
	c, sink := newMetricsConnector(t, cfg, clock, tel)
	delta := pmetric.AggregationTemporalityDelta
	ctx := context.Background()
	require.NoError(t, c.ConsumeMetrics(ctx, histMetrics(hp{model: "m", temporality: delta, ts: clock.Now(), counts: counts17(7, 10)})))
	other := []float64{0.3, 0.7, 1.5}
	require.NoError(t, c.ConsumeMetrics(ctx, histMetrics(hp{model: "m", temporality: delta, ts: clock.Now(), bounds: other, counts: []uint64{0, 0, 10, 0}})))
	md := flushNow(t, c, sink)
	assert.Equal(t, 10.0, windowSamples(t, md, "m"), "the first layout's samples")
	assert.Equal(t, 1.0, value(t, md, "ttft.quantile", map[string]any{record.KeyModel: "m", attrQuantile: "0.5", attrQuantileBound: "upper"}),
		"bucket 7 of Bifrost's layout: (0.5, 1]")
	assert.Equal(t, map[string]int64{pointWindowed: 1, pointLayoutApart: 1},
		sumByAttr(t, tel, "otelcol_connector_genai_ttft_histogram_points", "result"))
}

// TestHistogramWindowsRecommendOnlyFirstTokenPolicies: a histogram input
// holds the producer's TTFT: a policy on another signal (the idle policy,
// on the longest pause) gets no recommendation from it.
func TestHistogramWindowsRecommendOnlyFirstTokenPolicies(t *testing.T) {
	clock := clockwork.NewFakeClockAt(testStart)
	c, sink := newMetricsConnector(t, defaultConfig(), clock, nil)
	require.NoError(t, c.ConsumeMetrics(context.Background(), histMetrics(hp{
		model: "gpt-4o", temporality: pmetric.AggregationTemporalityDelta, ts: clock.Now(), counts: counts17(6, 1500, 7, 500),
	})))
	md := flushNow(t, c, sink)
	policies := map[string]bool{}
	for _, p := range points(md, "ttft.timeout.recommended") {
		policies[p.attrs[attrPolicy].(string)] = true
	}
	assert.Equal(t, map[string]bool{"first_token": true, "gateway_cutoff": true}, policies, "openai's Bifrost clock is first_content")
}

// TestStaleAfterForgetsOnlyLongerSilences: a source series without points
// for exactly stale_after is still known (only longer silences forget it):
// its next point counts what grew. A series forgotten at a time F that
// returns having started at F started after it was forgotten: its first
// point counts whole.
func TestStaleAfterForgetsOnlyLongerSilences(t *testing.T) {
	cfg := defaultConfig()
	clock := clockwork.NewFakeClockAt(testStart)
	c, sink := newMetricsConnector(t, cfg, clock, nil)
	ctx := context.Background()
	t0 := testStart.Add(-time.Hour)
	require.NoError(t, c.ConsumeMetrics(ctx, histMetrics(hp{model: "m", start: t0, ts: clock.Now(), counts: counts17(7, 100)})))
	clock.Advance(cfg.Histograms.StaleAfter)
	c.flush(ctx)
	require.NoError(t, c.ConsumeMetrics(ctx, histMetrics(hp{model: "m", start: t0, ts: clock.Now(), counts: counts17(7, 130)})))
	assert.Equal(t, 30.0, windowSamples(t, flushNow(t, c, sink), "m"), "silent exactly stale_after: still its baseline")

	clock.Advance(cfg.Histograms.StaleAfter + time.Second)
	c.flush(ctx) // forgets m now
	forgotten := clock.Now()
	clock.Advance(15 * time.Second)
	require.NoError(t, c.ConsumeMetrics(ctx, histMetrics(hp{model: "m", start: forgotten, ts: clock.Now(), counts: counts17(7, 7)})))
	assert.Equal(t, 37.0, windowSamples(t, flushNow(t, c, sink), "m"), "restarted when it was forgotten: counted whole")
}
