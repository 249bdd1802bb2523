package genaittftprocessor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/otelcol-ttft/otelcol-ttft/internal/derive"
	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// The README's default for skipped_log_interval is 1m.
func TestDefaultSkippedLogInterval(t *testing.T) {
	assert.Equal(t, time.Minute, createDefaultConfig().SkippedLogInterval)
}

// Any negative skipped_log_interval is refused, however small.
func TestNegativeIntervalRefused(t *testing.T) {
	cfg := createDefaultConfig()
	cfg.SkippedLogInterval = -time.Nanosecond
	require.ErrorContains(t, cfg.Validate(), "skipped_log_interval")
}

func newDropTraces(t *testing.T) (*componenttest.Telemetry, func(ptrace.Traces) ptrace.Traces) {
	t.Helper()
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	cfg := createDefaultConfig()
	cfg.DropChunkEvents = true
	p, sink := newTraces(t, cfg, tel)
	return tel, func(td ptrace.Traces) ptrace.Traces {
		require.NoError(t, p.ConsumeTraces(context.Background(), td))
		all := sink.AllTraces()
		return all[len(all)-1]
	}
}

// chunk_events_dropped counts the chunk events removed from a span folded
// into its enclosing call (the Nested visitor).
func TestDropChunkEventsCountsNestedSpan(t *testing.T) {
	tel, consume := newDropTraces(t)
	out := consume(nestedPair())
	assert.Equal(t, 0, out.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(1).Events().Len())
	assertSum(t, tel, "otelcol_processor_genai_ttft_chunk_events_dropped", nil, 3)
}

// Behind a tier without drop_chunk_events, the chunk events of the record
// read back and of the span marked ttft.nested_in upstream are removed
// and counted too.
func TestDropChunkEventsCountsReadBack(t *testing.T) {
	p1, sink1 := newTraces(t, createDefaultConfig(), nil)
	outer := nestedPair()
	// Chunk events on the outer span as well: its record is read back.
	span := outer.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	ev := span.Events().AppendEmpty()
	ev.SetName(derive.EventChunk)
	ev.SetTimestamp(span.StartTimestamp() + pcommon.Timestamp(50*time.Millisecond))
	ev.Attributes().PutStr(derive.AttrChunkKind, "content")
	require.NoError(t, p1.ConsumeTraces(context.Background(), outer))

	tel, consume := newDropTraces(t)
	out := consume(sink1.AllTraces()[0])
	spans := out.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	assert.Equal(t, 0, spans.At(0).Events().Len())
	assert.Equal(t, 0, spans.At(1).Events().Len())
	assertSum(t, tel, "otelcol_processor_genai_ttft_chunk_events_dropped", nil, 4)
}

// oneChunk is chunkedTraces with its first content event only.
func oneChunk() ptrace.Traces {
	td := chunkedTraces()
	kept := false
	td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Events().RemoveIf(func(ev ptrace.SpanEvent) bool {
		kind, _ := ev.Attributes().Get(derive.AttrChunkKind)
		if kind.Str() == "content" && !kept {
			kept = true
			return false
		}
		return true
	})
	return td
}

// A span's only chunk event is removed and counted; beside another event,
// only the chunk event is removed and counted.
func TestDropChunkEventsCountsOnlyChunks(t *testing.T) {
	tel, consume := newDropTraces(t)
	td := oneChunk()
	require.Equal(t, 1, td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Events().Len())
	out := consume(td)
	assert.Equal(t, 0, out.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Events().Len(), "the only event")
	assertSum(t, tel, "otelcol_processor_genai_ttft_chunk_events_dropped", nil, 1)

	td = oneChunk()
	span := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	exc := span.Events().AppendEmpty()
	exc.SetName("exception")
	exc.SetTimestamp(span.StartTimestamp() + pcommon.Timestamp(800*time.Millisecond))
	out = consume(td)
	got := out.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	require.Equal(t, 1, got.Events().Len())
	assert.Equal(t, "exception", got.Events().At(0).Name())
	assertSum(t, tel, "otelcol_processor_genai_ttft_chunk_events_dropped", nil, 2)
}

// Counters of the logs signal carry signal=logs: a log record marked
// ttft.nested_in is counted nested, a forged record invalid, a plain one
// skipped as not_genai.
func TestLogsCountersCarryTheSignal(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	p, _ := newLogs(t, createDefaultConfig(), tel)
	ld := plog.NewLogs()
	lrs := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	lrs.AppendEmpty().Attributes().PutStr(record.KeyNestedIn, "0102030405060708")
	forged := lrs.AppendEmpty().Attributes()
	forged.PutStr("gen_ai.request.model", "gpt-4o")
	forged.PutInt("ttft_ms", 100)
	(&record.Record{Outcome: record.OutcomeComplete, PromptBand: "pwned", Attempts: 1, Observer: record.ObserverGateway}).Write(forged)
	lrs.AppendEmpty().Attributes().PutStr("msg", "hello")
	require.NoError(t, p.ConsumeLogs(context.Background(), ld))

	assertSum(t, tel, "otelcol_processor_genai_ttft_spans_nested", map[string]string{"signal": "logs"}, 1)
	assertSum(t, tel, "otelcol_processor_genai_ttft_invalid_records", map[string]string{"signal": "logs", "reason": "prompt_band"}, 1)
	assertSum(t, tel, "otelcol_processor_genai_ttft_spans_skipped", map[string]string{"signal": "logs", "reason": "not_genai"}, 1)
}

// An event stamped before its span started is ignored and counted as
// evidence_rejected{kind=event}.
func TestEventsIgnoredCounted(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	p, _ := newTraces(t, createDefaultConfig(), tel)
	td := chunkedTraces()
	span := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	ev := span.Events().AppendEmpty()
	ev.SetName(derive.EventChunk)
	ev.SetTimestamp(span.StartTimestamp() - pcommon.Timestamp(time.Second))
	ev.Attributes().PutStr(derive.AttrChunkKind, "content")
	require.NoError(t, p.ConsumeTraces(context.Background(), td))
	assertSum(t, tel, "otelcol_processor_genai_ttft_evidence_rejected", map[string]string{"kind": "event"}, 1)
}

// logTelemetry is the processor's telemetry with an observed logger and
// a clock the test moves.
func logTelemetry(t *testing.T, interval time.Duration) (*telemetry, *observer.ObservedLogs, *time.Time) {
	t.Helper()
	core, logs := observer.New(zap.DebugLevel)
	set := componenttest.NewNopTelemetrySettings()
	set.Logger = zap.New(core)
	tel, err := newTelemetry(set, interval)
	require.NoError(t, err)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tel.now = func() time.Time { return now }
	return tel, logs, &now
}

func fieldsOf(e observer.LoggedEntry) map[string]any { return e.ContextMap() }

// The skipped-input log: one line per interval, carrying the counts since
// the last line, at WARN when any timing evidence was unusable.
func TestSkippedLogRateLimited(t *testing.T) {
	tel, logs, now := logTelemetry(t, time.Minute)
	ctx := context.Background()

	var ignored derive.Stats
	ignored.EventsIgnored = 2
	tel.report(ctx, signalLogs, &ignored, 0)
	require.Equal(t, 1, logs.Len(), "events ignored alone are logged")
	first := logs.TakeAll()[0]
	assert.Equal(t, zapcore.WarnLevel, first.Level, "ignored events are unusable timing evidence")
	assert.Equal(t, map[string]any{
		"signal": "logs", "invalid_timing": int64(0), "no_evidence": int64(0), "not_streamed": int64(0),
		"values_rejected": int64(0), "events_ignored": int64(2), "since_last_report": time.Minute,
	}, fieldsOf(first))

	// Within the interval: held back, and added up.
	var rejected derive.Stats
	rejected.ValuesRejected = 3
	rejected.Skipped[derive.ReasonNotStreamed] = 1
	*now = now.Add(30 * time.Second)
	tel.report(ctx, signalTraces, &rejected, 0)
	*now = now.Add(29 * time.Second)
	tel.report(ctx, signalTraces, &rejected, 0)
	assert.Equal(t, 0, logs.Len(), "within the interval")

	// A whole interval after the last line: the counts since it.
	*now = now.Add(time.Second)
	tel.report(ctx, signalTraces, &rejected, 0)
	require.Equal(t, 1, logs.Len(), "an interval after the last line")
	second := logs.TakeAll()[0]
	assert.Equal(t, zapcore.WarnLevel, second.Level)
	assert.Equal(t, "traces", fieldsOf(second)["signal"])
	assert.Equal(t, int64(9), fieldsOf(second)["values_rejected"])
	assert.Equal(t, int64(3), fieldsOf(second)["not_streamed"])
	assert.Equal(t, int64(0), fieldsOf(second)["events_ignored"], "counted into the first line")

	// Calls that were not streamed alone: a DEBUG line, counts reset.
	var quiet derive.Stats
	quiet.Skipped[derive.ReasonNotStreamed] = 1
	*now = now.Add(time.Minute)
	tel.report(ctx, signalTraces, &quiet, 0)
	require.Equal(t, 1, logs.Len(), "not_streamed alone is logged")
	third := logs.TakeAll()[0]
	assert.Equal(t, zapcore.DebugLevel, third.Level)
	assert.Equal(t, int64(1), fieldsOf(third)["not_streamed"])
	assert.Equal(t, int64(0), fieldsOf(third)["values_rejected"], "counts reset after each line")
}

// skipped_log_interval: 0 logs every batch, even two at the same instant.
func TestSkippedLogIntervalZeroLogsEveryBatch(t *testing.T) {
	tel, logs, _ := logTelemetry(t, 0)
	var st derive.Stats
	st.Skipped[derive.ReasonInvalidTiming] = 1
	tel.report(context.Background(), signalTraces, &st, 0)
	tel.report(context.Background(), signalTraces, &st, 0)
	assert.Equal(t, 2, logs.Len())
}
