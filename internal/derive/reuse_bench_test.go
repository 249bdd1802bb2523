package derive

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// nestedTraces is n traces of an outer call, a plain span under it and an
// inner call under that, span ids unique in the batch: every trace holds
// two calls, so a batch of 16 or more builds the span-id index, counts
// calls per trace and indexes the plain spans for the walk between the two
// calls.
func nestedTraces(n int) ptrace.Traces {
	spans := make([]linkSpan, 0, 3*n)
	for i := range n {
		tid := pcommon.TraceID{byte(i), byte(i >> 8), 7}
		sid := func(k byte) pcommon.SpanID { return pcommon.SpanID{byte(i), byte(i >> 8), k} }
		spans = append(spans,
			linkSpan{tid: tid, sid: sid(1), call: true, name: "outer"},
			linkSpan{tid: tid, sid: sid(2), pid: sid(1), name: "handler"},
			linkSpan{tid: tid, sid: sid(3), pid: sid(2), call: true, name: "inner"})
	}
	return linkBatch(spans...)
}

// BenchmarkBatchAfterLarge derives batches of 16 nested traces (32 calls)
// with a Deriver that has only seen such batches (fresh), and with one
// that derived a batch of 4,096 nested traces (8,192 calls) first. That
// batch's working memory is kept for the next one (in the pool, until a
// collection empties it; the spare keeps scratches of up to 8,192 calls),
// and what the next batch costs must not depend on the largest batch seen.
func BenchmarkBatchAfterLarge(b *testing.B) {
	small := nestedTraces(16)
	spans := small.SpanCount()
	visit := TraceVisitor{Record: func(pcommon.Resource, ptrace.Span, *record.Record) {}}
	for _, large := range []int{0, 4096} {
		name := "fresh"
		if large > 0 {
			name = "after_large"
		}
		b.Run(name, func(b *testing.B) {
			d, err := New(DefaultConfig())
			if err != nil {
				b.Fatal(err)
			}
			if large > 0 {
				d.TracesWith(nestedTraces(large), visit)
			}
			d.TracesWith(small, visit)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				d.TracesWith(small, visit)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(spans), "ns/span")
		})
	}
}
