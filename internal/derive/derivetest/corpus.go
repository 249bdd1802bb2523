// Package derivetest builds GenAI span batches for the benchmarks of the
// components that derive request records.
package derivetest // import "github.com/otelcol-ttft/otelcol-ttft/internal/derive/derivetest"

import (
	"fmt"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-ttft/otelcol-ttft/internal/derive"
)

// ChunkedSpans is n streamed GenAI spans over the given number of models,
// each with chunks ttft.chunk events (role, keep-alive, then content, tool
// call, reasoning and lifecycle chunks) and the attributes a typical
// instrumentation writes. Each has a parent outside the batch, as LLM calls
// made while serving a request do. It is deterministic, so runs compare.
func ChunkedSpans(n, chunks, models int) ptrace.Traces {
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
	ss.Scope().SetName("my-llm-client")
	start := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	kinds := []string{derive.KindRole, derive.KindKeepalive, derive.KindContent, derive.KindToolCall, derive.KindReasoning, derive.KindLifecycle}
	for i := 0; i < n; i++ {
		model := fmt.Sprintf("model-%d", i%models)
		span := ss.Spans().AppendEmpty()
		span.SetName("chat " + model)
		span.SetKind(ptrace.SpanKindClient)
		span.SetTraceID(pcommon.TraceID{byte(i), byte(i >> 8), 1})
		span.SetSpanID(pcommon.SpanID{byte(i), byte(i >> 8), 2})
		span.SetParentSpanID(pcommon.SpanID{byte(i), byte(i >> 8), 3})
		s := start.Add(time.Duration(i) * time.Millisecond)
		span.SetStartTimestamp(pcommon.NewTimestampFromTime(s))
		span.SetEndTimestamp(pcommon.NewTimestampFromTime(s.Add(2 * time.Second)))
		a := span.Attributes()
		a.PutStr("gen_ai.operation.name", "chat")
		a.PutStr("gen_ai.provider.name", "openai")
		a.PutStr("gen_ai.request.model", model)
		a.PutStr("gen_ai.response.model", model+"-2024-08-06")
		a.PutBool("gen_ai.request.stream", true)
		a.PutInt("gen_ai.usage.input_tokens", int64(1000+i))
		a.PutInt("gen_ai.usage.output_tokens", 200)
		a.PutStr("server.address", "api.openai.com")
		a.PutStr("ttft.route", "support")
		a.PutEmptySlice("gen_ai.response.finish_reasons").AppendEmpty().SetStr("stop")
		evs := span.Events()
		evs.EnsureCapacity(chunks)
		for j := 0; j < chunks; j++ {
			ev := evs.AppendEmpty()
			ev.SetName(derive.EventChunk)
			ev.SetTimestamp(pcommon.NewTimestampFromTime(s.Add(time.Duration(40+30*j) * time.Millisecond)))
			ev.Attributes().PutStr(derive.AttrChunkKind, kinds[min(j, 2+j%4)])
		}
	}
	return td
}
