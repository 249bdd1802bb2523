package derive

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// forgedSpan is a streamed chat span that carries its own evidence (a
// content chunk 0.5 s in, 2 s long) and a stamped record set by stamp.
func forgedSpan(td ptrace.Traces, stamp func(pcommon.Map)) ptrace.Span {
	span := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	span.SetName("chat gpt-4o")
	span.SetKind(ptrace.SpanKindClient)
	span.SetSpanID(pcommon.SpanID{1})
	start := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	span.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
	span.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(2 * time.Second)))
	a := span.Attributes()
	a.PutStr("gen_ai.provider.name", "openai")
	a.PutStr("gen_ai.request.model", "gpt-4o")
	a.PutBool("gen_ai.request.stream", true)
	a.PutStr("gen_ai.operation.name", "chat")
	ev := span.Events().AppendEmpty()
	ev.SetName(EventChunk)
	ev.SetTimestamp(pcommon.NewTimestampFromTime(start.Add(500 * time.Millisecond)))
	ev.Attributes().PutStr(AttrChunkKind, KindContent)
	(&record.Record{
		Outcome: record.OutcomeComplete, PromptBand: "<2k", Attempts: 1,
		MeasuredAt: record.MeasuredAtFirstContent, Observer: record.ObserverClient,
		TimeToFirstContent: 0.8, HasTimeToFirstContent: true, Duration: 3, HasDuration: true,
	}).Write(a)
	stamp(a)
	return span
}

func TestForgedRecordsAreDerivedAfreshAndCounted(t *testing.T) {
	cases := []struct {
		name  string
		stamp func(pcommon.Map)
		want  record.Invalid
	}{
		{"TTFT 1e12", func(a pcommon.Map) {
			a.PutDouble(record.KeyTimeToFirstContent, 1e12)
			a.PutDouble(record.KeyDuration, 2e12)
		}, record.InvalidTTFTBound},
		{"TTFT 4000 s above max_ttft_seconds", func(a pcommon.Map) {
			a.PutDouble(record.KeyTimeToFirstContent, 4000)
			a.PutDouble(record.KeyDuration, 5000)
		}, record.InvalidTTFTBound},
		{"TTFT 50 s in a 1 s request", func(a pcommon.Map) { a.PutDouble(record.KeyTimeToFirstContent, 50); a.PutDouble(record.KeyDuration, 1) }, record.InvalidTTFTAfterEnd},
		{"duration 1e300", func(a pcommon.Map) { a.PutDouble(record.KeyDuration, 1e300) }, record.InvalidDurationBound},
		{"max_chunk_gap 1e15", func(a pcommon.Map) { a.PutDouble(record.KeyMaxChunkGap, 1e15) }, record.InvalidGapBound},
		{"gap longer than the request", func(a pcommon.Map) { a.PutDouble(record.KeyMaxChunkGap, 10) }, record.InvalidGapBound},
		{"attempts 4.6e18", func(a pcommon.Map) { a.PutInt(record.KeyAttempts, 4_600_000_000_000_000_000) }, record.InvalidAttempts},
		{"attempts 0", func(a pcommon.Map) { a.PutInt(record.KeyAttempts, 0) }, record.InvalidAttempts},
		{"band pwned", func(a pcommon.Map) { a.PutStr(record.KeyPromptBand, "pwned") }, record.InvalidPromptBand},
		{"1 MiB band", func(a pcommon.Map) { a.PutStr(record.KeyPromptBand, strings.Repeat("x", 1<<20)) }, record.InvalidPromptBand},
		{"observer admin", func(a pcommon.Map) { a.PutStr(record.KeyObserver, "admin") }, record.InvalidObserver},
		{"outcome pwned", func(a pcommon.Map) { a.PutStr(record.KeyOutcome, "pwned") }, record.InvalidOutcome},
		{"outcome not a string", func(a pcommon.Map) { a.PutInt(record.KeyOutcome, 1) }, record.InvalidOutcome},
		{"measured_at pwned", func(a pcommon.Map) { a.PutStr(record.KeyMeasuredAt, "pwned") }, record.InvalidMeasuredAt},
		{"first_chunk clock with a content time", func(a pcommon.Map) {
			a.PutStr(record.KeyMeasuredAt, record.MeasuredAtFirstChunk)
		}, record.InvalidMeasuredAt},
		{"first chunk after first content", func(a pcommon.Map) { a.PutDouble(record.KeyTimeToFirstChunk, 0.9) }, record.InvalidChunkAfterContent},
		{"negative TTFT", func(a pcommon.Map) { a.PutDouble(record.KeyTimeToFirstContent, -1) }, record.InvalidValue},
		{"NaN duration", func(a pcommon.Map) { a.PutDouble(record.KeyDuration, math.NaN()) }, record.InvalidValue},
		{"TTFT as a string", func(a pcommon.Map) { a.PutStr(record.KeyTimeToFirstContent, "fast") }, record.InvalidValue},
		{"negative tokens", func(a pcommon.Map) { a.PutInt(record.KeyPromptTokens, -5) }, record.InvalidValue},
	}
	d, err := New(DefaultConfig())
	require.NoError(t, err)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			td := ptrace.NewTraces()
			forgedSpan(td, c.stamp)
			var recs []record.Record
			reread := false
			st := d.TracesWith(td, TraceVisitor{
				Record: func(_ pcommon.Resource, _ ptrace.Span, rec *record.Record) { recs = append(recs, *rec) },
				Reread: func(_ pcommon.Resource, _ ptrace.Span, rec *record.Record) { recs, reread = append(recs, *rec), true },
			})
			assert.Equal(t, int64(1), st.Invalid[c.want], "counted as %s: %+v", c.want, st.Invalid)
			assert.Zero(t, st.Reread)
			require.Len(t, recs, 1)
			// The span's own evidence: a content chunk 0.5 s into a 2 s request.
			r := recs[0]
			assert.False(t, reread)
			assert.Equal(t, 0.5, r.TimeToFirstContent)
			assert.Equal(t, 2.0, r.Duration)
			assert.Equal(t, record.ObserverClient, r.Observer)
			assert.Equal(t, int64(1), r.Attempts)
			assert.Equal(t, record.Valid, record.Validate(&r, &d.limits))
		})
	}
	t.Run("a valid record is read back as is", func(t *testing.T) {
		td := ptrace.NewTraces()
		forgedSpan(td, func(pcommon.Map) {})
		var recs []record.Record
		st := d.Traces(td, func(_ pcommon.Resource, _ ptrace.Span, rec *record.Record) { recs = append(recs, *rec) })
		assert.Equal(t, int64(1), st.Reread)
		require.Len(t, recs, 1)
		assert.Equal(t, 0.8, recs[0].TimeToFirstContent)
	})
}

func TestForgedLogRecordsAreDerivedAfresh(t *testing.T) {
	d, err := New(DefaultConfig())
	require.NoError(t, err)
	ld := plog.NewLogs()
	lr := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	a := lr.Attributes()
	a.PutStr("gen_ai.provider.name", "openai")
	a.PutStr("gen_ai.request.model", "gpt-4o")
	a.PutInt("ttft_ms", 400)
	a.PutStr(record.KeyOutcome, record.OutcomeComplete)
	a.PutDouble(record.KeyTimeToFirstContent, 1e12)
	a.PutDouble(record.KeyDuration, 1e300) // also the log's own duration evidence: refused
	a.PutInt(record.KeyAttempts, 4_600_000_000_000_000_000)
	var recs []record.Record
	st := d.Logs(ld, func(_ pcommon.Resource, _ plog.LogRecord, rec *record.Record) { recs = append(recs, *rec) })
	require.Len(t, recs, 1)
	var invalid int64
	for _, n := range st.Invalid {
		invalid += n
	}
	assert.Equal(t, int64(1), invalid, "counted once, under its first reason: %v", st.Invalid)
	r := recs[0]
	assert.InDelta(t, 0.4, r.TimeToFirstChunk, 1e-12)
	assert.False(t, r.HasDuration, "a 1e300 s duration is no evidence")
	assert.Equal(t, int64(1), r.Attempts)
	assert.Equal(t, record.Valid, record.Validate(&r, &d.limits))
}

func TestDerivationBoundsDurationAndGap(t *testing.T) {
	d, err := New(DefaultConfig())
	require.NoError(t, err)
	td := ptrace.NewTraces()
	span := forgedSpan(td, func(pcommon.Map) {})
	// Drop the stamp: derive from the span alone, which lasts 1970 → 2262.
	span.Attributes().RemoveIf(func(k string, _ pcommon.Value) bool { return strings.HasPrefix(k, "ttft.") })
	span.SetStartTimestamp(1)
	span.SetEndTimestamp(math.MaxInt64)
	var recs []record.Record
	st := d.Traces(td, func(_ pcommon.Resource, _ ptrace.Span, rec *record.Record) { recs = append(recs, *rec) })
	require.Len(t, recs, 1)
	assert.False(t, recs[0].HasDuration, "a 292-year span has no usable duration")
	_, has := recs[0].TTFT()
	assert.False(t, has)
	assert.Equal(t, int64(1), st.Skipped[ReasonInvalidTiming])

	// A gap above max_chunk_gap_seconds between two content chunks is refused.
	td = ptrace.NewTraces()
	span = forgedSpan(td, func(pcommon.Map) {})
	span.Attributes().RemoveIf(func(k string, _ pcommon.Value) bool { return strings.HasPrefix(k, "ttft.") })
	start := span.StartTimestamp().AsTime()
	span.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(3 * time.Hour)))
	ev := span.Events().AppendEmpty()
	ev.SetName(EventChunk)
	ev.SetTimestamp(pcommon.NewTimestampFromTime(start.Add(2 * time.Hour)))
	ev.Attributes().PutStr(AttrChunkKind, KindContent)
	recs = recs[:0]
	d.Traces(td, func(_ pcommon.Resource, _ ptrace.Span, rec *record.Record) { recs = append(recs, *rec) })
	require.Len(t, recs, 1)
	assert.False(t, recs[0].HasMaxChunkGap)
	assert.Equal(t, 0.5, recs[0].TimeToFirstContent)
}

// FuzzReadBack stamps fuzzed ttft.* values on a span that carries its own
// evidence: whatever they are, every record handed on obeys the bounds of
// a derived one, and a stamped record is read back as is only when valid.
func FuzzReadBack(f *testing.F) {
	f.Add("complete", "<2k", "client", "first_content", 0.8, 0.05, 0.3, 3.0, int64(1), int64(100), false)
	f.Add("complete", "pwned", "admin", "first_content", 1e12, 0.05, 1e15, 1e300, int64(4_600_000_000_000_000_000), int64(-1), true)
	f.Add("timeout_first_token", "unknown", "gateway", "", -1.0, 50.0, -1.0, 1.0, int64(0), int64(7), false)
	f.Add("error", ">=64k", "server", "first_chunk", math.NaN(), math.Inf(1), 4000.0, 3600.0, int64(100), int64(0), true)
	f.Fuzz(func(t *testing.T, outcome, band, observer, measuredAt string, ttfc, ttfch, gap, dur float64, attempts, tokens int64, asLog bool) {
		cfg := DefaultConfig()
		d, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		stamp := func(a pcommon.Map) {
			a.PutStr(record.KeyOutcome, outcome)
			a.PutStr(record.KeyPromptBand, band)
			a.PutStr(record.KeyObserver, observer)
			a.PutStr(record.KeyMeasuredAt, measuredAt)
			for _, kv := range []struct {
				k string
				v float64
			}{{record.KeyTimeToFirstContent, ttfc}, {record.KeyTimeToFirstChunk, ttfch}, {record.KeyMaxChunkGap, gap}, {record.KeyDuration, dur}} {
				if kv.v == -1 {
					a.Remove(kv.k)
				} else {
					a.PutDouble(kv.k, kv.v)
				}
			}
			a.PutInt(record.KeyAttempts, attempts)
			a.PutInt(record.KeyPromptTokens, tokens)
		}
		var visited []record.Record
		var reread bool
		var stampedValid bool
		var st Stats
		if asLog {
			ld := plog.NewLogs()
			lr := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
			a := lr.Attributes()
			a.PutStr("gen_ai.provider.name", "openai")
			a.PutStr("gen_ai.request.model", "gpt-4o")
			a.PutInt("ttft_ms", 400)
			stamp(a)
			var r record.Record
			state, _ := record.Inspect(a, &r)
			stampedValid = state == record.StateStamped && record.Validate(&r, &d.limits) == record.Valid
			st = d.LogsWith(ld, LogVisitor{
				Record: func(_ pcommon.Resource, _ plog.LogRecord, rec *record.Record) { visited = append(visited, *rec) },
				Reread: func(_ pcommon.Resource, _ plog.LogRecord, rec *record.Record) {
					visited, reread = append(visited, *rec), true
				},
			})
		} else {
			td := ptrace.NewTraces()
			span := forgedSpan(td, stamp)
			var r record.Record
			state, _ := record.Inspect(span.Attributes(), &r)
			stampedValid = state == record.StateStamped && record.Validate(&r, &d.limits) == record.Valid
			st = d.TracesWith(td, TraceVisitor{
				Record: func(_ pcommon.Resource, _ ptrace.Span, rec *record.Record) { visited = append(visited, *rec) },
				Reread: func(_ pcommon.Resource, _ ptrace.Span, rec *record.Record) {
					visited, reread = append(visited, *rec), true
				},
			})
		}
		if len(visited) != 1 {
			t.Fatalf("%d records for one call: %+v", len(visited), st)
		}
		rec := &visited[0]
		if why := record.Validate(rec, &d.limits); why != record.Valid {
			t.Fatalf("a record handed on breaks %s: %+v", why, rec)
		}
		if reread != stampedValid {
			t.Fatalf("read back as is: %v, but the stamp validates: %v (%+v)", reread, stampedValid, rec)
		}
		var invalid int64
		for _, n := range st.Invalid {
			invalid += n
		}
		if invalid != btoi(!stampedValid) {
			t.Fatalf("invalid counted %d times for one record (valid stamp: %v)", invalid, stampedValid)
		}
		checkRecord(t, cfg, rec)
	})
}

func btoi(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
