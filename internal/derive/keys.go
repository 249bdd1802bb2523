package derive // import "github.com/otelcol-ttft/otelcol-ttft/internal/derive"

// Span event names (docs/architecture.md §4).
const (
	// EventChunk is this project's per-chunk event contract: one event per
	// streamed delta, attribute AttrChunkKind says what it carried.
	EventChunk = "ttft.chunk"
	// EventHeaders marks the arrival of response headers (optional).
	EventHeaders = "ttft.headers"
	// AttrChunkKind is the attribute of EventChunk naming the chunk's kind.
	AttrChunkKind = "ttft.chunk.kind"
	// Summary span attributes of a stream instrumentation that records
	// chunk events only up to the first content (the contract's bounded
	// form): content chunks and the longest gap over the whole stream.
	attrChunkContentCount = "ttft.chunk.content_count"
	attrChunkMaxGap       = "ttft.chunk.max_gap"

	// EventCompletionChunk / EventLLMCompletionChunk: OpenLLMetry emits one
	// per streamed chunk, without payload → first_chunk.
	EventCompletionChunk    = "gen_ai.content.completion.chunk"
	EventLLMCompletionChunk = "llm.content.completion.chunk"
	// EventFirstToken is OpenInference's first streamed item → first_chunk.
	EventFirstToken = "First Token Stream Event"
	// EventVercelFirstChunk is the Vercel AI SDK's event; its time is not
	// trusted, its ai.response.msToFirstChunk attribute is.
	EventVercelFirstChunk = "ai.stream.firstChunk"
	// EventLangsmithNewToken is langsmith-go's event at the first content
	// delta → first_content.
	EventLangsmithNewToken = "new_token"
	// EventException is the semconv exception event.
	EventException = "exception"
)

// Chunk kinds of EventChunk. Content kinds stop the clock.
const (
	KindContent   = "content"
	KindToolCall  = "tool_call"
	KindReasoning = "reasoning"
	KindRole      = "role"
	KindKeepalive = "keepalive"
	KindLifecycle = "lifecycle"
	KindError     = "error"
)

// Attribute keys read from spans and log records.
const (
	// TTFT evidence.
	attrTimeToFirstChunk        = "gen_ai.response.time_to_first_chunk"         // s; content-exact only from known producers
	attrClientTimeToFirstChunk  = "gen_ai.client.operation.time_to_first_chunk" // s; Vercel AI SDK v7 @ai-sdk/otel
	attrOpenLITTimeToFirstToken = "gen_ai.server.time_to_first_token"           // s; OpenLIT
	attrOpenLITTTFT             = "gen_ai.server.ttft"                          // s; older OpenLIT
	attrVercelMsToFirstChunk    = "ai.response.msToFirstChunk"                  // ms; Vercel AI SDK ≤6
	attrVercelStreamMsToFirst   = "ai.stream.msToFirstChunk"                    // ms; Vercel AI SDK older
	attrLangfuseCompletionStart = "langfuse.observation.completion_start_time"  // absolute time
	attrTTFTMs                  = "ttft_ms"                                     // ms
	attrBifrostTimeToFirstToken = "gen_ai.response.time_to_first_token"         // ns; Bifrost
	attrVLLMTimeToFirstToken    = "gen_ai.latency.time_to_first_token"          // s; vLLM SERVER spans

	// Streaming flags.
	attrRequestStream      = "gen_ai.request.stream"
	attrRequestIsStream    = "gen_ai.request.is_stream" // OpenLIT
	attrLLMIsStreaming     = "llm.is_streaming"
	attrGenAIIsStreaming   = "gen_ai.is_streaming"
	attrLiteLLMStreaming   = "litellm.request.streaming"
	attrInvocationParams   = "llm.invocation_parameters"
	attrVercelOperationID  = "ai.operationId"
	attrOpenInferenceKind  = "openinference.span.kind"
	attrOperationName      = "gen_ai.operation.name"
	attrLLMRequestType     = "llm.request.type"    // OpenLLMetry
	attrTraceloopSpanKind  = "traceloop.span.kind" // OpenLLMetry
	attrLangfuseObservType = "langfuse.observation.type"

	// Tokens.
	attrInputTokens          = "gen_ai.usage.input_tokens"
	attrPromptTokens         = "gen_ai.usage.prompt_tokens"
	attrLLMPromptTokens      = "llm.token_count.prompt"
	attrVercelInputTokens    = "ai.usage.inputTokens"
	attrVercelPromptTokens   = "ai.usage.promptTokens"
	attrCacheRead            = "gen_ai.usage.cache_read.input_tokens"
	attrCacheReadLegacy      = "gen_ai.usage.cache_read_input_tokens"
	attrLLMCacheRead         = "llm.token_count.prompt_details.cache_read"
	attrVercelCachedInput    = "ai.usage.cachedInputTokens"
	attrCacheWrite           = "gen_ai.usage.cache_write.input_tokens"
	attrCacheCreation        = "gen_ai.usage.cache_creation.input_tokens"
	attrCacheCreationLegacy  = "gen_ai.usage.cache_creation_input_tokens"
	attrLLMCacheWrite        = "llm.token_count.prompt_details.cache_write"
	attrOutputTokens         = "gen_ai.usage.output_tokens"
	attrCompletionTokens     = "gen_ai.usage.completion_tokens"
	attrLLMCompletionTokens  = "llm.token_count.completion"
	attrVercelOutputTokens   = "ai.usage.outputTokens"
	attrVercelCompletionToks = "ai.usage.completionTokens"

	// Target.
	attrProviderName   = "gen_ai.provider.name"
	attrSystem         = "gen_ai.system"
	attrLLMProvider    = "llm.provider"
	attrLLMSystem      = "llm.system"
	attrVercelProvider = "ai.model.provider"
	attrRequestModel   = "gen_ai.request.model"
	attrResponseModel  = "gen_ai.response.model"
	attrLLMModelName   = "llm.model_name"
	attrVercelModelID  = "ai.model.id"

	// Outcome.
	attrErrorType         = "error.type"
	attrGenAIErrorType    = "gen_ai.error.type" // Bifrost
	attrHTTPStatus        = "http.response.status_code"
	attrHTTPStatusLegacy  = "http.status_code"
	attrFinishReasons     = "gen_ai.response.finish_reasons"
	attrFinishReason      = "gen_ai.response.finish_reason"
	attrLLMFinishReason   = "llm.finish_reason"
	attrVercelFinish      = "ai.response.finishReason"
	attrAnthropicStop     = "anthropic.message.stop_reason"
	attrExceptionType     = "exception.type"
	attrExceptionMessage  = "exception.message"
	attrTTFTAttempts      = "ttft.attempts"
	attrBifrostFallback   = "gen_ai.fallback_index"
	attrBifrostRetries    = "gen_ai.number_of_retries"
	attrTTFTTimeToHeaders = "ttft.time_to_headers"

	// Bifrost.
	attrRequestType         = "request.type" // chat_completion_stream, responses_stream
	attrBifrostError        = "error"        // free text; names the stream idle timeout
	attrBifrostStatusCode   = "status_code"
	attrBifrostFallbackTwin = "bifrost.fallback_index"
	attrBifrostFallbackSpan = "fallback.index"
	attrBifrostRetriesTwin  = "bifrost.retries"
)

// Evidence priority within a class: lower wins (docs/architecture.md §4 order).
const (
	prioChunkEvents uint8 = iota
	prioProducerExact
	prioSemconvChunk
	prioClientChunk
	prioOpenLIT
	prioOpenLITOld
	prioVercelAttr
	prioVercelStreamAttr
	prioVercelEvent
	prioCompletionChunkEvent
	prioFirstTokenEvent
	prioLangfuse
	prioTTFTMs
	prioBifrostNs
	// prioDemotedServer: a server's first-token key (vLLM's) on a span that
	// is not a server's, read as an unknown producer's first chunk: below
	// every other first-chunk evidence, the stream instrumentation's
	// events first of all.
	prioDemotedServer
)
