package derive

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// Rules of docs/architecture.md, one test each, built from the span shapes
// the producers document.

func TestOpenAIGoCompileTimeInstrumentationMicroseconds(t *testing.T) {
	// It writes gen_ai.response.time_to_first_token as int64 µs, taken at
	// the first data: line of any kind.
	rec := deriveOne(t, spanSpec{
		scope: "github.com/open-telemetry/opentelemetry-go-compile-instrumentation/instrumentation/github.com/openai/openai-go/v3",
		name:  "chat gpt-4o", kind: ptrace.SpanKindClient, dur: 2 * time.Second, status: ptrace.StatusCodeUnset,
		attrs: map[string]any{
			"gen_ai.system": "openai", "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o",
			"gen_ai.provider.name": "openai", "gen_ai.request.is_stream": true,
			"gen_ai.response.finish_reasons": []any{"stop"}, "gen_ai.usage.input_tokens": int64(12),
			"gen_ai.response.time_to_first_token": int64(40_000),
		},
	})
	assert.InDelta(t, 0.040, rec.TimeToFirstChunk, 1e-9, "40,000 µs")
	assert.False(t, rec.HasTimeToFirstContent)
	assert.Equal(t, record.MeasuredAtFirstChunk, rec.MeasuredAt)
	assert.Equal(t, record.OutcomeComplete, rec.Outcome)
}

func TestLangsmithGoNewTokenEvent(t *testing.T) {
	// langsmith-go's traceopenai adds an event new_token at the first
	// content or tool-call delta (not at the role-only first chunk).
	rec := deriveOne(t, spanSpec{
		scope: "github.com/sashabaranov/go-openai", name: "openai.chat.completion", kind: ptrace.SpanKindInternal,
		dur: 2 * time.Second, status: ptrace.StatusCodeOk,
		attrs: map[string]any{
			"gen_ai.system": "openai", "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o",
			"gen_ai.usage.input_tokens": int64(12),
		},
		events: []eventSpec{{name: "new_token", at: 300 * time.Millisecond}},
	})
	assert.InDelta(t, 0.300, rec.TimeToFirstContent, 1e-9)
	assert.Equal(t, record.MeasuredAtFirstContent, rec.MeasuredAt)
	assert.Equal(t, EventLangsmithNewToken, rec.Source)
	assert.True(t, rec.Streamed && rec.StreamedKnown, "first-content evidence says it streamed")
}

func TestVercelAISDK7ScopeGenAI(t *testing.T) {
	// @ai-sdk/otel names its scope gen_ai; the chat span sits under step
	// and invoke_agent spans that are no calls.
	recs, _ := deriveAll(t, DefaultConfig(), traces(t,
		spanSpec{scope: "gen_ai", id: 1, name: "invoke_agent gpt-4o", kind: ptrace.SpanKindInternal, dur: 3 * time.Second, status: ptrace.StatusCodeOk,
			attrs: map[string]any{"gen_ai.operation.name": "invoke_agent", "gen_ai.request.model": "gpt-4o", "gen_ai.provider.name": "openai"}},
		spanSpec{scope: "gen_ai", id: 2, parent: 1, name: "step 0", kind: ptrace.SpanKindInternal, dur: 3 * time.Second, status: ptrace.StatusCodeOk,
			attrs: map[string]any{"gen_ai.operation.name": "step"}},
		spanSpec{scope: "gen_ai", id: 3, parent: 2, name: "chat gpt-4o", kind: ptrace.SpanKindClient, dur: 2 * time.Second, status: ptrace.StatusCodeOk,
			attrs: map[string]any{
				"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o", "gen_ai.provider.name": "openai",
				"gen_ai.client.operation.time_to_first_chunk": 1.2, "gen_ai.response.finish_reasons": []any{"stop"},
			}},
	))
	require.Len(t, recs, 1)
	assert.InDelta(t, 1.2, recs[0].TimeToFirstContent, 1e-9)
	assert.Equal(t, record.MeasuredAtFirstContent, recs[0].MeasuredAt)
}

func TestLiteLLMCompletionStartAtEndIsNoTTFT(t *testing.T) {
	// LiteLLM writes end_time as completionStartTime on some streamed
	// endpoints: a "TTFT" equal to the duration is none, streamed or not.
	end := ts(1500 * time.Millisecond)
	rec := deriveOne(t, spanSpec{
		scope: "litellm", name: "litellm_request", kind: ptrace.SpanKindServer, dur: 1500 * time.Millisecond, status: ptrace.StatusCodeOk,
		attrs: map[string]any{
			"gen_ai.request.model": "claude-sonnet-4", "gen_ai.system": "anthropic", "gen_ai.request.stream": true,
			"langfuse.observation.completion_start_time": int64(end),
		},
	})
	assert.False(t, rec.HasTimeToFirstChunk || rec.HasTimeToFirstContent)
	assert.Empty(t, rec.MeasuredAt)
	assert.True(t, rec.Streamed)

	// A real completion start from LiteLLM is kept.
	rec = deriveOne(t, spanSpec{
		scope: "litellm", name: "litellm_request", kind: ptrace.SpanKindServer, dur: 1500 * time.Millisecond, status: ptrace.StatusCodeOk,
		attrs: map[string]any{
			"gen_ai.request.model": "claude-sonnet-4", "gen_ai.system": "anthropic", "gen_ai.request.stream": true,
			"langfuse.observation.completion_start_time": int64(ts(400 * time.Millisecond)),
		},
	})
	assert.InDelta(t, 0.4, rec.TimeToFirstChunk, 1e-9)

	// The same value through the Langfuse SDK's spans (LiteLLM's Langfuse
	// callback): at the end it is no TTFT either; earlier it is kept.
	for _, c := range []struct {
		at   time.Duration
		want bool
	}{{1500 * time.Millisecond, false}, {400 * time.Millisecond, true}} {
		rec = deriveOne(t, spanSpec{
			scope: "langfuse-sdk", name: "litellm-acompletion", kind: ptrace.SpanKindClient, dur: 1500 * time.Millisecond, status: ptrace.StatusCodeOk,
			attrs: map[string]any{
				"gen_ai.request.model": "claude-sonnet-4", "gen_ai.system": "anthropic", "gen_ai.request.stream": true,
				"langfuse.observation.completion_start_time": int64(ts(c.at)),
			},
		})
		assert.Equal(t, c.want, rec.HasTimeToFirstChunk, "completion start at %v", c.at)
	}
}

func TestFoldingNeverCrossesResources(t *testing.T) {
	// A sender cannot fold another service's call into its own by claiming
	// it as a parent.
	td := ptrace.NewTraces()
	for i, svc := range []string{"checkout", "attacker"} {
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", svc)
		span := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
		span.SetName("chat gpt-4o")
		span.SetKind(ptrace.SpanKindClient)
		span.SetTraceID(pcommon.TraceID{7})
		span.SetSpanID(pcommon.SpanID{byte(i + 1)})
		if i == 1 {
			span.SetParentSpanID(pcommon.SpanID{1})
		}
		span.SetStartTimestamp(ts(0))
		span.SetEndTimestamp(ts(time.Second))
		span.Attributes().PutStr("gen_ai.operation.name", "chat")
		span.Attributes().PutStr("gen_ai.request.model", "gpt-4o")
	}
	recs, st := deriveAll(t, DefaultConfig(), td)
	assert.Len(t, recs, 2, "one record per service")
	assert.Zero(t, st.Nested)

	// The same shape within one resource folds.
	td.ResourceSpans().At(1).Resource().Attributes().PutStr("service.name", "checkout")
	recs, _ = deriveAll(t, DefaultConfig(), td)
	assert.Len(t, recs, 1)
}

func TestBookkeepingSpansAreNoCalls(t *testing.T) {
	// A gateway's trace: SERVER root (provider and model of the attempt
	// that served) → plugin spans → key.selection (provider and model, no
	// call) → chat CLIENT. One record, on the root, from the gateway's view.
	recs, st := deriveAll(t, DefaultConfig(), traces(t,
		spanSpec{scope: "gw", id: 1, name: "/v1/chat/completions", kind: ptrace.SpanKindServer, dur: 600 * time.Millisecond, status: ptrace.StatusCodeOk,
			attrs: map[string]any{"gen_ai.request.model": "gpt-4o", "gen_ai.provider.name": "openai", "http.status_code": int64(200)}},
		spanSpec{scope: "gw", id: 2, parent: 1, name: "plugin.logging.prehook", kind: ptrace.SpanKindInternal, dur: time.Millisecond},
		spanSpec{scope: "gw", id: 3, parent: 2, name: "plugin.governance.prehook", kind: ptrace.SpanKindInternal, dur: time.Millisecond},
		spanSpec{scope: "gw", id: 4, parent: 3, name: "key.selection", kind: ptrace.SpanKindInternal, dur: 2 * time.Microsecond,
			attrs: map[string]any{"gen_ai.request.model": "gpt-4o", "gen_ai.provider.name": "openai"}},
		spanSpec{scope: "gw", id: 5, parent: 4, name: "chat gpt-4o", kind: ptrace.SpanKindClient, dur: 550 * time.Millisecond, status: ptrace.StatusCodeOk,
			attrs: map[string]any{"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o", "gen_ai.provider.name": "openai",
				"gen_ai.usage.input_tokens": int64(1234), "gen_ai.response.finish_reasons": []any{"stop"}}},
	))
	require.Len(t, recs, 1, "stats %+v", st)
	rec := recs[0]
	assert.InDelta(t, 0.6, rec.Duration, 1e-9, "the root's duration: the gateway's view of the request")
	assert.Equal(t, record.ObserverGateway, rec.Observer, "a SERVER span around a CLIENT call")
	assert.Equal(t, "<2k", rec.PromptBand, "tokens from the nested call")
	assert.Equal(t, int64(1), st.Nested)
	assert.Equal(t, int64(3), st.Skipped[ReasonNotGenAI], "plugins and key.selection")

	// key.selection alone (no call under it) is no call either.
	recs, _ = deriveAll(t, DefaultConfig(), traces(t,
		spanSpec{scope: "gw", id: 4, name: "key.selection", kind: ptrace.SpanKindInternal, dur: 2 * time.Microsecond,
			attrs: map[string]any{"gen_ai.request.model": "gpt-4o", "gen_ai.provider.name": "openai"}},
	))
	assert.Empty(t, recs)
}

func TestNestingThroughIntermediateSpans(t *testing.T) {
	// An instrumentation's span around the SDK's own span, with an HTTP
	// client span between them: one call.
	recs, st := deriveAll(t, DefaultConfig(), traces(t,
		spanSpec{scope: "outer", id: 1, name: "anthropic.chat", kind: ptrace.SpanKindClient, dur: 2 * time.Second, status: ptrace.StatusCodeOk,
			attrs: map[string]any{"gen_ai.operation.name": "chat", "gen_ai.request.model": "claude", "gen_ai.usage.input_tokens": int64(100)}},
		spanSpec{scope: "http", id: 2, parent: 1, name: "POST", kind: ptrace.SpanKindInternal, dur: 2 * time.Second},
		spanSpec{scope: "com.anthropic.sdk", id: 3, parent: 2, name: "messages.create", kind: ptrace.SpanKindClient, dur: 2 * time.Second,
			attrs: map[string]any{"gen_ai.operation.name": "chat", "gen_ai.request.model": "claude", "gen_ai.response.time_to_first_chunk": 0.7,
				"gen_ai.response.finish_reasons": []any{"end_turn"}}},
	))
	require.Len(t, recs, 1)
	assert.InDelta(t, 0.7, recs[0].TimeToFirstContent, 1e-9)
	assert.Equal(t, int64(1), st.Nested)
}

func TestGatewayAttemptsAndLastAttemptOutcome(t *testing.T) {
	// 429, a retry that got 429, then a fallback that answered: three
	// attempts, failed over, and the request completed.
	chat := func(id, parent byte, fallback, retries int64, status ptrace.StatusCode) spanSpec {
		return spanSpec{scope: "bifrost", id: id, parent: parent, name: "chat", kind: ptrace.SpanKindClient, dur: 100 * time.Millisecond, status: status,
			attrs: map[string]any{"gen_ai.operation.name": "chat", "gen_ai.request.model": "m", "gen_ai.provider.name": "openai",
				"gen_ai.fallback_index": fallback, "gen_ai.number_of_retries": retries, "request.type": "chat_completion_stream"}}
	}
	recs, _ := deriveAll(t, DefaultConfig(), traces(t,
		spanSpec{scope: "bifrost", id: 1, name: "/v1/chat/completions", kind: ptrace.SpanKindServer, dur: time.Second, status: ptrace.StatusCodeOk,
			attrs: map[string]any{"gen_ai.request.model": "m", "gen_ai.provider.name": "openai"}},
		chat(2, 1, 0, 0, ptrace.StatusCodeError),
		chat(3, 2, 0, 1, ptrace.StatusCodeError),
		chat(4, 3, 1, 0, ptrace.StatusCodeUnset),
	))
	require.Len(t, recs, 1)
	assert.Equal(t, int64(3), recs[0].Attempts)
	assert.True(t, recs[0].DidFailOver())
	assert.Equal(t, record.OutcomeComplete, recs[0].Outcome, "the last attempt and the root decide")
	assert.True(t, recs[0].Streamed, "request.type says it streamed")

	// A retried request that failed twice did not fail over.
	recs, _ = deriveAll(t, DefaultConfig(), traces(t,
		spanSpec{scope: "bifrost", id: 1, name: "/v1/chat/completions", kind: ptrace.SpanKindServer, dur: time.Second, status: ptrace.StatusCodeError,
			attrs: map[string]any{"gen_ai.request.model": "m", "gen_ai.provider.name": "openai"}},
		chat(2, 1, 0, 0, ptrace.StatusCodeError),
		chat(3, 2, 0, 1, ptrace.StatusCodeError),
	))
	require.Len(t, recs, 1)
	assert.Equal(t, int64(2), recs[0].Attempts)
	assert.False(t, recs[0].DidFailOver())
	assert.Equal(t, record.OutcomeError, recs[0].Outcome)
}

func TestBifrostIdleTimeoutText(t *testing.T) {
	// The stream idle timeout before any content is a first-token timeout.
	rec := deriveOne(t, spanSpec{scope: "bifrost", name: "chat scn-stall", kind: ptrace.SpanKindClient, dur: 5 * time.Second, status: ptrace.StatusCodeError, msg: "request failed",
		attrs: map[string]any{"gen_ai.operation.name": "chat", "gen_ai.request.model": "scn-stall", "request.type": "chat_completion_stream",
			"error": "Error reading stream: stream idle timeout: no data received within configured window"}})
	assert.Equal(t, record.OutcomeTimeoutFirstToken, rec.Outcome)
}

func TestConfiguredRowAddsProducer(t *testing.T) {
	// A producer and its row from config: one row, no code.
	cfg := DefaultConfig()
	cfg.Producers = []ProducerMatch{{Name: "acme", ScopePrefixes: []string{"acme.llm"}}}
	cfg.Rows = []Row{{Producer: "acme", Key: "acme.first_token_ms", Meaning: "first_content", Unit: "ms"}}
	recs, _ := deriveAll(t, cfg, traces(t, spanSpec{scope: "acme.llm.client", name: "chat", kind: ptrace.SpanKindClient, dur: time.Second,
		attrs: map[string]any{"gen_ai.operation.name": "chat", "acme.first_token_ms": 250}}))
	require.Len(t, recs, 1)
	assert.InDelta(t, 0.25, recs[0].TimeToFirstContent, 1e-9)
	// Another scope's same key means nothing.
	recs, _ = deriveAll(t, cfg, traces(t, spanSpec{scope: "other", name: "chat", kind: ptrace.SpanKindClient, dur: time.Second,
		attrs: map[string]any{"gen_ai.operation.name": "chat", "acme.first_token_ms": 250}}))
	require.Len(t, recs, 1)
	assert.False(t, recs[0].HasTimeToFirstContent)

	for _, bad := range []struct {
		cfg  func(*Config)
		want string
	}{
		{func(c *Config) { c.Rows = []Row{{Key: "k", Meaning: "fastest"}} }, `derive::rows[0]::meaning "fastest"`},
		{func(c *Config) { c.Rows = []Row{{Key: "k", Meaning: "first_content", Unit: "minutes"}} }, `derive::rows[0]::unit "minutes"`},
		{func(c *Config) { c.Rows = []Row{{Producer: "nobody", Key: "k", Meaning: "first_content"}} }, `producer "nobody" is not defined`},
		{func(c *Config) { c.Rows = []Row{{Key: "k", Meaning: "chunk_event"}} }, "is for events (event: true)"},
		{func(c *Config) { c.Producers = []ProducerMatch{{Name: "x"}} }, "matches nothing"},
		{func(c *Config) { c.SkipScopes = []string{"io.opentelemetry.http", ""} }, "derive::skip_scopes[1] is empty"},
		{func(c *Config) { c.SkipScopes = []string{"lite"} }, `derive::skip_scopes[0] "lite" would skip scope "litellm" of producer`},
		{func(c *Config) {
			c.Producers = []ProducerMatch{{Name: "mine", ScopeNames: []string{"acme.llm"}}}
			c.SkipScopes = []string{"acme."}
		}, `would skip scope "acme.llm" of producer mine`},
		{func(c *Config) { c.SkipScopes = make([]string, 257) }, "derive::skip_scopes: at most 256"},
		{func(c *Config) {
			c.ContentExactProducers = []Producer{{ScopePrefix: "acme.llm", Attribute: "acme.ttfc"}}
			c.SkipScopes = []string{"acme"}
		}, `would skip scope "acme.llm" of producer content_exact_producers[0]`},
	} {
		c := DefaultConfig()
		bad.cfg(&c)
		err := c.Check()
		require.Error(t, err)
		assert.Contains(t, err.Error(), bad.want)
	}
}

// Bad input: long chains, cycles and fan-outs through intermediate spans
// derive without panic, with each call span in exactly one record.
func TestHostileSpanTrees(t *testing.T) {
	for name, td := range map[string]ptrace.Traces{
		"10k plugin chain":      pluginChain(10_000),
		"cycle through plugins": pluginCycle(50),
		"1k fallbacks":          fallbackFan(1_000),
	} {
		t.Run(name, func(t *testing.T) {
			d, err := New(DefaultConfig())
			require.NoError(t, err)
			var recs int
			st := d.Traces(td, func(pcommon.Resource, ptrace.Span, *record.Record) { recs++ })
			assert.Equal(t, st.Records, int64(recs))
			assert.Positive(t, recs)
		})
	}
}

// pluginChain: a SERVER call span, n plugin spans each the child of the
// previous, and a CLIENT call at the bottom.
func pluginChain(n int) ptrace.Traces {
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	add := func(i int, parent int, name string, kind ptrace.SpanKind, call bool) {
		s := spans.AppendEmpty()
		s.SetName(name)
		s.SetKind(kind)
		s.SetTraceID(pcommon.TraceID{1})
		s.SetSpanID(spanID(i))
		if parent >= 0 {
			s.SetParentSpanID(spanID(parent))
		}
		s.SetStartTimestamp(ts(0))
		s.SetEndTimestamp(ts(time.Second))
		if call {
			s.Attributes().PutStr("gen_ai.operation.name", "chat")
			s.Attributes().PutStr("gen_ai.request.model", "m")
		}
	}
	add(0, -1, "/v1/chat/completions", ptrace.SpanKindServer, true)
	for i := 1; i <= n; i++ {
		add(i, i-1, fmt.Sprintf("plugin.%d", i), ptrace.SpanKindInternal, false)
	}
	add(n+1, n, "chat m", ptrace.SpanKindClient, true)
	return td
}

// pluginCycle: a call whose parent chain runs through n plugin spans that
// point back at each other.
func pluginCycle(n int) ptrace.Traces {
	td := pluginChain(n)
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	spans.At(1).SetParentSpanID(spanID(n)) // plugin 1 → plugin n → … → plugin 1
	return td
}

// fallbackFan: one SERVER call span with n fallback spans under it, each
// with a chat attempt under it.
func fallbackFan(n int) ptrace.Traces {
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
	ss.Scope().SetName("bifrost")
	spans := ss.Spans()
	root := spans.AppendEmpty()
	root.SetName("/v1/chat/completions")
	root.SetKind(ptrace.SpanKindServer)
	root.SetTraceID(pcommon.TraceID{1})
	root.SetSpanID(spanID(0))
	root.SetStartTimestamp(ts(0))
	root.SetEndTimestamp(ts(time.Second))
	root.Attributes().PutStr("gen_ai.request.model", "m")
	for i := 1; i <= n; i++ {
		fb := spans.AppendEmpty()
		fb.SetName(fmt.Sprintf("fallback.openai.m%d", i))
		fb.SetKind(ptrace.SpanKindInternal)
		fb.SetTraceID(pcommon.TraceID{1})
		fb.SetSpanID(spanID(2 * i))
		fb.SetParentSpanID(spanID(0))
		fb.Attributes().PutInt("fallback.index", int64(i))
		fb.Attributes().PutStr("gen_ai.request.model", "m")
		chat := spans.AppendEmpty()
		chat.SetName("chat m")
		chat.SetKind(ptrace.SpanKindClient)
		chat.SetTraceID(pcommon.TraceID{1})
		chat.SetSpanID(spanID(2*i + 1))
		chat.SetParentSpanID(spanID(2 * i))
		chat.SetStartTimestamp(ts(0))
		chat.SetEndTimestamp(ts(time.Second))
		chat.Attributes().PutStr("gen_ai.operation.name", "chat")
		chat.Attributes().PutInt("gen_ai.fallback_index", int64(i))
		chat.Attributes().PutInt("gen_ai.number_of_retries", 0)
	}
	return td
}

func spanID(i int) pcommon.SpanID {
	return pcommon.SpanID{byte(i >> 24), byte(i >> 16), byte(i >> 8), byte(i), 0xa}
}

// BenchmarkHostileSpanTrees: cost per span stays flat as the trees grow.
func BenchmarkHostileSpanTrees(b *testing.B) {
	d, err := New(DefaultConfig())
	require.NoError(b, err)
	for _, c := range []struct {
		name  string
		td    ptrace.Traces
		spans int
	}{
		{"chain=1k", pluginChain(1_000), 1_002},
		{"chain=10k", pluginChain(10_000), 10_002},
		{"cycle=1k", pluginCycle(1_000), 1_002},
		{"cycle=10k", pluginCycle(10_000), 10_002},
		{"fallbacks=100", fallbackFan(100), 201},
		{"fallbacks=1k", fallbackFan(1_000), 2_001},
		{"fallbacks=10k", fallbackFan(10_000), 20_001},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				d.Traces(c.td, nil)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(c.spans), "ns/span")
		})
	}
}

func TestBoundedChunkEventsWithSummary(t *testing.T) {
	// The stream instrumentation records events up to the first content,
	// then sums up the rest of the stream.
	rec := deriveOne(t, spanSpec{
		scope: "github.com/otelcol-ttft/otelcol-ttft/instrumentation/go/ttftstream", name: "chat gpt-4o", kind: ptrace.SpanKindClient,
		dur: 10 * time.Second, status: ptrace.StatusCodeOk,
		attrs: map[string]any{"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o", "gen_ai.response.finish_reasons": []any{"stop"},
			"ttft.chunk.content_count": int64(812), "ttft.chunk.max_gap": 2.5},
		events: []eventSpec{chunk(40*time.Millisecond, KindRole), chunk(300*time.Millisecond, KindContent)},
	})
	assert.InDelta(t, 0.3, rec.TimeToFirstContent, 1e-9)
	assert.Equal(t, int64(812), rec.ContentChunks)
	assert.InDelta(t, 2.5, rec.MaxChunkGap, 1e-9)

	// Without the first content from events, a gap means nothing; a gap
	// longer than the span is refused.
	rec = deriveOne(t, spanSpec{name: "chat", kind: ptrace.SpanKindClient, dur: time.Second,
		attrs:  map[string]any{"gen_ai.operation.name": "chat", "ttft.chunk.max_gap": 2.5},
		events: []eventSpec{chunk(300*time.Millisecond, KindContent)}})
	assert.False(t, rec.HasMaxChunkGap && rec.MaxChunkGap > 1)
	rec = deriveOne(t, spanSpec{name: "chat", kind: ptrace.SpanKindClient, dur: time.Second,
		attrs: map[string]any{"gen_ai.operation.name": "chat", "ttft_ms": 300, "ttft.chunk.max_gap": 0.5}})
	assert.False(t, rec.HasMaxChunkGap, "no chunk events: no gap")
}
