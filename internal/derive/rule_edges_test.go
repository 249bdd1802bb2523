package derive

// Rules of docs/architecture.md §1, §2, §4 and §5 that no other test pinned
// down: each test below fails when its rule is broken in the code.

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// validates fails the test when rec is a record the connector would refuse
// to read back under cfg.
func validates(t *testing.T, cfg Config, rec *record.Record) {
	t.Helper()
	d, err := New(cfg)
	require.NoError(t, err)
	if why := record.Validate(rec, &d.limits); why != record.Valid {
		t.Errorf("derived record is refused when read back: %s (%+v)", why, *rec)
	}
}

// A stream whose first chunk already carries content has both times, and
// they are equal: the first chunk is not dropped for not preceding the
// first content (ttft.time_to_first_chunk feeds its own histogram).
func TestFirstChunkThatCarriesContentIsAlsoTheFirstChunk(t *testing.T) {
	rec := deriveOne(t, spanSpec{
		name: "chat", kind: ptrace.SpanKindClient, dur: 2 * time.Second, status: ptrace.StatusCodeOk,
		attrs:  map[string]any{"gen_ai.operation.name": "chat", "gen_ai.request.stream": true},
		events: []eventSpec{chunk(300*time.Millisecond, KindContent), chunk(400*time.Millisecond, KindContent)},
	})
	require.True(t, rec.HasTimeToFirstContent)
	assert.InDelta(t, 0.3, rec.TimeToFirstContent, 1e-9)
	require.True(t, rec.HasTimeToFirstChunk, "the content chunk is the first chunk")
	assert.InDelta(t, 0.3, rec.TimeToFirstChunk, 1e-9)
	assert.Equal(t, record.MeasuredAtFirstContent, rec.MeasuredAt)
}

// idleStream is a streamed chat span of dur whose content chunks come at
// the given offsets, ended by a generic timeout (error.type timeout).
func idleStream(dur time.Duration, at ...time.Duration) spanSpec {
	var evs []eventSpec
	for _, a := range at {
		evs = append(evs, chunk(a, KindContent))
	}
	return spanSpec{name: "chat", kind: ptrace.SpanKindClient, dur: dur, status: ptrace.StatusCodeError,
		attrs:  map[string]any{"gen_ai.operation.name": "chat", "gen_ai.request.stream": true, "error.type": "timeout"},
		events: evs}
}

// The stream instrumentation's summary gap (the pause an idle timeout cut
// the stream in) replaces the longest pause between chunk events only when
// it is longer: a stream that paused 5 s between chunks and was cut 1 s
// after its last one paused at least 5 s.
func TestSummaryGapKeepsALongerPauseBetweenChunks(t *testing.T) {
	s := idleStream(45*time.Second, 300*time.Millisecond, 5300*time.Millisecond)
	s.attrs["ttft.chunk.content_count"] = int64(2)
	s.attrs["ttft.chunk.max_gap"] = 1.0
	rec := deriveOne(t, s)
	assert.Equal(t, record.OutcomeTimeoutIdle, rec.Outcome)
	require.True(t, rec.HasMaxChunkGap)
	assert.InDelta(t, 5.0, rec.MaxChunkGap, 1e-9)
}

// Of a call's spans, the record keeps the longest pause any of them saw.
func TestNestedSpansKeepTheLongestPause(t *testing.T) {
	chat := func() map[string]any {
		return map[string]any{"gen_ai.operation.name": "chat", "gen_ai.request.stream": true, "gen_ai.response.finish_reasons": []any{"stop"}}
	}
	recs, _ := deriveAll(t, DefaultConfig(), traces(t,
		spanSpec{name: "chat", kind: ptrace.SpanKindClient, id: 1, dur: 6 * time.Second, attrs: chat(),
			events: []eventSpec{chunk(300*time.Millisecond, KindContent), chunk(500*time.Millisecond, KindContent)}},
		spanSpec{name: "chat inner", kind: ptrace.SpanKindClient, id: 2, parent: 1, dur: 5 * time.Second, attrs: chat(),
			events: []eventSpec{chunk(300*time.Millisecond, KindContent), chunk(3500*time.Millisecond, KindContent)}},
	))
	require.Len(t, recs, 1)
	require.True(t, recs[0].HasMaxChunkGap)
	assert.InDelta(t, 3.2, recs[0].MaxChunkGap, 1e-9)
}

// A gap between chunks just above max_chunk_gap_seconds is refused: the
// bound is the configured value, not the next second.
func TestChunkGapJustAboveTheBoundIsRefused(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxChunkGapSeconds = 10
	recs, st := deriveAll(t, cfg, traces(t, spanSpec{
		name: "chat", kind: ptrace.SpanKindClient, dur: 12 * time.Second, status: ptrace.StatusCodeOk,
		attrs:  map[string]any{"gen_ai.operation.name": "chat", "gen_ai.request.stream": true},
		events: []eventSpec{chunk(300*time.Millisecond, KindContent), chunk(10800*time.Millisecond, KindContent)},
	}))
	require.Len(t, recs, 1)
	assert.False(t, recs[0].HasMaxChunkGap, "a 10.5 s gap with max_chunk_gap_seconds 10")
	assert.Positive(t, st.ValuesRejected)
	validates(t, cfg, &recs[0])
}

// A stream whose first content came after max_ttft_seconds has no TTFT, and
// then no longest pause either (a gap is read with the first content it is
// measured from): ttft.max_chunk_gap is not exported for a record without a
// first token.
func TestNoPauseWithoutATTFT(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxTTFTSeconds = 10
	recs, _ := deriveAll(t, cfg, traces(t, idleStream(40*time.Second, 12*time.Second, 13*time.Second, 15*time.Second)))
	require.Len(t, recs, 1)
	rec := recs[0]
	_, has := rec.TTFT()
	assert.False(t, has)
	assert.Equal(t, record.OutcomeTimeoutIdle, rec.Outcome, "content came: an idle timeout")
	assert.False(t, rec.HasMaxChunkGap, "gap %v on a record without TTFT", rec.MaxChunkGap)
	validates(t, cfg, &rec)
}

// An exact first-token timeout over a span whose chunk events carry
// content drops the content time; the record then names the clock of the
// time it keeps, the first chunk, and offers it as its TTFT.
func TestFirstChunkTimeoutWithContentNamesTheFirstChunkClock(t *testing.T) {
	rec := deriveOne(t, spanSpec{
		name: "chat", kind: ptrace.SpanKindClient, dur: 5 * time.Second, status: ptrace.StatusCodeError,
		msg:    "First chunk timeout of 3000ms exceeded",
		attrs:  map[string]any{"gen_ai.operation.name": "chat", "gen_ai.request.stream": true},
		events: []eventSpec{chunk(40*time.Millisecond, KindRole), chunk(time.Second, KindContent)},
	})
	assert.Equal(t, record.OutcomeTimeoutFirstToken, rec.Outcome)
	assert.False(t, rec.HasTimeToFirstContent)
	assert.Equal(t, record.MeasuredAtFirstChunk, rec.MeasuredAt)
	v, has := rec.TTFT()
	require.True(t, has)
	assert.InDelta(t, 0.04, v, 1e-9)
}

// Per-chunk events rank above a server's own first-token time
// (docs/architecture.md §4: 1 before 4), also on a SERVER span.
func TestChunkEventsWinOverAServerFirstToken(t *testing.T) {
	rec := deriveOne(t, spanSpec{
		name: "chat", kind: ptrace.SpanKindServer, dur: 3 * time.Second, status: ptrace.StatusCodeOk,
		attrs:  map[string]any{"gen_ai.operation.name": "chat", "gen_ai.latency.time_to_first_token": 0.2},
		events: []eventSpec{chunk(500*time.Millisecond, KindContent)},
	})
	assert.Equal(t, record.MeasuredAtFirstContent, rec.MeasuredAt)
	assert.InDelta(t, 0.5, rec.TimeToFirstContent, 1e-9)
	assert.Equal(t, EventChunk, rec.Source)
}

// A nested span that outlives its root with a pause longer than the root's
// own duration: the call lasted until that span ended, so the record's
// duration holds the pause and the connector reads it back.
func TestNestedPauseExtendsTheDuration(t *testing.T) {
	chat := map[string]any{"gen_ai.operation.name": "chat", "gen_ai.request.stream": true, "gen_ai.response.finish_reasons": []any{"stop"}}
	recs, _ := deriveAll(t, DefaultConfig(), traces(t,
		spanSpec{name: "chat", kind: ptrace.SpanKindClient, id: 1, dur: time.Second, attrs: chat},
		spanSpec{name: "chat inner", kind: ptrace.SpanKindClient, id: 2, parent: 1, dur: 5 * time.Second, attrs: chat,
			events: []eventSpec{chunk(300*time.Millisecond, KindContent), chunk(3500*time.Millisecond, KindContent)}},
	))
	require.Len(t, recs, 1)
	rec := recs[0]
	assert.InDelta(t, 3.2, rec.MaxChunkGap, 1e-9)
	assert.GreaterOrEqual(t, rec.Duration, rec.MaxChunkGap)
	validates(t, DefaultConfig(), &rec)
}

// A retried Vercel request's TTFT is put on the clock of the call's first
// request; where that passes max_ttft_seconds the time is refused, and the
// record is still one the connector reads back.
func TestRetriedVercelTTFTAboveTheBoundIsRefused(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxTTFTSeconds = 0.5 // the served request's own 63 ms passes; shifted by 1 s it does not
	d, err := New(cfg)
	require.NoError(t, err)
	var recs []record.Record
	d.Traces(vercelRetry(t), func(_ pcommon.Resource, _ ptrace.Span, rec *record.Record) { recs = append(recs, *rec) })
	require.Len(t, recs, 1)
	rec := recs[0]
	_, has := rec.TTFT()
	assert.False(t, has, "TTFT %v / %v above max_ttft_seconds", rec.TimeToFirstContent, rec.TimeToFirstChunk)
	validates(t, cfg, &rec)
}

// Of a Vercel call's provider requests that all measured a first chunk
// (steps of one call), the first to start is the one the user saw.
func TestVercelFirstStepGivesTheTTFT(t *testing.T) {
	rec := deriveOne(t,
		spanSpec{scope: "ai", name: "ai.streamText", id: 1, dur: 5 * time.Second, status: ptrace.StatusCodeOk,
			attrs: map[string]any{"ai.operationId": "ai.streamText"}},
		spanSpec{scope: "ai", name: "ai.streamText.doStream", id: 2, parent: 1, start: 10 * time.Millisecond, dur: 2 * time.Second,
			attrs: map[string]any{"ai.operationId": "ai.streamText.doStream", "ai.response.msToFirstChunk": 300.0, "ai.response.finishReason": "tool-calls"}},
		spanSpec{scope: "ai", name: "ai.streamText.doStream", id: 3, parent: 1, start: 2100 * time.Millisecond, dur: 2 * time.Second,
			attrs: map[string]any{"ai.operationId": "ai.streamText.doStream", "ai.response.msToFirstChunk": 200.0, "ai.response.finishReason": "stop"}},
	)
	require.True(t, rec.HasTimeToFirstChunk)
	assert.InDelta(t, 0.3, rec.TimeToFirstChunk, 1e-9)
	assert.Equal(t, int64(1), rec.Attempts)
}

// A timeout after content chunks the span's events counted, though the SDK
// dropped events so none of their times is read, is an idle timeout: the
// content was seen.
func TestTimeoutAfterCountedContentIsIdle(t *testing.T) {
	td := traces(t, idleStream(5*time.Second, 300*time.Millisecond, 500*time.Millisecond))
	td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).SetDroppedEventsCount(4)
	recs, _ := deriveAll(t, DefaultConfig(), td)
	require.Len(t, recs, 1)
	assert.False(t, recs[0].HasTimeToFirstContent, "no time from events past a drop")
	assert.Equal(t, record.OutcomeTimeoutIdle, recs[0].Outcome)
}

// Attempt counts past record.MaxAttempts are refused, not cut to it: a
// record of 101 attempts or of fallback index 100 says nothing true.
func TestAttemptCountsPastTheBoundAreRefused(t *testing.T) {
	for key, v := range map[string]int{"ttft.attempts": 101, "gen_ai.fallback_index": 100} {
		recs, st := deriveAll(t, DefaultConfig(), traces(t, spanSpec{name: "chat", dur: time.Second,
			attrs: map[string]any{"gen_ai.operation.name": "chat", key: v}}))
		require.Len(t, recs, 1, key)
		assert.Equal(t, int64(1), recs[0].Attempts, key)
		assert.Equal(t, int64(1), st.ValuesRejected, key)
	}
}

// An error type naming a deadline (gRPC DEADLINE_EXCEEDED, Go's
// context.DeadlineExceeded) is the total deadline.
func TestDeadlineErrorTypeIsADeadlineTimeout(t *testing.T) {
	for _, typ := range []string{"DeadlineExceeded", "context.DeadlineExceeded"} {
		rec := deriveOne(t, spanSpec{name: "chat", dur: 2 * time.Second, status: ptrace.StatusCodeError,
			attrs: map[string]any{"gen_ai.operation.name": "chat", "gen_ai.request.stream": true, "error.type": typ}})
		assert.Equal(t, record.OutcomeTimeoutDeadline, rec.Outcome, typ)
	}
}

// A stream instrumentation's summary gap is measured from its own first
// content: it is read only beside the first content its chunk events gave,
// not beside another producer's.
func TestSummaryGapNeedsTheChunkEventsFirstContent(t *testing.T) {
	rec := deriveOne(t, spanSpec{
		scope: "my-instrumentation", name: "chat", kind: ptrace.SpanKindClient, dur: 3 * time.Second, status: ptrace.StatusCodeOk,
		attrs:  map[string]any{"gen_ai.operation.name": "chat", "gen_ai.request.stream": true, "ttft.chunk.max_gap": 1.5},
		events: []eventSpec{{name: EventLangsmithNewToken, at: 400 * time.Millisecond}},
	})
	require.True(t, rec.HasTimeToFirstContent)
	assert.InDelta(t, 0.4, rec.TimeToFirstContent, 1e-9)
	assert.False(t, rec.HasMaxChunkGap, "gap %v", rec.MaxChunkGap)
}

// TestServerFirstTokenKeyOffAServerSpanRanksBelowChunkEvents: vLLM's
// gen_ai.latency.time_to_first_token on a CLIENT span is an unknown
// producer's first chunk. It kept its row's rank, 0, the rank of the stream
// instrumentation's ttft.chunk events, and, read first, won over them: a
// first-token timeout after a role-only chunk was censored at the key's
// 0.02 s on the first_chunk clock instead of at its duration on the
// first_content clock (DESIGN §4: the instrumentation's events first).
func TestServerFirstTokenKeyOffAServerSpanRanksBelowChunkEvents(t *testing.T) {
	rec := deriveOne(t, spanSpec{name: "chat", dur: 10 * time.Second, status: ptrace.StatusCodeError,
		attrs:  map[string]any{"gen_ai.operation.name": "chat", "gen_ai.request.stream": true, "gen_ai.latency.time_to_first_token": 0.02, "error.type": "APITimeoutError"},
		events: []eventSpec{chunk(40*time.Millisecond, KindRole)}})
	assert.Equal(t, record.OutcomeTimeoutFirstToken, rec.Outcome)
	assert.Equal(t, record.SourceChunkEvent, rec.Source)
	assert.InDelta(t, 0.04, rec.TimeToFirstChunk, 1e-9)
}
