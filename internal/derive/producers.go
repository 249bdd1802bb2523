package derive // import "github.com/otelcol-ttft/otelcol-ttft/internal/derive"

import (
	"fmt"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// The producer table (docs/architecture.md, "Producer table"). What an
// attribute or event means depends on who wrote it: Bifrost's
// gen_ai.response.time_to_first_token is not a TTFT, openai-go's
// compile-time instrumentation writes the same key in microseconds, and
// the Anthropic SDK's gen_ai.response.time_to_first_chunk stops at the first
// content. Each Row says which producer it applies to, which key, what the
// value means, its unit and its priority; rows for a named producer win
// over the rows that apply to anyone. Adding a producer is one row (here
// or in derive::producers) and one test.

// Meaning is what a row's value says about the call.
type Meaning uint8

const (
	meaningNone Meaning = iota
	// MeaningFirstContent: seconds (in the row's unit) from the span start
	// to the first content, reasoning or tool-call delta.
	MeaningFirstContent
	// MeaningFirstChunk: to the first streamed item of any kind.
	MeaningFirstChunk
	// MeaningServerFirstToken: a server's time to its first generated
	// token, its clock started at arrival.
	MeaningServerFirstToken
	// MeaningFirstChunkAt: the absolute time of the first chunk.
	MeaningFirstChunkAt
	// MeaningHeaders: to the response headers.
	MeaningHeaders
	// MeaningNotTTFT: a value named like a TTFT that is not one; never
	// used, counted as untrusted_producer.
	MeaningNotTTFT
	// MeaningStream: a streaming flag (bool, "true"/"false", 0/1).
	MeaningStream
	// MeaningStreamParams: JSON invocation parameters holding "stream".
	MeaningStreamParams
	// MeaningStreamRequestType: a request type whose "_stream" suffix
	// marks a streamed call.
	MeaningStreamRequestType
	// MeaningOperation: a GenAI operation name; chat-like ones are calls.
	MeaningOperation
	// MeaningOpenInferenceKind: LLM is a call, anything else is not.
	MeaningOpenInferenceKind
	// MeaningContainerKind: the span groups calls (workflow, agent, tool).
	MeaningContainerKind
	// MeaningObservationType: "generation" is a call.
	MeaningObservationType
	// MeaningVercelOperation: the Vercel AI SDK's ai.operationId.
	MeaningVercelOperation
	// MeaningPromptTokens: input tokens; Rank orders the keys.
	MeaningPromptTokens
	// MeaningInputTokens: input tokens that may exclude cached input
	// (Anthropic-origin): prompt = input + cache read + cache write.
	MeaningInputTokens
	MeaningCacheReadTokens
	MeaningCacheWriteTokens
	MeaningOutputTokens
	// MeaningProvider / MeaningModel: the target; Rank orders the keys.
	MeaningProvider
	MeaningModel
	MeaningErrorType
	// MeaningErrorText: a free-text error that may name a timeout.
	MeaningErrorText
	MeaningHTTPStatus
	MeaningFinishReason
	MeaningAttempts
	// MeaningFallbackIndex: 0 for the primary target, n for the n-th
	// fallback tried.
	MeaningFallbackIndex
	// MeaningRetries: retries of one target before this attempt.
	MeaningRetries
	// MeaningContentChunks / MeaningMaxChunkGap: a stream instrumentation's
	// summary over every chunk when it records events only up to the first
	// content (instrumentation/), counted with the same rules as the events.
	MeaningContentChunks
	MeaningMaxChunkGap

	// Event meanings (rows with Event set).

	// MeaningChunkEvent: this project's ttft.chunk contract event.
	MeaningChunkEvent
	// MeaningGenericChunkEvent: one event per chunk, without its kind.
	MeaningGenericChunkEvent
	// MeaningFirstChunkEvent: an event at the first streamed item.
	MeaningFirstChunkEvent
	// MeaningFirstContentEvent: an event at the first content delta.
	MeaningFirstContentEvent
	// MeaningFirstChunkEventAttr: an event whose attribute (Key of the row
	// named in EventAttribute) holds the TTFT, its own time untrusted.
	MeaningFirstChunkEventAttr
	MeaningHeadersEvent
	MeaningExceptionEvent
	// MeaningIgnoredEvent: an event this producer writes at the wrong time.
	MeaningIgnoredEvent

	numMeanings
)

var meaningNames = [numMeanings]string{
	"", "first_content", "first_chunk", "server_first_token", "first_chunk_at", "headers", "not_ttft",
	"stream", "stream_params", "stream_request_type", "operation", "openinference_kind", "container_kind",
	"observation_type", "vercel_operation", "prompt_tokens", "input_tokens", "cache_read_tokens",
	"cache_write_tokens", "output_tokens", "provider", "model", "error_type", "error_text", "http_status",
	"finish_reason", "attempts", "fallback_index", "retries", "content_chunks", "max_chunk_gap",
	"chunk_event", "generic_chunk_event", "first_chunk_event", "first_content_event",
	"first_chunk_event_attribute", "headers_event", "exception_event", "ignored_event",
}

func (m Meaning) String() string {
	if m < numMeanings {
		return meaningNames[m]
	}
	return "unknown"
}

func parseMeaning(s string) (Meaning, bool) {
	for i, n := range meaningNames {
		if n != "" && n == s {
			return Meaning(i), true
		}
	}
	return meaningNone, false
}

// callSignal reports whether a value of this meaning can make a span a
// call on its own (docs/architecture.md §4, "Which spans are calls").
func (m Meaning) callSignal() bool {
	switch m {
	case MeaningFirstContent, MeaningFirstChunk, MeaningServerFirstToken, MeaningFirstChunkAt, MeaningNotTTFT,
		MeaningOperation, MeaningOpenInferenceKind, MeaningObservationType, MeaningVercelOperation,
		MeaningProvider, MeaningModel,
		MeaningChunkEvent, MeaningGenericChunkEvent, MeaningFirstChunkEvent, MeaningFirstContentEvent,
		MeaningFirstChunkEventAttr, MeaningIgnoredEvent:
		return true
	}
	return false
}

// bigrams is a set of two-byte key prefixes.
type bigrams [1 << 16 / 64]uint64

func (b *bigrams) add(k string) {
	i := uint(k[0])<<8 | uint(k[1])
	b[i>>6] |= 1 << (i & 63)
}

func (b *bigrams) has(k string) bool {
	if len(k) < 2 {
		return false
	}
	i := uint(k[0])<<8 | uint(k[1])
	return b[i>>6]&(1<<(i&63)) != 0
}

// ProducerMatch identifies a producer from what every span carries: its
// instrumentation scope and its resource.
type ProducerMatch struct {
	// Name is how rows refer to the producer.
	Name string `mapstructure:"name"`
	// ScopePrefixes match the instrumentation scope name by prefix.
	ScopePrefixes []string `mapstructure:"scope_prefixes"`
	// ScopeNames match the instrumentation scope name exactly.
	ScopeNames []string `mapstructure:"scope_names"`
	// ServiceNames match the resource's service.name or telemetry.sdk.name,
	// ASCII case-insensitively, by substring.
	ServiceNames []string `mapstructure:"service_names"`
	// ScopeContains match the scope name, ASCII case-insensitively, by substring.
	ScopeContains []string `mapstructure:"scope_contains"`
	// Gateway: the producer is a gateway (its clock is ttft.observer=gateway).
	Gateway bool `mapstructure:"gateway"`
	// CacheExcluded: its input-token count excludes cached input.
	CacheExcluded bool `mapstructure:"cache_excluded"`
	// DurationIsNoTTFT: it writes the end time as the first-token time when
	// no chunk came, streamed or not, so a TTFT equal to the duration is none.
	DurationIsNoTTFT bool `mapstructure:"duration_is_no_ttft"`
}

// Row is one line of the producer table.
type Row struct {
	// Producer names a ProducerMatch; empty applies to every producer.
	Producer string `mapstructure:"producer"`
	// Key is the attribute key, or the event name when Event is set.
	Key string `mapstructure:"key"`
	// Event: Key names a span event, not an attribute.
	Event bool `mapstructure:"event"`
	// Meaning of the value (see the Meaning constants' String names).
	Meaning string `mapstructure:"meaning"`
	// Unit of a duration: s (default), ms, us, ns, or ns_or_ms (ns, read as
	// ms when too small to be ns of a round trip).
	Unit string `mapstructure:"unit"`
	// Rank orders rows of one meaning: lower wins.
	Rank uint8 `mapstructure:"rank"`
	// Source says where the row's knowledge comes from (documentation).
	Source string `mapstructure:"source"`

	meaning Meaning
	unit    unit
	prod    int // index into the Deriver's producers; -1 for anyone
	// recordKey: Key is a ttft.* key the record writes (ttft.attempts,
	// ttft.time_to_headers): present on a span, it is cleared before the
	// stamp, so a value the derivation refused cannot survive beside it.
	recordKey bool
}

// Built-in producers.
const (
	producerAnthropicSDK = "anthropic-sdk"
	producerVercelV7     = "vercel-ai-v7"
	producerBifrost      = "bifrost"
	producerLiteLLM      = "litellm"
	producerEnvoy        = "envoy-ai-gateway"
	producerOpenAIGoOtel = "openai-go-otelc"
)

// DefaultProducers are the producers the built-in rows name.
func DefaultProducers() []ProducerMatch {
	return []ProducerMatch{
		{Name: producerAnthropicSDK, ScopePrefixes: []string{"com.anthropic.sdk"}, CacheExcluded: true},
		{Name: producerVercelV7, ScopeNames: []string{"gen_ai"}, ScopePrefixes: []string{"@ai-sdk/otel"}},
		{Name: producerBifrost, ScopePrefixes: []string{"bifrost"}, ServiceNames: []string{"bifrost"}, Gateway: true},
		{Name: producerLiteLLM, ScopePrefixes: []string{"litellm"}, ServiceNames: []string{"litellm"}, Gateway: true, DurationIsNoTTFT: true},
		{Name: producerEnvoy, ServiceNames: []string{"envoy", "ai-gateway", "aigw"}, ScopeContains: []string{"envoy", "ai-gateway", "aigw"}},
		{Name: producerOpenAIGoOtel, ScopePrefixes: []string{"github.com/open-telemetry/opentelemetry-go-compile-instrumentation/instrumentation/github.com/openai/openai-go"}},
	}
}

// DefaultRows is the built-in producer table. The processor README's
// producer table lists the same rows (a test reads both).
func DefaultRows() []Row {
	r := func(producer, key, meaning, unit string, rank uint8, source string) Row {
		return Row{Producer: producer, Key: key, Meaning: meaning, Unit: unit, Rank: rank, Source: source}
	}
	ev := func(producer, key, meaning string, rank uint8, source string) Row {
		return Row{Producer: producer, Key: key, Event: true, Meaning: meaning, Rank: rank, Source: source}
	}
	return []Row{
		// TTFT evidence. Ranks follow the evidence order of
		// docs/architecture.md: events that say what a chunk carried, then
		// content-exact producer attributes, then first-chunk attributes.
		ev("", EventChunk, "chunk_event", prioChunkEvents, "this project's contract"),
		ev("", EventLangsmithNewToken, "first_content_event", prioProducerExact, "langsmith-go: event at the first content delta"),
		r(producerAnthropicSDK, attrTimeToFirstChunk, "first_content", "s", prioProducerExact, "Anthropic SDK spans: timed to the first content_block_delta"),
		r(producerVercelV7, attrClientTimeToFirstChunk, "first_content", "s", prioProducerExact, "Vercel AI SDK 7 (@ai-sdk/otel, scope gen_ai): counts text, reasoning and tool deltas only"),
		r("", attrTimeToFirstChunk, "first_chunk", "s", prioSemconvChunk, "GenAI semconv; official Python instrumentations, LiteLLM"),
		r("", attrClientTimeToFirstChunk, "first_chunk", "s", prioClientChunk, "GenAI semconv client attribute"),
		r("", attrOpenLITTimeToFirstToken, "first_chunk", "s", prioOpenLIT, "OpenLIT"),
		r("", attrOpenLITTTFT, "first_chunk", "s", prioOpenLITOld, "older OpenLIT"),
		r("", attrVercelMsToFirstChunk, "first_chunk", "ms", prioVercelAttr, "Vercel AI SDK <= 6"),
		r("", attrVercelStreamMsToFirst, "first_chunk", "ms", prioVercelStreamAttr, "older Vercel AI SDK"),
		ev("", EventVercelFirstChunk, "first_chunk_event_attribute", prioVercelEvent, "Vercel AI SDK: trust the attribute, not the event time"),
		ev("", EventCompletionChunk, "generic_chunk_event", prioCompletionChunkEvent, "OpenLLMetry: one event per chunk, no payload"),
		ev("", EventLLMCompletionChunk, "generic_chunk_event", prioCompletionChunkEvent, "OpenLLMetry (older name)"),
		ev("", EventFirstToken, "first_chunk_event", prioFirstTokenEvent, "OpenInference"),
		ev(producerEnvoy, EventFirstToken, "ignored_event", 0, "Envoy AI Gateway writes it at stream end"),
		r("", attrLangfuseCompletionStart, "first_chunk_at", "", prioLangfuse, "Langfuse (LiteLLM's completionStartTime)"),
		r("", attrTTFTMs, "first_chunk", "ms", prioTTFTMs, "gateway exports"),
		r("", attrBifrostTimeToFirstToken, "first_chunk", "ns_or_ms", prioBifrostNs, "unknown producers of this key: nanoseconds"),
		r(producerOpenAIGoOtel, attrBifrostTimeToFirstToken, "first_chunk", "us", prioBifrostNs, "openai-go compile-time instrumentation: int64 microseconds at the first data: line"),
		r(producerBifrost, attrBifrostTimeToFirstToken, "not_ttft", "", 0, "Bifrost v1.5.11: the gap between the first and second forwarded chunk"),
		r(producerBifrost, attrTimeToFirstChunk, "not_ttft", "", 0, "Bifrost v1.5.11: the same gap, in seconds"),
		r("", attrVLLMTimeToFirstToken, "server_first_token", "s", 0, "vLLM SERVER spans"),
		r("", attrTTFTTimeToHeaders, "headers", "s", 0, "this project's record"),
		ev("", EventHeaders, "headers_event", 0, "this project's contract"),
		r("", attrChunkContentCount, "content_chunks", "", 0, "this project's stream instrumentation: content chunks over the whole stream"),
		r("", attrChunkMaxGap, "max_chunk_gap", "s", 0, "this project's stream instrumentation: longest gap after first content over the whole stream"),
		ev("", EventException, "exception_event", 0, "semconv exception event"),

		// Streaming.
		r("", attrRequestStream, "stream", "", 0, "GenAI semconv"),
		r("", attrRequestIsStream, "stream", "", 0, "OpenLIT, openai-go compile-time instrumentation"),
		r("", attrLLMIsStreaming, "stream", "", 0, "OpenLLMetry"),
		r("", attrGenAIIsStreaming, "stream", "", 0, "older instrumentations"),
		r("", attrLiteLLMStreaming, "stream", "", 0, "LiteLLM"),
		r("", attrInvocationParams, "stream_params", "", 0, "OpenInference"),
		r(producerBifrost, attrRequestType, "stream_request_type", "", 0, "Bifrost: chat_completion_stream, responses_stream"),

		// Which spans are calls.
		r("", attrVercelOperationID, "vercel_operation", "", 0, "Vercel AI SDK <= 6"),
		r("", attrOperationName, "operation", "", 0, "GenAI semconv"),
		r("", attrLLMRequestType, "operation", "", 0, "OpenLLMetry"),
		r("", attrOpenInferenceKind, "openinference_kind", "", 0, "OpenInference"),
		r("", attrTraceloopSpanKind, "container_kind", "", 0, "OpenLLMetry workflow/task/agent/tool spans"),
		r("", attrLangfuseObservType, "observation_type", "", 0, "Langfuse"),

		// Tokens.
		r("", attrInputTokens, "input_tokens", "", 0, "GenAI semconv"),
		r("", attrPromptTokens, "prompt_tokens", "", 1, "older GenAI semconv"),
		r("", attrLLMPromptTokens, "prompt_tokens", "", 2, "OpenInference"),
		r("", attrVercelInputTokens, "prompt_tokens", "", 3, "Vercel AI SDK"),
		r("", attrVercelPromptTokens, "prompt_tokens", "", 4, "older Vercel AI SDK"),
		r("", attrCacheRead, "cache_read_tokens", "", 0, "GenAI semconv"),
		r("", attrCacheReadLegacy, "cache_read_tokens", "", 0, "older GenAI semconv"),
		r("", attrLLMCacheRead, "cache_read_tokens", "", 0, "OpenInference"),
		r("", attrVercelCachedInput, "cache_read_tokens", "", 0, "Vercel AI SDK"),
		r("", attrCacheWrite, "cache_write_tokens", "", 0, "GenAI semconv"),
		r("", attrCacheCreation, "cache_write_tokens", "", 0, "GenAI semconv"),
		r("", attrCacheCreationLegacy, "cache_write_tokens", "", 0, "older GenAI semconv"),
		r("", attrLLMCacheWrite, "cache_write_tokens", "", 0, "OpenInference"),
		r("", attrOutputTokens, "output_tokens", "", 0, "GenAI semconv"),
		r("", attrCompletionTokens, "output_tokens", "", 0, "older GenAI semconv"),
		r("", attrLLMCompletionTokens, "output_tokens", "", 0, "OpenInference"),
		r("", attrVercelOutputTokens, "output_tokens", "", 0, "Vercel AI SDK"),
		r("", attrVercelCompletionToks, "output_tokens", "", 0, "older Vercel AI SDK"),

		// Target.
		r("", attrProviderName, "provider", "", 0, "GenAI semconv"),
		r("", attrSystem, "provider", "", 1, "older GenAI semconv"),
		r("", attrLLMProvider, "provider", "", 2, "OpenInference"),
		r("", attrLLMSystem, "provider", "", 3, "OpenInference"),
		r("", attrVercelProvider, "provider", "", 4, "Vercel AI SDK"),
		r("", attrRequestModel, "model", "", 0, "GenAI semconv"),
		r("", attrResponseModel, "model", "", 1, "GenAI semconv"),
		r("", attrLLMModelName, "model", "", 2, "OpenInference"),
		r("", attrVercelModelID, "model", "", 3, "Vercel AI SDK"),

		// Outcome and attempts.
		r("", attrErrorType, "error_type", "", 0, "semconv"),
		r("", attrGenAIErrorType, "error_type", "", 0, "Bifrost"),
		r(producerBifrost, attrBifrostError, "error_text", "", 0, "Bifrost: the only signal of a stream idle timeout"),
		r("", attrHTTPStatus, "http_status", "", 0, "semconv"),
		r("", attrHTTPStatusLegacy, "http_status", "", 0, "older semconv"),
		r(producerBifrost, attrBifrostStatusCode, "http_status", "", 0, "Bifrost failed attempts"),
		r("", attrFinishReasons, "finish_reason", "", 0, "GenAI semconv"),
		r("", attrFinishReason, "finish_reason", "", 0, "older instrumentations"),
		r("", attrLLMFinishReason, "finish_reason", "", 0, "OpenInference"),
		r("", attrVercelFinish, "finish_reason", "", 0, "Vercel AI SDK"),
		r("", attrAnthropicStop, "finish_reason", "", 0, "Anthropic instrumentations"),
		r("", attrTTFTAttempts, "attempts", "", 0, "this project's record"),
		r("", attrBifrostFallback, "fallback_index", "", 0, "Bifrost"),
		r(producerBifrost, attrBifrostFallbackTwin, "fallback_index", "", 0, "Bifrost"),
		r(producerBifrost, attrBifrostFallbackSpan, "fallback_index", "", 0, "Bifrost fallback.* spans"),
		r("", attrBifrostRetries, "retries", "", 0, "Bifrost"),
		r(producerBifrost, attrBifrostRetriesTwin, "retries", "", 0, "Bifrost"),
	}
}

// rowTable is the resolved table: the rows for anyone by key, and the rows
// of named producers, looked up per scope.
type rowTable struct {
	// callKeys holds the first two bytes of every key that can make a span
	// a call (and of ttft.*, for records read back): a span with none of
	// them is no call, decided without looking any key up.
	callKeys   bigrams
	callEvents bigrams
	// noPrefilter: some call key is shorter than two bytes.
	noPrefilter bool

	producers []ProducerMatch
	attrs     keyTable // producer-neutral attribute rows
	events    keyTable // producer-neutral event rows
	named     []Row    // rows of named producers
}

// newRowTable resolves producers and rows (defaults first, then the
// configured ones, which win on the same producer and key); rows from
// configured on are derive::rows, so errors name them by their index there.
func newRowTable(prods []ProducerMatch, rows []Row, configured int) (*rowTable, error) {
	t := &rowTable{}
	attrs, events := map[string]*Row{}, map[string]*Row{}
	byName := map[string]int{}
	for _, p := range prods {
		if i, ok := byName[p.Name]; ok {
			t.producers[i] = p // a configured producer replaces the default
			continue
		}
		byName[p.Name] = len(t.producers)
		t.producers = append(t.producers, p)
	}
	if len(t.producers) > 64 {
		return nil, fmt.Errorf("derive::producers: at most 64 producers, got %d", len(t.producers))
	}
	for n := range rows {
		row := rows[n]
		i := n - configured // the index in derive::rows
		m, ok := parseMeaning(row.Meaning)
		if !ok {
			return nil, fmt.Errorf("derive::rows[%d]::meaning %q: use one of %s", i, row.Meaning, strings.Join(meaningNames[1:], ", "))
		}
		if row.Event != (m >= MeaningChunkEvent) {
			return nil, fmt.Errorf("derive::rows[%d]: meaning %q is for %s", i, row.Meaning, map[bool]string{true: "events (event: true)", false: "attributes (event: false)"}[m >= MeaningChunkEvent])
		}
		u, ok := parseUnit(row.Unit)
		if !ok {
			return nil, fmt.Errorf("derive::rows[%d]::unit %q: use s, ms, us, ns or ns_or_ms", i, row.Unit)
		}
		if row.Key == "" {
			return nil, fmt.Errorf("derive::rows[%d]::key is required", i)
		}
		row.meaning, row.unit, row.prod = m, u, -1
		row.recordKey = !row.Event && record.IsRecordKey(row.Key)
		if m.callSignal() {
			if len(row.Key) < 2 {
				t.noPrefilter = true
			} else if row.Event {
				t.callEvents.add(row.Key)
			} else {
				t.callKeys.add(row.Key)
			}
		}
		if row.Producer != "" {
			p, ok := byName[row.Producer]
			if !ok {
				return nil, fmt.Errorf("derive::rows[%d]::producer %q is not defined: add it under derive::producers", i, row.Producer)
			}
			row.prod = p
			t.named = append(t.named, row)
			continue
		}
		r := row
		if row.Event {
			events[row.Key] = &r
		} else {
			attrs[row.Key] = &r
		}
	}
	t.attrs, t.events = newKeyTable(attrs), newKeyTable(events)
	t.callKeys.add("ttft.") // a record stamped upstream, or a nested marker
	return t, nil
}

// producerSet is a bit per producer that matched a scope and resource.
type producerSet uint64

func (s producerSet) has(i int) bool { return i >= 0 && s&(1<<uint(i)) != 0 }

// match returns the producers a scope name and resource names match.
func (t *rowTable) match(scope string, names *resNames) producerSet {
	var s producerSet
	for i := range t.producers {
		p := &t.producers[i]
		if p.matches(scope, names) {
			s |= 1 << uint(i)
		}
	}
	return s
}

func (p *ProducerMatch) matches(scope string, names *resNames) bool {
	for _, n := range p.ScopeNames {
		if scope == n {
			return true
		}
	}
	for _, pre := range p.ScopePrefixes {
		if hasPrefixFold(scope, pre) {
			return true
		}
	}
	for _, n := range p.ScopeContains {
		if containsFold(scope, n) {
			return true
		}
	}
	for _, n := range p.ServiceNames {
		for _, rn := range names {
			if rn != "" && containsFold(rn, n) {
				return true
			}
		}
	}
	return false
}

// resNames is what producers are recognised by on a resource: its
// service.name and telemetry.sdk.name.
type resNames [2]string

// resourceNames reads them. Callers work it out once per resource: a long
// service.name scanned once per scope would cost its length times the scope
// count.
func resourceNames(res pcommon.Resource) resNames {
	var names resNames
	for i, k := range [...]string{"service.name", "telemetry.sdk.name"} {
		if v, ok := res.Attributes().Get(k); ok && v.Type() == pcommon.ValueTypeStr {
			s := v.Str()
			if len(s) > 256 {
				s = s[:256] // producer names are short; a huge value is no producer
			}
			names[i] = s
		}
	}
	return names
}

// keyTable finds the row of an attribute key or event name: chained
// buckets on the key's length and two of its bytes, so a miss (most of a
// span's attributes) costs a few instructions and a hit one string
// compare, well below hashing the whole key for a map. Attributes are
// looked up once each on every span of a traces pipeline.
type keyTable struct {
	heads [keyBuckets]int16 // first key of each bucket, -1: none
	next  []int16
	keys  []string
	rows  []*Row
}

const keyBuckets = 2048

func keyBucket(k string) uint {
	n := uint(len(k))
	return (n*37 + uint(k[n-1])*5 + uint(k[n/2])) & (keyBuckets - 1)
}

func newKeyTable(rows map[string]*Row) keyTable {
	var t keyTable
	for i := range t.heads {
		t.heads[i] = -1
	}
	for k, r := range rows {
		if k == "" {
			continue
		}
		b := keyBucket(k)
		t.next = append(t.next, t.heads[b])
		t.heads[b] = int16(len(t.keys))
		t.keys = append(t.keys, k)
		t.rows = append(t.rows, r)
	}
	return t
}

func (t *keyTable) get(k string) *Row {
	if len(k) == 0 {
		return nil
	}
	for i := t.heads[keyBucket(k)]; i >= 0; i = t.next[i] {
		if t.keys[i] == k {
			return t.rows[i]
		}
	}
	return nil
}
