package derive

import (
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// BenchmarkBatchSize derives batches of 100 to 10,000 GenAI spans in the
// shape most traffic has: a parent outside the batch, no route attribute,
// half of them without any TTFT evidence. ns/span must not grow with the
// batch: the smallest size is the baseline for the others.
func BenchmarkBatchSize(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("spans=%d", n), func(b *testing.B) {
			td := ptrace.NewTraces()
			ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
			ss.Scope().SetName("my-llm-client")
			for i := 0; i < n; i++ {
				s := ss.Spans().AppendEmpty()
				s.SetName("chat")
				s.SetTraceID(pcommon.TraceID{byte(i), byte(i >> 8), 1})
				s.SetSpanID(pcommon.SpanID{byte(i), byte(i >> 8), 2})
				s.SetParentSpanID(pcommon.SpanID{byte(i), byte(i >> 8), 3})
				s.SetStartTimestamp(ts(0))
				s.SetEndTimestamp(ts(2 * time.Second))
				a := s.Attributes()
				a.PutStr("gen_ai.operation.name", "chat")
				a.PutInt("gen_ai.usage.input_tokens", 1500)
				if i%2 == 0 {
					a.PutStr("gen_ai.provider.name", "openai")
					a.PutStr("gen_ai.request.model", "gpt-4o")
					a.PutDouble("gen_ai.response.time_to_first_chunk", 0.3)
				}
			}
			d, err := New(DefaultConfig())
			if err != nil {
				b.Fatal(err)
			}
			visit := func(pcommon.Resource, ptrace.Span, *record.Record) {}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				d.Traces(td, visit)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/span")
		})
	}
}
