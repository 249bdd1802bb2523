package ttftstream

import (
	"bytes"
	"strings"
)

// kind is what one streamed chunk carried. Greater values win when a chunk
// carries several things (n > 1 choices, several parts).
type kind uint8

const (
	kindKeepalive kind = iota
	kindLifecycle
	kindRole
	kindError
	kindReasoning
	kindToolCall
	kindContent
)

var kindNames = [...]string{
	kindKeepalive: "keepalive",
	kindLifecycle: "lifecycle",
	kindRole:      "role",
	kindError:     "error",
	kindReasoning: "reasoning",
	kindToolCall:  "tool_call",
	kindContent:   "content",
}

func (k kind) String() string { return kindNames[k] }

// stopsClock: content, tool_call and reasoning end the TTFT clock.
func (k kind) stopsClock() bool { return k >= kindReasoning }

// format is the stream dialect of one endpoint.
type format uint8

const (
	formatNone      format = iota
	formatChat             // OpenAI Chat Completions (and legacy Completions)
	formatResponses        // OpenAI Responses
	formatAnthropic        // Anthropic Messages
	formatGemini           // Gemini streamGenerateContent?alt=sse
)

// facts are what the stream says about the whole call, gathered from its
// chunks: usage, finish reasons, errors, the completion marker.
type facts struct {
	model         string
	finish        []string
	inputTokens   int64
	outputTokens  int64
	cacheRead     int64
	cacheWrite    int64
	hasInput      bool
	hasOutput     bool
	hasCacheRead  bool
	hasCacheWrite bool
	marker        bool // the stream's completion marker arrived
	errType       string
	errMsg        string
}

const maxFinishReasons = 8

func (f *facts) addFinish(r []byte) {
	if len(r) == 0 || len(r) > 64 {
		return
	}
	for _, have := range f.finish {
		if have == string(r) {
			return
		}
	}
	if len(f.finish) < maxFinishReasons {
		f.finish = append(f.finish, string(r))
	}
}

func (f *facts) setModel(m []byte) {
	if f.model == "" && len(m) > 0 && len(m) <= 256 {
		f.model = string(m)
	}
}

func (f *facts) setError(typ, msg []byte) {
	if f.errType != "" {
		return
	}
	f.errType = "stream_error"
	if len(typ) > 0 && len(typ) <= 64 {
		f.errType = string(typ)
	}
	if len(msg) > 512 {
		msg = msg[:512]
	}
	f.errMsg = string(msg)
}

// classify reads one SSE event (its event field and data) in format ft.
// ok is false when the data is not what the format promises; partial
// tolerates a cut-off payload (a frame longer than the buffer).
func (f *facts) classify(ft format, event, data []byte, partial bool) (k kind, ok bool) {
	if string(bytes.TrimSpace(data)) == "[DONE]" {
		// Chat's completion marker. OpenAI-compatible servers end other
		// formats' streams with it too (the OpenAI SDKs accept it on every
		// endpoint): there it is framing, and the format's own marker
		// (response.completed, message_stop) says whether the call finished.
		f.marker = f.marker || ft == formatChat
		return kindLifecycle, true
	}
	s := jscan{b: data}
	switch ft {
	case formatChat:
		k = f.chat(&s)
	case formatResponses:
		k = f.responses(&s, event)
	case formatAnthropic:
		k = f.anthropic(&s, event)
	case formatGemini:
		k = f.gemini(&s)
	}
	if s.bad && !(partial && s.i >= len(s.b)) {
		return k, false
	}
	return k, true
}

// errorObject reads {"type"|"code"|"status": …, "message": …}.
func (f *facts) errorObject(s *jscan) {
	if !s.enter('{') {
		if msg, ok := s.strValue(); ok { // "error": "text"
			f.setError(nil, msg)
		}
		return
	}
	var typ, msg []byte
	for s.more('}') {
		switch string(s.key()) {
		case "type":
			typ, _ = s.strValue()
		case "code", "status":
			if v, ok := s.strValue(); ok && typ == nil {
				typ = v
			}
		case "message":
			msg, _ = s.strValue()
		default:
			s.skip()
		}
	}
	f.setError(typ, msg)
}

// chat reads an OpenAI Chat Completions chunk (every choice).
func (f *facts) chat(s *jscan) kind {
	if !s.enter('{') {
		s.bad = true
		return kindLifecycle
	}
	k := kindLifecycle
	for s.more('}') {
		switch string(s.key()) {
		case "choices":
			if !s.enter('[') {
				s.skip()
				continue
			}
			for s.more(']') {
				if c := f.chatChoice(s); c > k {
					k = c
				}
			}
		case "usage":
			f.openaiUsage(s)
		case "model":
			if m, ok := s.strValue(); ok {
				f.setModel(m)
			}
		case "error":
			if s.peek() == 'n' {
				s.skip()
				continue
			}
			f.errorObject(s)
			if k < kindError {
				k = kindError
			}
		default:
			s.skip()
		}
	}
	return k
}

func (f *facts) chatChoice(s *jscan) kind {
	if !s.enter('{') {
		s.skip()
		return kindLifecycle
	}
	k := kindLifecycle
	for s.more('}') {
		switch string(s.key()) {
		case "delta", "message":
			if d := f.chatDelta(s); d > k {
				k = d
			}
		case "text": // legacy Completions
			if s.nonEmpty() {
				k = kindContent
			}
		case "finish_reason":
			if r, ok := s.strValue(); ok {
				f.addFinish(r)
			}
		default:
			s.skip()
		}
	}
	return k
}

func (f *facts) chatDelta(s *jscan) kind {
	if !s.enter('{') {
		s.skip()
		return kindLifecycle
	}
	k := kindLifecycle
	up := func(c kind) {
		if c > k {
			k = c
		}
	}
	for s.more('}') {
		switch string(s.key()) {
		case "content":
			up(chatDeltaContent(s))
		case "refusal":
			if s.nonEmpty() {
				up(kindContent)
			}
		case "audio":
			if audioCarries(s) {
				up(kindContent)
			}
		case "reasoning_content", "reasoning":
			if s.nonEmpty() {
				up(kindReasoning)
			}
		case "tool_calls", "function_call":
			if toolCallsCarry(s) {
				up(kindToolCall)
			}
		case "role":
			if s.nonEmpty() {
				up(kindRole)
			}
		default:
			s.skip()
		}
	}
	return k
}

// openaiUsage reads {prompt_tokens|input_tokens, completion_tokens|output_tokens,
// prompt_tokens_details|input_tokens_details: {cached_tokens}}.
func (f *facts) openaiUsage(s *jscan) {
	if !s.enter('{') {
		s.skip()
		return
	}
	for s.more('}') {
		switch string(s.key()) {
		case "prompt_tokens", "input_tokens":
			f.inputTokens, f.hasInput = s.int()
		case "completion_tokens", "output_tokens":
			f.outputTokens, f.hasOutput = s.int()
		case "prompt_tokens_details", "input_tokens_details":
			if !s.enter('{') {
				s.skip()
				continue
			}
			for s.more('}') {
				if string(s.key()) == "cached_tokens" {
					f.cacheRead, f.hasCacheRead = s.int()
				} else {
					s.skip()
				}
			}
		default:
			s.skip()
		}
	}
}

// responses reads an OpenAI Responses event.
func (f *facts) responses(s *jscan, event []byte) kind {
	if !s.enter('{') {
		s.bad = true
		return kindLifecycle
	}
	var typ, itemType []byte
	deltaPresent, deltaEmpty := false, false
	var status, code, msg []byte
	for s.more('}') {
		switch string(s.key()) {
		case "type":
			typ, _ = s.strValue()
		case "item":
			itemType = objectType(s)
		case "delta":
			deltaPresent = true
			deltaEmpty = !s.nonEmpty()
		case "response":
			status = f.responseObject(s)
		case "error":
			if s.peek() == 'n' {
				s.skip()
				continue
			}
			f.errorObject(s)
		case "code": // "type":"error" events carry code and message at the top level
			code, _ = s.strValue()
		case "message":
			msg, _ = s.strValue()
		default:
			s.skip()
		}
	}
	t := string(typ)
	if t == "" {
		t = string(event)
	}
	switch {
	case t == "keepalive":
		// {"type":"keepalive","sequence_number":n}: sent during long
		// requests; a keep-alive like an SSE comment, it ends no pause.
		return kindKeepalive
	case t == "error":
		f.setError(code, msg)
		return kindError
	case t == "response.failed":
		f.setError(nil, nil)
		return kindError
	case t == "response.completed", t == "response.incomplete":
		f.marker = true
		if len(status) > 0 {
			f.addFinish(status)
		}
		return kindLifecycle
	case t == "response.output_item.added":
		// A tool call starts with its item, which names the tool (as a
		// Chat stream's first tool_calls delta does): function_call,
		// custom_tool_call, mcp_call, …, and mcp_approval_request, a call
		// to an MCP tool the caller is to approve (name and arguments); a
		// message or reasoning item starts empty.
		if strings.Contains(string(itemType), "call") && !strings.HasSuffix(string(itemType), "_output") || string(itemType) == "mcp_approval_request" {
			return kindToolCall
		}
	case t == "response.image_generation_call.partial_image":
		// An image generated in parts: each part is output.
		return kindContent
	case strings.HasSuffix(t, ".delta"):
		if deltaPresent && deltaEmpty {
			return kindLifecycle
		}
		switch t {
		case "response.output_text.delta", "response.refusal.delta",
			"response.audio.delta", "response.audio.transcript.delta",
			"response.output_audio.delta", "response.output_audio_transcript.delta":
			return kindContent
		case "response.reasoning_summary_text.delta", "response.reasoning_text.delta",
			"response.reasoning.delta", "response.reasoning_summary.delta":
			return kindReasoning
		}
		// function_call_arguments, custom_tool_call_input, mcp_call_arguments, …;
		// not a tool's output (shell_call_output_content: a command's stdout).
		if strings.Contains(t, "call") && !strings.Contains(t, "call_output") {
			return kindToolCall
		}
	}
	return kindLifecycle
}

// responseObject reads the "response" of created/completed/failed events and
// returns its status.
func (f *facts) responseObject(s *jscan) (status []byte) {
	if !s.enter('{') {
		s.skip()
		return nil
	}
	for s.more('}') {
		switch string(s.key()) {
		case "model":
			if m, ok := s.strValue(); ok {
				f.setModel(m)
			}
		case "status":
			status, _ = s.strValue()
		case "usage":
			f.openaiUsage(s)
		case "error":
			if s.peek() == 'n' {
				s.skip()
				continue
			}
			f.errorObject(s)
		default:
			s.skip()
		}
	}
	return status
}

// anthropic reads an Anthropic Messages event.
func (f *facts) anthropic(s *jscan, event []byte) kind {
	if !s.enter('{') {
		s.bad = true
		return kindLifecycle
	}
	var typ, deltaType, blockType []byte
	deltaCarries, blockCarries := false, false
	for s.more('}') {
		switch string(s.key()) {
		case "type":
			typ, _ = s.strValue()
		case "delta":
			deltaType, deltaCarries = f.anthropicDelta(s)
		case "content_block":
			blockType, blockCarries = anthropicBlock(s)
		case "message":
			f.anthropicMessage(s, true)
		case "usage":
			f.anthropicUsage(s, false)
		case "error":
			f.errorObject(s)
		default:
			s.skip()
		}
	}
	t := string(typ)
	if t == "" {
		t = string(event)
	}
	switch t {
	case "ping":
		return kindKeepalive
	case "error":
		f.setError(nil, nil)
		return kindError
	case "message_stop":
		f.marker = true
	case "content_block_start":
		// A tool call starts with its block, which names the tool (as a
		// Chat stream's first tool_calls delta does); a text or thinking
		// block usually starts empty, but may carry its first text (the
		// SDKs keep it; Anthropic-format gateways send it).
		switch string(blockType) {
		case "tool_use", "server_tool_use", "mcp_tool_use":
			return kindToolCall
		case "text":
			if blockCarries {
				return kindContent
			}
		case "thinking":
			if blockCarries {
				return kindReasoning
			}
		case "redacted_thinking":
			// Carries its (encrypted) thinking in the start itself; no
			// delta follows.
			return kindReasoning
		}
	case "content_block_delta":
		if !deltaCarries {
			return kindLifecycle // "text":"" and the like: nothing arrived
		}
		switch string(deltaType) {
		case "text_delta", "citations_delta":
			return kindContent
		case "thinking_delta":
			return kindReasoning
		case "input_json_delta":
			return kindToolCall
		}
	}
	return kindLifecycle
}

// anthropicDelta reads a delta object: its type, and whether its payload
// (text, thinking, partial_json, citation) is non-empty. A delta without
// any of those keys carries what its type says.
func (f *facts) anthropicDelta(s *jscan) (typ []byte, carries bool) {
	if !s.enter('{') {
		s.skip()
		return nil, false
	}
	payload, nonEmpty := false, false
	for s.more('}') {
		switch string(s.key()) {
		case "type":
			typ, _ = s.strValue()
		case "text", "thinking", "partial_json", "citation":
			payload = true
			if s.nonEmpty() {
				nonEmpty = true
			}
		case "stop_reason":
			if r, ok := s.strValue(); ok {
				f.addFinish(r)
			}
		default:
			s.skip()
		}
	}
	return typ, nonEmpty || !payload
}

// anthropicBlock reads a content_block_start's block: its type, and whether
// its text or thinking is non-empty.
func anthropicBlock(s *jscan) (typ []byte, carries bool) {
	if !s.enter('{') {
		s.skip()
		return nil, false
	}
	for s.more('}') {
		switch string(s.key()) {
		case "type":
			typ, _ = s.strValue()
		case "text", "thinking":
			carries = s.nonEmpty() || carries
		default:
			s.skip()
		}
	}
	return typ, carries
}

// objectType reads an object (a Responses output item) and returns its "type".
func objectType(s *jscan) (typ []byte) {
	if !s.enter('{') {
		s.skip()
		return nil
	}
	for s.more('}') {
		if string(s.key()) == "type" {
			typ, _ = s.strValue()
			continue
		}
		s.skip()
	}
	return typ
}

// anthropicMessage reads a message object. In message_start (started) its
// output_tokens is a placeholder (1) before any content: not kept, so a
// stream cut before content does not look like one that produced output.
func (f *facts) anthropicMessage(s *jscan, started bool) {
	if !s.enter('{') {
		s.skip()
		return
	}
	for s.more('}') {
		switch string(s.key()) {
		case "model":
			if m, ok := s.strValue(); ok {
				f.setModel(m)
			}
		case "usage":
			f.anthropicUsage(s, started)
		case "stop_reason":
			if r, ok := s.strValue(); ok {
				f.addFinish(r)
			}
		default:
			s.skip()
		}
	}
}

func (f *facts) anthropicUsage(s *jscan, skipOutput bool) {
	if !s.enter('{') {
		s.skip()
		return
	}
	for s.more('}') {
		switch string(s.key()) {
		case "input_tokens":
			if n, ok := s.int(); ok && n > 0 {
				f.inputTokens, f.hasInput = n, true
			}
		case "output_tokens":
			if skipOutput {
				s.skip()
				continue
			}
			f.outputTokens, f.hasOutput = s.int()
		case "cache_read_input_tokens":
			f.cacheRead, f.hasCacheRead = s.int()
		case "cache_creation_input_tokens":
			f.cacheWrite, f.hasCacheWrite = s.int()
		default:
			s.skip()
		}
	}
}

// gemini reads a GenerateContentResponse of streamGenerateContent?alt=sse.
func (f *facts) gemini(s *jscan) kind {
	if !s.enter('{') {
		s.bad = true
		return kindLifecycle
	}
	k := kindLifecycle
	for s.more('}') {
		switch string(s.key()) {
		case "candidates":
			if !s.enter('[') {
				s.skip()
				continue
			}
			for s.more(']') {
				if c := f.geminiCandidate(s); c > k {
					k = c
				}
			}
		case "usageMetadata":
			if !s.enter('{') {
				s.skip()
				continue
			}
			for s.more('}') {
				switch string(s.key()) {
				case "promptTokenCount":
					f.inputTokens, f.hasInput = s.int()
				case "candidatesTokenCount":
					f.outputTokens, f.hasOutput = s.int()
				case "cachedContentTokenCount":
					f.cacheRead, f.hasCacheRead = s.int()
				default:
					s.skip()
				}
			}
		case "modelVersion":
			if m, ok := s.strValue(); ok {
				f.setModel(m)
			}
		case "error":
			f.errorObject(s)
			if k < kindError {
				k = kindError
			}
		default:
			s.skip()
		}
	}
	return k
}

func (f *facts) geminiCandidate(s *jscan) kind {
	if !s.enter('{') {
		s.skip()
		return kindLifecycle
	}
	k := kindLifecycle
	for s.more('}') {
		switch string(s.key()) {
		case "content":
			if !s.enter('{') {
				s.skip()
				continue
			}
			for s.more('}') {
				if string(s.key()) != "parts" || !s.enter('[') {
					s.skip()
					continue
				}
				for s.more(']') {
					if c := geminiPart(s); c > k {
						k = c
					}
				}
			}
		case "finishReason":
			if r, ok := s.strValue(); ok {
				f.addFinish(r)
				f.marker = true
			}
		default:
			s.skip()
		}
	}
	return k
}

// chatDeltaContent reads a Chat delta's content: a string, or (Mistral) an array
// of parts. A text part is content when its text is non-empty, a thinking
// part (Magistral's reasoning) reasoning when its thinking is; any other
// part with a non-empty string, array or object member is content.
func chatDeltaContent(s *jscan) kind {
	if s.peek() != '[' {
		if s.nonEmpty() {
			return kindContent
		}
		return kindLifecycle
	}
	s.enter('[')
	k := kindLifecycle
	for s.more(']') {
		if !s.enter('{') {
			if s.nonEmpty() {
				k = max(k, kindContent)
			}
			continue
		}
		for s.more('}') {
			switch string(s.key()) {
			case "type":
				s.skip()
			case "thinking":
				if s.nonEmpty() {
					k = max(k, kindReasoning)
				}
			default: // text, image_url, …; not a flag or a number
				switch s.peek() {
				case '"', '[', '{':
					if s.nonEmpty() {
						k = max(k, kindContent)
					}
				default:
					s.skip()
				}
			}
		}
	}
	return k
}

// toolCallsCarry reads a Chat delta's tool_calls (an array of entries) or
// its legacy function_call (one entry) and says whether some entry starts or
// continues a tool call: a non-empty id, name or arguments, at the entry or
// in its function. An entry with only its index or type, or empty strings,
// carries nothing (docs/architecture.md §1: a delta stops the clock when it
// carries content, reasoning or a tool call). Anything but an array or an
// object counts when non-empty, as before.
func toolCallsCarry(s *jscan) bool {
	switch s.peek() {
	case '[':
		s.enter('[')
		carries := false
		for s.more(']') {
			carries = toolCallCarries(s) || carries
		}
		return carries
	case '{':
		return toolCallCarries(s)
	}
	return s.nonEmpty()
}

// toolCallCarries reads one tool-call entry (toolCallsCarry).
func toolCallCarries(s *jscan) bool {
	if !s.enter('{') {
		return s.nonEmpty()
	}
	carries := false
	for s.more('}') {
		switch string(s.key()) {
		case "id", "name", "arguments":
			carries = s.nonEmpty() || carries
		case "function":
			carries = membersCarry(s, "name", "arguments") || carries
		default:
			s.skip()
		}
	}
	return carries
}

// audioCarries reads a Chat delta's audio object: content when it carries
// data or a transcript. The last audio delta of a stream holds only its id
// and expires_at.
func audioCarries(s *jscan) bool { return membersCarry(s, "data", "transcript") }

// membersCarry steps over an object and says whether one of the named
// members is non-empty; a value that is no object counts when non-empty.
func membersCarry(s *jscan, names ...string) bool {
	if !s.enter('{') {
		return s.nonEmpty()
	}
	carries := false
	for s.more('}') {
		k, named := s.key(), false
		for _, n := range names {
			named = named || string(k) == n
		}
		if named {
			carries = s.nonEmpty() || carries
		} else {
			s.skip()
		}
	}
	return carries
}

func geminiPart(s *jscan) kind {
	if !s.enter('{') {
		s.skip()
		return kindLifecycle
	}
	var text, thought, call bool
	for s.more('}') {
		switch string(s.key()) {
		case "text", "inlineData", "executableCode":
			// executableCode: code the model wrote for code execution.
			text = s.nonEmpty() || text
		case "thought":
			thought = s.isTrue()
		case "functionCall", "toolCall": // toolCall: a server-side (built-in) tool the model calls
			call = s.nonEmpty() || call
		default:
			s.skip()
		}
	}
	switch {
	case call:
		return kindToolCall
	case text && thought:
		return kindReasoning
	case text:
		return kindContent
	case thought: // a thought signature alone
		return kindLifecycle
	}
	return kindLifecycle
}

// classifyResponse reads a non-streamed response body for the model, usage
// and finish reasons; what it cannot read it leaves out.
func (f *facts) classifyResponse(ft format, b []byte) {
	s := jscan{b: b}
	switch ft {
	case formatChat:
		f.chat(&s)
	case formatGemini:
		f.gemini(&s)
	case formatAnthropic:
		// {"type":"message","model":…,"stop_reason":…,"usage":{…}} is the
		// message object of message_start.
		f.anthropicMessage(&s, false)
	case formatResponses:
		if status := f.responseObject(&s); len(status) > 0 {
			f.addFinish(status)
		}
	}
}
