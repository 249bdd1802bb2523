package genaittftprocessor

import (
	"context"
	"flag"
	"path/filepath"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/ptracetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/otelcol-ttft/otelcol-ttft/internal/derive"
	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
	"github.com/otelcol-ttft/otelcol-ttft/internal/record/recordtest"
	"github.com/otelcol-ttft/otelcol-ttft/processor/genaittftprocessor/internal/metadata"
)

// -update regenerates testdata/golden from the processor's output. Review
// the diff: golden files are never edited by hand.
var update = flag.Bool("update", false, "rewrite golden files")

const fixtures = "../../testdata/fixtures"

func newTraces(t *testing.T, cfg *Config, tel *componenttest.Telemetry) (processor.Traces, *consumertest.TracesSink) {
	t.Helper()
	set := processortest.NewNopSettings(metadata.Type)
	if tel != nil {
		set.TelemetrySettings = tel.NewTelemetrySettings()
	}
	sink := new(consumertest.TracesSink)
	p, err := NewFactory().CreateTraces(context.Background(), set, cfg, sink)
	require.NoError(t, err)
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, p.Shutdown(context.Background())) })
	return p, sink
}

func newLogs(t *testing.T, cfg *Config, tel *componenttest.Telemetry) (processor.Logs, *consumertest.LogsSink) {
	t.Helper()
	set := processortest.NewNopSettings(metadata.Type)
	if tel != nil {
		set.TelemetrySettings = tel.NewTelemetrySettings()
	}
	sink := new(consumertest.LogsSink)
	p, err := NewFactory().CreateLogs(context.Background(), set, cfg, sink)
	require.NoError(t, err)
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, p.Shutdown(context.Background())) })
	return p, sink
}

func TestLifecycle(t *testing.T) {
	f := NewFactory()
	assert.Equal(t, metadata.Type, f.Type())
	assert.Equal(t, metadata.TracesStability, f.TracesStability())
	assert.Equal(t, metadata.LogsStability, f.LogsStability())
	cfg := f.CreateDefaultConfig()
	set := processortest.NewNopSettings(metadata.Type)

	tp, err := f.CreateTraces(context.Background(), set, cfg, consumertest.NewNop())
	require.NoError(t, err)
	assert.True(t, tp.Capabilities().MutatesData)
	require.NoError(t, tp.Start(context.Background(), componenttest.NewNopHost()))
	require.NoError(t, tp.Shutdown(context.Background()))
	require.NoError(t, tp.Shutdown(context.Background()), "Shutdown is idempotent")

	lp, err := f.CreateLogs(context.Background(), set, cfg, consumertest.NewNop())
	require.NoError(t, err)
	require.NoError(t, lp.Shutdown(context.Background()), "Shutdown without Start")
	require.NoError(t, lp.Start(context.Background(), componenttest.NewNopHost()))
	require.NoError(t, lp.Shutdown(context.Background()))

	_, err = f.CreateMetrics(context.Background(), set, cfg, consumertest.NewNop())
	require.Error(t, err, "metrics are the connector's job")

	bad := createDefaultConfig()
	bad.Derive.PromptBands = []int64{5, 1}
	_, err = f.CreateTraces(context.Background(), set, bad, consumertest.NewNop())
	require.Error(t, err)
}

func TestShutdownVerifier(t *testing.T) {
	processortest.VerifyShutdown(t, NewFactory(), NewFactory().CreateDefaultConfig())
}

// chunkedTraces is a span following the ttft.chunk contract, beside a
// non-GenAI span that must pass untouched.
func chunkedTraces() ptrace.Traces {
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
	ss.Scope().SetName("my-llm-client")
	start := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	span := ss.Spans().AppendEmpty()
	span.SetName("chat gpt-4o")
	span.SetKind(ptrace.SpanKindClient)
	span.SetTraceID(pcommon.TraceID{1})
	span.SetSpanID(pcommon.SpanID{1})
	span.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
	span.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(900 * time.Millisecond)))
	span.Attributes().PutStr("gen_ai.operation.name", "chat")
	span.Attributes().PutStr("gen_ai.provider.name", "openai")
	span.Attributes().PutStr("gen_ai.request.model", "gpt-4o")
	span.Attributes().PutInt("gen_ai.usage.input_tokens", 2500)
	span.Attributes().PutStr("ttft.route", "support")
	span.Attributes().PutEmptySlice("gen_ai.response.finish_reasons").AppendEmpty().SetStr("stop")
	for i, kind := range []string{"role", "keepalive", "content", "content", "reasoning", "lifecycle"} {
		ev := span.Events().AppendEmpty()
		ev.SetName(derive.EventChunk)
		ev.SetTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Duration(50+100*i) * time.Millisecond)))
		ev.Attributes().PutStr(derive.AttrChunkKind, kind)
	}
	other := ss.Spans().AppendEmpty()
	other.SetName("GET /health")
	other.SetTraceID(pcommon.TraceID{1})
	other.SetSpanID(pcommon.SpanID{2})
	other.Attributes().PutStr("http.request.method", "GET")
	return td
}

func TestGolden(t *testing.T) {
	cases := []struct {
		name  string
		input func(t *testing.T) ptrace.Traces
		drop  bool
	}{
		{name: "openinference_anthropic_nested", input: fixture("openinference-anthropic/normal.traces.json")},
		{name: "vercel_ai_first_chunk", input: fixture("vercel-ai/normal.traces.json")},
		{name: "openlit_nonstream", input: fixture("openlit-openai/nonstream.traces.json")},
		{name: "anthropic_error_midstream", input: fixture("anthropic-native/error_midstream.traces.json")},
		{name: "bifrost_fallback", input: fixture("bifrost-gateway/fallback_rule_429.traces.json")},
		{name: "chunk_events", input: func(*testing.T) ptrace.Traces { return chunkedTraces() }},
		{name: "chunk_events_dropped", input: func(*testing.T) ptrace.Traces { return chunkedTraces() }, drop: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := createDefaultConfig()
			cfg.DropChunkEvents = c.drop
			p, sink := newTraces(t, cfg, nil)
			require.NoError(t, p.ConsumeTraces(context.Background(), c.input(t)))
			require.Len(t, sink.AllTraces(), 1)
			got := sink.AllTraces()[0]
			path := filepath.Join("testdata", "golden", c.name+".yaml")
			if *update {
				require.NoError(t, golden.WriteTracesToFile(path, got))
				t.Logf("wrote %s", path)
			}
			want, err := golden.ReadTraces(path)
			require.NoError(t, err)
			require.NoError(t, ptracetest.CompareTraces(want, got))
		})
	}
}

func fixture(rel string) func(t *testing.T) ptrace.Traces {
	return func(t *testing.T) ptrace.Traces {
		td, err := golden.ReadTraces(filepath.Join(fixtures, rel))
		require.NoError(t, err)
		return td
	}
}

func TestStampsNestedAndDrops(t *testing.T) {
	cfg := createDefaultConfig()
	cfg.DropChunkEvents = true
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	p, sink := newTraces(t, cfg, tel)

	require.NoError(t, p.ConsumeTraces(context.Background(), chunkedTraces()))
	nested, err := golden.ReadTraces(filepath.Join(fixtures, "openinference-anthropic/normal.traces.json"))
	require.NoError(t, err)
	require.NoError(t, p.ConsumeTraces(context.Background(), nested))

	span := sink.AllTraces()[0].ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	rec, ok := recordtest.Read(span.Attributes())
	require.True(t, ok)
	assert.InDelta(t, 0.25, rec.TimeToFirstContent, 1e-9)
	assert.Equal(t, record.MeasuredAtFirstContent, rec.MeasuredAt)
	assert.Equal(t, "support", rec.Route)
	assert.Equal(t, "2k-16k", rec.PromptBand)
	assert.Equal(t, 0, span.Events().Len(), "chunk events dropped after deriving")
	health := sink.AllTraces()[0].ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(1)
	assert.Equal(t, 1, health.Attributes().Len(), "non-GenAI spans untouched")

	var outer, inner ptrace.Span
	rss := sink.AllTraces()[1].ResourceSpans().At(0).ScopeSpans()
	for i := 0; i < rss.Len(); i++ {
		s := rss.At(i).Spans().At(0)
		if s.ParentSpanID().IsEmpty() {
			outer = s
		} else {
			inner = s
		}
	}
	assert.True(t, recordtest.Stamped(outer.Attributes()))
	v, ok := inner.Attributes().Get(record.KeyNestedIn)
	require.True(t, ok)
	assert.Equal(t, outer.SpanID().String(), v.Str())
	assert.False(t, recordtest.Stamped(inner.Attributes()), "one call, one record")

	// A second pass (another processor downstream) changes nothing.
	again := ptrace.NewTraces()
	sink.AllTraces()[1].CopyTo(again)
	require.NoError(t, p.ConsumeTraces(context.Background(), again))
	require.NoError(t, ptracetest.CompareTraces(sink.AllTraces()[1], sink.AllTraces()[2]))

	assertSum(t, tel, "otelcol_processor_genai_ttft_spans_derived", map[string]string{"signal": "traces"}, 2)
	assertSum(t, tel, "otelcol_processor_genai_ttft_spans_skipped", map[string]string{"signal": "traces", "reason": "not_genai"}, 1)
	assertSum(t, tel, "otelcol_processor_genai_ttft_spans_nested", map[string]string{"signal": "traces"}, 2)
	assertSum(t, tel, "otelcol_processor_genai_ttft_chunk_events_dropped", nil, 6)
}

func TestBifrostTraceOneRecordPerRequest(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	p, sink := newTraces(t, createDefaultConfig(), tel)
	// Two requests, each 429 → retry 429 → fallback that answered.
	require.NoError(t, p.ConsumeTraces(context.Background(), fixture("bifrost-gateway/fallback_rule_429.traces.json")(t)))
	var stamped []record.Record
	rss := sink.AllTraces()[0].ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		for _, ss := range rss.At(i).ScopeSpans().All() {
			for _, span := range ss.Spans().All() {
				if rec, ok := recordtest.Read(span.Attributes()); ok {
					assert.Equal(t, ptrace.SpanKindServer, span.Kind(), "the record is on the request's SERVER span")
					stamped = append(stamped, rec)
				}
			}
		}
	}
	require.Len(t, stamped, 2)
	for _, rec := range stamped {
		assert.Equal(t, int64(3), rec.Attempts)
		assert.True(t, rec.FailedOver && rec.FailedOverKnown)
		assert.Equal(t, record.OutcomeComplete, rec.Outcome)
		assert.Empty(t, rec.MeasuredAt, "Bifrost's span attributes are no TTFT")
		assert.Equal(t, record.ObserverGateway, rec.Observer)
	}
	assertSum(t, tel, "otelcol_processor_genai_ttft_evidence_rejected", map[string]string{"kind": "untrusted_producer"}, 4)
}

// assertSum finds the data point with exactly these attributes.
func assertSum(t *testing.T, tel *componenttest.Telemetry, name string, attrs map[string]string, want int64) {
	t.Helper()
	m, err := tel.GetMetric(name)
	require.NoError(t, err, name)
	sum, ok := m.Data.(metricdata.Sum[int64])
	require.True(t, ok, name)
	for _, dp := range sum.DataPoints {
		if dp.Attributes.Len() != len(attrs) {
			continue
		}
		match := true
		for k, v := range attrs {
			got, ok := dp.Attributes.Value(attributeKey(k))
			match = match && ok && got.AsString() == v
		}
		if match {
			assert.Equal(t, want, dp.Value, "%s %v", name, attrs)
			return
		}
	}
	t.Fatalf("%s: no data point with %v in %+v", name, attrs, sum.DataPoints)
}

func TestLogs(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	set := processortest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	sink := new(consumertest.LogsSink)
	p, err := NewFactory().CreateLogs(context.Background(), set, createDefaultConfig(), sink)
	require.NoError(t, err)
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	defer func() { require.NoError(t, p.Shutdown(context.Background())) }()

	ld := plog.NewLogs()
	lr := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.Attributes().PutStr("gen_ai.request.model", "gpt-4o")
	lr.Attributes().PutInt("ttft_ms", 420)
	lr.Attributes().PutInt("http.response.status_code", 200)
	require.NoError(t, p.ConsumeLogs(context.Background(), ld))

	got := sink.AllLogs()[0].ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
	rec, ok := recordtest.Read(got.Attributes())
	require.True(t, ok)
	assert.InDelta(t, 0.42, rec.TimeToFirstChunk, 1e-9)
	assert.Equal(t, record.ObserverGateway, rec.Observer)
	assertSum(t, tel, "otelcol_processor_genai_ttft_spans_derived", map[string]string{"signal": "logs"}, 1)
}

func attributeKey(k string) attribute.Key { return attribute.Key(k) }

// A record stamped upstream (another collector, or an app that writes
// ttft.* itself) is kept exactly as it came: not re-derived from the span's
// own evidence, not completed with keys it did not carry.
func TestUpstreamRecordKept(t *testing.T) {
	upstream := func(attrs pcommon.Map) {
		attrs.PutStr("gen_ai.operation.name", "chat")
		attrs.PutInt("ttft_ms", 100) // would derive a first-chunk TTFT of 0.1 s
		attrs.PutStr(record.KeyOutcome, record.OutcomeError)
		attrs.PutDouble(record.KeyTimeToFirstContent, 0.5)
		attrs.PutStr(record.KeyMeasuredAt, record.MeasuredAtFirstContent)
		// A complete record: one missing its band or observer is derived afresh.
		attrs.PutStr(record.KeyPromptBand, "unknown")
		attrs.PutStr(record.KeyObserver, record.ObserverGateway)
	}

	td := ptrace.NewTraces()
	span := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	span.SetStartTimestamp(pcommon.NewTimestampFromTime(time.Unix(1_800_000_000, 0)))
	span.SetEndTimestamp(pcommon.NewTimestampFromTime(time.Unix(1_800_000_001, 0)))
	upstream(span.Attributes())
	want := span.Attributes().AsRaw()
	tp, tsink := newTraces(t, createDefaultConfig(), nil)
	require.NoError(t, tp.ConsumeTraces(context.Background(), td))
	got := tsink.AllTraces()[0].ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	assert.Equal(t, want, got.Attributes().AsRaw())

	ld := plog.NewLogs()
	upstream(ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty().Attributes())
	lsink := new(consumertest.LogsSink)
	lp, err := NewFactory().CreateLogs(context.Background(), processortest.NewNopSettings(metadata.Type), createDefaultConfig(), lsink)
	require.NoError(t, err)
	require.NoError(t, lp.ConsumeLogs(context.Background(), ld))
	lr := lsink.AllLogs()[0].ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
	assert.Equal(t, want, lr.Attributes().AsRaw())
	require.NoError(t, lp.Shutdown(context.Background()))
}

func TestForgedUpstreamRecordIsDerivedAfreshAndCounted(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	td := ptrace.NewTraces()
	span := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	span.SetStartTimestamp(pcommon.NewTimestampFromTime(time.Unix(1_800_000_000, 0)))
	span.SetEndTimestamp(pcommon.NewTimestampFromTime(time.Unix(1_800_000_002, 0)))
	a := span.Attributes()
	a.PutStr("gen_ai.operation.name", "chat")
	a.PutInt("ttft_ms", 100)
	(&record.Record{
		Outcome: record.OutcomeComplete, PromptBand: "pwned", Attempts: 1, Observer: record.ObserverClient,
		MeasuredAt: record.MeasuredAtFirstContent, TimeToFirstContent: 1e12, HasTimeToFirstContent: true,
	}).Write(a)
	p, sink := newTraces(t, createDefaultConfig(), tel)
	require.NoError(t, p.ConsumeTraces(context.Background(), td))
	got := sink.AllTraces()[0].ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes()
	band, _ := got.Get(record.KeyPromptBand)
	assert.Equal(t, "unknown", band.Str(), "the forged band is replaced")
	_, hasContent := got.Get(record.KeyTimeToFirstContent)
	chunk, _ := got.Get(record.KeyTimeToFirstChunk)
	assert.False(t, hasContent, "the forged 1e12 s is removed, not left beside the fresh record")
	assert.InDelta(t, 0.1, chunk.Double(), 1e-9, "derived from the span's own ttft_ms")
	assertSum(t, tel, "otelcol_processor_genai_ttft_invalid_records", map[string]string{"signal": "traces", "reason": "prompt_band"}, 1)
}

// TestForgedRecordKeysWithoutOutcomeAreRemoved: a sender's ttft.* record
// keys on a span without ttft.outcome (so it is derived, not read back) do
// not survive beside the derived record: a forged longest pause, failover
// flag and content count used to be merged into it.
func TestForgedRecordKeysWithoutOutcomeAreRemoved(t *testing.T) {
	p, sink := newTraces(t, createDefaultConfig(), componenttest.NewTelemetry())
	td := chunkedTraces()
	span := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	derived := ptrace.NewTraces()
	td.CopyTo(derived)
	span.Attributes().PutDouble(record.KeyTimeToFirstChunk, 0.001)
	span.Attributes().PutBool(record.KeyFailedOver, true)
	span.Attributes().PutInt(record.KeyContentChunks, 70)
	span.Attributes().PutDouble(record.KeyMaxChunkGap, 2.9) // within the span: no bound refuses it
	require.NoError(t, p.ConsumeTraces(context.Background(), derived))
	require.NoError(t, p.ConsumeTraces(context.Background(), td))
	want := sink.AllTraces()[0].ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes().AsRaw()
	got := sink.AllTraces()[1].ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes().AsRaw()
	assert.Equal(t, want, got, "the forged span stamps as the clean one")
	assert.NotContains(t, got, record.KeyFailedOver)
}
