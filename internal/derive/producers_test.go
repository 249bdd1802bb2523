package derive

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// t0 is an arbitrary span start.
var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func ts(d time.Duration) pcommon.Timestamp { return pcommon.NewTimestampFromTime(t0.Add(d)) }

// spanSpec describes one span in a producer's documented shape.
type spanSpec struct {
	scope  string
	name   string
	kind   ptrace.SpanKind
	id     byte
	parent byte
	dur    time.Duration
	start  time.Duration // offset from t0
	status ptrace.StatusCode
	msg    string
	attrs  map[string]any
	events []eventSpec
}

type eventSpec struct {
	name  string
	at    time.Duration // from the span's start
	attrs map[string]any
}

func traces(t testing.TB, specs ...spanSpec) ptrace.Traces {
	t.Helper()
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "test")
	for _, s := range specs {
		ss := rs.ScopeSpans().AppendEmpty()
		ss.Scope().SetName(s.scope)
		span := ss.Spans().AppendEmpty()
		span.SetName(s.name)
		span.SetKind(s.kind)
		span.SetTraceID(pcommon.TraceID{7})
		span.SetSpanID(pcommon.SpanID{s.id + 1})
		if s.parent != 0 {
			span.SetParentSpanID(pcommon.SpanID{s.parent + 1})
		}
		span.SetStartTimestamp(ts(s.start))
		span.SetEndTimestamp(ts(s.start + s.dur))
		span.Status().SetCode(s.status)
		span.Status().SetMessage(s.msg)
		require.NoError(t, span.Attributes().FromRaw(s.attrs))
		for _, e := range s.events {
			ev := span.Events().AppendEmpty()
			ev.SetName(e.name)
			ev.SetTimestamp(ts(s.start + e.at))
			require.NoError(t, ev.Attributes().FromRaw(e.attrs))
		}
	}
	return td
}

func deriveAll(t testing.TB, cfg Config, td ptrace.Traces) ([]record.Record, Stats) {
	t.Helper()
	d, err := New(cfg)
	require.NoError(t, err)
	var recs []record.Record
	st := d.Traces(td, func(_ pcommon.Resource, _ ptrace.Span, rec *record.Record) {
		recs = append(recs, *rec)
	})
	return recs, st
}

func deriveOne(t testing.TB, specs ...spanSpec) record.Record {
	t.Helper()
	recs, st := deriveAll(t, DefaultConfig(), traces(t, specs...))
	require.Len(t, recs, 1, "stats %+v", st)
	return recs[0]
}

func chunk(at time.Duration, kind string) eventSpec {
	return eventSpec{name: EventChunk, at: at, attrs: map[string]any{AttrChunkKind: kind}}
}

// Each test below builds the span shape a producer documents and checks
// the evidence docs/architecture.md §4 says it yields.

func TestChunkEventContract(t *testing.T) {
	rec := deriveOne(t, spanSpec{
		scope: "my-instrumentation", name: "chat gpt-4o", kind: ptrace.SpanKindClient, dur: 3 * time.Second,
		attrs: map[string]any{"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o", "gen_ai.response.finish_reasons": []any{"stop"}},
		events: []eventSpec{
			chunk(40*time.Millisecond, KindRole),
			chunk(100*time.Millisecond, KindKeepalive),
			chunk(150*time.Millisecond, KindLifecycle),
			chunk(300*time.Millisecond, KindContent),
			chunk(325*time.Millisecond, KindContent),
			chunk(1325*time.Millisecond, KindKeepalive), // keep-alives do not end a pause
			chunk(2325*time.Millisecond, KindToolCall),
			chunk(2400*time.Millisecond, KindLifecycle),
		},
	})
	assert.Equal(t, record.MeasuredAtFirstContent, rec.MeasuredAt)
	assert.InDelta(t, 0.300, rec.TimeToFirstContent, 1e-9)
	assert.InDelta(t, 0.040, rec.TimeToFirstChunk, 1e-9, "role-only chunks count as first chunk")
	assert.InDelta(t, 2.0, rec.MaxChunkGap, 1e-9)
	assert.Equal(t, int64(3), rec.ContentChunks)
	assert.Equal(t, record.OutcomeComplete, rec.Outcome)
	assert.True(t, rec.Streamed)
	assert.Equal(t, EventChunk, rec.Source)
}

func TestChunkEventsWithoutContent(t *testing.T) {
	rec := deriveOne(t, spanSpec{
		name: "chat", kind: ptrace.SpanKindClient, dur: 1500 * time.Millisecond,
		attrs:  map[string]any{"gen_ai.operation.name": "chat"},
		events: []eventSpec{chunk(40*time.Millisecond, KindRole), chunk(90*time.Millisecond, KindKeepalive)},
	})
	assert.False(t, rec.HasTimeToFirstContent, "role and keep-alive never stop the clock")
	assert.Equal(t, record.MeasuredAtFirstChunk, rec.MeasuredAt)
	assert.Equal(t, record.OutcomeClosed, rec.Outcome)
}

func TestChunkEventReasoningStopsClock(t *testing.T) {
	rec := deriveOne(t, spanSpec{
		name: "chat", dur: 3 * time.Second, attrs: map[string]any{"gen_ai.operation.name": "chat"},
		events: []eventSpec{chunk(40*time.Millisecond, KindRole), chunk(1200*time.Millisecond, KindReasoning)},
	})
	assert.InDelta(t, 1.2, rec.TimeToFirstContent, 1e-9)
}

func TestAnthropicSDKIsContentExact(t *testing.T) {
	rec := deriveOne(t, spanSpec{
		scope: "com.anthropic.sdk.python", name: "anthropic.messages.create", kind: ptrace.SpanKindClient, dur: time.Second, status: ptrace.StatusCodeOk,
		attrs: map[string]any{
			"gen_ai.provider.name": "anthropic", "gen_ai.request.model": "claude", "gen_ai.request.stream": true,
			"gen_ai.response.time_to_first_chunk": 0.321, "anthropic.message.stop_reason": "end_turn",
			"gen_ai.usage.input_tokens": 1000, "gen_ai.usage.cache_read.input_tokens": 15000, "gen_ai.usage.cache_write.input_tokens": 500,
		},
	})
	assert.Equal(t, record.MeasuredAtFirstContent, rec.MeasuredAt)
	assert.InDelta(t, 0.321, rec.TimeToFirstContent, 1e-9)
	assert.Equal(t, int64(16500), rec.PromptTokens, "Anthropic input excludes cached input")
	assert.Equal(t, "16k-64k", rec.PromptBand)
	assert.Equal(t, int64(15000), rec.CachedTokens)
	assert.Equal(t, "anthropic", rec.Provider)
}

// Claude on Vertex AI answers with Anthropic's usage (input excludes the
// cached input), as the stream instrumentation records it; Gemini on Vertex
// does not.
func TestClaudeOnVertexUsageIsAnthropics(t *testing.T) {
	for _, c := range []struct {
		model string
		want  int64
	}{{"claude-sonnet-4-5@20250929", 16500}, {"gemini-2.5-pro", 1000}} {
		rec := deriveOne(t, spanSpec{
			scope: "github.com/otelcol-ttft/otelcol-ttft/instrumentation/go/ttftstream", name: "chat " + c.model, kind: ptrace.SpanKindClient, dur: time.Second,
			attrs: map[string]any{
				"gen_ai.operation.name": "chat", "gen_ai.provider.name": "gcp.vertex_ai", "gen_ai.request.model": c.model, "gen_ai.request.stream": true,
				"gen_ai.usage.input_tokens": 1000, "gen_ai.usage.cache_read.input_tokens": 15000, "gen_ai.usage.cache_creation.input_tokens": 500,
			},
			events: []eventSpec{chunk(40*time.Millisecond, KindContent)},
		})
		assert.Equal(t, c.want, rec.PromptTokens, c.model)
	}
}

func TestSemconvTimeToFirstChunkFromUnknownProducerIsFirstChunk(t *testing.T) {
	// Official Python instrumentations, LiteLLM: any first chunk.
	rec := deriveOne(t, spanSpec{
		scope: "opentelemetry.instrumentation.openai_v2", name: "chat gpt-4o", kind: ptrace.SpanKindClient, dur: time.Second,
		attrs: map[string]any{"gen_ai.operation.name": "chat", "gen_ai.system": "openai", "gen_ai.request.model": "gpt-4o",
			"gen_ai.response.time_to_first_chunk": 0.05, "gen_ai.usage.input_tokens": 12},
	})
	assert.Equal(t, record.MeasuredAtFirstChunk, rec.MeasuredAt)
	assert.InDelta(t, 0.05, rec.TimeToFirstChunk, 1e-9)
	assert.False(t, rec.HasTimeToFirstContent)
	assert.Equal(t, "openai", rec.Provider)
}

func TestVercelV7ClientSpanIsContentExact(t *testing.T) {
	rec := deriveOne(t, spanSpec{
		scope: "@ai-sdk/otel", name: "chat gpt-4o", kind: ptrace.SpanKindClient, dur: 2 * time.Second,
		attrs: map[string]any{"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4o",
			"gen_ai.client.operation.time_to_first_chunk": 0.8, "gen_ai.response.finish_reasons": []any{"stop"}},
	})
	assert.Equal(t, record.MeasuredAtFirstContent, rec.MeasuredAt)
	assert.InDelta(t, 0.8, rec.TimeToFirstContent, 1e-9)
}

func TestClientTimeToFirstChunkFromOthersIsFirstChunk(t *testing.T) {
	rec := deriveOne(t, spanSpec{
		scope: "some-sdk", name: "chat", dur: 2 * time.Second,
		attrs: map[string]any{"gen_ai.operation.name": "chat", "gen_ai.client.operation.time_to_first_chunk": 0.8},
	})
	assert.Equal(t, record.MeasuredAtFirstChunk, rec.MeasuredAt)
}

func TestConfiguredContentExactProducer(t *testing.T) {
	cfg := DefaultConfig()
	cfg.ContentExactProducers = []Producer{{ScopePrefix: "acme.llm", Attribute: "acme.ttfc_ms", Unit: "ms"}}
	recs, _ := deriveAll(t, cfg, traces(t, spanSpec{
		scope: "acme.llm.client", name: "chat", dur: time.Second,
		attrs: map[string]any{"gen_ai.operation.name": "chat", "acme.ttfc_ms": 420},
	}))
	require.Len(t, recs, 1)
	assert.Equal(t, record.MeasuredAtFirstContent, recs[0].MeasuredAt)
	assert.InDelta(t, 0.42, recs[0].TimeToFirstContent, 1e-9)
}

func TestOpenLIT(t *testing.T) {
	for _, key := range []string{"gen_ai.server.time_to_first_token", "gen_ai.server.ttft"} {
		t.Run(key, func(t *testing.T) {
			rec := deriveOne(t, spanSpec{
				scope: "openlit.otel.tracing", name: "chat gpt-4o", kind: ptrace.SpanKindClient, dur: time.Second, status: ptrace.StatusCodeOk,
				attrs: map[string]any{"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.is_stream": true,
					key: 0.037, "gen_ai.usage.input_tokens": 0, "gen_ai.response.finish_reasons": []any{"stop"}},
			})
			assert.Equal(t, record.MeasuredAtFirstChunk, rec.MeasuredAt)
			assert.InDelta(t, 0.037, rec.TimeToFirstChunk, 1e-9)
			assert.Equal(t, "unknown", rec.PromptBand, "0 input tokens means not counted")
		})
	}
}

func TestOpenLITNonStreamedDurationIsNotTTFT(t *testing.T) {
	// OpenLIT reports the duration as TTFT for non-streamed calls.
	rec := deriveOne(t, spanSpec{
		scope: "openlit.otel.tracing", name: "chat gpt-4o", dur: 1234 * time.Millisecond, status: ptrace.StatusCodeOk,
		attrs: map[string]any{"gen_ai.operation.name": "chat", "gen_ai.server.time_to_first_token": 1.2335},
	})
	_, has := rec.TTFT()
	assert.False(t, has)
	recs, st := deriveAll(t, DefaultConfig(), traces(t, spanSpec{
		scope: "openlit.otel.tracing", name: "chat", dur: 1234 * time.Millisecond,
		attrs: map[string]any{"gen_ai.operation.name": "chat", "gen_ai.request.is_stream": false, "gen_ai.server.time_to_first_token": 0.2},
	}))
	require.Len(t, recs, 1)
	_, has = recs[0].TTFT()
	assert.False(t, has, "a call known not to stream never gets a TTFT")
	assert.Equal(t, int64(1), st.Skipped[ReasonNotStreamed])
	assert.True(t, recs[0].StreamedKnown)
	assert.False(t, recs[0].Streamed)
}

func TestVercelLegacyNestedSpans(t *testing.T) {
	outer := spanSpec{
		scope: "ai", name: "ai.streamText", id: 1, dur: 600 * time.Millisecond,
		attrs: map[string]any{"ai.operationId": "ai.streamText", "ai.model.provider": "openai.chat", "ai.model.id": "gpt-4o",
			"ai.response.finishReason": "stop", "ai.usage.inputTokens": 1234},
	}
	inner := spanSpec{
		scope: "ai", name: "ai.streamText.doStream", id: 2, parent: 1, start: 10 * time.Millisecond, dur: 580 * time.Millisecond,
		attrs: map[string]any{"ai.operationId": "ai.streamText.doStream", "ai.response.msToFirstChunk": 63.25,
			"ai.usage.inputTokens": 1234, "gen_ai.system": "openai.chat", "gen_ai.request.model": "gpt-4o"},
		events: []eventSpec{{name: "ai.stream.firstChunk", at: 200 * time.Millisecond, attrs: map[string]any{"ai.response.msToFirstChunk": 63.25}}},
	}
	recs, st := deriveAll(t, DefaultConfig(), traces(t, inner, outer))
	require.Len(t, recs, 1)
	rec := recs[0]
	assert.InDelta(t, 0.06325, rec.TimeToFirstChunk, 1e-9, "the attribute, not the event time; no inner offset added")
	assert.Equal(t, record.MeasuredAtFirstChunk, rec.MeasuredAt)
	assert.Equal(t, "<2k", rec.PromptBand)
	assert.InDelta(t, 0.6, rec.Duration, 1e-9, "the outer span carries the call")
	assert.Equal(t, int64(1), st.Nested)
	assert.Equal(t, "openai.chat", rec.Provider)
}

func TestVercelRetriedDoStreamCountsAttempts(t *testing.T) {
	failed := func(id byte, start time.Duration) spanSpec {
		return spanSpec{scope: "ai", name: "ai.streamText.doStream", id: id, parent: 1, start: start, dur: 20 * time.Millisecond,
			status: ptrace.StatusCodeError, msg: "Rate limit", attrs: map[string]any{"ai.operationId": "ai.streamText.doStream"},
			events: []eventSpec{{name: "exception", at: 19 * time.Millisecond, attrs: map[string]any{"exception.type": "AI_APICallError"}}}}
	}
	rec := deriveOne(t,
		spanSpec{scope: "ai", name: "ai.streamText", id: 1, dur: 3 * time.Second, attrs: map[string]any{"ai.operationId": "ai.streamText", "ai.response.finishReason": "stop"}},
		failed(2, 0), failed(3, time.Second),
		spanSpec{scope: "ai", name: "ai.streamText.doStream", id: 4, parent: 1, start: 2 * time.Second, dur: 900 * time.Millisecond,
			attrs: map[string]any{"ai.operationId": "ai.streamText.doStream", "ai.response.msToFirstChunk": 50.0, "ai.response.finishReason": "stop"}},
	)
	assert.Equal(t, int64(3), rec.Attempts)
	assert.Equal(t, record.OutcomeComplete, rec.Outcome, "earlier failed attempts do not fail the call")
	assert.InDelta(t, 2.05, rec.TimeToFirstChunk, 1e-9, "from the first attempt's start: the failed attempts' time included (docs/architecture.md §2); it was 0.05")
}

func TestVercelGenerateTextIsNotStreamed(t *testing.T) {
	rec := deriveOne(t,
		spanSpec{scope: "ai", name: "ai.generateText", id: 1, dur: time.Second, attrs: map[string]any{"ai.operationId": "ai.generateText"}},
		spanSpec{scope: "ai", name: "ai.generateText.doGenerate", id: 2, parent: 1, dur: 900 * time.Millisecond, attrs: map[string]any{"ai.operationId": "ai.generateText.doGenerate", "ai.response.msToFirstChunk": 899.9}},
	)
	_, has := rec.TTFT()
	assert.False(t, has)
	assert.True(t, rec.StreamedKnown)
	assert.False(t, rec.Streamed)
}

func TestVercelToolCallSpanIsNotACall(t *testing.T) {
	recs, st := deriveAll(t, DefaultConfig(), traces(t, spanSpec{scope: "ai", name: "ai.toolCall", dur: time.Second, attrs: map[string]any{"ai.operationId": "ai.toolCall"}}))
	assert.Empty(t, recs)
	assert.Equal(t, int64(1), st.Skipped[ReasonNotGenAI])
}

func TestVercelTimeoutMessages(t *testing.T) {
	for msg, want := range map[string]string{
		"First chunk timeout of 5000ms exceeded": record.OutcomeTimeoutFirstToken,
		"Chunk timeout of 2000ms exceeded":       record.OutcomeTimeoutIdle,
		"Step timeout of 30000ms exceeded":       record.OutcomeTimeoutDeadline,
	} {
		rec := deriveOne(t, spanSpec{scope: "ai", name: "ai.streamText", dur: 5 * time.Second, status: ptrace.StatusCodeError, msg: msg,
			attrs:  map[string]any{"ai.operationId": "ai.streamText"},
			events: []eventSpec{{name: "exception", at: 5 * time.Second, attrs: map[string]any{"exception.type": "AI_TimeoutError", "exception.message": msg}}}})
		assert.Equal(t, want, rec.Outcome, msg)
	}
}

func TestOpenLLMetryChunkEvents(t *testing.T) {
	for _, name := range []string{EventCompletionChunk, EventLLMCompletionChunk} {
		rec := deriveOne(t, spanSpec{
			scope: "opentelemetry.instrumentation.openai.v1", name: "openai.chat", kind: ptrace.SpanKindClient, dur: time.Second, status: ptrace.StatusCodeOk,
			attrs: map[string]any{"llm.request.type": "chat", "gen_ai.system": "openai", "llm.is_streaming": true,
				"gen_ai.usage.prompt_tokens": 3000, "gen_ai.completion.0.finish_reason": "stop"},
			events: []eventSpec{{name: name, at: 400 * time.Millisecond}, {name: name, at: 120 * time.Millisecond}, {name: name, at: 900 * time.Millisecond}},
		})
		assert.Equal(t, record.MeasuredAtFirstChunk, rec.MeasuredAt, name)
		assert.InDelta(t, 0.12, rec.TimeToFirstChunk, 1e-9, "earliest event")
		assert.Equal(t, "2k-16k", rec.PromptBand)
		assert.Equal(t, record.OutcomeComplete, rec.Outcome)
	}
}

func TestOpenLLMetryWorkflowSpanIsNotACall(t *testing.T) {
	recs, _ := deriveAll(t, DefaultConfig(), traces(t,
		spanSpec{name: "joke.workflow", id: 1, dur: 2 * time.Second, attrs: map[string]any{"traceloop.span.kind": "workflow", "gen_ai.system": "openai"}},
		spanSpec{name: "openai.chat", id: 2, parent: 1, dur: time.Second, attrs: map[string]any{"llm.request.type": "chat", "llm.is_streaming": true},
			events: []eventSpec{{name: EventCompletionChunk, at: 100 * time.Millisecond}}},
	))
	require.Len(t, recs, 1, "the workflow wraps calls; it is not one")
	assert.InDelta(t, 0.1, recs[0].TimeToFirstChunk, 1e-9)
}

func TestOpenInferenceFirstTokenEvent(t *testing.T) {
	spec := spanSpec{
		scope: "openinference.instrumentation.openai", name: "ChatCompletion", dur: time.Second, status: ptrace.StatusCodeOk,
		attrs: map[string]any{"openinference.span.kind": "LLM", "llm.model_name": "gpt-4o", "llm.provider": "openai",
			"llm.invocation_parameters": `{"model": "gpt-4o", "stream": true}`, "llm.token_count.prompt": 70000,
			"llm.token_count.prompt_details.cache_read": 65000},
		events: []eventSpec{{name: EventFirstToken, at: 230 * time.Millisecond}},
	}
	rec := deriveOne(t, spec)
	assert.Equal(t, record.MeasuredAtFirstChunk, rec.MeasuredAt)
	assert.InDelta(t, 0.23, rec.TimeToFirstChunk, 1e-9)
	assert.Equal(t, ">=64k", rec.PromptBand)
	assert.Equal(t, int64(65000), rec.CachedTokens)
	assert.Equal(t, "gpt-4o", rec.Model)
	assert.True(t, rec.Streamed)

	// Envoy AI Gateway writes the event at stream end: not evidence.
	spec.scope = "envoyproxy/ai-gateway"
	rec = deriveOne(t, spec)
	_, has := rec.TTFT()
	assert.False(t, has)
}

func TestOpenInferenceChainSpanIsNotACall(t *testing.T) {
	recs, _ := deriveAll(t, DefaultConfig(), traces(t, spanSpec{name: "RunnableSequence", dur: time.Second,
		attrs: map[string]any{"openinference.span.kind": "CHAIN", "llm.model_name": "gpt-4o"}}))
	assert.Empty(t, recs)
}

func TestLangfuseCompletionStartTime(t *testing.T) {
	for name, v := range map[string]any{
		"rfc3339":      t0.Add(750 * time.Millisecond).Format(time.RFC3339Nano),
		"json-quoted":  `"` + t0.Add(750*time.Millisecond).Format(time.RFC3339Nano) + `"`,
		"epoch-millis": t0.Add(750*time.Millisecond).UnixNano() / 1e6,
	} {
		rec := deriveOne(t, spanSpec{scope: "langfuse-sdk", name: "generation", dur: 2 * time.Second,
			attrs: map[string]any{"langfuse.observation.type": "generation", "gen_ai.request.model": "gpt-4o", "langfuse.observation.completion_start_time": v}})
		assert.Equal(t, record.MeasuredAtFirstChunk, rec.MeasuredAt, name)
		assert.InDelta(t, 0.75, rec.TimeToFirstChunk, 1e-6, name)
	}
}

func TestTTFTMs(t *testing.T) {
	rec := deriveOne(t, spanSpec{name: "chat", dur: time.Second, attrs: map[string]any{"gen_ai.operation.name": "chat", "ttft_ms": 250}})
	assert.InDelta(t, 0.25, rec.TimeToFirstChunk, 1e-9)
	assert.Equal(t, record.MeasuredAtFirstChunk, rec.MeasuredAt)
}

func TestBifrost(t *testing.T) {
	base := map[string]any{"gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4o",
		"gen_ai.usage.prompt_tokens": 900, "gen_ai.number_of_retries": 1, "gen_ai.fallback_index": 1}
	with := func(k string, v any) map[string]any {
		m := map[string]any{k: v}
		for kk, vv := range base {
			m[kk] = vv
		}
		return m
	}
	// Bifrost's own TTFT attributes time the first-to-second chunk gap: no
	// number, counted as untrusted.
	d, err := New(DefaultConfig())
	require.NoError(t, err)
	for _, key := range []string{"gen_ai.response.time_to_first_token", "gen_ai.response.time_to_first_chunk"} {
		td := traces(t, spanSpec{scope: "bifrost", name: "chat gpt-4o", kind: ptrace.SpanKindClient, dur: time.Second, status: ptrace.StatusCodeOk,
			attrs: with(key, int64(180_000_000))})
		var recs []record.Record
		st := d.Traces(td, func(_ pcommon.Resource, _ ptrace.Span, rec *record.Record) { recs = append(recs, *rec) })
		require.Len(t, recs, 1, key)
		rec := recs[0]
		assert.False(t, rec.HasTimeToFirstChunk || rec.HasTimeToFirstContent, key)
		assert.Empty(t, rec.MeasuredAt, key)
		assert.Equal(t, int64(1), st.Untrusted, key)
		assert.Equal(t, record.ObserverGateway, rec.Observer)
		assert.Equal(t, int64(3), rec.Attempts, "one retry and one fallback before this attempt")
		assert.True(t, rec.FailedOverKnown && rec.FailedOver)
	}

	// The same key from a producer not in the table is nanoseconds,
	// sanity-checked by magnitude.
	rec := deriveOne(t, spanSpec{scope: "some-gateway", name: "gen_ai.chat", kind: ptrace.SpanKindClient, dur: time.Second, status: ptrace.StatusCodeOk,
		attrs: with("gen_ai.response.time_to_first_token", int64(180_000_000))})
	assert.InDelta(t, 0.18, rec.TimeToFirstChunk, 1e-9, "nanoseconds")
	assert.Equal(t, record.MeasuredAtFirstChunk, rec.MeasuredAt)
	rec = deriveOne(t, spanSpec{scope: "some-gateway", name: "gen_ai.chat", kind: ptrace.SpanKindClient, dur: time.Second,
		attrs: with("gen_ai.response.time_to_first_token", 180)})
	assert.InDelta(t, 0.18, rec.TimeToFirstChunk, 1e-9, "a value too small for nanoseconds is milliseconds")

	rec = deriveOne(t, spanSpec{scope: "bifrost", name: "chat gpt-4o", kind: ptrace.SpanKindClient, dur: time.Second, status: ptrace.StatusCodeError,
		attrs: with("gen_ai.error.type", "rate_limit_error")})
	assert.Equal(t, record.OutcomeError, rec.Outcome)
}

func TestVLLMServerSpan(t *testing.T) {
	rec := deriveOne(t, spanSpec{scope: "vllm.entrypoints", name: "llm_request", kind: ptrace.SpanKindServer, dur: 2 * time.Second,
		attrs: map[string]any{"gen_ai.latency.time_to_first_token": 0.41, "gen_ai.request.model": "llama", "gen_ai.usage.prompt_tokens": 20000,
			"gen_ai.response.finish_reasons": []any{"stop"}}})
	assert.Equal(t, record.ObserverServer, rec.Observer)
	assert.InDelta(t, 0.41, rec.TimeToFirstContent, 1e-9)
	assert.Equal(t, "16k-64k", rec.PromptBand)

	// The key's meaning holds on a server's span only: on a client's, whose
	// producer is not known, it is a first chunk, the lower bound.
	rec = deriveOne(t, spanSpec{name: "chat llama", kind: ptrace.SpanKindClient, dur: 2 * time.Second,
		attrs: map[string]any{"gen_ai.operation.name": "chat", "gen_ai.latency.time_to_first_token": 0.41, "gen_ai.request.model": "llama"}})
	assert.Equal(t, record.ObserverClient, rec.Observer)
	assert.False(t, rec.HasTimeToFirstContent)
	assert.InDelta(t, 0.41, rec.TimeToFirstChunk, 1e-9)
	assert.Equal(t, record.MeasuredAtFirstChunk, rec.MeasuredAt)
}

func TestLiteLLMStreamingFlag(t *testing.T) {
	rec := deriveOne(t, spanSpec{scope: "litellm", name: "litellm_request", dur: time.Second,
		attrs: map[string]any{"gen_ai.request.model": "gpt-4o", "litellm.request.streaming": "True", "gen_ai.response.time_to_first_chunk": 0.3}})
	assert.True(t, rec.Streamed)
	assert.Equal(t, record.ObserverGateway, rec.Observer)
	assert.Equal(t, record.MeasuredAtFirstChunk, rec.MeasuredAt)
}

func TestStreamingFlags(t *testing.T) {
	for _, key := range []string{"gen_ai.request.stream", "gen_ai.request.is_stream", "llm.is_streaming", "gen_ai.is_streaming", "litellm.request.streaming"} {
		rec := deriveOne(t, spanSpec{name: "chat", dur: time.Second, attrs: map[string]any{"gen_ai.operation.name": "chat", key: true}})
		assert.True(t, rec.StreamedKnown && rec.Streamed, key)
		assert.Equal(t, ReasonNoEvidence.String(), "no_evidence")
	}
	rec := deriveOne(t, spanSpec{name: "chat.stream", dur: time.Second, attrs: map[string]any{"gen_ai.operation.name": "chat"}})
	assert.True(t, rec.Streamed, "span name")
}

func TestOutcomes(t *testing.T) {
	cases := []struct {
		name   string
		status ptrace.StatusCode
		attrs  map[string]any
		events []eventSpec
		want   string
	}{
		{"error status", ptrace.StatusCodeError, nil, nil, record.OutcomeError},
		{"error.type", ptrace.StatusCodeUnset, map[string]any{"error.type": "RateLimitError"}, nil, record.OutcomeError},
		{"timeout before content", ptrace.StatusCodeError, map[string]any{"error.type": "APITimeoutError"}, nil, record.OutcomeTimeoutFirstToken},
		{"timeout after content", ptrace.StatusCodeError, map[string]any{"error.type": "ReadTimeout"}, []eventSpec{chunk(100*time.Millisecond, KindContent)}, record.OutcomeTimeoutIdle},
		{"exception TimeoutError", ptrace.StatusCodeError, nil, []eventSpec{{name: "exception", at: time.Second, attrs: map[string]any{"exception.type": "TimeoutError"}}}, record.OutcomeTimeoutFirstToken},
		{"APIConnectionTimeoutError", ptrace.StatusCodeError, map[string]any{"error.type": "APIConnectionTimeoutError"}, nil, record.OutcomeTimeoutFirstToken},
		// A timeout named only in the exception's message, under a type that
		// says nothing.
		{"timeout in the message only", ptrace.StatusCodeError, nil, []eventSpec{{name: "exception", at: time.Second, attrs: map[string]any{"exception.type": "Error", "exception.message": "APIConnectionTimeoutError: Request timed out."}}}, record.OutcomeTimeoutFirstToken},
		{"timeout in the message after content", ptrace.StatusCodeError, nil, []eventSpec{chunk(100*time.Millisecond, KindContent), {name: "exception", at: time.Second, attrs: map[string]any{"exception.type": "Error", "exception.message": "Request timed out."}}}, record.OutcomeTimeoutIdle},
		{"deadline in the message", ptrace.StatusCodeError, nil, []eventSpec{{name: "exception", at: time.Second, attrs: map[string]any{"exception.type": "*url.Error", "exception.message": "Post \"https://api\": context deadline exceeded"}}}, record.OutcomeTimeoutDeadline},
		{"a message about something else", ptrace.StatusCodeError, nil, []eventSpec{{name: "exception", at: time.Second, attrs: map[string]any{"exception.type": "Error", "exception.message": "Invalid API key"}}}, record.OutcomeError},
		{"http 504", ptrace.StatusCodeError, map[string]any{"http.response.status_code": 504}, nil, record.OutcomeTimeoutFirstToken},
		{"http 408", ptrace.StatusCodeUnset, map[string]any{"http.response.status_code": 408}, nil, record.OutcomeTimeoutFirstToken},
		{"finish reason error", ptrace.StatusCodeUnset, map[string]any{"ai.response.finishReason": "error"}, nil, record.OutcomeError},
		{"unset without finish", ptrace.StatusCodeUnset, nil, nil, record.OutcomeClosed},
		{"unset empty finish list", ptrace.StatusCodeUnset, map[string]any{"gen_ai.response.finish_reasons": []any{}}, nil, record.OutcomeClosed},
		{"abandoned stream", ptrace.StatusCodeError, map[string]any{"error.type": "abandoned stream"}, nil, record.OutcomeClosed},
		{"ok", ptrace.StatusCodeOk, nil, nil, record.OutcomeComplete},
		{"unset with finish", ptrace.StatusCodeUnset, map[string]any{"gen_ai.response.finish_reasons": []any{"stop"}}, nil, record.OutcomeComplete},
		{"error chunk", ptrace.StatusCodeUnset, map[string]any{"gen_ai.response.finish_reasons": []any{"stop"}}, []eventSpec{chunk(100*time.Millisecond, KindError)}, record.OutcomeError},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			attrs := map[string]any{"gen_ai.operation.name": "chat", "gen_ai.request.stream": true}
			for k, v := range c.attrs {
				attrs[k] = v
			}
			rec := deriveOne(t, spanSpec{name: "chat", dur: 2 * time.Second, status: c.status, attrs: attrs, events: c.events})
			assert.Equal(t, c.want, rec.Outcome)
		})
	}
}

func TestAttemptsAttribute(t *testing.T) {
	rec := deriveOne(t, spanSpec{name: "chat", dur: time.Second, attrs: map[string]any{"gen_ai.operation.name": "chat", "ttft.attempts": 2}})
	assert.Equal(t, int64(2), rec.Attempts)
}

func TestRouteFromConfiguredAttribute(t *testing.T) {
	cfg := DefaultConfig()
	cfg.RouteAttribute = "gateway.route"
	recs, _ := deriveAll(t, cfg, traces(t, spanSpec{name: "chat", dur: time.Second,
		attrs: map[string]any{"gen_ai.operation.name": "chat", "gateway.route": "support-bot"}}))
	require.Len(t, recs, 1)
	assert.Equal(t, "support-bot", recs[0].Route)
}

func TestStampedSpansAreReadNotRederived(t *testing.T) {
	td := traces(t, spanSpec{name: "chat", dur: time.Second, attrs: map[string]any{"gen_ai.operation.name": "chat", "ttft_ms": 100}})
	span := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	stamped := record.Record{Outcome: record.OutcomeError, TimeToFirstContent: 0.5, HasTimeToFirstContent: true, MeasuredAt: record.MeasuredAtFirstContent, PromptBand: "<2k", Attempts: 1, Observer: record.ObserverClient}
	stamped.Write(span.Attributes())
	d, err := New(DefaultConfig())
	require.NoError(t, err)
	var reread, derived []record.Record
	v := TraceVisitor{
		Record: func(_ pcommon.Resource, _ ptrace.Span, rec *record.Record) { derived = append(derived, *rec) },
		Reread: func(_ pcommon.Resource, _ ptrace.Span, rec *record.Record) { reread = append(reread, *rec) },
	}
	st := d.TracesWith(td, v)
	require.Len(t, reread, 1, "read back, not derived")
	assert.Empty(t, derived)
	assert.Equal(t, record.OutcomeError, reread[0].Outcome)
	assert.InDelta(t, 0.5, reread[0].TimeToFirstContent, 1e-9)
	assert.Equal(t, int64(1), st.Reread)

	reread = nil
	d.TracesWith(traces(t, spanSpec{name: "chat", dur: time.Second, attrs: map[string]any{"gen_ai.operation.name": "chat", "ttft_ms": 100}}), v)
	assert.Empty(t, reread, "an unstamped span is derived")
	assert.Len(t, derived, 1)
}

func TestNestedMarkedSpansAreSkipped(t *testing.T) {
	td := traces(t, spanSpec{name: "chat", dur: time.Second, attrs: map[string]any{"gen_ai.operation.name": "chat", record.KeyNestedIn: "0102030405060708"}})
	recs, st := deriveAll(t, DefaultConfig(), td)
	assert.Empty(t, recs)
	assert.Equal(t, int64(1), st.Nested)
}

func TestNestedVisitorGetsOuterID(t *testing.T) {
	d, err := New(DefaultConfig())
	require.NoError(t, err)
	td := traces(t,
		spanSpec{scope: "@arizeai/openinference-instrumentation-anthropic", name: "Anthropic Messages", id: 1, dur: time.Second, attrs: map[string]any{"openinference.span.kind": "LLM", "llm.provider": "anthropic"}},
		spanSpec{scope: "com.anthropic.sdk.typescript", name: "anthropic.messages.create", id: 2, parent: 1, dur: 900 * time.Millisecond, kind: ptrace.SpanKindClient,
			attrs: map[string]any{"gen_ai.provider.name": "anthropic", "gen_ai.response.time_to_first_chunk": 0.3, "gen_ai.request.stream": true}},
	)
	var outers []pcommon.SpanID
	var records []string
	d.TracesWith(td, TraceVisitor{
		Record: func(_ pcommon.Resource, s ptrace.Span, rec *record.Record) { records = append(records, s.Name()) },
		Nested: func(_ pcommon.Resource, s ptrace.Span, outer pcommon.SpanID) { outers = append(outers, outer) },
	})
	assert.Equal(t, []string{"Anthropic Messages"}, records)
	assert.Equal(t, []pcommon.SpanID{{2}}, outers)
}

func TestManySpansUseTheIndex(t *testing.T) {
	var specs []spanSpec
	for i := 0; i < 40; i += 2 {
		specs = append(specs,
			spanSpec{name: "outer", id: byte(i + 1), dur: time.Second, attrs: map[string]any{"gen_ai.operation.name": "chat"}},
			spanSpec{name: "inner", id: byte(i + 2), parent: byte(i + 1), dur: time.Second, attrs: map[string]any{"gen_ai.operation.name": "chat", "ttft_ms": 10}})
	}
	recs, st := deriveAll(t, DefaultConfig(), traces(t, specs...))
	assert.Len(t, recs, 20)
	assert.Equal(t, int64(20), st.Nested)
	for _, r := range recs {
		assert.InDelta(t, 0.01, r.TimeToFirstChunk, 1e-9)
	}
}

// Span ids are unique within a trace, not across traces: with five traces
// reusing the same span ids in one batch, the batch index must still fold
// each inner span into the outer span of its own trace.
func TestSpanIDsSharedAcrossTraces(t *testing.T) {
	const nTraces, pairs = 5, 10
	var specs []spanSpec
	for trace := 0; trace < nTraces; trace++ {
		for i := 0; i < 2*pairs; i += 2 {
			specs = append(specs,
				spanSpec{name: "outer", id: byte(i + 1), dur: time.Second, attrs: map[string]any{"gen_ai.operation.name": "chat"}},
				spanSpec{name: "inner", id: byte(i + 2), parent: byte(i + 1), dur: time.Second, attrs: map[string]any{"gen_ai.operation.name": "chat", "ttft_ms": 10 * (trace + 1)}})
		}
	}
	td := traces(t, specs...)
	sss := td.ResourceSpans().At(0).ScopeSpans()
	for i := 0; i < sss.Len(); i++ {
		sss.At(i).Spans().At(0).SetTraceID(pcommon.TraceID{byte(1 + i/(2*pairs))})
	}
	d, err := New(DefaultConfig())
	require.NoError(t, err)
	got := map[pcommon.TraceID][]float64{}
	st := d.Traces(td, func(_ pcommon.Resource, s ptrace.Span, rec *record.Record) {
		assert.Equal(t, "outer", s.Name())
		got[s.TraceID()] = append(got[s.TraceID()], rec.TimeToFirstChunk)
	})
	assert.Equal(t, int64(nTraces*pairs), st.Nested)
	for trace := 0; trace < nTraces; trace++ {
		ttfts := got[pcommon.TraceID{byte(1 + trace)}]
		require.Len(t, ttfts, pairs)
		for _, v := range ttfts {
			assert.InDelta(t, 0.010*float64(trace+1), v, 1e-9, "trace %d", trace+1)
		}
	}
}

// Parent links come from the sender: a cycle, or a chain deeper than any
// real call, must still give every span's evidence to exactly one record.
func TestParentCyclesAndDeepChains(t *testing.T) {
	chat := func(extra map[string]any) map[string]any {
		m := map[string]any{"gen_ai.operation.name": "chat"}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	t.Run("cycle", func(t *testing.T) {
		recs, st := deriveAll(t, DefaultConfig(), traces(t,
			spanSpec{name: "a", id: 1, parent: 3, dur: time.Second, attrs: chat(nil)},
			spanSpec{name: "b", id: 2, parent: 1, dur: time.Second, attrs: chat(map[string]any{"ttft_ms": 10})},
			spanSpec{name: "c", id: 3, parent: 2, dur: time.Second, attrs: chat(nil)},
		))
		require.Len(t, recs, 1, "one call, one record")
		assert.Equal(t, int64(2), st.Nested)
		assert.InDelta(t, 0.010, recs[0].TimeToFirstChunk, 1e-9)
	})
	t.Run("deeper than maxNesting", func(t *testing.T) {
		const depth = 3 * maxNesting
		var specs []spanSpec
		for i := 0; i < depth; i++ {
			var extra map[string]any
			if i == depth-1 {
				extra = map[string]any{"ttft_ms": 10} // only the deepest span measured it
			}
			specs = append(specs, spanSpec{name: "call", id: byte(i + 1), parent: byte(i), dur: time.Second, attrs: chat(extra)})
		}
		recs, st := deriveAll(t, DefaultConfig(), traces(t, specs...))
		assert.Equal(t, int64(depth), int64(len(recs))+st.Nested, "every span once")
		var found int
		for _, r := range recs {
			if r.HasTimeToFirstChunk {
				found++
				assert.InDelta(t, 0.010, r.TimeToFirstChunk, 1e-9)
			}
		}
		assert.Equal(t, 1, found, "the deepest span's evidence is in exactly one record")
	})
}

func TestLogs(t *testing.T) {
	d, err := New(DefaultConfig())
	require.NoError(t, err)
	ld := plog.NewLogs()
	sl := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty()
	gw := sl.LogRecords().AppendEmpty()
	require.NoError(t, gw.Attributes().FromRaw(map[string]any{"gen_ai.request.model": "gpt-4o", "gen_ai.provider.name": "openai",
		"ttft_ms": 340, "duration_ms": 2100, "http.response.status_code": 200, "gen_ai.usage.input_tokens": 5000, "litellm.request.streaming": true, "ttft.route": "chat-default"}))
	inSpan := sl.LogRecords().AppendEmpty() // a GenAI event inside a span
	inSpan.SetSpanID(pcommon.SpanID{1})
	require.NoError(t, inSpan.Attributes().FromRaw(map[string]any{"gen_ai.request.model": "gpt-4o", "gen_ai.operation.name": "chat"}))
	plain := sl.LogRecords().AppendEmpty()
	plain.Body().SetStr("hello")

	var recs []record.Record
	st := d.Logs(ld, func(_ pcommon.Resource, _ plog.LogRecord, rec *record.Record) { recs = append(recs, *rec) })
	require.Len(t, recs, 1)
	rec := recs[0]
	assert.InDelta(t, 0.34, rec.TimeToFirstChunk, 1e-9)
	assert.Equal(t, record.MeasuredAtFirstChunk, rec.MeasuredAt)
	assert.Equal(t, record.ObserverGateway, rec.Observer)
	assert.InDelta(t, 2.1, rec.Duration, 1e-9)
	assert.Equal(t, record.OutcomeComplete, rec.Outcome)
	assert.Equal(t, "2k-16k", rec.PromptBand)
	assert.Equal(t, "chat-default", rec.Route)
	assert.Equal(t, int64(1), st.Skipped[ReasonSpanLog])
	assert.Equal(t, int64(1), st.Skipped[ReasonNotGenAI])
	assert.False(t, math.IsNaN(rec.Duration))
}

func TestLogRecordsDoNotLeakIntoEachOther(t *testing.T) {
	d, err := New(DefaultConfig())
	require.NoError(t, err)
	ld := plog.NewLogs()
	lrs := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	first := lrs.AppendEmpty()
	require.NoError(t, first.Attributes().FromRaw(map[string]any{"gen_ai.request.model": "a", "gen_ai.usage.input_tokens": 90000, "ttft_ms": 100, "gen_ai.response.finish_reasons": []any{"error"}}))
	second := lrs.AppendEmpty()
	require.NoError(t, second.Attributes().FromRaw(map[string]any{"gen_ai.request.model": "b", "http.response.status_code": 200}))
	var recs []record.Record
	d.Logs(ld, func(_ pcommon.Resource, _ plog.LogRecord, rec *record.Record) { recs = append(recs, *rec) })
	require.Len(t, recs, 2)
	assert.Equal(t, ">=64k", recs[0].PromptBand)
	assert.Equal(t, record.OutcomeError, recs[0].Outcome)
	assert.Equal(t, "unknown", recs[1].PromptBand)
	assert.False(t, recs[1].HasTimeToFirstChunk)
	assert.Equal(t, record.OutcomeComplete, recs[1].Outcome)
}

// ns_or_ms (gen_ai.response.time_to_first_token from unknown producers):
// nanoseconds; below 10 µs as nanoseconds, milliseconds; below 1, which is
// neither of a TTFT, seconds.
func TestNanosOrMillis(t *testing.T) {
	for _, c := range []struct{ in, want float64 }{
		{3e8, 0.3}, {1e4, 1e-5}, {300, 0.3}, {1, 0.001}, {0.5, 0.5}, {0, 0},
	} {
		assert.InDelta(t, c.want, unitNanosOrMillis.seconds(c.in), 1e-12, "%v", c.in)
	}
}
