package derive // import "github.com/otelcol-ttft/otelcol-ttft/internal/derive"

import (
	"math"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// tri is a three-valued flag.
type tri uint8

const (
	triUnknown tri = iota
	triTrue
	triFalse
)

// timing is one TTFT candidate in seconds from the start of the span that
// measured it.
type timing struct {
	v    float64
	src  string
	prio uint8
	ok   bool
}

// offer keeps the candidate of lowest priority.
func (t *timing) offer(v float64, src string, prio uint8) {
	if !t.ok || prio < t.prio {
		*t = timing{v: v, src: src, prio: prio, ok: true}
	}
}

type timeoutKind uint8

const (
	timeoutNone timeoutKind = iota
	timeoutGeneric
	timeoutFirstToken
	timeoutIdle
	timeoutDeadline
)

type vercelOp uint8

const (
	vercelNone vercelOp = iota
	vercelOuter
	vercelInner // doStream / doGenerate: one provider request (attempt or step)
)

// evidence is everything one span or log record says about one call. It
// holds no maps or slices so it can live in a reused scratch slice.
type evidence struct {
	genai   bool // carries a GenAI signal
	notCall bool // a GenAI span that is not an LLM call (agent, tool, embeddings)

	start, end  uint64
	timingValid bool
	duration    float64
	server      bool // SERVER span: the clock started at arrival

	stream tri

	content timing // first_content evidence
	chunk   timing // first_chunk evidence
	srvTTFT timing // server-side time to first token
	headers timing

	// From ttft.chunk events.
	maxGap        float64
	hasGap        bool
	contentChunks int64
	chunkEvents   int64
	// Generic chunk events (no kind): earliest and gap bookkeeping.
	genericChunks int64

	prompt        [5]int64 // by key priority; -1 = absent
	promptAdjust  bool     // gen_ai.usage.input_tokens was the source (Anthropic may exclude cache)
	cacheRead     int64
	cacheWrite    int64
	output        int64
	hasCacheRead  bool
	hasCacheWrite bool
	hasOutput     bool
	anthropic     bool

	provider [5]string
	model    [4]string
	route    string

	status        ptrace.StatusCode
	statusMsg     string
	errorType     string
	excType       string
	excMsg        string
	httpStatus    int64
	hasFinish     bool
	finishError   bool
	finishAbandon bool
	timeout       timeoutKind

	attempts      int64
	hasAttempts   bool
	fallbackIndex int64
	retries       int64
	hasBifrost    bool
	gateway       bool // produced by a gateway (Bifrost, LiteLLM proxy)

	vercel vercelOp

	rejected      int64 // values refused
	eventsIgnored int64
	invalidTTFT   bool // at least one TTFT value was refused
	// durationAsTTFT: a "TTFT" equal to the duration on a call not known to
	// stream was refused.
	durationAsTTFT bool
}

func (e *evidence) reset() {
	*e = evidence{}
	for i := range e.prompt {
		e.prompt[i] = -1
	}
}

// scopeInfo is what the instrumentation scope tells about its spans.
type scopeInfo struct {
	exact     [maxScopeProducers]producer
	nExact    int
	envoy     bool // Envoy AI Gateway writes First Token Stream Event at stream end
	gateway   bool
	anthropic bool
	aisdk     bool
}

// envoyResource reports whether a resource is Envoy AI Gateway, from its
// service.name. Callers work it out once per resource: scanning the name
// once per scope would cost the name's length times the scope count.
func envoyResource(res pcommon.Resource) bool {
	v, ok := res.Attributes().Get("service.name")
	return ok && v.Type() == pcommon.ValueTypeStr && envoyName(v.Str())
}

func envoyName(s string) bool {
	return containsFold(s, "envoy") || containsFold(s, "ai-gateway") || containsFold(s, "aigw")
}

// scopeInfo reads a scope's name; envoyRes is envoyResource of its resource.
func (d *Deriver) scopeInfo(scope pcommon.InstrumentationScope, envoyRes bool) scopeInfo {
	var si scopeInfo
	name := scope.Name()
	for _, p := range d.producers {
		if si.nExact < maxScopeProducers && strings.HasPrefix(name, p.scopePrefix) {
			si.exact[si.nExact] = p
			si.nExact++
		}
	}
	si.anthropic = strings.HasPrefix(name, "com.anthropic.sdk")
	si.envoy = envoyRes || envoyName(name)
	si.gateway = hasPrefixFold(name, "bifrost") || hasPrefixFold(name, "litellm")
	si.aisdk = name == "ai" || strings.HasPrefix(name, "@ai-sdk/")
	return si
}

// exactUnit reports whether key is a content-exact attribute for the scope.
func (si *scopeInfo) exactUnit(key string) (unit, bool) {
	for i := 0; i < si.nExact; i++ {
		if si.exact[i].attribute == key {
			return si.exact[i].unit, true
		}
	}
	return 0, false
}

// ttftValue validates a relative TTFT in seconds.
func (d *Deriver) ttftValue(e *evidence, f float64) (float64, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || f > d.cfg.MaxTTFTSeconds {
		e.rejectTiming()
		return 0, false
	}
	return f, true
}

// scanAttrs reads every attribute once. Shared by spans and log records.
func (d *Deriver) scanAttrs(e *evidence, si *scopeInfo, attrs pcommon.Map) {
	for k, v := range attrs.All() {
		if k == d.cfg.RouteAttribute && d.cfg.RouteAttribute != "" {
			if v.Type() == pcommon.ValueTypeStr {
				e.route = v.Str()
			}
			continue
		}
		if u, ok := si.exactUnit(k); ok {
			if f, ok := number(v); ok {
				if f, ok = d.ttftValue(e, u.seconds(f)); ok {
					e.content.offer(f, k, prioProducerExact)
				}
			} else {
				e.rejectTiming()
			}
			e.genai = true
			continue
		}
		switch k {
		// TTFT evidence.
		case attrTimeToFirstChunk:
			d.offerChunk(e, v, unitSeconds, k, prioSemconvChunk)
		case attrClientTimeToFirstChunk:
			d.offerChunk(e, v, unitSeconds, k, prioClientChunk)
		case attrOpenLITTimeToFirstToken:
			d.offerChunk(e, v, unitSeconds, k, prioOpenLIT)
		case attrOpenLITTTFT:
			d.offerChunk(e, v, unitSeconds, k, prioOpenLITOld)
		case attrVercelMsToFirstChunk:
			d.offerChunk(e, v, unitMillis, k, prioVercelAttr)
		case attrVercelStreamMsToFirst:
			d.offerChunk(e, v, unitMillis, k, prioVercelStreamAttr)
		case attrTTFTMs:
			d.offerChunk(e, v, unitMillis, k, prioTTFTMs)
		case attrBifrostTimeToFirstToken:
			if f, ok := number(v); ok {
				if f, ok = d.ttftValue(e, nanosWithSanity(f)); ok {
					e.chunk.offer(f, k, prioBifrostNs)
				}
			} else {
				e.rejectTiming()
			}
			e.genai = true
		case attrLangfuseCompletionStart:
			if t, ok := absTime(v); ok {
				// Resolved against the start once the span's times are known.
				e.chunk.offer(float64(t), k, prioLangfuse)
			} else {
				e.rejectTiming()
			}
		case attrVLLMTimeToFirstToken:
			if f, ok := number(v); ok {
				if f, ok = d.ttftValue(e, f); ok {
					e.srvTTFT.offer(f, k, 0)
				}
			} else {
				e.rejectTiming()
			}
			e.genai = true
		case attrTTFTTimeToHeaders:
			if f, ok := number(v); ok {
				if f, ok = d.ttftValue(e, f); ok {
					e.headers.offer(f, k, 0)
				}
			}

		// Streaming.
		case attrRequestStream, attrRequestIsStream, attrLLMIsStreaming, attrGenAIIsStreaming, attrLiteLLMStreaming:
			if b, ok := boolish(v); ok {
				e.setStream(b)
			}
		case attrInvocationParams:
			if v.Type() == pcommon.ValueTypeStr {
				s := v.Str()
				switch {
				case strings.Contains(s, `"stream":true`) || strings.Contains(s, `"stream": true`):
					e.setStream(true)
				case strings.Contains(s, `"stream":false`) || strings.Contains(s, `"stream": false`):
					e.setStream(false)
				}
			}
		case attrVercelOperationID:
			if v.Type() == pcommon.ValueTypeStr {
				e.vercelOperation(v.Str())
			}
		case attrOperationName:
			e.genai = true
			if v.Type() == pcommon.ValueTypeStr && !isCallOperation(v.Str()) {
				e.notCall = true
			}
		case attrOpenInferenceKind:
			if v.Type() == pcommon.ValueTypeStr {
				if strings.EqualFold(v.Str(), "LLM") {
					e.genai = true
				} else {
					e.notCall = true
				}
			}
		case attrLLMRequestType:
			e.genai = true
			if v.Type() == pcommon.ValueTypeStr && !isCallOperation(v.Str()) {
				e.notCall = true
			}
		case attrTraceloopSpanKind:
			// workflow, task, agent, tool: containers of calls, not calls.
			e.notCall = true
		case attrLangfuseObservType:
			if v.Type() == pcommon.ValueTypeStr {
				if strings.EqualFold(v.Str(), "generation") {
					e.genai = true
				} else {
					e.notCall = true
				}
			}

		// Tokens.
		case attrInputTokens:
			e.setPrompt(0, v)
			e.promptAdjust = true
		case attrPromptTokens:
			e.setPrompt(1, v)
		case attrLLMPromptTokens:
			e.setPrompt(2, v)
		case attrVercelInputTokens:
			e.setPrompt(3, v)
		case attrVercelPromptTokens:
			e.setPrompt(4, v)
		case attrCacheRead, attrCacheReadLegacy, attrLLMCacheRead, attrVercelCachedInput:
			if n, ok := count(v); ok && (!e.hasCacheRead || n > e.cacheRead) {
				e.cacheRead, e.hasCacheRead = n, true
			}
		case attrCacheWrite, attrCacheCreation, attrCacheCreationLegacy, attrLLMCacheWrite:
			if n, ok := count(v); ok && (!e.hasCacheWrite || n > e.cacheWrite) {
				e.cacheWrite, e.hasCacheWrite = n, true
			}
		case attrOutputTokens, attrCompletionTokens, attrLLMCompletionTokens, attrVercelOutputTokens, attrVercelCompletionToks:
			if n, ok := count(v); ok && (!e.hasOutput || n > e.output) {
				e.output, e.hasOutput = n, true
			}

		// Target.
		case attrProviderName:
			e.setStr(&e.provider[0], v)
		case attrSystem:
			e.setStr(&e.provider[1], v)
		case attrLLMProvider:
			e.setStr(&e.provider[2], v)
		case attrLLMSystem:
			e.setStr(&e.provider[3], v)
		case attrVercelProvider:
			e.setStr(&e.provider[4], v)
		case attrRequestModel:
			e.setStr(&e.model[0], v)
		case attrResponseModel:
			e.setStr(&e.model[1], v)
		case attrLLMModelName:
			e.setStr(&e.model[2], v)
		case attrVercelModelID:
			e.setStr(&e.model[3], v)

		// Outcome.
		case attrErrorType, attrGenAIErrorType:
			if v.Type() == pcommon.ValueTypeStr && v.Str() != "" {
				e.errorType = v.Str()
			}
		case attrHTTPStatus, attrHTTPStatusLegacy:
			if n, ok := count(v); ok {
				e.httpStatus = n
			}
		case attrFinishReasons, attrFinishReason, attrLLMFinishReason, attrVercelFinish, attrAnthropicStop:
			e.finishReason(v)
		case attrTTFTAttempts:
			if n, ok := count(v); ok && n >= 1 {
				e.attempts, e.hasAttempts = n, true
			}
		case attrBifrostFallback:
			if n, ok := count(v); ok {
				e.fallbackIndex, e.hasBifrost = n, true
			}
		case attrBifrostRetries:
			if n, ok := count(v); ok {
				e.retries, e.hasBifrost = n, true
			}
		default:
			// OpenLLMetry's indexed finish reasons: gen_ai.completion.0.finish_reason.
			if strings.HasPrefix(k, "gen_ai.completion.") && strings.HasSuffix(k, ".finish_reason") {
				e.finishReason(v)
			}
		}
	}
	if e.provider[0] != "" || e.provider[1] != "" || e.model[0] != "" || e.model[2] != "" {
		e.genai = true
	}
	for _, p := range e.provider {
		if p != "" {
			if strings.EqualFold(p, "anthropic") || strings.HasPrefix(p, "anthropic.") {
				e.anthropic = true
			}
			break
		}
	}
}

func (d *Deriver) offerChunk(e *evidence, v pcommon.Value, u unit, key string, prio uint8) {
	e.genai = true
	f, ok := number(v)
	if !ok {
		e.rejectTiming()
		return
	}
	if f, ok = d.ttftValue(e, u.seconds(f)); ok {
		e.chunk.offer(f, key, prio)
	}
}

// nanosWithSanity converts Bifrost's nanoseconds. A value too small to be
// nanoseconds of a network round trip (< 10 µs) was written in another unit
// by an older release: read it as milliseconds.
func nanosWithSanity(f float64) float64 {
	if f > 0 && f < 1e4 {
		return f / 1e3
	}
	return f / 1e9
}

// rejectTiming counts a TTFT value that cannot be used.
func (e *evidence) rejectTiming() {
	e.rejected++
	e.invalidTTFT = true
}

func (e *evidence) setStream(b bool) {
	if b {
		e.stream = triTrue
	} else if e.stream == triUnknown {
		e.stream = triFalse
	}
}

func (e *evidence) setPrompt(i int, v pcommon.Value) {
	if n, ok := count(v); ok {
		e.prompt[i] = n
	} else {
		e.rejected++
	}
}

func (e *evidence) setStr(dst *string, v pcommon.Value) {
	if v.Type() == pcommon.ValueTypeStr {
		*dst = v.Str()
	}
}

func (e *evidence) vercelOperation(op string) {
	switch op {
	case "ai.streamText", "ai.streamObject":
		e.genai, e.vercel = true, vercelOuter
		e.setStream(true)
	case "ai.streamText.doStream", "ai.streamObject.doStream":
		e.genai, e.vercel = true, vercelInner
		e.setStream(true)
	case "ai.generateText", "ai.generateObject":
		e.genai, e.vercel = true, vercelOuter
		e.setStream(false)
	case "ai.generateText.doGenerate", "ai.generateObject.doGenerate":
		e.genai, e.vercel = true, vercelInner
		e.setStream(false)
	default:
		// ai.toolCall, ai.embed, ai.embedMany, ...: not an LLM call.
		if strings.HasPrefix(op, "ai.") {
			e.genai, e.notCall = true, true
		}
	}
}

// isCallOperation reports whether a gen_ai.operation.name / llm.request.type
// value names a model call that can stream.
func isCallOperation(op string) bool {
	switch strings.ToLower(op) {
	case "chat", "text_completion", "completion", "generate_content", "generate", "responses", "messages", "chat_completion":
		return true
	}
	return false
}

func (e *evidence) finishReason(v pcommon.Value) {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		e.oneFinish(v.Str())
	case pcommon.ValueTypeSlice:
		s := v.Slice()
		for i := 0; i < s.Len() && i < 16; i++ {
			if s.At(i).Type() == pcommon.ValueTypeStr {
				e.oneFinish(s.At(i).Str())
			}
		}
	}
}

func (e *evidence) oneFinish(s string) {
	if s == "" || s == "[]" {
		return
	}
	e.hasFinish = true
	switch {
	case strings.EqualFold(s, "error"):
		e.finishError = true
	case containsFold(s, "abandon"):
		e.finishAbandon = true
	}
}

// scanSpan fills e from one span.
func (d *Deriver) scanSpan(e *evidence, si *scopeInfo, span ptrace.Span) {
	e.reset()
	e.start, e.end = uint64(span.StartTimestamp()), uint64(span.EndTimestamp())
	e.timingValid = e.start > 0 && e.end >= e.start
	if e.timingValid {
		e.duration = float64(e.end-e.start) / 1e9
	}
	e.server = span.Kind() == ptrace.SpanKindServer
	e.gateway = si.gateway
	e.anthropic = si.anthropic
	st := span.Status()
	e.status = st.Code()
	e.statusMsg = st.Message()

	d.scanAttrs(e, si, span.Attributes())
	if si.anthropic {
		e.anthropic = true
	}
	name := span.Name()
	if e.stream == triUnknown && len(name) <= 256 && containsFold(name, "stream") {
		e.stream = triTrue
	}
	d.scanEvents(e, si, span.Events())

	// Absolute completion start → relative to this span's start.
	if e.chunk.ok && e.chunk.prio == prioLangfuse {
		t := uint64(e.chunk.v)
		e.chunk.ok = false
		if e.timingValid && t >= e.start {
			if f, ok := d.ttftValue(e, float64(t-e.start)/1e9); ok {
				e.chunk.offer(f, e.chunk.src, prioLangfuse)
			}
		} else {
			e.rejected++
			e.invalidTTFT = true
		}
	}
}

// Event classes, so each event's name is compared once.
const (
	evOther uint8 = iota
	evChunk
	evGenericChunk
	evFirstToken
	evVercelFirstChunk
	evHeaders
	evException
)

func eventClass(name string) uint8 {
	switch name {
	case EventChunk:
		return evChunk
	case EventCompletionChunk, EventLLMCompletionChunk:
		return evGenericChunk
	case EventFirstToken:
		return evFirstToken
	case EventVercelFirstChunk:
		return evVercelFirstChunk
	case EventHeaders:
		return evHeaders
	case EventException:
		return evException
	}
	return evOther
}

// scanEvents reads at most MaxEvents span events. Times stay in integer
// nanoseconds until the end. It is the processor's hottest loop (one pass
// per chunk of every streamed call): the span's bounds and the counters
// live in locals, and a ttft.chunk event costs one name compare.
func (d *Deriver) scanEvents(e *evidence, si *scopeInfo, events ptrace.SpanEventSlice) {
	n := events.Len()
	if n == 0 {
		return
	}
	if n > d.cfg.MaxEvents {
		e.eventsIgnored += int64(n - d.cfg.MaxEvents)
		n = d.cfg.MaxEvents
	}
	var (
		lastChunk     uint64 // previous non-keepalive chunk after first content
		maxGap        uint64
		firstContent  uint64
		firstAny      uint64
		firstGeneric  uint64
		lastGeneric   uint64
		genericGap    uint64
		hasGap        bool
		chunkEvents   int64
		genericChunks int64
		contentChunks int64
		ignored       int64
	)
	// Events outside the span are from another clock. One millisecond past
	// the end still counts. A span without valid timing admits none.
	lo, hi := e.start, e.end+1e6
	if !e.timingValid {
		lo, hi = 1, 0
	}
	for i := 0; i < n; i++ {
		ev := events.At(i)
		class := evChunk
		if name := ev.Name(); name != EventChunk {
			switch class = eventClass(name); class {
			case evOther:
				continue
			case evException:
				d.exceptionEvent(e, ev.Attributes())
				continue
			case evVercelFirstChunk:
				// Trust the attribute, not the event time.
				if v, ok := ev.Attributes().Get(attrVercelMsToFirstChunk); ok {
					d.offerChunk(e, v, unitMillis, attrVercelMsToFirstChunk, prioVercelEvent)
				}
				e.genai = true
				continue
			}
		}
		t := uint64(ev.Timestamp())
		if t < lo || t > hi {
			ignored++
			continue
		}
		switch class {
		case evChunk:
			chunkEvents++
			var kind string
			if kv, ok := ev.Attributes().Get(AttrChunkKind); ok {
				kind = kv.Str() // "" for any other type
			}
			if firstAny == 0 || t < firstAny {
				firstAny = t
			}
			switch kind {
			case KindContent, KindToolCall, KindReasoning:
				contentChunks++
				if firstContent == 0 || t < firstContent {
					firstContent = t
				}
			case KindKeepalive:
				continue // keep-alives carry nothing: they do not end a pause
			case KindError:
				e.finishError = true
			}
			if firstContent == 0 || t < firstContent {
				continue
			}
			if lastChunk != 0 && t > lastChunk && t-lastChunk > maxGap {
				maxGap = t - lastChunk
			}
			if t > lastChunk {
				lastChunk = t
			}
			hasGap = true
		case evGenericChunk:
			chunkEvents++
			genericChunks++
			if firstGeneric == 0 || t < firstGeneric {
				firstGeneric = t
			}
			if lastGeneric != 0 && t > lastGeneric && t-lastGeneric > genericGap {
				genericGap = t - lastGeneric
			}
			if t > lastGeneric {
				lastGeneric = t
			}
		case evFirstToken:
			e.genai = true
			if !si.envoy {
				e.chunk.offer(float64(t-e.start)/1e9, EventFirstToken, prioFirstTokenEvent)
			}
		case evHeaders:
			e.headers.offer(float64(t-e.start)/1e9, EventHeaders, 0)
		}
	}
	e.eventsIgnored += ignored
	e.chunkEvents += chunkEvents
	e.genericChunks += genericChunks
	e.contentChunks += contentChunks
	if e.chunkEvents > 0 {
		e.genai = true
		e.setStream(true)
	}
	if firstContent != 0 {
		e.content.offer(float64(firstContent-e.start)/1e9, EventChunk, prioChunkEvents)
	}
	if firstAny != 0 {
		e.chunk.offer(float64(firstAny-e.start)/1e9, EventChunk, prioChunkEvents)
	}
	if hasGap {
		e.maxGap, e.hasGap = float64(maxGap)/1e9, true
	}
	if firstGeneric != 0 {
		e.chunk.offer(float64(firstGeneric-e.start)/1e9, EventCompletionChunk, prioCompletionChunkEvent)
		if !e.hasGap && e.genericChunks > 1 {
			e.maxGap, e.hasGap = float64(genericGap)/1e9, true
		}
	}
}

func (d *Deriver) exceptionEvent(e *evidence, attrs pcommon.Map) {
	if v, ok := attrs.Get(attrExceptionType); ok && v.Type() == pcommon.ValueTypeStr {
		e.excType = v.Str()
	}
	if v, ok := attrs.Get(attrExceptionMessage); ok && v.Type() == pcommon.ValueTypeStr {
		e.excMsg = v.Str()
	}
}

// best returns the first non-empty string in order.
func best(vals []string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// promptTokens applies the key priority and the Anthropic cache rule.
func (e *evidence) promptTokens() (int64, bool) {
	for i, n := range e.prompt {
		if n < 0 {
			continue
		}
		if n == 0 {
			return 0, false // producers write 0 when they did not count
		}
		if i == 0 && e.promptAdjust && e.anthropic {
			// Anthropic's input_tokens excludes cached input.
			n += e.cacheRead + e.cacheWrite
		}
		return n, true
	}
	return 0, false
}
