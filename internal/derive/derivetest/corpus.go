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

// PlainSpans is n ordinary spans of an instrumented service, no LLM calls
// among them: HTTP server spans with database client spans under them, 12
// attributes and one event each, parents in the batch. They are most of a
// traces pipeline; the processor must pass them almost free.
func PlainSpans(n int) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "checkout")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp")
	start := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for i := 0; i < n; i++ {
		span := ss.Spans().AppendEmpty()
		server := i%4 == 0 // one request, three queries
		span.SetTraceID(pcommon.TraceID{byte(i / 4), byte(i / 1024), 9})
		span.SetSpanID(pcommon.SpanID{byte(i), byte(i >> 8), 9})
		if !server {
			span.SetParentSpanID(pcommon.SpanID{byte(i - i%4), byte((i - i%4) >> 8), 9})
		}
		s := start.Add(time.Duration(i) * time.Millisecond)
		span.SetStartTimestamp(pcommon.NewTimestampFromTime(s))
		span.SetEndTimestamp(pcommon.NewTimestampFromTime(s.Add(12 * time.Millisecond)))
		a := span.Attributes()
		if server {
			span.SetName("GET /api/cart")
			span.SetKind(ptrace.SpanKindServer)
			a.PutStr("http.request.method", "GET")
			a.PutStr("http.route", "/api/cart")
			a.PutInt("http.response.status_code", 200)
			a.PutStr("url.path", "/api/cart")
			a.PutStr("url.scheme", "https")
			a.PutStr("server.address", "shop.example.com")
			a.PutInt("server.port", 443)
			a.PutStr("client.address", "10.1.2.3")
			a.PutStr("user_agent.original", "Mozilla/5.0")
			a.PutStr("network.protocol.version", "1.1")
			a.PutInt("http.request.body.size", 0)
			a.PutInt("http.response.body.size", 5120)
		} else {
			span.SetName("SELECT cart_items")
			span.SetKind(ptrace.SpanKindClient)
			a.PutStr("db.system.name", "postgresql")
			a.PutStr("db.namespace", "shop")
			a.PutStr("db.operation.name", "SELECT")
			a.PutStr("db.collection.name", "cart_items")
			a.PutStr("db.query.text", "SELECT * FROM cart_items WHERE cart_id = $1")
			a.PutStr("server.address", "db.internal")
			a.PutInt("server.port", 5432)
			a.PutStr("network.peer.address", "10.0.0.5")
			a.PutInt("network.peer.port", 5432)
			a.PutInt("db.response.returned_rows", 3)
			a.PutStr("code.function.name", "cart.Load")
			a.PutStr("thread.name", "worker-1")
		}
		ev := span.Events().AppendEmpty()
		ev.SetName("log")
		ev.SetTimestamp(pcommon.NewTimestampFromTime(s.Add(time.Millisecond)))
		ev.Attributes().PutStr("message", "cache miss")
	}
	return td
}
