package genaittftconnector

import (
	"context"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-ttft/otelcol-ttft/internal/derive"
	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
	"github.com/otelcol-ttft/otelcol-ttft/internal/record/recordtest"
)

// requestsTotal sums ttft.requests of the last flush.
func requestsTotal(t *testing.T, c *ttftConnector, sink *consumertest.MetricsSink) float64 {
	t.Helper()
	c.flush(context.Background())
	all := sink.AllMetrics()
	total := 0.0
	if len(all) == 0 {
		return 0
	}
	for _, p := range points(all[len(all)-1], "ttft.requests") {
		total += p.value
	}
	return total
}

// twoTier sends td through a traces→logs connector and the records through
// a logs→metrics connector, and returns the requests that tier counted and
// the same spans' count on a single traces→metrics connector.
func twoTier(t *testing.T, td ptrace.Traces) (single, aggregated float64, records []plog.LogRecord) {
	t.Helper()
	clock := clockwork.NewFakeClockAt(testStart)

	sink1 := new(consumertest.MetricsSink)
	one := newTestConnector(t, defaultConfig(), clock, sink1)
	t.Cleanup(func() { require.NoError(t, one.Shutdown(context.Background())) })
	cp := ptrace.NewTraces()
	td.CopyTo(cp)
	require.NoError(t, one.ConsumeTraces(context.Background(), cp))
	single = requestsTotal(t, one, sink1)

	rc, logs, _ := newRecordsConnector(t, defaultConfig(), clock)
	require.NoError(t, rc.ConsumeTraces(context.Background(), td))
	records = logRecords(logs)
	sink2 := new(consumertest.MetricsSink)
	agg := newTestConnector(t, defaultConfig(), clock, sink2)
	t.Cleanup(func() { require.NoError(t, agg.Shutdown(context.Background())) })
	for _, ld := range logs.AllLogs() {
		require.NoError(t, agg.ConsumeLogs(context.Background(), ld))
	}
	aggregated = requestsTotal(t, agg, sink2)
	return single, aggregated, records
}

// An instrumentation's outer span that ends when the stream is handed back
// (0.3 s) around the SDK's span that lives until the stream is read: the
// folded record's first content (0.8 s, from the inner span) lies past the
// outer span's duration. One collector counts the call; the two-tier
// deployment emits the record and the aggregating tier silently loses it.
func TestTwoTierCountsACallWhoseInnerSpanOutlivesTheOuter(t *testing.T) {
	td, spans := newSpans("app")
	outer := callSpan(spans, 1, 1, 0, "gpt-4.1", 0, 0)
	outer.SetEndTimestamp(outer.StartTimestamp() + pcommon.Timestamp(300*time.Millisecond))
	callSpan(spans, 1, 2, 1, "gpt-4.1", 0.8, 4)

	single, aggregated, records := twoTier(t, td)
	require.Equal(t, 1.0, single, "one collector counts the call")
	require.Len(t, records, 1, "traces→logs emits the call")
	rec, ok := recordtest.Read(records[0].Attributes())
	require.True(t, ok)
	t.Logf("emitted record: ttfc=%v duration=%v", rec.TimeToFirstContent, rec.Duration)
	require.Equal(t, single, aggregated, "the aggregating tier counts what one collector counts")
}

// A record that says no first token came (timeout_first_token) but carries
// a first-content time is a contradiction derivation never writes on a
// gateway row; read back, it is aggregated as is: a cut request that
// "produced content", censored at the content time.
func TestReadBackFirstTokenTimeoutWithContentIsRefused(t *testing.T) {
	clock := clockwork.NewFakeClockAt(testStart)
	sink := new(consumertest.MetricsSink)
	c := newTestConnector(t, defaultConfig(), clock, sink)
	t.Cleanup(func() { require.NoError(t, c.Shutdown(context.Background())) })
	require.NoError(t, c.ConsumeLogs(context.Background(), stampedLogs(
		req{provider: "p", model: "m", route: "r", outcome: "timeout_first_token", ttft: 0.3, duration: 10})))
	c.flush(context.Background())
	var md = sink.AllMetrics()
	if len(md) == 0 {
		return
	}
	bad := pointsWith(points(md[len(md)-1], "ttft.requests"), map[string]any{"ttft.outcome": "timeout_first_token", "ttft.first_content_seen": true})
	require.Empty(t, bad, "a first-token timeout that saw its first content reached ttft.requests")
}

// Two first-token timeouts of one target on the first_chunk clock, one from
// the stream instrumentation's ttft.chunk events (a role-only chunk, then
// the cut: first_content data, censored at its duration) and one from a
// source that cannot tell content apart (censored at its first chunk on the
// first_chunk clock). They share one histogram series, whose cached window
// link sends the second to the first one's clock.
func TestCensoredRecordsReachTheirOwnClock(t *testing.T) {
	for _, order := range []string{"chunk-event-first", "chunk-event-last"} {
		t.Run(order, func(t *testing.T) {
			clock := clockwork.NewFakeClockAt(testStart)
			sink := new(consumertest.MetricsSink)
			c := newTestConnector(t, defaultConfig(), clock, sink)
			t.Cleanup(func() { require.NoError(t, c.Shutdown(context.Background())) })

			mk := func(source string, chunk float64) record.Record {
				return record.Record{Provider: "p", Model: "m", Route: "r", Outcome: record.OutcomeTimeoutFirstToken,
					PromptBand: "<2k", Attempts: 1, MeasuredAt: record.MeasuredAtFirstChunk, Observer: record.ObserverClient,
					TimeToFirstChunk: chunk, HasTimeToFirstChunk: true, Duration: 10, HasDuration: true,
					Streamed: true, StreamedKnown: true, Source: source}
			}
			recs := []record.Record{mk(record.SourceChunkEvent, 0.04), mk("gen_ai.content.completion.chunk", 0.05)}
			if order == "chunk-event-last" {
				recs[0], recs[1] = recs[1], recs[0]
			}
			ld := plog.NewLogs()
			lrs := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
			for i := range recs {
				recs[i].Write(lrs.AppendEmpty().Attributes())
			}
			require.NoError(t, c.ConsumeLogs(context.Background(), ld))
			c.flush(context.Background())
			md := sink.AllMetrics()[0]
			for _, clk := range []string{record.MeasuredAtFirstContent, record.MeasuredAtFirstChunk} {
				require.Equal(t, 1.0, value(t, md, "ttft.window.samples", map[string]any{"ttft.measured_at": clk, "ttft.censored": true}),
					"one censored request on the %s clock", clk)
			}
		})
	}
}

// stampLikeTheProcessor does what the genai_ttft processor does to a batch:
// records on the calls, ttft.nested_in on the spans folded into them.
func stampLikeTheProcessor(t *testing.T, td ptrace.Traces) {
	t.Helper()
	d, err := derive.New(derive.DefaultConfig())
	require.NoError(t, err)
	d.TracesWith(td, derive.TraceVisitor{
		Record: func(_ pcommon.Resource, span ptrace.Span, rec *record.Record) { rec.Write(span.Attributes()) },
		Nested: func(_ pcommon.Resource, span ptrace.Span, outer pcommon.SpanID) {
			span.Attributes().PutStr(record.KeyNestedIn, outer.String())
		},
	})
}

// A call of three GenAI spans (O ⊃ I ⊃ C) whose innermost span outlived
// groupbytrace's wait: C is split_calls{part=inner} and not emitted when the
// connector derives the first batch itself, but emitted a second time
// behind the processor (the documented trace-tier pipeline), because a
// span read back as ttft.nested_in is not remembered.
func TestSplitCallBehindTheProcessorIsEmittedOnce(t *testing.T) {
	for _, withProcessor := range []bool{false, true} {
		name := "connector_alone"
		if withProcessor {
			name = "behind_processor"
		}
		t.Run(name, func(t *testing.T) {
			rc, sink, _ := newRecordsConnector(t, defaultConfig(), clockwork.NewFakeClockAt(testStart))
			first, spans := newSpans("app")
			callSpan(spans, 1, 1, 0, "gpt-4.1", 0, 0)   // O: the instrumentation's span
			callSpan(spans, 1, 2, 1, "gpt-4.1", 0.8, 4) // I: the SDK's span
			second, later := newSpans("app")
			callSpan(later, 1, 3, 2, "gpt-4.1", 0.9, 4) // C: inside I, a later batch
			for _, td := range []ptrace.Traces{first, second} {
				if withProcessor {
					stampLikeTheProcessor(t, td)
				}
				require.NoError(t, rc.ConsumeTraces(context.Background(), td))
			}
			require.Len(t, logRecords(sink), 1, "one call, one record")
		})
	}
}

// A call whose outer span (it ends last) missed groupbytrace's wait, with a
// span that is no call between it and the inner call span (an HTTP client
// span, a gateway's plugin spans): the later outer part is emitted again.
func TestSplitCallThroughAnIntermediateSpanIsEmittedOnce(t *testing.T) {
	rc, sink, tel := newRecordsConnector(t, defaultConfig(), clockwork.NewFakeClockAt(testStart))
	first, spans := newSpans("app")
	h := spans.AppendEmpty() // no call: an HTTP client span
	h.SetName("POST")
	h.SetKind(ptrace.SpanKindClient)
	h.SetTraceID(pcommon.TraceID{1, 1})
	h.SetSpanID(pcommon.SpanID{1, 2})
	h.SetParentSpanID(pcommon.SpanID{1, 1})
	h.Attributes().PutStr("http.request.method", "POST")
	callSpan(spans, 1, 3, 2, "gpt-4.1", 0.8, 4) // the SDK's call span, under the HTTP span
	require.NoError(t, rc.ConsumeTraces(context.Background(), first))
	second, later := newSpans("app")
	callSpan(later, 1, 1, 0, "gpt-4.1", 0, 0) // the instrumentation's outer call span, late
	require.NoError(t, rc.ConsumeTraces(context.Background(), second))

	// Sent together, derive folds the three into one record.
	whole, all := newSpans("app")
	callSpan(all, 1, 1, 0, "gpt-4.1", 0, 0)
	h.CopyTo(all.AppendEmpty())
	callSpan(all, 1, 3, 2, "gpt-4.1", 0.8, 4)
	rc2, sink2, _ := newRecordsConnector(t, defaultConfig(), clockwork.NewFakeClockAt(testStart))
	require.NoError(t, rc2.ConsumeTraces(context.Background(), whole))
	require.Len(t, logRecords(sink2), 1, "whole: one record")

	_ = tel
	require.Len(t, logRecords(sink), 1, "split: one call, one record")
}
