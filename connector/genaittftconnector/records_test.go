package genaittftconnector

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/plogtest"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/pmetrictest"

	"github.com/otelcol-ttft/otelcol-ttft/connector/genaittftconnector/internal/metadata"
	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
	"github.com/otelcol-ttft/otelcol-ttft/internal/record/recordtest"
)

// newRecordsConnector builds the traces→logs output with a fake clock and
// own telemetry.
func newRecordsConnector(t *testing.T, cfg *Config, clock clockwork.Clock) (*recordsConnector, *consumertest.LogsSink, *componenttest.Telemetry) {
	t.Helper()
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	set := connectortest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	sink := new(consumertest.LogsSink)
	c, err := NewFactory().CreateTracesToLogs(clockwork.AddToContext(context.Background(), clock), set, cfg, sink)
	require.NoError(t, err)
	require.NoError(t, c.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, c.Shutdown(context.Background())) })
	return c.(*recordsConnector), sink, tel
}

// callSpan appends a GenAI call span: outer (the instrumentation's, without
// evidence) when events is 0, else the SDK's with ttft.chunk events, the
// first content after ttft seconds.
func callSpan(spans ptrace.SpanSlice, trace byte, id, parent byte, model string, ttft float64, events int) ptrace.Span {
	s := spans.AppendEmpty()
	s.SetName("chat " + model)
	s.SetKind(ptrace.SpanKindClient)
	s.SetTraceID(pcommon.TraceID{trace, 1})
	s.SetSpanID(pcommon.SpanID{trace, id})
	if parent != 0 {
		s.SetParentSpanID(pcommon.SpanID{trace, parent})
	}
	start := time.Date(2026, 11, 30, 11, 0, 0, 0, time.UTC)
	s.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
	s.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(5 * time.Second)))
	a := s.Attributes()
	a.PutStr("gen_ai.operation.name", "chat")
	a.PutStr("gen_ai.provider.name", "openai")
	a.PutStr("gen_ai.request.model", model)
	a.PutBool("gen_ai.request.stream", true)
	a.PutInt("gen_ai.usage.input_tokens", 1200)
	a.PutStr("ttft.route", "chat-default")
	a.PutEmptySlice("gen_ai.response.finish_reasons").AppendEmpty().SetStr("stop")
	for i := 0; i < events; i++ {
		ev := s.Events().AppendEmpty()
		ev.SetName("ttft.chunk")
		kind, at := "role", 0.05
		if i > 0 {
			kind, at = "content", ttft+float64(i-1)*0.1
		}
		ev.SetTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Duration(at * float64(time.Second)))))
		ev.Attributes().PutStr("ttft.chunk.kind", kind)
	}
	return s
}

func newSpans(service string) (ptrace.Traces, ptrace.SpanSlice) {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", service)
	rs.Resource().Attributes().PutStr("deployment.environment", "prod")
	return td, rs.ScopeSpans().AppendEmpty().Spans()
}

// logRecords flattens what the sink received.
func logRecords(sink *consumertest.LogsSink) []plog.LogRecord {
	var out []plog.LogRecord
	for _, ld := range sink.AllLogs() {
		for i := 0; i < ld.ResourceLogs().Len(); i++ {
			sls := ld.ResourceLogs().At(i).ScopeLogs()
			for j := 0; j < sls.Len(); j++ {
				lrs := sls.At(j).LogRecords()
				for k := 0; k < lrs.Len(); k++ {
					out = append(out, lrs.At(k))
				}
			}
		}
	}
	return out
}

func TestRecordsOneLogRecordPerCall(t *testing.T) {
	cfg := defaultConfig()
	cfg.Dimensions = append(cfg.Dimensions, "deployment.environment")
	c, sink, _ := newRecordsConnector(t, cfg, clockwork.NewFakeClockAt(testStart))

	td, spans := newSpans("app")
	callSpan(spans, 1, 1, 0, "gpt-4.1", 0, 0)   // outer, no evidence
	callSpan(spans, 1, 2, 1, "gpt-4.1", 0.8, 4) // the SDK's span inside it
	callSpan(spans, 2, 1, 0, "gpt-4.1-mini", 0.3, 3)
	require.NoError(t, c.ConsumeTraces(context.Background(), td))

	lrs := logRecords(sink)
	require.Len(t, lrs, 2, "two calls, two records: the nested span is folded")
	ld := sink.AllLogs()[0]
	res := ld.ResourceLogs().At(0).Resource().Attributes()
	assert.Equal(t, map[string]any{"service.name": "app"}, res.AsRaw(), "a record's resource keeps only service.name")
	assert.Equal(t, metadata.ScopeName, ld.ResourceLogs().At(0).ScopeLogs().At(0).Scope().Name())

	outer := lrs[0]
	assert.Equal(t, RecordEventName, outer.EventName())
	assert.Equal(t, pcommon.SpanID{1, 1}, outer.SpanID(), "the outer span carries the call")
	assert.Equal(t, pcommon.TraceID{1, 1}, outer.TraceID())
	rec, ok := recordtest.Read(outer.Attributes())
	require.True(t, ok)
	assert.InDelta(t, 0.8, rec.TimeToFirstContent, 1e-9, "the inner span's evidence")
	assert.Equal(t, record.MeasuredAtFirstContent, rec.MeasuredAt)
	assert.Equal(t, "gpt-4.1", rec.Model)
	// The dimensions travel as record attributes, the resource one included,
	// so the load balancer routes on the series key.
	for k, want := range map[string]string{"gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4.1", "ttft.route": "chat-default", "deployment.environment": "prod"} {
		v, ok := outer.Attributes().Get(k)
		require.True(t, ok, k)
		assert.Equal(t, want, v.Str(), k)
	}
	// Only the record and the dimensions: no producer attributes travel.
	_, ok = outer.Attributes().Get("gen_ai.operation.name")
	assert.False(t, ok)
}

func TestRecordsLongDimensionIsCutAsTheAggregatorCutsIt(t *testing.T) {
	c, sink, _ := newRecordsConnector(t, defaultConfig(), clockwork.NewFakeClockAt(testStart))
	td, spans := newSpans("app")
	model := ""
	for len(model) < 600 {
		model += "model-é-"
	}
	callSpan(spans, 1, 1, 0, model, 0.5, 2)
	require.NoError(t, c.ConsumeTraces(context.Background(), td))
	lrs := logRecords(sink)
	require.Len(t, lrs, 1)
	v, _ := lrs[0].Attributes().Get("gen_ai.request.model")
	assert.Equal(t, clipValue(model), v.Str())
	assert.LessOrEqual(t, len(v.Str()), maxDimValueLen)
}

// TestRecordsSplitCalls: a call whose spans arrive in two batches is
// emitted once, from the part that came first, and counted.
func TestRecordsSplitCalls(t *testing.T) {
	for _, tc := range []struct {
		name   string
		first  func(ptrace.SpanSlice)
		second func(ptrace.SpanSlice)
		part   string
	}{
		{"inner after outer", func(s ptrace.SpanSlice) { callSpan(s, 1, 1, 0, "m", 0, 0) }, func(s ptrace.SpanSlice) { callSpan(s, 1, 2, 1, "m", 0.8, 3) }, "inner"},
		{"outer after inner", func(s ptrace.SpanSlice) { callSpan(s, 1, 2, 1, "m", 0.8, 3) }, func(s ptrace.SpanSlice) { callSpan(s, 1, 1, 0, "m", 0, 0) }, "outer"},
		{"the same span twice", func(s ptrace.SpanSlice) { callSpan(s, 1, 1, 0, "m", 0.8, 3) }, func(s ptrace.SpanSlice) { callSpan(s, 1, 1, 0, "m", 0.8, 3) }, "repeat"},
		{"inner of a folded inner", func(s ptrace.SpanSlice) {
			callSpan(s, 1, 1, 0, "m", 0, 0)
			callSpan(s, 1, 2, 1, "m", 0.8, 3)
		}, func(s ptrace.SpanSlice) { callSpan(s, 1, 3, 2, "m", 0.8, 3) }, "inner"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, sink, tel := newRecordsConnector(t, defaultConfig(), clockwork.NewFakeClockAt(testStart))
			td1, s1 := newSpans("app")
			tc.first(s1)
			td2, s2 := newSpans("app")
			tc.second(s2)
			require.NoError(t, c.ConsumeTraces(context.Background(), td1))
			require.NoError(t, c.ConsumeTraces(context.Background(), td2))
			assert.Len(t, logRecords(sink), 1)
			assert.Equal(t, map[string]int64{tc.part: 1}, sumByAttr(t, tel, "otelcol_connector_genai_ttft_split_calls", "part"))
			assert.Equal(t, map[string]int64{"": 1}, sumByAttr(t, tel, "otelcol_connector_genai_ttft_records_emitted", "signal"))
		})
	}
}

// A GenAI span under a call of another resource (an inference server's
// SERVER span under the app's CLIENT span) is its own record, as derive
// makes it: whether the two come in one batch or two, in either order.
func TestRecordsNeverFoldAcrossResources(t *testing.T) {
	app := func(s ptrace.SpanSlice) { callSpan(s, 1, 1, 0, "m", 0.8, 3) }
	server := func(s ptrace.SpanSlice) { callSpan(s, 1, 2, 1, "m", 0.5, 3).SetKind(ptrace.SpanKindServer) }
	type part struct {
		service string
		spans   func(ptrace.SpanSlice)
	}
	for name, parts := range map[string][2]part{
		"app first":    {{"app", app}, {"vllm", server}},
		"server first": {{"vllm", server}, {"app", app}},
	} {
		t.Run(name+", two batches", func(t *testing.T) {
			c, sink, tel := newRecordsConnector(t, defaultConfig(), clockwork.NewFakeClockAt(testStart))
			for _, p := range parts {
				td, s := newSpans(p.service)
				p.spans(s)
				require.NoError(t, c.ConsumeTraces(context.Background(), td))
			}
			assert.Len(t, logRecords(sink), 2)
			_, err := tel.GetMetric("otelcol_connector_genai_ttft_split_calls")
			assert.Error(t, err, "nothing split")
		})
	}
	t.Run("one batch", func(t *testing.T) {
		c, sink, _ := newRecordsConnector(t, defaultConfig(), clockwork.NewFakeClockAt(testStart))
		td, s := newSpans("app")
		app(s)
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", "vllm")
		server(rs.ScopeSpans().AppendEmpty().Spans())
		require.NoError(t, c.ConsumeTraces(context.Background(), td))
		assert.Len(t, logRecords(sink), 2)
	})
}

// Two calls in one trace are two calls, whatever batches they come in.
func TestRecordsSiblingCallsInLaterBatchesAreNotSplit(t *testing.T) {
	c, sink, _ := newRecordsConnector(t, defaultConfig(), clockwork.NewFakeClockAt(testStart))
	td1, s1 := newSpans("app")
	callSpan(s1, 1, 2, 1, "m", 0.8, 3) // parent 1 is an agent span, not a call
	td2, s2 := newSpans("app")
	callSpan(s2, 1, 3, 1, "m", 0.9, 3)
	require.NoError(t, c.ConsumeTraces(context.Background(), td1))
	require.NoError(t, c.ConsumeTraces(context.Background(), td2))
	assert.Len(t, logRecords(sink), 2)
}

func TestRecordsMemoryIsBounded(t *testing.T) {
	t.Run("by age", func(t *testing.T) {
		clock := clockwork.NewFakeClockAt(testStart)
		cfg := defaultConfig()
		cfg.Records.RememberFor = time.Minute
		c, sink, _ := newRecordsConnector(t, cfg, clock)
		td, s := newSpans("app")
		callSpan(s, 1, 1, 0, "m", 0.8, 3)
		require.NoError(t, c.ConsumeTraces(context.Background(), td))
		clock.Advance(61 * time.Second)
		require.NoError(t, c.ConsumeTraces(context.Background(), td))
		assert.Len(t, logRecords(sink), 2, "forgotten after remember_for")
		assert.Equal(t, 1, c.calls.len())
	})
	t.Run("by count", func(t *testing.T) {
		cfg := defaultConfig()
		cfg.Records.RememberCalls = 4
		c, _, _ := newRecordsConnector(t, cfg, clockwork.NewFakeClockAt(testStart))
		for i := byte(1); i <= 20; i++ {
			td, s := newSpans("app")
			callSpan(s, i, 2, 1, "m", 0.8, 3) // two entries each: the span and its parent
			require.NoError(t, c.ConsumeTraces(context.Background(), td))
			assert.LessOrEqual(t, c.calls.len(), 4)
		}
	})
	t.Run("grows to capacity, keeping what it holds", func(t *testing.T) {
		m := newCallMemory(5000, time.Hour)
		assert.Empty(t, m.ring, "nothing held before the first call")
		key := func(i int) callKey { return callKey{pcommon.TraceID{byte(i), byte(i >> 8), 7}, pcommon.SpanID{1}} }
		for i := 0; i < 3000; i++ {
			m.add(testStart, key(i), flagCall, 0)
		}
		assert.Len(t, m.ring, 4096)
		for i := 0; i < 3000; i++ {
			_, seen := m.seen(key(i).trace, key(i).span, pcommon.SpanID{}, 0)
			require.True(t, seen, i)
		}
		for i := 3000; i < 8000; i++ {
			m.add(testStart, key(i), flagCall, 0)
		}
		assert.Len(t, m.ring, 5000)
		assert.Equal(t, 5000, m.len())
		_, seen := m.seen(key(2999).trace, key(2999).span, pcommon.SpanID{}, 0)
		assert.False(t, seen, "the oldest went first")
		_, seen = m.seen(key(3000).trace, key(3000).span, pcommon.SpanID{}, 0)
		assert.True(t, seen)
	})
	t.Run("off", func(t *testing.T) {
		cfg := defaultConfig()
		cfg.Records.RememberCalls = 0
		c, sink, _ := newRecordsConnector(t, cfg, clockwork.NewFakeClockAt(testStart))
		td, s := newSpans("app")
		callSpan(s, 1, 1, 0, "m", 0.8, 3)
		require.NoError(t, c.ConsumeTraces(context.Background(), td))
		require.NoError(t, c.ConsumeTraces(context.Background(), td))
		assert.Len(t, logRecords(sink), 2)
		assert.Nil(t, c.calls)
	})
}

// TestRecordsRoundTrip: the golden cases' spans sent through the
// traces→logs output and then a logs→metrics connector give exactly the
// metrics the traces→metrics connector gives for the spans themselves.
func TestRecordsRoundTrip(t *testing.T) {
	for _, dir := range []string{"derived_spans", "stamped_spans"} {
		t.Run(dir, func(t *testing.T) {
			_, want := goldenRun(t, dir)

			cfg := loadConfig(t, testdataPath("golden", dir, "config.yaml"))
			clock := clockwork.NewFakeClockAt(testStart)
			rc, logs, tel := newRecordsConnector(t, cfg, clock)
			for _, name := range []string{"traces.yaml", "traces.json"} {
				td, err := golden.ReadTraces(testdataPath("golden", dir, name))
				if err != nil {
					continue
				}
				require.NoError(t, rc.ConsumeTraces(context.Background(), td))
			}
			require.NotEmpty(t, logs.AllLogs())

			sink := new(consumertest.MetricsSink)
			agg := newTestConnector(t, loadConfig(t, testdataPath("golden", dir, "config.yaml")), clock, sink)
			t.Cleanup(func() { require.NoError(t, agg.Shutdown(context.Background())) })
			for _, ld := range logs.AllLogs() {
				require.NoError(t, agg.ConsumeLogs(context.Background(), ld))
			}
			agg.flush(context.Background())
			require.Len(t, sink.AllMetrics(), 1)
			require.NoError(t, pmetrictest.CompareMetrics(want, sink.AllMetrics()[0], compareOpts...))

			if dir == "stamped_spans" {
				assert.Positive(t, sumByAttr(t, tel, "otelcol_connector_genai_ttft_records_reread", "signal")["traces"])
			}
		})
	}
}

// TestRecordsGolden pins the emitted log records of the derived_spans case.
func TestRecordsGolden(t *testing.T) {
	cfg := loadConfig(t, testdataPath("golden", "derived_spans", "config.yaml"))
	clock := clockwork.NewFakeClockAt(testStart)
	rc, logs, _ := newRecordsConnector(t, cfg, clock)
	td, err := golden.ReadTraces(testdataPath("golden", "derived_spans", "traces.json"))
	require.NoError(t, err)
	require.NoError(t, rc.ConsumeTraces(context.Background(), td))
	require.Len(t, logs.AllLogs(), 1)
	got := logs.AllLogs()[0]
	path := testdataPath("golden", "records", "logs.yaml")
	if *update {
		require.NoError(t, golden.WriteLogs(t, path, got))
	}
	want, err := golden.ReadLogs(path)
	require.NoError(t, err)
	require.NoError(t, plogtest.CompareLogs(want, got, plogtest.IgnoreObservedTimestamp()))
}

func TestRecordsConfigValidate(t *testing.T) {
	cfg := defaultConfig()
	cfg.Records = RecordsConfig{RememberCalls: -1}
	assert.ErrorContains(t, cfg.Validate(), "records::remember_calls must be >= 0")
	cfg.Records = RecordsConfig{RememberCalls: 10}
	assert.ErrorContains(t, cfg.Validate(), "records::remember_for must be > 0")
	cfg.Records = RecordsConfig{}
	assert.NoError(t, cfg.Validate(), "0 turns the memory off")
}

func TestRecordsPassDownstreamErrorsUp(t *testing.T) {
	set := connectortest.NewNopSettings(metadata.Type)
	c, err := NewFactory().CreateTracesToLogs(context.Background(), set, defaultConfig(), consumertest.NewErr(assert.AnError))
	require.NoError(t, err)
	td, s := newSpans("app")
	callSpan(s, 1, 1, 0, "m", 0.8, 3)
	assert.ErrorIs(t, c.ConsumeTraces(context.Background(), td), assert.AnError)
	// Batches without a call send nothing and fail nothing.
	empty, _ := newSpans("app")
	assert.NoError(t, c.ConsumeTraces(context.Background(), empty))
	assert.NoError(t, c.Shutdown(context.Background()))
	assert.NoError(t, c.Shutdown(context.Background()))
}

// failOnce fails the first n ConsumeLogs calls, as an exporter whose queue is
// full does, and then takes the logs.
type failOnce struct {
	consumertest.LogsSink
	n int
}

func (f *failOnce) ConsumeLogs(ctx context.Context, ld plog.Logs) error {
	if f.n > 0 {
		f.n--
		return assert.AnError
	}
	return f.LogsSink.ConsumeLogs(ctx, ld)
}

// TestRecordsRetryAfterDownstreamError: a batch the next consumer refused is
// not remembered, so the sender's retry emits its calls; what earlier
// batches emitted stays remembered.
// refusingConnector is the traces→logs output in front of a next consumer
// that refuses next.n more batches.
func refusingConnector(t *testing.T) (*recordsConnector, *failOnce, *clockwork.FakeClock, *componenttest.Telemetry) {
	t.Helper()
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	set := connectortest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	next := &failOnce{}
	clock := clockwork.NewFakeClockAt(testStart)
	conn, err := NewFactory().CreateTracesToLogs(clockwork.AddToContext(context.Background(), clock), set, defaultConfig(), next)
	require.NoError(t, err)
	require.NoError(t, conn.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, conn.Shutdown(context.Background())) })
	return conn.(*recordsConnector), next, clock, tel
}

// spanIDs are the span ids of the log records sink got, in order.
func spanIDs(sink *consumertest.LogsSink) []pcommon.SpanID {
	var ids []pcommon.SpanID
	for _, lr := range logRecords(sink) {
		ids = append(ids, lr.SpanID())
	}
	return ids
}

func TestRecordsRetryAfterDownstreamError(t *testing.T) {
	conn, next, _, tel := refusingConnector(t)

	first, s := newSpans("app")
	callSpan(s, 1, 1, 0, "m", 0.8, 3)
	require.NoError(t, conn.ConsumeTraces(context.Background(), first))

	// The second batch repeats the first call and brings a new one; the
	// next consumer refuses it once. A refused batch counts nothing.
	second, s := newSpans("app")
	callSpan(s, 1, 1, 0, "m", 0.8, 3)
	callSpan(s, 2, 2, 1, "m", 0.9, 3)
	plain := s.AppendEmpty()
	plain.SetName("GET /health")
	plain.SetSpanID(pcommon.SpanID{7, 7})
	next.n = 1
	require.ErrorIs(t, conn.ConsumeTraces(context.Background(), second), assert.AnError)
	require.NoError(t, conn.ConsumeTraces(context.Background(), second))

	assert.Equal(t, []pcommon.SpanID{{1, 1}, {2, 2}}, spanIDs(&next.LogsSink))
	assert.Equal(t, map[string]int64{"repeat": 1}, sumByAttr(t, tel, "otelcol_connector_genai_ttft_split_calls", "part"))
	assert.Equal(t, map[string]int64{"": 2}, sumByAttr(t, tel, "otelcol_connector_genai_ttft_records_emitted", "signal"))

	// The refused delivery counted none of the batch's skipped spans.
	assert.Equal(t, map[string]int64{"not_genai": 1}, sumByAttr(t, tel, "otelcol_connector_genai_ttft_skipped", "reason"))

	// The retried batch is remembered now: a third delivery emits nothing.
	require.NoError(t, conn.ConsumeTraces(context.Background(), second))
	assert.Len(t, logRecords(&next.LogsSink), 2)
	assert.Equal(t, map[string]int64{"repeat": 3}, sumByAttr(t, tel, "otelcol_connector_genai_ttft_split_calls", "part"))
}

// TestRecordsRefusedBatchKeepsTheRepeatsRefresh: a refused batch that
// repeats an emitted call still refreshes it, so a retry after
// remember_for does not emit it again.
func TestRecordsRefusedBatchKeepsTheRepeatsRefresh(t *testing.T) {
	conn, next, clock, _ := refusingConnector(t)

	first, s := newSpans("app")
	callSpan(s, 1, 1, 0, "m", 0.8, 3)
	require.NoError(t, conn.ConsumeTraces(context.Background(), first))
	second, s := newSpans("app")
	callSpan(s, 1, 1, 0, "m", 0.8, 3)
	callSpan(s, 2, 2, 0, "m", 0.9, 3)
	clock.Advance(90 * time.Second)
	next.n = 1
	require.Error(t, conn.ConsumeTraces(context.Background(), second))
	clock.Advance(60 * time.Second) // 150 s after the first emit, past remember_for (2m)
	require.NoError(t, conn.ConsumeTraces(context.Background(), second))
	assert.Equal(t, []pcommon.SpanID{{1, 1}, {2, 2}}, spanIDs(&next.LogsSink))
}

// TestAggregatorDropsRepeatedRecords: a load balancer retrying a whole batch
// sends the records a healthy backend already took again; they count once.
func TestAggregatorDropsRepeatedRecords(t *testing.T) {
	clock := clockwork.NewFakeClockAt(testStart)
	rc, logs, _ := newRecordsConnector(t, defaultConfig(), clock)
	td, s := newSpans("app")
	callSpan(s, 1, 1, 0, "m", 0.8, 3)
	callSpan(s, 2, 1, 0, "m", 0.9, 3)
	require.NoError(t, rc.ConsumeTraces(context.Background(), td))
	require.Len(t, logs.AllLogs(), 1)
	records := logs.AllLogs()[0]

	tel := componenttest.NewTelemetry()
	defer func() { require.NoError(t, tel.Shutdown(context.Background())) }()
	set := testSettings(tel)
	sink := new(consumertest.MetricsSink)
	lc, err := NewFactory().CreateLogsToMetrics(clockwork.AddToContext(context.Background(), clock), set, defaultConfig(), sink)
	require.NoError(t, err)
	c := lc.(*logsConnector).conn
	defer func() { require.NoError(t, c.Shutdown(context.Background())) }()

	for i := 0; i < 3; i++ {
		require.NoError(t, c.ConsumeLogs(context.Background(), records))
		clock.Advance(90 * time.Second) // retries outlast remember_for (2m): each one refreshes the memory
	}
	// Gateway request records carry no call identity: they are never dropped.
	gw := stampedLogs(req{provider: "p", model: "m", route: "r", ttft: 0.5, duration: 1})
	require.NoError(t, c.ConsumeLogs(context.Background(), gw))
	require.NoError(t, c.ConsumeLogs(context.Background(), gw))

	c.flush(context.Background())
	md := sink.AllMetrics()[len(sink.AllMetrics())-1]
	total := 0.0
	for _, p := range points(md, "ttft.requests") {
		total += p.value
	}
	assert.Equal(t, 4.0, total, "two calls once each, the gateway record twice")
	assert.Equal(t, map[string]int64{"repeat": 4}, sumByAttr(t, tel, "otelcol_connector_genai_ttft_split_calls", "part"))
	assert.Equal(t, map[string]int64{"logs": 8}, sumByAttr(t, tel, "otelcol_connector_genai_ttft_records_reread", "signal"))
}

// BenchmarkCallMemory is what remembering costs per call: one lookup of the
// span and its parent, two inserts, in a full ring.
func BenchmarkCallMemory(b *testing.B) {
	m := newCallMemory(100_000, time.Minute)
	now := testStart
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		var tr pcommon.TraceID
		tr[0], tr[1], tr[2], tr[3] = byte(i), byte(i>>8), byte(i>>16), byte(i>>24)
		id, parent := pcommon.SpanID{2}, pcommon.SpanID{1}
		if _, seen := m.seen(tr, id, parent, 0); !seen {
			m.add(now, callKey{tr, id}, flagCall, 0)
			m.add(now, callKey{tr, parent}, flagParent, 0)
		}
	}
}

// TestRecordsCountSkippedScopes: the traces→logs output counts the spans of
// derive::skip_scopes as the other outputs do.
func TestRecordsCountSkippedScopes(t *testing.T) {
	cfg := defaultConfig()
	cfg.Derive.SkipScopes = []string{"acme.http"}
	c, sink, tel := newRecordsConnector(t, cfg, clockwork.NewFakeClockAt(testStart))
	td, s := newSpans("app")
	callSpan(s, 1, 1, 0, "m", 0.8, 3)
	skipped := td.ResourceSpans().At(0).ScopeSpans().AppendEmpty()
	skipped.Scope().SetName("acme.http.server")
	for i := range 5 {
		sp := skipped.Spans().AppendEmpty()
		sp.SetName("GET /")
		sp.SetSpanID(pcommon.SpanID{9, byte(i + 1)})
	}
	require.NoError(t, c.ConsumeTraces(context.Background(), td))
	assert.Len(t, logRecords(sink), 1)
	assert.Equal(t, map[string]int64{"scope_skipped": 5}, sumByAttr(t, tel, "otelcol_connector_genai_ttft_skipped", "reason"))
}

// TestCallMemoryUndoRestoresWhatABatchFound: whatever a batch added (new
// keys, flags on known ones, refreshes, keys added twice, in a ring that
// evicts as it goes), undo leaves every key seen as before the batch.
func TestCallMemoryUndoRestoresWhatABatchFound(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		// Every other round the ring never fills, so nothing is evicted.
		capacity := 64 + rng.IntN(64)
		if round%2 == 0 {
			capacity = 4096
		}
		m := newCallMemory(capacity, time.Minute)
		key := func() callKey { return callKey{pcommon.TraceID{byte(rng.IntN(3))}, pcommon.SpanID{byte(rng.IntN(90))}} }
		flag := func() uint8 { return uint8(1 + rng.IntN(2)) }
		for range rng.IntN(200) {
			m.add(testStart, key(), flag(), uint64(rng.IntN(2)))
		}
		type view struct {
			flags             uint8
			callRes, childRes uint64
		}
		snapshot := func() map[callKey]view {
			out := map[callKey]view{}
			for k, e := range m.entries {
				out[k] = view{e.flags, e.callRes, e.childRes}
			}
			return out
		}
		before := snapshot()
		var us []memUndo
		for range 1 + rng.IntN(40) {
			us = append(us, m.add(testStart, key(), flag(), uint64(rng.IntN(2))))
		}
		m.undo(us)
		after := snapshot()
		if capacity == 4096 {
			require.Equal(t, before, after, "round %d", round)
			continue
		}
		// A key the batch's adds evicted from a full ring is gone; every
		// other key is as before.
		for k, v := range after {
			require.Equal(t, before[k], v, "round %d: key %v", round, k)
		}
		require.LessOrEqual(t, len(m.entries), m.capacity)
	}
}

// The traces→logs output reads stamped records back like the metrics
// connector, and derives a refused one afresh; its own telemetry must
// count it in invalid_records by reason (metadata.yaml,
// docs/architecture.md §10), as the traces→metrics and logs→metrics
// paths do.
func TestRecordsCountInvalidRecords(t *testing.T) {
	c, sink, tel := newRecordsConnector(t, defaultConfig(), clockwork.NewFakeClockAt(testStart))
	td, s := newSpans("app")
	span := callSpan(s, 1, 1, 0, "m", 0.8, 3)
	a := span.Attributes()
	a.PutStr("ttft.outcome", "complete")
	a.PutDouble("ttft.time_to_first_content", 0.5)
	a.PutDouble("ttft.duration", 5)
	a.PutStr("ttft.prompt_band", "<2k")
	a.PutStr("ttft.measured_at", "first_content")
	a.PutStr("ttft.observer", "admin") // forged
	core, warnings := observer.New(zap.WarnLevel)
	c.logger = zap.New(core)
	require.NoError(t, c.ConsumeTraces(context.Background(), td))
	assert.Len(t, logRecords(sink), 1, "derived afresh from its own evidence")
	_, err := tel.GetMetric("otelcol_connector_genai_ttft_invalid_records")
	if assert.NoError(t, err, "the forged record is counted in invalid_records") {
		assert.Equal(t, map[string]int64{"observer": 1}, sumByAttr(t, tel, "otelcol_connector_genai_ttft_invalid_records", "reason"))
	}
	// Logged at most once a minute; the rest is counted.
	td2, s2 := newSpans("app")
	span.CopyTo(s2.AppendEmpty())
	s2.At(0).SetSpanID(pcommon.SpanID{9, 9})
	require.NoError(t, c.ConsumeTraces(context.Background(), td2))
	assert.Equal(t, 1, warnings.FilterMessageSnippet("break a bound or closed set").Len())
	assert.Equal(t, map[string]int64{"observer": 2}, sumByAttr(t, tel, "otelcol_connector_genai_ttft_invalid_records", "reason"))
	m, err := tel.GetMetric("otelcol_connector_genai_ttft_logs_rate_limited")
	require.NoError(t, err)
	assert.Equal(t, int64(1), m.Data.(metricdata.Sum[int64]).DataPoints[0].Value)
}
