package genaittftprocessor

import (
	"context"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/ptracetest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
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

// derivedRecord is the record the processor derives for the benchmark's
// spans (they all get the same one), derived once before the timer.
func derivedRecord(b *testing.B) record.Record {
	d, err := derive.New(derive.DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	var rec record.Record
	d.Traces(benchTraces(), func(_ pcommon.Resource, _ ptrace.Span, r *record.Record) { rec = *r })
	return rec
}

// BenchmarkFloorRecordWrite is the walk plus record.Write of the very record
// the processor derives for these spans (derived once, before the timer):
// the processor's stamping cost without its derivation.
func BenchmarkFloorRecordWrite(b *testing.B) {
	rec := derivedRecord(b)
	var sink int
	runBench(b, func(td ptrace.Traces) {
		sink += walk(td, func(span ptrace.Span) { rec.Write(span.Attributes()) })
	})
	_ = sink
}

// readWalk is the walk reading every input the derivation's rules read on
// the benchmark corpus, with no rule applied: the scope's name; each span's
// name, kind, ids, times and status; every attribute's key and its value as
// its type says (string, int, double, bool, the strings of a slice: the
// rules read all of them but server.address's value, a string header read
// here for nothing); each event's name, time and the value of its
// ttft.chunk.kind attribute, found by key as a real implementation must
// (Map.Range with a literal compared to the constant, the cheapest way
// through pdata, measured). Everything read is folded into the returned sum,
// order-independent so evidenceSum can check it a different way: a floor
// that skipped a read would fail the check. then, when set, runs on each
// span after it is read. events, when set, reads the span's events instead
// of the walk's own loop, given the span's start and end. rows, when set,
// looks each attribute key up in its producer table as the derivation does
// (Deriver.HasRow), applying nothing; found counts the keys with a row.
func readWalk(td ptrace.Traces, then func(ptrace.Span), events func(ptrace.SpanEventSlice, uint64, uint64) uint64, rows *derive.Deriver) (sink uint64, found int) {
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			ss := sss.At(j)
			sink += foldStr(ss.Scope().Name())
			spans := ss.Spans()
			for k := 0; k < spans.Len(); k++ {
				span := spans.At(k)
				sink += foldStr(span.Name()) + uint64(span.Kind())
				sink += foldIDs(span.TraceID(), span.SpanID(), span.ParentSpanID())
				sink += uint64(span.StartTimestamp()) + uint64(span.EndTimestamp())
				st := span.Status()
				sink += uint64(st.Code()) + foldStr(st.Message())
				span.Attributes().Range(func(key string, v pcommon.Value) bool {
					sink += foldStr(key) + foldValue(v)
					if rows != nil && rows.HasRow(key) {
						found++
					}
					return true
				})
				evs := span.Events()
				if events != nil {
					sink += events(evs, uint64(span.StartTimestamp()), uint64(span.EndTimestamp()))
				} else {
					for e := 0; e < evs.Len(); e++ {
						ev := evs.At(e)
						sink += foldStr(ev.Name()) + uint64(ev.Timestamp())
						ev.Attributes().Range(func(key string, v pcommon.Value) bool {
							if key == derive.AttrChunkKind {
								sink += foldStr(v.Str())
								return false
							}
							return true
						})
					}
				}
				if then != nil {
					then(span)
				}
			}
		}
	}
	return sink, found
}

// foldStr folds a string's length and first byte: what a comparison with a
// constant reads of it at the least.
func foldStr(s string) uint64 {
	if s == "" {
		return 0
	}
	return uint64(len(s))<<8 | uint64(s[0])
}

func foldIDs(t pcommon.TraceID, s, p pcommon.SpanID) uint64 {
	return uint64(t[0]) + uint64(t[15]) + uint64(s[0]) + uint64(s[7]) + uint64(p[0]) + uint64(p[7])
}

// foldValue reads a value as its type says.
func foldValue(v pcommon.Value) uint64 {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return foldStr(v.Str())
	case pcommon.ValueTypeInt:
		return uint64(v.Int())
	case pcommon.ValueTypeDouble:
		return uint64(v.Double())
	case pcommon.ValueTypeBool:
		if v.Bool() {
			return 1
		}
	case pcommon.ValueTypeSlice:
		var n uint64
		s := v.Slice()
		for i := 0; i < s.Len(); i++ {
			n += foldStr(s.At(i).Str())
		}
		return n
	}
	return 0
}

// evidenceSum is what readWalk must fold on td, computed another way (the
// raw attribute maps, Map.Get for the chunk kind, ranging over the slices).
func evidenceSum(td ptrace.Traces) uint64 {
	var sum uint64
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			sum += foldStr(ss.Scope().Name())
			for _, span := range ss.Spans().All() {
				sum += foldStr(span.Name()) + uint64(span.Kind())
				sum += foldIDs(span.TraceID(), span.SpanID(), span.ParentSpanID())
				sum += uint64(span.StartTimestamp()) + uint64(span.EndTimestamp())
				sum += uint64(span.Status().Code()) + foldStr(span.Status().Message())
				for k, raw := range span.Attributes().AsRaw() {
					sum += foldStr(k)
					switch x := raw.(type) {
					case string:
						sum += foldStr(x)
					case int64:
						sum += uint64(x)
					case float64:
						sum += uint64(x)
					case bool:
						if x {
							sum++
						}
					case []any:
						for _, el := range x {
							if s, ok := el.(string); ok {
								sum += foldStr(s)
							}
						}
					}
				}
				for _, ev := range span.Events().All() {
					sum += foldStr(ev.Name()) + uint64(ev.Timestamp())
					if v, ok := ev.Attributes().Get(derive.AttrChunkKind); ok {
						sum += foldStr(v.Str())
					}
				}
			}
		}
	}
	return sum
}

// TestReadWalkReadsEvidence checks that readWalk reads what it claims: its
// sum equals evidenceSum's on the benchmark corpus, and changes with a
// chunk kind, a span attribute's value and an event's time.
func TestReadWalkReadsEvidence(t *testing.T) {
	td := benchTraces()
	want := evidenceSum(td)
	if got, _ := readWalk(td, nil, nil, nil); got != want {
		t.Fatalf("readWalk = %d, evidenceSum = %d", got, want)
	}
	span := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(7)
	for name, change := range map[string]func(){
		"chunk kind":     func() { span.Events().At(3).Attributes().PutStr(derive.AttrChunkKind, derive.KindReasoning+"!") },
		"attribute":      func() { span.Attributes().PutInt("gen_ai.usage.output_tokens", 201) },
		"event time":     func() { span.Events().At(4).SetTimestamp(span.Events().At(4).Timestamp() + 1) },
		"status message": func() { span.Status().SetMessage("x") },
	} {
		before, _ := readWalk(td, nil, nil, nil)
		change()
		after, _ := readWalk(td, nil, nil, nil)
		if after == before {
			t.Errorf("%s: readWalk's sum did not change", name)
		}
		if after != evidenceSum(td) {
			t.Errorf("%s: readWalk = %d, evidenceSum = %d", name, after, evidenceSum(td))
		}
	}
}

// BenchmarkFloorReadWrite is BenchmarkFloorRecordWrite with the walk
// replaced by readWalk: reading every input the derivation's rules read on
// these spans (no rule applied) and writing the record the processor
// derives for them. It is the floor of any processor that reads its
// evidence through pdata; BenchmarkFloorRecordWrite's walk reads keys and
// types but no values. Each iteration's sum is checked against
// evidenceSum's, outside the timer.
func BenchmarkFloorReadWrite(b *testing.B) {
	rec := derivedRecord(b)
	want := evidenceSum(benchTraces())
	var got uint64
	runBench(b, func(td ptrace.Traces) {
		if got != 0 && got != want {
			b.Fatalf("readWalk read %d, want %d", got, want)
		}
		got, _ = readWalk(td, func(span ptrace.Span) { rec.Write(span.Attributes()) }, nil, nil)
	})
	if got != want {
		b.Fatalf("readWalk read %d, want %d", got, want)
	}
}

// chunkRules applies the derivation's chunk-event rules (docs/architecture.md
// §4, derive.ChunkSums) to the events within [lo, hi] and folds the sums.
func chunkRules(events ptrace.SpanEventSlice, lo, hi uint64) uint64 {
	firstAny, firstContent, maxGap, content, _ := derive.ChunkSums(events, lo, hi)
	return firstAny + firstContent + maxGap + uint64(content)
}

// TestChunkRulesAgreeWithTheDerivation: the floor's chunk loop gives, on
// each span of the benchmark corpus, the first content, first chunk,
// longest pause and content chunks of the record the processor derives.
func TestChunkRulesAgreeWithTheDerivation(t *testing.T) {
	d, err := derive.New(derive.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	td := benchTraces()
	n := 0
	d.Traces(td, func(_ pcommon.Resource, span ptrace.Span, r *record.Record) {
		start := uint64(span.StartTimestamp())
		firstAny, firstContent, maxGap, content, ok := derive.ChunkSums(span.Events(), start, uint64(span.EndTimestamp())+1e6)
		if !ok {
			t.Fatal("a span of the corpus has an event that is no ttft.chunk")
		}
		if got, want := float64(firstContent+1-start)/1e9, r.TimeToFirstContent; !r.HasTimeToFirstContent || got != want {
			t.Fatalf("first content %v, derived %v", got, want)
		}
		if got, want := float64(firstAny+1-start)/1e9, r.TimeToFirstChunk; !r.HasTimeToFirstChunk || got != want {
			t.Fatalf("first chunk %v, derived %v", got, want)
		}
		if got, want := float64(maxGap)/1e9, r.MaxChunkGap; !r.HasMaxChunkGap || got != want {
			t.Fatalf("longest pause %v, derived %v", got, want)
		}
		if content != r.ContentChunks {
			t.Fatalf("content chunks %d, derived %d", content, r.ContentChunks)
		}
		n++
	})
	if n != benchSpans {
		t.Fatalf("%d records, want %d", n, benchSpans)
	}
}

// BenchmarkFloorChunkRules is BenchmarkFloorReadWrite with the derivation's
// chunk-event loop applied to the events it reads: the floor of any processor that
// applies them through pdata and writes the record, with every span-level
// rule (producers, outcome, band, target, nesting, attempts, bounds) free.
// Against it, BenchmarkProcessor's excess is the span-level bookkeeping.
func BenchmarkFloorChunkRules(b *testing.B) {
	rec := derivedRecord(b)
	var sink uint64
	runBench(b, func(td ptrace.Traces) {
		sum, _ := readWalk(td, func(span ptrace.Span) { rec.Write(span.Attributes()) }, chunkRules, nil)
		sink += sum
	})
	_ = sink
}

// BenchmarkFloorTwoPass is BenchmarkFloorChunkRules in two passes, as a
// processor that folds nested spans must run: the rules read every span of
// the batch first (a nested span's evidence lands on its outer span, which
// may come later in the batch), then the record is written on each span.
func BenchmarkFloorTwoPass(b *testing.B) { runTwoPass(b, nil, 0) }

// runTwoPass runs the two-pass floor; rows, when set, looks every
// attribute key up in its producer table (readWalk), and the keys found
// must number want in each batch.
func runTwoPass(b *testing.B, rows *derive.Deriver, want int) {
	rec := derivedRecord(b)
	var sink uint64
	spans := make([]ptrace.Span, 0, benchSpans)
	runBench(b, func(td ptrace.Traces) {
		spans = spans[:0]
		sum, found := readWalk(td, func(span ptrace.Span) { spans = append(spans, span) }, chunkRules, rows)
		if found != want {
			b.Fatalf("found %d keys with a row, want %d", found, want)
		}
		sink += sum
		for _, span := range spans {
			rec.Write(span.Attributes())
		}
	})
	_ = sink
}

// BenchmarkFloorKeyTable is BenchmarkFloorTwoPass with each attribute key
// looked up in the default producer table, as the derivation must to find
// the rule that reads it (docs/architecture.md §4), and no rule applied:
// the floor of any processor whose rules come from a configurable table,
// with every span-level rule (producers' values, outcome, band, target,
// nesting, attempts, bounds, the record's fields) free. The keys found are
// checked against a count made before the timer.
func BenchmarkFloorKeyTable(b *testing.B) {
	d, err := derive.New(derive.DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	want := 0
	for _, rs := range benchTraces().ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, span := range ss.Spans().All() {
				for k := range span.Attributes().AsRaw() {
					if d.HasRow(k) {
						want++
					}
				}
			}
		}
	}
	if want == 0 {
		b.Fatal("no attribute of the corpus has a row")
	}
	runTwoPass(b, d, want)
}

// benchProcessor is the genai_ttft processor with the default
// configuration, passing its batches to a consumer that keeps none.
func benchProcessor(b *testing.B) processor.Traces {
	return benchProcessorWith(b, createDefaultConfig())
}

// benchSkipping is benchProcessor with derive::skip_scopes naming the
// plain spans' scope.
func benchSkipping(b *testing.B) processor.Traces {
	cfg := createDefaultConfig()
	cfg.Derive.SkipScopes = []string{"go.opentelemetry.io/contrib/instrumentation/net/http/"}
	return benchProcessorWith(b, cfg)
}

func benchProcessorWith(b *testing.B, cfg *Config) processor.Traces {
	p, err := NewFactory().CreateTraces(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, consumertest.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkProcessor runs the genai_ttft processor (derive and stamp) on
// the same spans.
func BenchmarkProcessor(b *testing.B) {
	p := benchProcessor(b)
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
	p := benchProcessor(b)
	ctx := context.Background()
	runBenchOn(b, plainSpans(), func(td ptrace.Traces) {
		if err := p.ConsumeTraces(ctx, td); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkPlainProcessorSkipScopes is BenchmarkPlainProcessor with the
// plain spans' scope in derive::skip_scopes: one comparison for the scope,
// none of its spans read. A batch takes ~1% of the time of the copy the
// other benchmarks make outside the timer, so b.N would grow to ~100 times
// theirs, each with its copy; the spans pass unchanged (checked after), so
// every iteration gets the same batch instead.
func BenchmarkPlainProcessorSkipScopes(b *testing.B) {
	p := benchSkipping(b)
	ctx := context.Background()
	td := plainSpans()
	b.ReportAllocs()
	for b.Loop() {
		if err := p.ConsumeTraces(ctx, td); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchSpans, "ns/span")
	if err := ptracetest.CompareTraces(plainSpans(), td); err != nil {
		b.Fatalf("a skipped batch changed: %v", err)
	}
}

// plainRequest is the OTLP protobuf request of n plain spans.
func plainRequest(b *testing.B, n int) []byte {
	var m ptrace.ProtoMarshaler
	buf, err := m.MarshalTraces(derivetest.PlainSpans(n))
	if err != nil {
		b.Fatal(err)
	}
	return buf
}

// BenchmarkDecodedPlain is BenchmarkPlainWalk, BenchmarkPlainProcessor and
// BenchmarkPlainProcessorSkipScopes on spans as a receiver hands them on: batches of 8,192 plain spans
// decoded from OTLP protobuf, so every span, attribute array and key is its
// own allocation, laid out in memory by the decoder. The copies of the
// other benchmarks are made by CopyTo into one reused batch of 1,000 that
// stays in cache; here each iteration takes the next of six batches
// decoded before the timer, more together than the last-level cache holds
// (each 9 MB live, 18 MB allocated by the decoder). The processor passes
// plain spans on unchanged, so a batch can be read again; the benchmark
// checks that it did.
func BenchmarkDecodedPlain(b *testing.B) {
	const n, batches = 8192, 6
	buf := plainRequest(b, n)
	var u ptrace.ProtoUnmarshaler
	pool := make([]ptrace.Traces, batches)
	for i := range pool {
		td, err := u.UnmarshalTraces(buf)
		if err != nil {
			b.Fatal(err)
		}
		pool[i] = td
	}
	p, skip := benchProcessor(b), benchSkipping(b)
	ctx := context.Background()
	var sink int
	for _, bc := range []struct {
		name string
		fn   func(ptrace.Traces)
	}{
		{"walk", func(td ptrace.Traces) { sink += walk(td, nil) }},
		{"processor", func(td ptrace.Traces) {
			if err := p.ConsumeTraces(ctx, td); err != nil {
				b.Fatal(err)
			}
		}},
		{"processor_skip_scopes", func(td ptrace.Traces) {
			if err := skip.ConsumeTraces(ctx, td); err != nil {
				b.Fatal(err)
			}
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				bc.fn(pool[i%batches])
				i++
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/span")
		})
	}
	_ = sink
	want, err := u.UnmarshalTraces(buf)
	if err != nil {
		b.Fatal(err)
	}
	for _, td := range pool {
		if err := ptracetest.CompareTraces(want, td); err != nil {
			b.Fatalf("a plain batch changed: %v", err)
		}
	}
}

// BenchmarkCopy is the per-iteration copy of the input alone, which every
// benchmark above pays outside its timer: subtract it from their
// instruction counts.
func BenchmarkCopy(b *testing.B) { runCopy(b, benchTraces()) }

// BenchmarkPlainCopy is the same for the plain spans of BenchmarkPlainWalk
// and BenchmarkPlainProcessor.
func BenchmarkPlainCopy(b *testing.B) { runCopy(b, plainSpans()) }

// runCopy is runBenchOn's loop with nothing after the copy: the same calls,
// so the same instructions, but the copy is timed. With nothing timed the
// testing package would raise b.N towards its limit of a billion copies,
// and the benchmark would not end (more than 5 minutes for one run).
func runCopy(b *testing.B, src ptrace.Traces) {
	td := ptrace.NewTraces()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		b.StartTimer()
		src.CopyTo(td)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchSpans, "ns/span")
}
