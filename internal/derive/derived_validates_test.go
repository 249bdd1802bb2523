package derive

import (
	"math"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// A content chunk event 4000 s into a 5000 s streamed call (both within
// max_duration_seconds = 86400) gives a TTFT above max_ttft_seconds = 3600.
// docs/architecture.md §4: values above max_ttft_seconds are refused and
// counted; a derived record must be one the connector reads back.
func TestEventTimesAboveMaxTTFTAreRefused(t *testing.T) {
	for _, ev := range []eventSpec{
		chunk(4000*time.Second, KindContent),
		{name: EventFirstToken, at: 4000 * time.Second},        // OpenInference first-token event
		{name: EventLangsmithNewToken, at: 4000 * time.Second}, // content-exact event
		{name: EventHeaders, at: 4000 * time.Second},           // headers event
		{name: EventCompletionChunk, at: 4000 * time.Second},   // generic chunk event
	} {
		t.Run(ev.name, func(t *testing.T) {
			recs, st := deriveAll(t, DefaultConfig(), traces(t, spanSpec{
				name: "chat", kind: ptrace.SpanKindClient, dur: 5000 * time.Second,
				attrs:  map[string]any{"gen_ai.operation.name": "chat", "gen_ai.request.stream": true, "gen_ai.response.finish_reasons": []any{"stop"}},
				events: []eventSpec{ev},
			}))
			if len(recs) != 1 {
				t.Fatalf("records %d", len(recs))
			}
			rec := recs[0]
			d, _ := New(DefaultConfig())
			if why := record.Validate(&rec, &d.limits); why != record.Valid {
				t.Errorf("derived record is refused when read back: %s (ttft %v/%v headers %v, rejected %d); %+v",
					why, rec.TimeToFirstContent, rec.TimeToFirstChunk, rec.TimeToHeaders, st.ValuesRejected, rec)
			}
		})
	}
}

// sharedIDTraces builds n traces, each with one intermediate (no call)
// span whose span id is the same in every trace and which is its own
// parent, and two chat calls under it.
func sharedIDTraces(n int) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "hostile")
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	shared := pcommon.SpanID{0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa}
	start := pcommon.NewTimestampFromTime(t0)
	end := pcommon.NewTimestampFromTime(t0.Add(time.Second))
	for i := 0; i < n; i++ {
		trace := pcommon.TraceID{byte(i >> 24), byte(i >> 16), byte(i >> 8), byte(i), 1}
		mid := spans.AppendEmpty()
		mid.SetName("GET /")
		mid.SetTraceID(trace)
		mid.SetSpanID(shared)
		mid.SetParentSpanID(shared)
		mid.SetStartTimestamp(start)
		mid.SetEndTimestamp(end)
		for j := 0; j < 2; j++ {
			s := spans.AppendEmpty()
			s.SetName("chat")
			s.SetKind(ptrace.SpanKindClient)
			s.SetTraceID(trace)
			s.SetSpanID(pcommon.SpanID{byte(i >> 24), byte(i >> 16), byte(i >> 8), byte(i), byte(j + 1)})
			s.SetParentSpanID(shared)
			s.SetStartTimestamp(start)
			s.SetEndTimestamp(end)
			s.Attributes().PutStr("gen_ai.operation.name", "chat")
		}
	}
	return td
}

// One OTLP request (~15,000 spans, ~1 MB) whose intermediate spans all
// share one span id made the walk through intermediate spans quadratic:
// the index chained spans by span id alone, and every hop of every walk
// scanned the chain (24 s for this batch, 39 s through the binary). Now it
// is keyed by trace and span id.
func TestSharedSpanIDsKeepTheWalkLinear(t *testing.T) {
	d, err := New(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	small, big := sharedIDTraces(500), sharedIDTraces(5000)
	t.Logf("big batch: %d spans", big.SpanCount())
	// The faster of two runs of each: a ratio of times, not a time, so a
	// slow machine or -race cannot fail it. Linear is ×10, the chained
	// index was ×112.
	timeIt := func(td ptrace.Traces) time.Duration {
		best := time.Duration(math.MaxInt64)
		for range 2 {
			begin := time.Now()
			d.Traces(td, func(pcommon.Resource, ptrace.Span, *record.Record) {})
			best = min(best, time.Since(begin))
		}
		return best
	}
	ts, tb := timeIt(small), timeIt(big)
	t.Logf("500 traces: %v, 5000 traces: %v (x%.0f for 10x the spans)", ts, tb, float64(tb)/float64(ts))
	if tb > 40*ts {
		t.Errorf("10x the spans took x%.0f the time: the walk is not linear", float64(tb)/float64(ts))
	}
}

// Clock skew: a nested call span 10 s long (content at 5 s) whose clock is
// two days ahead of its 1 s root's. The record carries the nested span's
// TTFT (5 s) over the root's duration (1 s): build does not extend the
// duration because root start → nested end exceeds max_duration_seconds,
// although the nested span's own 10 s would do. The connector refuses the
// record when read back (ttft_after_end).
func TestSkewedNestedSpanKeepsItsOwnDuration(t *testing.T) {
	chat := map[string]any{"gen_ai.operation.name": "chat", "gen_ai.request.stream": true, "gen_ai.response.finish_reasons": []any{"stop"}}
	recs, _ := deriveAll(t, DefaultConfig(), traces(t,
		spanSpec{name: "chat", kind: ptrace.SpanKindClient, id: 1, dur: time.Second, attrs: chat},
		spanSpec{name: "chat inner", kind: ptrace.SpanKindClient, id: 2, parent: 1, start: 48 * time.Hour, dur: 10 * time.Second,
			attrs: chat, events: []eventSpec{chunk(5*time.Second, KindContent)}},
	))
	if len(recs) != 1 {
		t.Fatalf("records %d", len(recs))
	}
	rec := recs[0]
	d, _ := New(DefaultConfig())
	if why := record.Validate(&rec, &d.limits); why != record.Valid {
		t.Errorf("derived record is refused when read back: %s (TTFT %v, duration %v)", why, rec.TimeToFirstContent, rec.Duration)
	}
}

// A stream whose first content comes at the span's start and whose last
// chunk comes 1 ms after its end (the slack scanEvents admits) has a gap
// of duration + 1 ms; in floating point that is above duration + 1e-3,
// the bound record.Validate applies: the connector refuses the record.
func TestGapAtTheEndSlackValidates(t *testing.T) {
	dur := 2*time.Second + 3*time.Nanosecond
	recs, _ := deriveAll(t, DefaultConfig(), traces(t, spanSpec{
		name: "chat", kind: ptrace.SpanKindClient, dur: dur,
		attrs:  map[string]any{"gen_ai.operation.name": "chat", "gen_ai.request.stream": true, "gen_ai.response.finish_reasons": []any{"stop"}},
		events: []eventSpec{chunk(0, KindContent), chunk(dur+time.Millisecond, KindContent)},
	}))
	rec := recs[0]
	d, _ := New(DefaultConfig())
	if why := record.Validate(&rec, &d.limits); why != record.Valid {
		t.Errorf("derived record is refused when read back: %s (gap %v, duration %v)", why, rec.MaxChunkGap, rec.Duration)
	}
}
