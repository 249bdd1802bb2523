package derive // import "github.com/otelcol-ttft/otelcol-ttft/internal/derive"

import (
	"math"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
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
	genai   bool // carries a GenAI call signal (operation, evidence, a producer's call shape)
	target  bool // carries a provider or model (a call only on CLIENT/SERVER spans and log records)
	notCall bool // a GenAI span that is not an LLM call (agent, tool, embeddings)
	kind    ptrace.SpanKind

	start, end  uint64
	timingValid bool
	duration    float64
	server      bool // SERVER span: the clock started at arrival

	stream tri

	content timing // first_content evidence
	chunk   timing // first_chunk evidence
	srvTTFT timing // server-side time to first token
	headers timing
	// An absolute first-chunk time, resolved against the span start.
	chunkAt     uint64
	chunkAtSrc  string
	chunkAtRank uint8

	// From ttft.chunk events.
	maxGap        float64
	hasGap        bool
	contentChunks int64
	chunkEvents   int64
	// Generic chunk events (no kind): earliest and gap bookkeeping.
	genericChunks int64
	// A stream instrumentation's summary over every chunk.
	summaryContent    int64
	summaryGap        float64
	hasSummaryContent bool
	hasSummaryGap     bool

	prompt        [5]int64 // by key priority; -1 = absent
	promptAdjust  bool     // gen_ai.usage.input_tokens was the source (Anthropic may exclude cache)
	cacheRead     int64
	cacheWrite    int64
	output        int64
	hasCacheRead  bool
	hasCacheWrite bool
	hasOutput     bool
	anthropic     bool
	// staleKeys: the span carries record keys no row reads (a sender's
	// ttft.max_chunk_gap, say, without ttft.outcome); its stamp removes them.
	staleKeys bool

	provider [5]string
	model    [4]string
	route    string

	status        ptrace.StatusCode
	statusMsg     string
	errorType     string
	errorText     string
	excType       string
	excMsg        string
	httpStatus    int64
	hasFinish     bool
	finishError   bool
	finishAbandon bool

	attempts      int64
	hasAttempts   bool
	fallbackIndex int64
	retries       int64
	hasFallback   bool
	hasRetries    bool
	gateway       bool // produced by a gateway (Bifrost, LiteLLM proxy)
	// durationNoTTFT: the producer writes the end time as its first-token
	// time when no chunk came, so a TTFT equal to the duration is none.
	durationNoTTFT bool

	vercel vercelOp

	rejected      int64 // values refused
	untrusted     int64 // values named like a TTFT from a producer whose number is none
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

// maxScopeRows bounds the named-producer rows that apply to one scope.
const maxScopeRows = 64

// scopeInfo is what the instrumentation scope and resource tell about their
// spans: which producers wrote them, and those producers' rows.
type scopeInfo struct {
	producers producerSet
	attrs     [maxScopeRows]*Row
	nAttrs    int
	events    [maxScopeRows]*Row
	nEvents   int

	gateway        bool // a gateway's view: ttft.observer=gateway
	cacheExcluded  bool // input tokens exclude cached input (Anthropic)
	durationNoTTFT bool // a "TTFT" equal to the duration is none, streamed or not
}

// scopeInfo resolves a scope; resNames is resourceNames of its resource.
func (d *Deriver) scopeInfo(scope pcommon.InstrumentationScope, names *resNames) scopeInfo {
	var si scopeInfo
	t := d.table
	si.producers = t.match(scope.Name(), names)
	if si.producers == 0 {
		return si
	}
	for i := range t.producers {
		if !si.producers.has(i) {
			continue
		}
		p := &t.producers[i]
		si.gateway = si.gateway || p.Gateway
		si.cacheExcluded = si.cacheExcluded || p.CacheExcluded
		si.durationNoTTFT = si.durationNoTTFT || p.DurationIsNoTTFT
	}
	for i := range t.named {
		row := &t.named[i]
		if !si.producers.has(row.prod) {
			continue
		}
		if row.Event {
			si.events[si.nEvents] = row
			si.nEvents++
		} else {
			si.attrs[si.nAttrs] = row
			si.nAttrs++
		}
	}
	return si
}

// attrRow finds the row for an attribute key: the scope's producers' rows
// first (the last configured wins), then the rows for anyone.
func (d *Deriver) attrRow(si *scopeInfo, key string) *Row {
	if si.nAttrs == 0 {
		return d.table.attrs.get(key)
	}
	for i := si.nAttrs - 1; i >= 0; i-- {
		if si.attrs[i].Key == key {
			return si.attrs[i]
		}
	}
	return d.table.attrs.get(key)
}

func (d *Deriver) eventRow(si *scopeInfo, name string) *Row {
	for i := si.nEvents - 1; i >= 0; i-- {
		if si.events[i].Key == name {
			return si.events[i]
		}
	}
	return d.table.events.get(name)
}

// ttftValue validates a relative TTFT in seconds.
func (d *Deriver) ttftValue(e *evidence, f float64) (float64, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || f > d.cfg.MaxTTFTSeconds {
		e.rejectTiming()
		return 0, false
	}
	return f, true
}

// scanAttrs reads every attribute once through the producer table. Shared
// by spans and log records.
func (d *Deriver) scanAttrs(e *evidence, si *scopeInfo, attrs pcommon.Map) {
	for k, v := range attrs.All() {
		if k == d.cfg.RouteAttribute && d.cfg.RouteAttribute != "" {
			if v.Type() == pcommon.ValueTypeStr {
				e.route = v.Str()
			}
			continue
		}
		var row *Row
		if si.nAttrs == 0 && k != "" {
			// attrRow's common case, inlined: every attribute of every span
			// passes here.
			t := &d.table.attrs
			for i := t.heads[keyBucket(k)]; i >= 0; i = t.next[i] {
				if t.keys[i] == k {
					row = t.rows[i]
					break
				}
			}
		} else {
			row = d.attrRow(si, k)
		}
		if row == nil {
			// OpenLLMetry's indexed finish reasons: gen_ai.completion.0.finish_reason.
			if strings.HasPrefix(k, "gen_ai.completion.") && strings.HasSuffix(k, ".finish_reason") {
				e.finishReason(v)
			} else if len(k) > 5 && k[:5] == "ttft." && record.IsRecordKey(k) {
				e.staleKeys = true // a record key no row reads: a sender's
			}
			continue
		}
		if row.recordKey {
			// A record key a row reads: the stamp writes it again when the
			// derivation keeps its value; one it refused (out of bounds,
			// not a number) must not survive beside the stamp.
			e.staleKeys = true
		}
		d.apply(e, row, v)
	}
	if e.provider[0] != "" || e.provider[1] != "" || e.model[0] != "" || e.model[2] != "" {
		e.target = true
	}
	if si.cacheExcluded {
		e.anthropic = true
	}
	for _, p := range e.provider {
		if p != "" {
			if strings.EqualFold(p, "anthropic") || strings.HasPrefix(p, "anthropic.") {
				e.anthropic = true
			} else if strings.EqualFold(p, "gcp.vertex_ai") {
				// Claude on Vertex AI answers with the Messages API's own
				// usage (the stream instrumentation reads it as it comes).
				if m := best(e.model[:]); len(m) >= 6 && strings.EqualFold(m[:6], "claude") {
					e.anthropic = true
				}
			}
			break
		}
	}
}

// apply reads one attribute value as its row says.
func (d *Deriver) apply(e *evidence, row *Row, v pcommon.Value) {
	switch row.meaning {
	case MeaningFirstContent, MeaningFirstChunk, MeaningServerFirstToken, MeaningHeaders:
		if row.meaning != MeaningHeaders {
			e.genai = true
		}
		f, ok := number(v)
		if !ok {
			if row.meaning != MeaningHeaders {
				e.rejectTiming()
			}
			return
		}
		if f, ok = d.ttftValue(e, row.unit.seconds(f)); !ok {
			return
		}
		switch row.meaning {
		case MeaningFirstContent:
			e.content.offer(f, row.Key, row.Rank)
		case MeaningFirstChunk:
			e.chunk.offer(f, row.Key, row.Rank)
		case MeaningServerFirstToken:
			if !e.server {
				// A server's clock starts at arrival, so the row holds only
				// on a SERVER span (vLLM's). Elsewhere the producer is not
				// known: a time to "first token" is a first chunk, the lower
				// bound, as for the other keys of unknown producers, and
				// ranked below them (its row's rank is the server class's).
				e.chunk.offer(f, row.Key, prioDemotedServer)
				return
			}
			e.srvTTFT.offer(f, row.Key, row.Rank)
		case MeaningHeaders:
			e.headers.offer(f, row.Key, row.Rank)
		}
	case MeaningFirstChunkAt:
		e.genai = true
		if t, ok := absTime(v); ok {
			// Resolved against the start once the span's times are known.
			e.chunkAt, e.chunkAtSrc, e.chunkAtRank = t, row.Key, row.Rank
		} else {
			e.rejectTiming()
		}
	case MeaningNotTTFT:
		e.genai = true
		e.untrusted++

	case MeaningStream:
		if b, ok := boolish(v); ok {
			e.setStream(b)
		}
	case MeaningStreamParams:
		if v.Type() == pcommon.ValueTypeStr {
			s := v.Str()
			switch {
			case strings.Contains(s, `"stream":true`) || strings.Contains(s, `"stream": true`):
				e.setStream(true)
			case strings.Contains(s, `"stream":false`) || strings.Contains(s, `"stream": false`):
				e.setStream(false)
			}
		}
	case MeaningStreamRequestType:
		if v.Type() == pcommon.ValueTypeStr && v.Str() != "" {
			e.setStream(strings.HasSuffix(v.Str(), "_stream"))
		}
	case MeaningVercelOperation:
		if v.Type() == pcommon.ValueTypeStr {
			e.vercelOperation(v.Str())
		}
	case MeaningOperation:
		e.genai = true
		if v.Type() == pcommon.ValueTypeStr && !isCallOperation(v.Str()) {
			e.notCall = true
		}
	case MeaningOpenInferenceKind:
		if v.Type() == pcommon.ValueTypeStr {
			if strings.EqualFold(v.Str(), "LLM") {
				e.genai = true
			} else {
				e.notCall = true
			}
		}
	case MeaningContainerKind:
		// workflow, task, agent, tool: containers of calls, not calls.
		e.notCall = true
	case MeaningObservationType:
		if v.Type() == pcommon.ValueTypeStr {
			if strings.EqualFold(v.Str(), "generation") {
				e.genai = true
			} else {
				e.notCall = true
			}
		}

	case MeaningInputTokens:
		e.setPrompt(0, v)
		e.promptAdjust = true
	case MeaningPromptTokens:
		e.setPrompt(int(min(row.Rank, uint8(len(e.prompt)-1))), v)
	case MeaningCacheReadTokens:
		if n, ok := count(v); ok && (!e.hasCacheRead || n > e.cacheRead) {
			e.cacheRead, e.hasCacheRead = n, true
		}
	case MeaningCacheWriteTokens:
		if n, ok := count(v); ok && (!e.hasCacheWrite || n > e.cacheWrite) {
			e.cacheWrite, e.hasCacheWrite = n, true
		}
	case MeaningOutputTokens:
		if n, ok := count(v); ok && (!e.hasOutput || n > e.output) {
			e.output, e.hasOutput = n, true
		}

	case MeaningProvider:
		e.setStr(&e.provider[min(int(row.Rank), len(e.provider)-1)], v)
	case MeaningModel:
		e.setStr(&e.model[min(int(row.Rank), len(e.model)-1)], v)

	case MeaningErrorType:
		if v.Type() == pcommon.ValueTypeStr && v.Str() != "" {
			e.errorType = v.Str()
		}
	case MeaningErrorText:
		if v.Type() == pcommon.ValueTypeStr && v.Str() != "" {
			e.errorText = v.Str()
		}
	case MeaningHTTPStatus:
		if n, ok := count(v); ok {
			e.httpStatus = n
		}
	case MeaningFinishReason:
		e.finishReason(v)
	case MeaningAttempts:
		if n, ok := count(v); ok && n >= 1 {
			e.attempts, e.hasAttempts = n, true
		}
	case MeaningFallbackIndex:
		if n, ok := count(v); ok {
			e.fallbackIndex, e.hasFallback = n, true
		}
	case MeaningRetries:
		if n, ok := count(v); ok {
			e.retries, e.hasRetries = n, true
		}
	case MeaningContentChunks:
		if n, ok := count(v); ok {
			e.summaryContent, e.hasSummaryContent = n, true
		} else {
			e.rejected++
		}
	case MeaningMaxChunkGap:
		if f, ok := number(v); ok && !math.IsNaN(f) && !math.IsInf(f, 0) && f >= 0 {
			e.summaryGap, e.hasSummaryGap = row.unit.seconds(f), true
		} else {
			e.rejected++
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
	// A non-empty string with one type assertion (Value.Str is "" for any
	// other type); an empty one still replaces what was there.
	if s := v.Str(); s != "" || v.Type() == pcommon.ValueTypeStr {
		*dst = s
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
	if callOperation(op) {
		return true // as written: the semantic conventions spell them in lower case
	}
	return callOperation(strings.ToLower(op))
}

func callOperation(op string) bool {
	switch op {
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
	case len(s) == len("error") && strings.EqualFold(s, "error"): // only ASCII folds to these letters
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
	e.kind = span.Kind()
	e.server = e.kind == ptrace.SpanKindServer
	e.gateway = si.gateway
	e.durationNoTTFT = si.durationNoTTFT
	st := span.Status()
	e.status = st.Code()
	e.statusMsg = st.Message()

	d.scanAttrs(e, si, span.Attributes())
	name := span.Name()
	if e.stream == triUnknown && len(name) <= 256 && containsFold(name, "stream") {
		e.stream = triTrue
	}
	d.scanEvents(e, si, span.Events(), span.DroppedEventsCount())
	e.applySummary()

	// Absolute completion start → relative to this span's start.
	if e.chunkAt != 0 {
		if e.timingValid && e.chunkAt >= e.start {
			if f, ok := d.ttftValue(e, float64(e.chunkAt-e.start)/1e9); ok {
				e.chunk.offer(f, e.chunkAtSrc, e.chunkAtRank)
			}
		} else {
			e.rejected++
			e.invalidTTFT = true
		}
	}
}

// mayBeCall is the pass-through fast path: a span none of whose attribute
// keys or event names starts like a key that can make a call is no call.
// Most spans of a traces pipeline are HTTP and database spans; they cost a
// walk over their keys and one bit test each.
func (d *Deriver) mayBeCall(span ptrace.Span) bool {
	t := d.table
	if t.noPrefilter {
		return true
	}
	// Map.Range with a literal: a tighter loop than range over Map.All.
	found := false
	span.Attributes().Range(func(k string, _ pcommon.Value) bool {
		found = t.callKeys.has(k)
		return !found
	})
	if found {
		return true
	}
	evs := span.Events()
	n := evs.Len()
	if n > d.cfg.MaxEvents {
		return true // the full path counts the events it ignores
	}
	for i := 0; i < n; i++ {
		if t.callEvents.has(evs.At(i).Name()) {
			return true
		}
	}
	return false
}

// applySummary merges a stream instrumentation's summary over every chunk
// into what its (bounded) chunk events gave: the events stop at the first
// content, the summary counts the rest with the same rules.
func (e *evidence) applySummary() {
	if e.hasSummaryContent && e.summaryContent > e.contentChunks {
		e.contentChunks = e.summaryContent
	}
	if !e.hasSummaryGap || !e.content.ok || e.content.prio != prioChunkEvents {
		return // a gap is only read with the first content it is measured from
	}
	if e.timingValid && e.summaryGap > e.duration+durationSlack {
		e.rejected++ // a pause longer than the stream is from another clock
		return
	}
	if !e.hasGap || e.summaryGap > e.maxGap {
		e.maxGap, e.hasGap = e.summaryGap, true
	}
}

// isCall applies the rule of which spans are LLM calls
// (docs/architecture.md, "Which spans are calls"): a GenAI operation or a
// producer's call evidence; a span with only target attributes (provider,
// model) is a call when it is a CLIENT span (the request) or a SERVER span
// (a gateway's or server's view of it), never an INTERNAL bookkeeping span
// such as a gateway's key selection.
func (e *evidence) isCall(span bool) bool {
	switch {
	case e.notCall:
		return false
	case e.genai:
		return true
	case !e.target:
		return false
	case !span:
		return true // a log record with a target is a gateway's request record
	}
	return e.kind == ptrace.SpanKindClient || e.kind == ptrace.SpanKindServer
}

// Event classes, so each event's name is compared once.
const (
	evOther uint8 = iota
	evChunk
	evGenericChunk
	evFirstToken
	evFirstContent
	evVercelFirstChunk
	evHeaders
	evException
	evIgnored
)

var eventClasses = [numMeanings]uint8{
	MeaningChunkEvent:          evChunk,
	MeaningGenericChunkEvent:   evGenericChunk,
	MeaningFirstChunkEvent:     evFirstToken,
	MeaningFirstContentEvent:   evFirstContent,
	MeaningFirstChunkEventAttr: evVercelFirstChunk,
	MeaningHeadersEvent:        evHeaders,
	MeaningExceptionEvent:      evException,
	MeaningIgnoredEvent:        evIgnored,
}

// eventClass looks an event name up in the producer table.
func (d *Deriver) eventClass(si *scopeInfo, name string) uint8 {
	row := d.eventRow(si, name)
	if row == nil {
		return evOther
	}
	return eventClasses[row.meaning]
}

// eventAt offers the time of a first-chunk, first-content or headers event.
func (d *Deriver) eventAt(e *evidence, si *scopeInfo, name string, class uint8, at float64) {
	row := d.eventRow(si, name)
	switch class {
	case evFirstToken:
		e.genai = true
		e.chunk.offer(at, row.Key, row.Rank)
	case evFirstContent:
		e.genai = true
		e.content.offer(at, row.Key, row.Rank)
	case evHeaders:
		e.headers.offer(at, row.Key, row.Rank)
	}
}

// scanEvents reads at most MaxEvents span events. Times stay in integer
// nanoseconds until the end. It is the processor's hottest loop (one pass
// per chunk of every streamed call). A span whose events are all
// ttft.chunk events (what the stream instrumentation writes) is read by
// onlyChunks, a loop without a call in it; any other span by mixedEvents.
func (d *Deriver) scanEvents(e *evidence, si *scopeInfo, events ptrace.SpanEventSlice, dropped uint32) {
	n := events.Len()
	if n == 0 {
		return
	}
	if n > d.cfg.MaxEvents {
		e.eventsIgnored += int64(n - d.cfg.MaxEvents)
		n = d.cfg.MaxEvents
	}
	// Events outside the span are from another clock. One millisecond past
	// the end still counts. A span without valid timing admits none.
	lo, hi := e.start, e.end+1e6
	if !e.timingValid {
		lo, hi = 1, 0
	}
	var g genericChunks
	c, ok := onlyChunks(events, n, lo, hi)
	if !ok {
		c = d.mixedEvents(e, si, events, n, lo, hi, &g)
	}
	if c.errorChunk {
		e.finishError = true
	}
	e.eventsIgnored += c.ignored
	e.chunkEvents += c.chunkEvents + g.n
	e.genericChunks += g.n
	e.contentChunks += c.contentChunks
	if e.chunkEvents > 0 {
		e.genai = true
		e.setStream(true)
	}
	if dropped > 0 && !headersKept(events, n) {
		// The SDK dropped events past its limit, the oldest first (as the
		// Go, JS and Python SDKs do): the first chunk kept need not be the
		// first, nor its gaps the longest. No time is read from them; the
		// stream's own summary (applySummary) still counts. Unless the
		// ttft.headers event is kept: the stream instrumentation writes it
		// before its first chunk, so what was dropped is older than every
		// chunk (another library's events on the same span).
		if c.firstAny != ^uint64(0) || g.first != 0 {
			e.rejectTiming()
		}
		return
	}
	if c.firstContent != ^uint64(0) {
		e.content.offer(float64(c.firstContent+1-e.start)/1e9, EventChunk, prioChunkEvents)
	}
	if c.firstAny != ^uint64(0) {
		e.chunk.offer(float64(c.firstAny+1-e.start)/1e9, EventChunk, prioChunkEvents)
	}
	if c.lastChunk != 0 {
		e.maxGap, e.hasGap = float64(c.maxGap)/1e9, true
	}
	if g.first != 0 {
		e.chunk.offer(float64(g.first-e.start)/1e9, EventCompletionChunk, prioCompletionChunkEvent)
		if !e.hasGap && e.genericChunks > 1 {
			e.maxGap, e.hasGap = float64(g.gap)/1e9, true
		}
	}
}

// headersKept reports whether the first n events hold a ttft.headers event.
func headersKept(events ptrace.SpanEventSlice, n int) bool {
	for i := 0; i < n; i++ {
		if events.At(i).Name() == EventHeaders {
			return true
		}
	}
	return false
}

// chunkStats is what a span's ttft.chunk events say.
type chunkStats struct {
	// Times of admitted events are ≥ lo ≥ 1, so firstAny and firstContent
	// are kept minus one: none is the largest value, and "no content yet
	// or t before it" is one compare.
	firstAny, firstContent uint64
	lastChunk              uint64 // previous non-keepalive chunk after first content; 0: none
	maxGap                 uint64
	chunkEvents            int64
	contentChunks          int64
	ignored                int64 // outside the span
	errorChunk             bool
}

// onlyChunks reads the first n events when all of them are ttft.chunk
// events; ok is false at the first that is not, and the caller reads the
// span with mixedEvents instead. It calls nothing (with a call in it, or
// chunkStats.add as a function, the compiler spills every register on
// every event). The sums live in the result, in memory, and are loaded and
// stored where they change: kept in locals, they outnumbered the registers
// and the compiler spilled and reloaded them at every join of the loop
// (−258 instructions a span of 30 events, BenchmarkChunkedSpans). Map.Range
// with a function literal is inlined whole; a range over Map.All keeps the
// iterator's state and costs more.
// The loop body is chunkStats.add written out: keep the two alike
// (TestChunkEventsReadAlikeWithOtherEvents compares them).
func onlyChunks(events ptrace.SpanEventSlice, n int, lo, hi uint64) (chunkStats, bool) {
	c := chunkStats{firstAny: ^uint64(0), firstContent: ^uint64(0)}
	for i := 0; i < n; i++ {
		ev := events.At(i)
		if ev.Name() != EventChunk {
			return chunkStats{}, false
		}
		t := uint64(ev.Timestamp())
		if t < lo || t > hi {
			c.ignored++
			continue
		}
		c.firstAny = min(c.firstAny, t-1)
		var kind string
		ev.Attributes().Range(func(k string, v pcommon.Value) bool {
			if k == AttrChunkKind {
				kind = v.Str()
				return false
			}
			return true
		})
		switch kind {
		case KindContent, KindToolCall, KindReasoning:
			c.contentChunks++
			c.firstContent = min(c.firstContent, t-1)
		case KindKeepalive:
			continue
		case KindError:
			c.errorChunk = true
		}
		if t-1 < c.firstContent {
			continue
		}
		if t > c.lastChunk {
			if c.lastChunk != 0 {
				c.maxGap = max(c.maxGap, t-c.lastChunk)
			}
			c.lastChunk = t
		}
	}
	c.chunkEvents = int64(n) - c.ignored
	return c, true
}

// ChunkSums runs the derivation's loop over a span's ttft.chunk events
// (onlyChunks) on the events admitted in [lo, hi]: the first chunk and the
// first content, each minus one (^0: none), the longest pause after the
// first content, the content chunks; ok is false at an event that is no
// ttft.chunk. It is for the processor's BenchmarkFloorChunkRules, the floor
// of applying the chunk rules alone.
func ChunkSums(events ptrace.SpanEventSlice, lo, hi uint64) (firstAny, firstContent, maxGap uint64, contentChunks int64, ok bool) {
	c, ok := onlyChunks(events, events.Len(), lo, hi)
	return c.firstAny, c.firstContent, c.maxGap, c.contentChunks, ok
}

// HasRow reports whether the producer table has a row for an attribute
// key (the lookup scanAttrs makes for each attribute of a span whose scope
// has no producer rows of its own), applying nothing. It is for the
// processor's BenchmarkFloorKeyTable, the floor of finding each input's
// rule in a configurable table.
func (d *Deriver) HasRow(key string) bool { return d.table.attrs.get(key) != nil }

// mixedEvents reads the first n events of a span that has events other
// than ttft.chunk: those go to otherEvent, the chunk events are read as
// onlyChunks reads them.
func (d *Deriver) mixedEvents(e *evidence, si *scopeInfo, events ptrace.SpanEventSlice, n int, lo, hi uint64, g *genericChunks) chunkStats {
	c := chunkStats{firstAny: ^uint64(0), firstContent: ^uint64(0)}
	for i := 0; i < n; i++ {
		ev := events.At(i)
		if ev.Name() != EventChunk && !d.otherEvent(e, si, ev, lo, hi, g) {
			continue
		}
		c.add(ev, lo, hi)
	}
	return c
}

// add reads one chunk event (mixedEvents; onlyChunks has the same body
// written out). The kind is the first AttrChunkKind attribute, a string
// ("" for any other type or none); comparing each key with the constant is
// a length test and word compares, where Map.Get compares with its
// parameter through a call.
func (c *chunkStats) add(ev ptrace.SpanEvent, lo, hi uint64) {
	t := uint64(ev.Timestamp())
	if t < lo || t > hi {
		c.ignored++
		return
	}
	c.chunkEvents++
	c.firstAny = min(c.firstAny, t-1)
	var kind string
	ev.Attributes().Range(func(k string, v pcommon.Value) bool {
		if k == AttrChunkKind {
			kind = v.Str()
			return false
		}
		return true
	})
	switch kind {
	case KindContent, KindToolCall, KindReasoning:
		c.contentChunks++
		c.firstContent = min(c.firstContent, t-1)
	case KindKeepalive:
		return // keep-alives carry nothing: they do not end a pause
	case KindError:
		c.errorChunk = true
	}
	if t-1 < c.firstContent {
		return // before the first content: no pause yet
	}
	if t > c.lastChunk {
		if c.lastChunk != 0 {
			c.maxGap = max(c.maxGap, t-c.lastChunk)
		}
		c.lastChunk = t
	}
}

// genericChunks is the bookkeeping of chunk events without a kind
// (MeaningGenericChunkEvent): count, earliest time and largest gap.
type genericChunks struct {
	n                int64
	first, last, gap uint64
}

// otherEvent reads an event not named ttft.chunk. It reports whether the
// event is a chunk event of the contract under another name (a configured
// row), which the caller then reads as one.
func (d *Deriver) otherEvent(e *evidence, si *scopeInfo, ev ptrace.SpanEvent, lo, hi uint64, g *genericChunks) bool {
	name := ev.Name()
	class := d.eventClass(si, name)
	switch class {
	case evOther:
		return false
	case evChunk:
		return true
	case evIgnored:
		e.genai = true
		return false
	case evException:
		d.exceptionEvent(e, ev.Attributes())
		return false
	case evVercelFirstChunk:
		// Trust the attribute, not the event time.
		if v, ok := ev.Attributes().Get(attrVercelMsToFirstChunk); ok {
			d.offerChunk(e, v, unitMillis, attrVercelMsToFirstChunk, d.eventRow(si, name).Rank)
		}
		e.genai = true
		return false
	}
	t := uint64(ev.Timestamp())
	if t < lo || t > hi {
		e.eventsIgnored++
		return false
	}
	switch class {
	case evGenericChunk:
		g.n++
		if g.first == 0 || t < g.first {
			g.first = t
		}
		if g.last != 0 && t > g.last && t-g.last > g.gap {
			g.gap = t - g.last
		}
		if t > g.last {
			g.last = t
		}
	case evFirstToken, evFirstContent, evHeaders:
		d.eventAt(e, si, name, class, float64(t-e.start)/1e9)
	}
	return false
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
		if i == 0 && e.promptAdjust && e.anthropic {
			// Anthropic's input_tokens excludes cached input: a prompt read
			// whole from the cache says 0 beside its cache counts.
			n += e.cacheRead + e.cacheWrite
		}
		if n == 0 {
			return 0, false // producers write 0 when they did not count
		}
		return n, true
	}
	return 0, false
}
