package derive_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-ttft/otelcol-ttft/internal/derive"
	"github.com/otelcol-ttft/otelcol-ttft/internal/derive/derivetest"
	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// nestedTrace is a call nested in another through an intermediate span.
func nestedTrace() ptrace.Traces {
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	for i, parent := range []byte{0, 1, 2} {
		span := spans.AppendEmpty()
		span.SetName([]string{"outer", "mid", "inner"}[i])
		span.SetTraceID(pcommon.TraceID{0xab})
		span.SetSpanID(pcommon.SpanID{byte(i + 1)})
		if parent != 0 {
			span.SetParentSpanID(pcommon.SpanID{parent})
		}
		span.SetStartTimestamp(1_000_000_000)
		span.SetEndTimestamp(2_000_000_000)
		if i != 1 {
			span.SetKind(ptrace.SpanKindClient)
			span.Attributes().PutStr("gen_ai.operation.name", "chat")
			span.Attributes().PutStr("gen_ai.request.model", "m")
		}
	}
	return td
}

func TestStampedOnlyReadsWhatTheProcessorStamped(t *testing.T) {
	d, err := derive.New(derive.DefaultConfig())
	require.NoError(t, err)
	stamped, err := derive.New(derive.DefaultConfig(), derive.StampedOnly())
	require.NoError(t, err)

	// GenAI spans, plain spans, and a call nested in another through an
	// intermediate span.
	td := derivetest.ChunkedSpans(40, 30, 4)
	derivetest.PlainSpans(300).ResourceSpans().MoveAndAppendTo(td.ResourceSpans())
	nestedTrace().ResourceSpans().MoveAndAppendTo(td.ResourceSpans())
	derive.CheckStampedOnly(t, d, stamped, td)

	// Unstamped, the same batch gives no record under StampedOnly. Over
	// 256 batches each span is sampled once, wherever it is in its batch:
	// the 42 calls (40 and the nested trace's two) count as unstamped.
	var st derive.Stats
	for range 256 {
		st.Add(stamped.Traces(td, func(pcommon.Resource, ptrace.Span, *record.Record) { t.Fatal("a record derived under StampedOnly") }))
	}
	assert.Zero(t, st.Records)
	assert.Equal(t, int64(42), st.Skipped[derive.ReasonUnstamped])
	assert.Equal(t, st.Examined-42, st.Skipped[derive.ReasonNotGenAI])
}

// A batch whose calls are never its first spans (each LLM call inside a
// trace of plain spans) still gets its calls sampled: which position is
// sampled moves from batch to batch.
func TestStampedOnlySamplesEveryPosition(t *testing.T) {
	d, err := derive.New(derive.DefaultConfig(), derive.StampedOnly())
	require.NoError(t, err)
	td := derivetest.PlainSpans(9)
	derivetest.ChunkedSpans(1, 3, 1).ResourceSpans().MoveAndAppendTo(td.ResourceSpans())
	derivetest.PlainSpans(20).ResourceSpans().MoveAndAppendTo(td.ResourceSpans())
	var unstamped []int
	for i := range 512 {
		if st := d.Traces(td, nil); st.Skipped[derive.ReasonUnstamped] > 0 {
			unstamped = append(unstamped, i)
		}
	}
	require.Len(t, unstamped, 2, "the call, 10th of 30 spans, once in every 256 batches")
	assert.Equal(t, 256, unstamped[1]-unstamped[0])
}

func TestStampedOnlyDerivesABrokenRecordAfresh(t *testing.T) {
	// A record whose values break the bounds is derived afresh from the
	// span's own evidence, as without the option: never aggregated as is.
	for _, opts := range [][]derive.Option{nil, {derive.StampedOnly()}} {
		d, err := derive.New(derive.DefaultConfig(), opts...)
		require.NoError(t, err)
		td := derivetest.ChunkedSpans(1, 30, 1)
		span := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
		span.Attributes().PutStr(record.KeyOutcome, "complete")
		span.Attributes().PutDouble(record.KeyTimeToFirstContent, -3)
		var recs []record.Record
		st := d.Traces(td, func(_ pcommon.Resource, _ ptrace.Span, rec *record.Record) { recs = append(recs, *rec) })
		require.Len(t, recs, 1)
		assert.Equal(t, int64(1), st.Invalid[record.InvalidValue])
		assert.Zero(t, st.Reread)
		assert.Greater(t, recs[0].TimeToFirstContent, 0.0, "derived from the chunk events")
	}
}

func TestStampedOnlyLogs(t *testing.T) {
	d, err := derive.New(derive.DefaultConfig(), derive.StampedOnly())
	require.NoError(t, err)
	ld := plog.NewLogs()
	lrs := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	// 1: an unstamped gateway record; 2: a stamped one; 3: a log record
	// inside a span; 4: a nested marker; 5: another unstamped one.
	gateway := func(lr plog.LogRecord) {
		require.NoError(t, lr.Attributes().FromRaw(map[string]any{"gen_ai.request.model": "gpt-4o", "gen_ai.provider.name": "openai",
			"ttft_ms": 340, "duration_ms": 2100, "http.response.status_code": 200, "litellm.request.streaming": true}))
	}
	gateway(lrs.AppendEmpty())
	// Stamped as the processor stamps it: derived, then written.
	d0, err := derive.New(derive.DefaultConfig())
	require.NoError(t, err)
	one := plog.NewLogs()
	gateway(one.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty())
	d0.Logs(one, func(_ pcommon.Resource, lr plog.LogRecord, rec *record.Record) { rec.Write(lr.Attributes()) })
	one.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).CopyTo(lrs.AppendEmpty())
	lrs.AppendEmpty().SetSpanID(pcommon.SpanID{1})
	lrs.AppendEmpty().Attributes().PutStr(record.KeyNestedIn, "0102030405060708")
	gateway(lrs.AppendEmpty())

	// Over 256 batches each log record is sampled once: the two unstamped
	// gateway records count as unstamped once each.
	var st derive.Stats
	var got []record.Record
	for range 256 {
		st.Add(d.LogsWith(ld, derive.LogVisitor{Record: func(_ pcommon.Resource, _ plog.LogRecord, r *record.Record) { got = append(got, *r) }}))
	}
	require.Len(t, got, 256)
	assert.Equal(t, "gpt-4o", got[0].Model)
	assert.Equal(t, int64(256), st.Reread, "%+v", st)
	assert.Equal(t, int64(2), st.Skipped[derive.ReasonUnstamped])
	assert.Equal(t, int64(256), st.Skipped[derive.ReasonSpanLog])
	assert.Equal(t, int64(2*256-2), st.Skipped[derive.ReasonNotGenAI])
	assert.Equal(t, int64(256), st.Nested)
}

// TestStampedOnlyPlainBatchAllocatesNothing: the StampedOnly pass over a
// batch without records allocates nothing either.
func TestStampedOnlyPlainBatchAllocatesNothing(t *testing.T) {
	d, err := derive.New(derive.DefaultConfig(), derive.StampedOnly())
	require.NoError(t, err)
	td := derivetest.PlainSpans(1000)
	d.Traces(td, nil)
	allocs := testing.AllocsPerRun(20, func() {
		if st := d.Traces(td, nil); st.Skipped[derive.ReasonNotGenAI] != 1000 {
			t.Fatalf("stats %+v", st)
		}
	})
	assert.Zero(t, allocs)
}

// A span the processor found to be no call (an INTERNAL span that names a
// model, as a gateway's key selection does) is not counted as unstamped
// when sampled: the sample is read with the call rule, not the prefilter.
func TestStampedOnlySampleUsesTheCallRule(t *testing.T) {
	d, err := derive.New(derive.DefaultConfig(), derive.StampedOnly())
	require.NoError(t, err)
	for _, kind := range []ptrace.SpanKind{ptrace.SpanKindInternal, ptrace.SpanKindClient} {
		td := ptrace.NewTraces()
		span := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
		span.SetKind(kind)
		span.SetStartTimestamp(1_000_000_000)
		span.SetEndTimestamp(2_000_000_000)
		span.Attributes().PutStr("gen_ai.request.model", "gpt-4o")
		span.Attributes().PutStr("gen_ai.provider.name", "openai")
		var st derive.Stats
		for range 256 { // the one span is sampled once in 256 batches
			st.Add(d.Traces(td, nil))
		}
		if kind == ptrace.SpanKindInternal {
			assert.Equal(t, int64(256), st.Skipped[derive.ReasonNotGenAI], "no call")
			assert.Zero(t, st.Skipped[derive.ReasonUnstamped])
		} else {
			assert.Equal(t, int64(1), st.Skipped[derive.ReasonUnstamped], "a CLIENT span with a target is a call")
		}
		assert.Zero(t, testing.AllocsPerRun(10, func() { d.Traces(td, nil) }), "the sample allocates nothing")
	}
}

// A span whose own request model is empty gets its model from another key;
// stamped and read back (as the connector reads it), the record keeps it.
func TestStampedRecordKeepsADerivedModel(t *testing.T) {
	d, err := derive.New(derive.DefaultConfig())
	require.NoError(t, err)
	td := derivetest.ChunkedSpans(1, 30, 1)
	span := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	span.Attributes().PutStr("gen_ai.request.model", "")
	var derived record.Record
	d.Traces(td, func(_ pcommon.Resource, s ptrace.Span, rec *record.Record) {
		derived = *rec
		rec.Write(s.Attributes())
	})
	require.NotEmpty(t, derived.Model, "the model comes from gen_ai.response.model")
	var back []record.Record
	d.Traces(td, func(_ pcommon.Resource, _ ptrace.Span, rec *record.Record) { back = append(back, *rec) })
	require.Len(t, back, 1)
	assert.Equal(t, derived.Model, back[0].Model)
}
