package derive_test

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-ttft/otelcol-ttft/internal/derive"
	"github.com/otelcol-ttft/otelcol-ttft/internal/derive/derivetest"
	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// BenchmarkChunkedSpans derives the processor benchmark's corpus (1,000
// GenAI spans × 30 ttft.chunk events) with no copy of the input: deriving
// writes nothing, so every iteration reads the same spans. It is the
// derivation's cost alone, the figure the README's performance table gives
// in instructions a span.
func BenchmarkChunkedSpans(b *testing.B) {
	const spans = 1000
	td := derivetest.ChunkedSpans(spans, 30, 1)
	d, err := derive.New(derive.DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	var n int
	visit := func(_ pcommon.Resource, _ ptrace.Span, rec *record.Record) { n += int(rec.ContentChunks) }
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if st := d.Traces(td, visit); st.Records != spans {
			b.Fatalf("%d records, want %d", st.Records, spans)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/spans, "ns/span")
	if n == 0 {
		b.Fatal("no content chunks counted")
	}
}

// BenchmarkStampedSpans reads the same corpus back after the processor
// stamped it, as the connector does: per span, one pass over the
// attributes (record.Inspect) and the bounds (record.Validate), no
// derivation.
func BenchmarkStampedSpans(b *testing.B) {
	const spans = 1000
	td := derivetest.ChunkedSpans(spans, 30, 1)
	d, err := derive.New(derive.DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	d.Traces(td, func(_ pcommon.Resource, span ptrace.Span, rec *record.Record) { rec.Write(span.Attributes()) })
	var n int
	visit := func(_ pcommon.Resource, _ ptrace.Span, rec *record.Record) { n += int(rec.ContentChunks) }
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if st := d.TracesWith(td, derive.TraceVisitor{Reread: visit}); st.Reread != spans {
			b.Fatalf("%d records read back, want %d", st.Reread, spans)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/spans, "ns/span")
	if n == 0 {
		b.Fatal("no content chunks read")
	}
}

// BenchmarkPlainSpans passes 1,000 plain HTTP and database spans (no LLM
// call) through the derivation, as the processor does (mayBeCall on each
// span) and as the connector does under stamped_only (record.Carries on
// each span): the pass-through cost alone, with no copy of the input.
func BenchmarkPlainSpans(b *testing.B) {
	const spans = 1000
	td := derivetest.PlainSpans(spans)
	for _, bc := range []struct {
		name string
		opts []derive.Option
	}{{"call_rule", nil}, {"stamped_only", []derive.Option{derive.StampedOnly()}}} {
		b.Run(bc.name, func(b *testing.B) {
			d, err := derive.New(derive.DefaultConfig(), bc.opts...)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if st := d.Traces(td, nil); st.Records != 0 || st.Examined != spans {
					b.Fatalf("%d records of %d spans, want 0 of %d", st.Records, st.Examined, spans)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/spans, "ns/span")
		})
	}
}
