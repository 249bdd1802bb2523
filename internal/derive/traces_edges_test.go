package derive

// Edges of the batch walk (traces.go: link, fold, read-back) and of the log
// record reader (logs.go) that a mutation audit found no test pinned: each
// test below fails when its rule is broken in the code.

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

func chatAttrs(kv ...any) map[string]any {
	m := map[string]any{"gen_ai.operation.name": "chat"}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

// A batch of exactly linearLimit calls is linked through the index: eight
// traces of an outer call and its inner call give eight records.
func TestLinkAtLinearLimit(t *testing.T) {
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	for k := byte(1); k <= linearLimit/2; k++ {
		for _, id := range []byte{1, 2} {
			span := spans.AppendEmpty()
			span.SetKind(ptrace.SpanKindClient)
			span.SetTraceID(pcommon.TraceID{k})
			span.SetSpanID(pcommon.SpanID{k, id})
			if id == 2 {
				span.SetParentSpanID(pcommon.SpanID{k, 1})
			}
			span.SetStartTimestamp(ts(0))
			span.SetEndTimestamp(ts(time.Second))
			require.NoError(t, span.Attributes().FromRaw(chatAttrs()))
		}
	}
	require.Equal(t, linearLimit, spans.Len())
	recs, st := deriveAll(t, DefaultConfig(), td)
	assert.Len(t, recs, linearLimit/2)
	assert.Equal(t, int64(linearLimit/2), st.Nested)
}

// The walk through an intermediate span never folds a call onto an
// enclosing call of another resource.
func TestWalkStopsAtAnotherResource(t *testing.T) {
	td := ptrace.NewTraces()
	add := func(service string, id, parent byte, attrs map[string]any) {
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", service)
		span := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
		span.SetKind(ptrace.SpanKindClient)
		span.SetTraceID(pcommon.TraceID{7})
		span.SetSpanID(pcommon.SpanID{id})
		if parent != 0 {
			span.SetParentSpanID(pcommon.SpanID{parent})
		}
		span.SetStartTimestamp(ts(0))
		span.SetEndTimestamp(ts(time.Second))
		require.NoError(t, span.Attributes().FromRaw(attrs))
	}
	add("b", 1, 0, chatAttrs())                                   // the call of another service
	add("a", 2, 1, map[string]any{"http.request.method": "POST"}) // a's handler, child of b's call
	add("a", 3, 2, chatAttrs("gen_ai.request.model", "gpt-4o"))   // a's call under it
	recs, st := deriveAll(t, DefaultConfig(), td)
	assert.Len(t, recs, 2, "folding never crosses resources")
	assert.Zero(t, st.Nested)
}

// A chain of ten nested calls (an agent, its chain, the LLM call, the
// provider request, ...) is one record.
func TestDeepNestingFoldsIntoOneRecord(t *testing.T) {
	var specs []spanSpec
	for i := byte(1); i <= 10; i++ {
		s := spanSpec{name: "chat", kind: ptrace.SpanKindClient, id: i, dur: time.Second, attrs: chatAttrs()}
		if i > 1 {
			s.parent = i - 1
		}
		specs = append(specs, s)
	}
	recs, st := deriveAll(t, DefaultConfig(), traces(t, specs...))
	assert.Len(t, recs, 1)
	assert.Equal(t, int64(9), st.Nested)
}

// Of one evidence rank on the outer and the inner span, the inner span's
// (it issued the request) is the call's, even though it started later.
func TestInnerSpanWinsTieOfRank(t *testing.T) {
	rec := deriveOne(t,
		spanSpec{name: "outer", kind: ptrace.SpanKindClient, id: 1, dur: 2 * time.Second, status: ptrace.StatusCodeOk,
			attrs: chatAttrs("gen_ai.request.stream", true, "ttft_ms", 300)},
		spanSpec{name: "inner", kind: ptrace.SpanKindClient, id: 2, parent: 1, start: 50 * time.Millisecond, dur: 1500 * time.Millisecond,
			attrs: chatAttrs("ttft_ms", 200)},
	)
	require.True(t, rec.HasTimeToFirstChunk)
	assert.InDelta(t, 0.2, rec.TimeToFirstChunk, 1e-9)
}

// A span that says the call streamed wins over a later one that says it
// did not.
func TestStreamedWinsOverNotStreamed(t *testing.T) {
	recs, st := deriveAll(t, DefaultConfig(), traces(t,
		spanSpec{name: "outer", kind: ptrace.SpanKindClient, id: 1, dur: time.Second, attrs: chatAttrs("gen_ai.request.stream", true)},
		spanSpec{name: "inner", kind: ptrace.SpanKindClient, id: 2, parent: 1, dur: time.Second, attrs: chatAttrs("gen_ai.request.stream", false)},
	))
	require.Len(t, recs, 1)
	assert.True(t, recs[0].StreamedKnown && recs[0].Streamed)
	assert.Equal(t, int64(1), st.Skipped[ReasonNoEvidence])
	assert.Zero(t, st.Skipped[ReasonNotStreamed])
}

// Token counts fold to the largest any span of the call gives.
func TestTokenCountsFoldToTheLargest(t *testing.T) {
	rec := deriveOne(t,
		spanSpec{name: "outer", kind: ptrace.SpanKindClient, id: 1, dur: time.Second,
			attrs: chatAttrs("gen_ai.usage.input_tokens", 100, "gen_ai.usage.output_tokens", 5, "gen_ai.usage.cache_read.input_tokens", 10)},
		spanSpec{name: "inner", kind: ptrace.SpanKindClient, id: 2, parent: 1, dur: time.Second,
			attrs: chatAttrs("gen_ai.usage.input_tokens", 3000, "gen_ai.usage.output_tokens", 50, "gen_ai.usage.cache_read.input_tokens", 20)},
	)
	assert.Equal(t, int64(3000), rec.PromptTokens)
	assert.Equal(t, "2k-16k", rec.PromptBand)
	assert.Equal(t, int64(50), rec.OutputTokens)
	assert.Equal(t, int64(20), rec.CachedTokens)
}

// A nested span that outlived the root (and holds the call's first
// content) makes the call last until that span's end.
func TestDurationExtendsToTheLastNestedEnd(t *testing.T) {
	rec := deriveOne(t,
		spanSpec{name: "outer", kind: ptrace.SpanKindClient, id: 1, dur: time.Second, attrs: chatAttrs()},
		spanSpec{name: "inner", kind: ptrace.SpanKindClient, id: 2, parent: 1, start: 500 * time.Millisecond, dur: 2500 * time.Millisecond,
			attrs:  chatAttrs("gen_ai.request.stream", true),
			events: []eventSpec{chunk(2*time.Second, KindContent)}},
	)
	require.True(t, rec.HasTimeToFirstContent)
	assert.InDelta(t, 2.0, rec.TimeToFirstContent, 1e-9)
	assert.InDelta(t, 3.0, rec.Duration, 1e-9, "root start to the nested span's end")
}

// A nested span with unusable timing (it ends before it starts) makes the
// call's missing TTFT invalid_timing, not no_evidence.
func TestNestedInvalidTimingIsTheReason(t *testing.T) {
	recs, st := deriveAll(t, DefaultConfig(), traces(t,
		spanSpec{name: "outer", kind: ptrace.SpanKindClient, id: 1, dur: time.Second, attrs: chatAttrs()},
		spanSpec{name: "inner", kind: ptrace.SpanKindClient, id: 2, parent: 1, start: 500 * time.Millisecond, dur: -100 * time.Millisecond, attrs: chatAttrs()},
	))
	require.Len(t, recs, 1)
	assert.Equal(t, int64(1), st.Skipped[ReasonInvalidTiming])
	assert.Zero(t, st.Skipped[ReasonNoEvidence])
}

// A root without target fields takes them from the first nested span that
// has them; a later nested span without them does not erase them.
func TestNestedTargetFromTheFirstNestedSpan(t *testing.T) {
	rec := deriveOne(t,
		spanSpec{name: "outer", kind: ptrace.SpanKindClient, id: 1, dur: time.Second, attrs: chatAttrs()},
		spanSpec{name: "first", kind: ptrace.SpanKindClient, id: 2, parent: 1, dur: time.Second,
			attrs: chatAttrs("gen_ai.request.model", "m1", "gen_ai.provider.name", "openai", "ttft.route", "r1")},
		spanSpec{name: "second", kind: ptrace.SpanKindClient, id: 3, parent: 1, dur: time.Second, attrs: chatAttrs()},
	)
	assert.Equal(t, "m1", rec.Model)
	assert.Equal(t, "openai", rec.Provider)
	assert.Equal(t, "r1", rec.Route)
}

// RereadNested is called for a span marked ttft.nested_in upstream only,
// not for a record read back; ChunkEvents counts the chunk events read.
func TestRereadNestedOnlyForMarkers(t *testing.T) {
	td := traces(t,
		spanSpec{name: "stamped", kind: ptrace.SpanKindClient, id: 1, dur: time.Second},
		spanSpec{name: "marked", kind: ptrace.SpanKindClient, id: 1, dur: time.Second, attrs: map[string]any{record.KeyNestedIn: "0102030405060708"}},
		spanSpec{name: "chunked", kind: ptrace.SpanKindClient, id: 2, dur: time.Second, attrs: chatAttrs("gen_ai.request.stream", true),
			events: []eventSpec{chunk(100*time.Millisecond, KindRole), chunk(200*time.Millisecond, KindContent), chunk(300*time.Millisecond, KindContent)}},
	)
	stamped := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	(&record.Record{Outcome: record.OutcomeComplete, PromptBand: "unknown", Attempts: 1, Observer: record.ObserverClient}).Write(stamped.Attributes())
	d, err := New(DefaultConfig())
	require.NoError(t, err)
	var rereadNested []string
	st := d.TracesWith(td, TraceVisitor{
		Record:       func(pcommon.Resource, ptrace.Span, *record.Record) {},
		RereadNested: func(_ pcommon.Resource, span ptrace.Span) { rereadNested = append(rereadNested, span.Name()) },
	})
	assert.Equal(t, []string{"marked"}, rereadNested)
	assert.Equal(t, int64(1), st.Reread)
	assert.Equal(t, int64(3), st.ChunkEvents)
}

// A response-headers time past max_ttft_seconds is refused, but it is no
// refused TTFT: a call with no other evidence has none (no_evidence).
func TestLateHeadersAreNoInvalidTiming(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxTTFTSeconds = 1
	recs, st := deriveAll(t, cfg, traces(t, spanSpec{name: "chat", kind: ptrace.SpanKindClient, dur: 5 * time.Second,
		attrs: chatAttrs("gen_ai.request.stream", true), events: []eventSpec{{name: EventHeaders, at: 2 * time.Second}}}))
	require.Len(t, recs, 1)
	assert.False(t, recs[0].HasTimeToHeaders)
	assert.Equal(t, int64(1), st.ValuesRejected)
	assert.Equal(t, int64(1), st.Skipped[ReasonNoEvidence])
	assert.Zero(t, st.Skipped[ReasonInvalidTiming])
}

// A streamed LiteLLM call whose "TTFT" is its duration has no TTFT, and is
// no non-streamed call either: no_evidence.
func TestStreamedDurationAsTTFTIsNoEvidence(t *testing.T) {
	recs, st := deriveAll(t, DefaultConfig(), traces(t, spanSpec{scope: "litellm", name: "litellm_request", kind: ptrace.SpanKindClient, dur: time.Second,
		attrs: chatAttrs("gen_ai.request.stream", true, "ttft_ms", 1000)}))
	require.Len(t, recs, 1)
	assert.False(t, recs[0].HasTimeToFirstChunk)
	assert.Equal(t, int64(1), st.Skipped[ReasonNoEvidence])
	assert.Zero(t, st.Skipped[ReasonNotStreamed])
}

// A Vercel call retried on another model failed over.
func TestVercelRetryOnAnotherModelFailsOver(t *testing.T) {
	td := vercelRetry(t)
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	for i := 0; i < spans.Len(); i++ {
		if s := spans.At(i); s.SpanID() == (pcommon.SpanID{9, 9, 9, 9, 9, 9, 9, 9}) {
			s.Attributes().PutStr("ai.model.id", "other-model")
			s.Attributes().PutStr("gen_ai.request.model", "other-model")
		}
	}
	recs := captureRecords(t, td)
	require.Len(t, recs, 1)
	assert.Equal(t, int64(2), recs[0].Attempts)
	assert.True(t, recs[0].DidFailOver())
}

// Output tokens say content came: a generic timeout after them is an idle
// timeout, not a first-token one.
func TestOutputTokensMakeATimeoutIdle(t *testing.T) {
	s := idleStream(2 * time.Second)
	s.attrs["gen_ai.usage.output_tokens"] = 5
	rec := deriveOne(t, s)
	assert.Equal(t, record.OutcomeTimeoutIdle, rec.Outcome)
}

func deriveLogs(t *testing.T, attrs map[string]any, edit func(plog.LogRecord)) ([]record.Record, Stats) {
	t.Helper()
	d, err := New(DefaultConfig())
	require.NoError(t, err)
	ld := plog.NewLogs()
	sl := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty()
	lr := sl.LogRecords().AppendEmpty()
	require.NoError(t, lr.Attributes().FromRaw(attrs))
	if edit != nil {
		edit(lr)
	}
	var recs []record.Record
	st := d.Logs(ld, func(_ pcommon.Resource, _ plog.LogRecord, rec *record.Record) { recs = append(recs, *rec) })
	return recs, st
}

// A log record at severity ERROR is an error, whatever its HTTP status.
func TestLogSeverityErrorIsError(t *testing.T) {
	recs, _ := deriveLogs(t, map[string]any{"gen_ai.request.model": "gpt-4o", "http.response.status_code": 200},
		func(lr plog.LogRecord) { lr.SetSeverityNumber(plog.SeverityNumberError) })
	require.Len(t, recs, 1)
	assert.Equal(t, record.OutcomeError, recs[0].Outcome)
}

// Only a 2xx status completes a gateway record: a 300 does not.
func TestLogStatus300IsNoCompletion(t *testing.T) {
	recs, _ := deriveLogs(t, map[string]any{"gen_ai.request.model": "gpt-4o", "http.response.status_code": 300}, nil)
	require.Len(t, recs, 1)
	assert.NotEqual(t, record.OutcomeComplete, recs[0].Outcome)
}

// A duration of 0 is a duration; of the duration keys the first present
// (ttft.duration, duration_ms, latency_ms) is read.
func TestLogDurationKeys(t *testing.T) {
	recs, st := deriveLogs(t, map[string]any{"gen_ai.request.model": "gpt-4o", "duration_ms": 0}, nil)
	require.Len(t, recs, 1)
	assert.True(t, recs[0].HasDuration)
	assert.Zero(t, recs[0].Duration)
	assert.Zero(t, st.ValuesRejected)

	recs, _ = deriveLogs(t, map[string]any{"gen_ai.request.model": "gpt-4o", "ttft.duration": 2.0, "duration_ms": 5000, "latency_ms": 7000}, nil)
	require.Len(t, recs, 1)
	assert.InDelta(t, 2.0, recs[0].Duration, 1e-9)
}

// An absolute completion start on a log record (no start to read it
// from) is refused and counted.
func TestLogAbsoluteCompletionStartRefused(t *testing.T) {
	recs, st := deriveLogs(t, map[string]any{"gen_ai.request.model": "gpt-4o", "duration_ms": 2000,
		"langfuse.observation.completion_start_time": "2026-01-01T00:00:00.5Z"}, nil)
	require.Len(t, recs, 1)
	assert.False(t, recs[0].HasTimeToFirstChunk)
	assert.Equal(t, int64(1), st.ValuesRejected)
}

// A configured first_chunk row ranked as Langfuse's absolute time is read
// on a log record like any other: only an absolute time needs a start.
func TestLogRowOfLangfuseRankIsRead(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Rows = []Row{{Key: "acme.first_chunk_ms", Meaning: MeaningFirstChunk.String(), Unit: "ms", Rank: prioLangfuse, Source: "test"}}
	d, err := New(cfg)
	require.NoError(t, err)
	ld := plog.NewLogs()
	require.NoError(t, ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty().Attributes().FromRaw(
		map[string]any{"gen_ai.request.model": "gpt-4o", "duration_ms": 2000, "acme.first_chunk_ms": 300}))
	var recs []record.Record
	st := d.Logs(ld, func(_ pcommon.Resource, _ plog.LogRecord, rec *record.Record) { recs = append(recs, *rec) })
	require.Len(t, recs, 1)
	require.True(t, recs[0].HasTimeToFirstChunk, "stats %+v", st)
	assert.InDelta(t, 0.3, recs[0].TimeToFirstChunk, 1e-9)
	assert.Zero(t, st.ValuesRejected)
}

// A Bifrost log record's time_to_first_token is no TTFT, and is counted
// as untrusted.
func TestLogUntrustedCounted(t *testing.T) {
	d, err := New(DefaultConfig())
	require.NoError(t, err)
	ld := plog.NewLogs()
	sl := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty()
	sl.Scope().SetName("bifrost")
	require.NoError(t, sl.LogRecords().AppendEmpty().Attributes().FromRaw(map[string]any{
		"gen_ai.request.model": "gpt-4o", "gen_ai.response.time_to_first_token": 5000000}))
	var recs []record.Record
	st := d.Logs(ld, func(_ pcommon.Resource, _ plog.LogRecord, rec *record.Record) { recs = append(recs, *rec) })
	require.Len(t, recs, 1)
	assert.Empty(t, recs[0].MeasuredAt)
	assert.Equal(t, int64(1), st.Untrusted)
}

// A value refused on a span or log record that then proves no call (an
// INTERNAL span with a model, a log record without provider or model) is
// counted all the same: values_rejected says what senders got wrong, calls
// or not.
func TestValuesRejectedOnItemsThatAreNoCalls(t *testing.T) {
	d := testDeriver(t)
	td := ptrace.NewTraces()
	span := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	span.SetKind(ptrace.SpanKindInternal)
	span.SetTraceID(pcommon.TraceID{1})
	span.SetSpanID(pcommon.SpanID{1})
	span.SetStartTimestamp(pcommon.NewTimestampFromTime(time.Unix(1000, 0)))
	span.SetEndTimestamp(pcommon.NewTimestampFromTime(time.Unix(1002, 0)))
	span.Attributes().PutStr("gen_ai.request.model", "m")
	span.Attributes().PutInt("gen_ai.usage.input_tokens", -5)
	records := 0
	st := d.Traces(td, func(pcommon.Resource, ptrace.Span, *record.Record) { records++ })
	require.Zero(t, records, "an INTERNAL span with only a target is no call")
	assert.Equal(t, int64(1), st.Skipped[ReasonNotGenAI])
	assert.Equal(t, int64(1), st.ValuesRejected, "the span's refused token count")

	ld := plog.NewLogs()
	lr := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.Attributes().PutInt("gen_ai.usage.input_tokens", -5)
	st = d.Logs(ld, func(pcommon.Resource, plog.LogRecord, *record.Record) { records++ })
	require.Zero(t, records, "a log record without a target is no call")
	assert.Equal(t, int64(1), st.Skipped[ReasonNotGenAI])
	assert.Equal(t, int64(1), st.ValuesRejected, "the log record's refused token count")
}
