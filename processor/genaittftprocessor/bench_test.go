package genaittftprocessor

import (
	"context"
	"testing"

	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-ttft/otelcol-ttft/internal/derive"
	"github.com/otelcol-ttft/otelcol-ttft/internal/derive/derivetest"
	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
	"github.com/otelcol-ttft/otelcol-ttft/processor/genaittftprocessor/internal/metadata"
)

const (
	benchSpans  = 1000
	benchChunks = 30
)

// benchTraces is 1,000 GenAI spans, each with 30 ttft.chunk events.
func benchTraces() ptrace.Traces { return derivetest.ChunkedSpans(benchSpans, benchChunks, 1) }

// plainSpans is 1,000 ordinary HTTP and database spans, no LLM calls.
func plainSpans() ptrace.Traces { return derivetest.PlainSpans(benchSpans) }

// runBench hands each iteration a fresh copy of the input, made outside
// the timer: the processor writes attributes, and a span already stamped
// is only read back. One reused copy keeps the live heap small, so the
// garbage collector does not bill the copies to the measured code.
func runBench(b *testing.B, fn func(ptrace.Traces)) { runBenchOn(b, benchTraces(), fn) }

func runBenchOn(b *testing.B, src ptrace.Traces, fn func(ptrace.Traces)) {
	td := ptrace.NewTraces()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		src.CopyTo(td)
		b.StartTimer()
		fn(td)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchSpans, "ns/span")
}

// walk visits what the processor reads: every span, its attributes, its
// events and their attributes. then, when set, runs on each span after.
func walk(td ptrace.Traces, then func(ptrace.Span)) int {
	var sink int
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				span := spans.At(k)
				sink += len(span.Name()) + int(span.StartTimestamp()&1)
				for key, v := range span.Attributes().All() {
					sink += len(key) + int(v.Type())
				}
				evs := span.Events()
				for e := 0; e < evs.Len(); e++ {
					ev := evs.At(e)
					sink += len(ev.Name()) + int(ev.Timestamp()&1)
					for key, v := range ev.Attributes().All() {
						sink += len(key) + int(v.Type())
					}
				}
				if then != nil {
					then(span)
				}
			}
		}
	}
	return sink
}

// BenchmarkBaselineWalk only walks the spans and events.
func BenchmarkBaselineWalk(b *testing.B) {
	var sink int
	runBench(b, func(td ptrace.Traces) { sink += walk(td, nil) })
	_ = sink
}

// BenchmarkFloorDesignKeys is the least any processor writing docs/architecture.md §5's
// record can cost on this corpus: the walk plus the ten keys a streamed span
// with chunk events gets (no time to headers, no route attribute), written
// as constants through pdata's Map.Put*, with no derivation at all. Each
// Put scans the map for the key and allocates the value.
func BenchmarkFloorDesignKeys(b *testing.B) {
	var sink int
	runBench(b, func(td ptrace.Traces) {
		sink += walk(td, func(span ptrace.Span) {
			a := span.Attributes()
			a.EnsureCapacity(a.Len() + 10)
			a.PutDouble(record.KeyTimeToFirstContent, 0.1)
			a.PutDouble(record.KeyTimeToFirstChunk, 0.04)
			a.PutDouble(record.KeyMaxChunkGap, 0.03)
			a.PutDouble(record.KeyDuration, 2)
			a.PutInt(record.KeyContentChunks, 28)
			a.PutStr(record.KeyOutcome, record.OutcomeComplete)
			a.PutStr(record.KeyPromptBand, "<2k")
			a.PutInt(record.KeyAttempts, 1)
			a.PutStr(record.KeyMeasuredAt, record.MeasuredAtFirstContent)
			a.PutStr(record.KeyObserver, record.ObserverClient)
		})
	})
	_ = sink
}

// BenchmarkFloorRecordWrite is the walk plus record.Write of the very record
// the processor derives for these spans (derived once, before the timer):
// the processor's stamping cost without its derivation.
func BenchmarkFloorRecordWrite(b *testing.B) {
	d, err := derive.New(derive.DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	var rec record.Record
	d.Traces(benchTraces(), func(_ pcommon.Resource, _ ptrace.Span, r *record.Record) { rec = *r })
	var sink int
	runBench(b, func(td ptrace.Traces) {
		sink += walk(td, func(span ptrace.Span) { rec.Write(span.Attributes()) })
	})
	_ = sink
}

// BenchmarkProcessor runs the genai_ttft processor (derive and stamp) on
// the same spans.
func BenchmarkProcessor(b *testing.B) {
	p, err := NewFactory().CreateTraces(context.Background(), processortest.NewNopSettings(metadata.Type), createDefaultConfig(), consumertest.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	runBench(b, func(td ptrace.Traces) {
		if err := p.ConsumeTraces(ctx, td); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkDeriveOnly isolates the derivation (no stamping): the rest of
// BenchmarkProcessor is writing the ~15 ttft.* attributes, whose cost is
// pdata's (one allocation and one key scan per attribute).
func BenchmarkDeriveOnly(b *testing.B) {
	d, err := derive.New(derive.DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	runBench(b, func(td ptrace.Traces) {
		d.Traces(td, func(pcommon.Resource, ptrace.Span, *record.Record) {})
	})
}

// BenchmarkPlainWalk walks 1,000 plain spans (no LLM calls): the floor of
// the pass-through path.
func BenchmarkPlainWalk(b *testing.B) {
	var sink int
	runBenchOn(b, plainSpans(), func(td ptrace.Traces) { sink += walk(td, nil) })
	_ = sink
}

// BenchmarkPlainProcessor runs the processor on the same plain spans: they
// pass untouched, with no allocation per batch.
func BenchmarkPlainProcessor(b *testing.B) {
	p, err := NewFactory().CreateTraces(context.Background(), processortest.NewNopSettings(metadata.Type), createDefaultConfig(), consumertest.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	runBenchOn(b, plainSpans(), func(td ptrace.Traces) {
		if err := p.ConsumeTraces(ctx, td); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkCopy is the per-iteration copy of the input alone, which every
// benchmark above pays outside its timer: subtract it from their
// instruction counts.
func BenchmarkCopy(b *testing.B) { runBench(b, func(ptrace.Traces) {}) }
