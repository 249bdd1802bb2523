package derive

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// goodSpan is derived correctly whatever sits beside it in the batch.
func goodSpan(id byte) spanSpec {
	return spanSpec{scope: "com.anthropic.sdk.go", name: "anthropic.messages.create", id: id, dur: time.Second, status: ptrace.StatusCodeOk,
		attrs: map[string]any{"gen_ai.provider.name": "anthropic", "gen_ai.request.stream": true, "gen_ai.response.time_to_first_chunk": 0.3}}
}

func TestMalformedSpans(t *testing.T) {
	chat := func(extra map[string]any) map[string]any {
		m := map[string]any{"gen_ai.operation.name": "chat", "gen_ai.request.stream": true}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	cases := []struct {
		name string
		span spanSpec
		// mutate edits the built span where spanSpec cannot express it.
		mutate   func(ptrace.Span)
		record   bool   // a record is still produced
		reason   Reason // why it has no TTFT
		rejected int64
		ignored  int64
	}{
		{
			name: "events before span start",
			span: spanSpec{name: "chat", dur: time.Second, attrs: chat(nil),
				events: []eventSpec{chunk(-time.Second, KindContent), chunk(-time.Millisecond, KindRole)}},
			record: true, reason: ReasonNoEvidence, ignored: 2,
		},
		{
			name:   "end before start",
			span:   spanSpec{name: "chat", dur: -time.Second, attrs: chat(map[string]any{"ttft_ms": 100})},
			record: true, reason: ReasonInvalidTiming,
		},
		{
			name:   "zero start",
			span:   spanSpec{name: "chat", dur: time.Second, attrs: chat(map[string]any{"gen_ai.response.time_to_first_chunk": 0.1})},
			mutate: func(s ptrace.Span) { s.SetStartTimestamp(0) },
			record: true, reason: ReasonInvalidTiming,
		},
		{
			name:   "NaN TTFT",
			span:   spanSpec{name: "chat", dur: time.Second, attrs: chat(map[string]any{"gen_ai.response.time_to_first_chunk": math.NaN()})},
			record: true, reason: ReasonInvalidTiming, rejected: 1,
		},
		{
			name:   "infinite TTFT",
			span:   spanSpec{name: "chat", dur: time.Second, attrs: chat(map[string]any{"gen_ai.server.time_to_first_token": math.Inf(1)})},
			record: true, reason: ReasonInvalidTiming, rejected: 1,
		},
		{
			name:   "negative TTFT",
			span:   spanSpec{name: "chat", dur: time.Second, attrs: chat(map[string]any{"ai.response.msToFirstChunk": -63.0})},
			record: true, reason: ReasonInvalidTiming, rejected: 1,
		},
		{
			name:   "absurd TTFT",
			span:   spanSpec{name: "chat", dur: 10 * time.Hour, attrs: chat(map[string]any{"gen_ai.response.time_to_first_chunk": 1e9})},
			record: true, reason: ReasonInvalidTiming, rejected: 1,
		},
		{
			// Above max_duration_seconds: none of the span's times is used.
			name:   "absurd duration",
			span:   spanSpec{name: "chat", dur: 48 * time.Hour, attrs: chat(map[string]any{"ttft_ms": 20})},
			record: true, reason: ReasonInvalidTiming, rejected: 1,
		},
		{
			name:   "TTFT beyond the span",
			span:   spanSpec{name: "chat", dur: time.Second, attrs: chat(map[string]any{"gen_ai.response.time_to_first_chunk": 5.0})},
			record: true, reason: ReasonInvalidTiming, rejected: 1,
		},
		{
			name:   "completion start before the span",
			span:   spanSpec{name: "chat", dur: time.Second, attrs: chat(map[string]any{"langfuse.observation.completion_start_time": t0.Add(-time.Second).Format(time.RFC3339Nano)})},
			record: true, reason: ReasonInvalidTiming, rejected: 1,
		},
		{
			name: "wrong types",
			span: spanSpec{name: "chat", dur: time.Second, attrs: chat(map[string]any{
				"gen_ai.response.time_to_first_chunk": true,
				"gen_ai.usage.input_tokens":           map[string]any{"a": 1},
				"gen_ai.request.model":                42,
				"gen_ai.response.finish_reasons":      map[string]any{"x": "stop"},
				"ttft_ms":                             "soon",
			})},
			record: true, reason: ReasonInvalidTiming, rejected: 3,
		},
		{
			name:   "chunk kind of the wrong type",
			span:   spanSpec{name: "chat", dur: time.Second, attrs: chat(nil), events: []eventSpec{{name: EventChunk, at: time.Millisecond, attrs: map[string]any{AttrChunkKind: 7}}}},
			record: true, reason: 0, // a chunk of unknown kind is still a first chunk
		},
		{
			name: "100k events on one span",
			span: spanSpec{name: "chat", dur: time.Second, attrs: chat(nil)},
			mutate: func(s ptrace.Span) {
				evs := s.Events()
				evs.EnsureCapacity(100_000)
				for i := 0; i < 100_000; i++ {
					ev := evs.AppendEmpty()
					ev.SetName(EventChunk)
					ev.SetTimestamp(s.StartTimestamp() + pcommon.Timestamp(10_000*(i+1)))
					ev.Attributes().PutStr(AttrChunkKind, KindContent)
				}
			},
			record: true, reason: 0, ignored: 100_000 - int64(DefaultConfig().MaxEvents),
		},
		{
			// The SDK dropped events past its limit, the oldest first:
			// the first kept content event need not be the first.
			name: "events dropped by the SDK",
			span: spanSpec{name: "chat", dur: time.Second, attrs: chat(nil),
				events: []eventSpec{chunk(500*time.Millisecond, KindContent), chunk(600*time.Millisecond, KindContent)}},
			mutate: func(s ptrace.Span) { s.SetDroppedEventsCount(75) },
			record: true, reason: ReasonInvalidTiming, rejected: 1,
		},
		{
			// Another library's older events were dropped; ours, from
			// ttft.headers on, are all there.
			name: "other events dropped by the SDK",
			span: spanSpec{name: "chat", dur: time.Second, attrs: chat(nil),
				events: []eventSpec{{name: EventHeaders, at: 100 * time.Millisecond}, chunk(150*time.Millisecond, KindRole), chunk(250*time.Millisecond, KindContent)}},
			mutate: func(s ptrace.Span) { s.SetDroppedEventsCount(6) },
			record: true, reason: 0, // a TTFT: WithTTFT counts all three spans
		},
		{
			name:   "missing everything",
			span:   spanSpec{},
			record: false, reason: ReasonNotGenAI,
		},
		{
			name: "unreadable stamped record",
			// Derived afresh from the span's own evidence (none here).
			span:   spanSpec{name: "chat", dur: time.Second, attrs: chat(map[string]any{record.KeyOutcome: "complete", record.KeyTimeToFirstContent: "fast"})},
			record: true, reason: ReasonNoEvidence,
		},
		{
			name:   "parent cycle",
			span:   spanSpec{name: "chat", id: 9, parent: 9, dur: time.Second, attrs: chat(map[string]any{"ttft_ms": 20})},
			record: true, reason: 0,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.span.id == 0 {
				c.span.id = 5
			}
			td := traces(t, goodSpan(1), c.span, goodSpan(2))
			if c.mutate != nil {
				c.mutate(td.ResourceSpans().At(0).ScopeSpans().At(1).Spans().At(0))
			}
			var recs []record.Record
			var names []string
			d, err := New(DefaultConfig())
			require.NoError(t, err)
			var st Stats
			require.NotPanics(t, func() {
				st = d.Traces(td, func(_ pcommon.Resource, s ptrace.Span, rec *record.Record) {
					recs = append(recs, *rec)
					names = append(names, s.Name())
				})
			})
			want := 2
			if c.record {
				want = 3
			}
			require.Len(t, recs, want, "stats %+v", st)
			// The good spans around it are still derived.
			good := 0
			for _, r := range recs {
				if r.HasTimeToFirstContent && r.TimeToFirstContent == 0.3 {
					good++
				}
			}
			assert.Equal(t, 2, good)
			if c.reason != 0 || !c.record {
				assert.Equal(t, int64(1), st.Skipped[c.reason], "counted by reason %s: %+v", c.reason, st)
			} else {
				assert.Equal(t, int64(3), st.WithTTFT)
			}
			assert.Equal(t, c.rejected, st.ValuesRejected)
			assert.Equal(t, c.ignored, st.EventsIgnored)
			for _, r := range recs {
				ttft, has := r.TTFT()
				if has {
					assert.False(t, math.IsNaN(ttft) || ttft < 0 || ttft > DefaultConfig().MaxTTFTSeconds)
				}
			}
		})
	}
}
