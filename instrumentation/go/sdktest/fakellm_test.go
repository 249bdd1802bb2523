package sdktest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// op is one step of a scheduled timeline, rendered in each wire format.
type op int

const (
	opRole op = iota
	opContent
	opReasoning
	opTool
	opToolArgs
	opKeepalive
	opFinish
	opFinishTool
	opUsage
	opDone
	opError
	opStall // hold the stream open until the client goes away
)

type at struct {
	ms int
	op op
}

// scenario is one scheduled timeline. The model name in the request picks it.
type scenario struct {
	name     string
	timeline []at
	status   int  // not 200: a JSON error body, no stream
	stream   bool // the client asks for a stream
	// firstContent is when the server sends the first content, reasoning or
	// tool-call delta (0: never).
	firstContent time.Duration
	// timeout for the client's context; abort: cancel once content arrived;
	// cancelAt: cancel the client's context then.
	timeout  time.Duration
	abort    bool
	cancelAt time.Duration
	// headersAt holds the response headers back (0: with the first frame).
	headersAt time.Duration
	// firstToken: ttftstream.WithFirstTokenTimeout; cutAt: when the
	// instrumentation must cut the call (after it started).
	firstToken, cutAt time.Duration
	outcome           string // what the processor must derive
}

var scenarios = []scenario{
	{name: "role_then_content", stream: true, firstContent: 300 * time.Millisecond, outcome: "complete",
		timeline: []at{{40, opRole}, {300, opContent}, {320, opContent}, {340, opContent}, {350, opFinish}, {355, opUsage}, {360, opDone}}},
	{name: "keepalives", stream: true, firstContent: 400 * time.Millisecond, outcome: "complete",
		timeline: []at{{50, opKeepalive}, {150, opKeepalive}, {250, opKeepalive}, {260, opRole}, {330, opKeepalive}, {400, opContent}, {420, opContent}, {430, opFinish}, {435, opDone}}},
	{name: "reasoning_first", stream: true, firstContent: 200 * time.Millisecond, outcome: "complete",
		timeline: []at{{40, opRole}, {200, opReasoning}, {260, opReasoning}, {500, opContent}, {520, opFinish}, {525, opDone}}},
	{name: "tool_call", stream: true, firstContent: 250 * time.Millisecond, outcome: "complete",
		timeline: []at{{40, opRole}, {250, opTool}, {270, opToolArgs}, {300, opFinishTool}, {305, opDone}}},
	{name: "mid_stream_error", stream: true, firstContent: 200 * time.Millisecond, outcome: "error",
		timeline: []at{{40, opRole}, {200, opContent}, {300, opError}}},
	{name: "rate_limited", stream: true, status: http.StatusTooManyRequests, outcome: "error"},
	{name: "stall", stream: true, timeout: 600 * time.Millisecond, outcome: "timeout_first_token",
		timeline: []at{{40, opRole}, {60, opStall}}},
	// The caller's cancel before any content: not a timeout.
	{name: "stall_canceled", stream: true, cancelAt: 300 * time.Millisecond, outcome: "closed",
		timeline: []at{{40, opRole}, {60, opStall}}},
	// ttftstream's own first-token limit.
	{name: "stall_first_token_timeout", stream: true, firstToken: 500 * time.Millisecond, cutAt: 500 * time.Millisecond, outcome: "timeout_first_token",
		timeline: []at{{40, opRole}, {60, opKeepalive}, {80, opStall}}},
	{name: "stall_before_headers", stream: true, headersAt: 3 * time.Second, firstToken: 400 * time.Millisecond, cutAt: 400 * time.Millisecond, outcome: "timeout_first_token",
		timeline: []at{{3040, opRole}, {3100, opContent}, {3110, opFinish}, {3120, opDone}}},
	// The limit ends at the first content; the stream then runs past it.
	{name: "first_token_limit_not_reached", stream: true, firstContent: 300 * time.Millisecond, firstToken: 400 * time.Millisecond, outcome: "complete",
		timeline: []at{{40, opRole}, {300, opContent}, {450, opContent}, {600, opContent}, {610, opFinish}, {615, opUsage}, {620, opDone}}},
	{name: "closed_without_marker", stream: true, firstContent: 150 * time.Millisecond, outcome: "closed",
		timeline: []at{{40, opRole}, {150, opContent}, {200, opContent}}},
	{name: "caller_abort", stream: true, firstContent: 150 * time.Millisecond, abort: true, outcome: "closed",
		timeline: []at{{40, opRole}, {150, opContent}, {1500, opContent}, {1510, opFinish}, {1520, opDone}}},
	// More keep-alives before content than an SDK limited to 16 events a
	// span keeps (TestEventLimitWithTheSDK).
	{name: "many_keepalives", stream: true, firstContent: 350 * time.Millisecond, outcome: "complete", timeline: manyKeepalives()},
	{name: "one_shot", stream: false, outcome: "complete"}, // not streamed (a model name containing "stream" would make the processor think it was),
}

// manyKeepalives is 30 keep-alives 10 ms apart, then the role, the content
// at 350 ms and the end.
func manyKeepalives() []at {
	var tl []at
	for i := 1; i <= 30; i++ {
		tl = append(tl, at{10 * i, opKeepalive})
	}
	return append(tl, at{310, opRole}, at{350, opContent}, at{370, opContent}, at{380, opFinish}, at{385, opDone})
}

func scenarioByModel(model string) (scenario, bool) {
	for _, s := range scenarios {
		if "scn-"+s.name == model {
			return s, true
		}
	}
	return scenario{}, false
}

// wire renders ops in one API's stream format.
type wire interface {
	frames(o op, model string) string
	nonStreamed(model string) string
	contentType() string
}

// fakeLLM serves /v1/chat/completions (OpenAI), /v1/responses (OpenAI
// Responses) and /v1/messages (Anthropic) on loopback, each request
// following its scenario's timeline from the moment it arrived.
func fakeLLM(t testing.TB) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived := time.Now()
		b, _ := io.ReadAll(r.Body)
		var req struct {
			Model  string `json:"model"`
			Stream bool   `json:"stream"`
		}
		_ = json.Unmarshal(b, &req)
		sc, ok := scenarioByModel(req.Model)
		if !ok {
			http.Error(w, `{"error":{"message":"unknown model"}}`, http.StatusNotFound)
			return
		}
		var wf wire
		switch {
		case strings.HasSuffix(r.URL.Path, "/chat/completions"):
			wf = &chatWire{}
		case strings.HasSuffix(r.URL.Path, "/responses"):
			wf = &responsesWire{}
		case strings.HasSuffix(r.URL.Path, "/messages"):
			wf = &anthropicWire{}
		default:
			http.NotFound(w, r)
			return
		}
		if sc.status != 0 {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(sc.status)
			fmt.Fprint(w, `{"error":{"message":"rate limited","type":"rate_limit_error"},"type":"error"}`)
			return
		}
		if !req.Stream {
			time.Sleep(200 * time.Millisecond)
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, wf.nonStreamed(req.Model))
			return
		}
		w.Header().Set("Content-Type", wf.contentType())
		w.Header().Set("Cache-Control", "no-cache")
		fl := w.(http.Flusher)
		if sc.headersAt > 0 {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(time.Until(arrived.Add(sc.headersAt))):
			}
			w.WriteHeader(http.StatusOK)
			fl.Flush()
		}
		for _, step := range sc.timeline {
			wait := time.Until(arrived.Add(time.Duration(step.ms) * time.Millisecond))
			select {
			case <-r.Context().Done():
				return
			case <-time.After(wait):
			}
			if step.op == opStall {
				select {
				case <-r.Context().Done():
				case <-time.After(10 * time.Second):
				}
				return
			}
			if _, err := io.WriteString(w, wf.frames(step.op, req.Model)); err != nil {
				return
			}
			fl.Flush()
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func data(v string) string { return "data: " + v + "\n\n" }

func event(name, v string) string { return "event: " + name + "\ndata: " + v + "\n\n" }

type chatWire struct{}

func (chatWire) contentType() string { return "text/event-stream" }

func (chatWire) frames(o op, model string) string {
	chunk := func(delta, finish string) string {
		return data(fmt.Sprintf(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1764547200,"model":%q,"choices":[{"index":0,"delta":%s,"logprobs":null,"finish_reason":%s}]}`, model, delta, finish))
	}
	switch o {
	case opRole:
		return chunk(`{"role":"assistant","content":""}`, "null")
	case opContent:
		return chunk(`{"content":"Hello"}`, "null")
	case opReasoning:
		return chunk(`{"reasoning_content":"Thinking"}`, "null")
	case opTool:
		return chunk(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]}`, "null")
	case opToolArgs:
		return chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":\"Paris\"}"}}]}`, "null")
	case opKeepalive:
		return ": keep-alive\n\n"
	case opFinish:
		return chunk(`{}`, `"stop"`)
	case opFinishTool:
		return chunk(`{}`, `"tool_calls"`)
	case opUsage:
		return data(fmt.Sprintf(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1764547200,"model":%q,"choices":[],"usage":{"prompt_tokens":1200,"completion_tokens":3,"total_tokens":1203}}`, model))
	case opDone:
		return data("[DONE]")
	case opError:
		return data(`{"error":{"message":"upstream overloaded","type":"server_error","code":"overloaded"}}`)
	}
	return ""
}

func (chatWire) nonStreamed(model string) string {
	return fmt.Sprintf(`{"id":"chatcmpl-2","object":"chat.completion","created":1764547200,"model":%q,"choices":[{"index":0,"message":{"role":"assistant","content":"Hello"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1200,"completion_tokens":1,"total_tokens":1201}}`, model)
}

type anthropicWire struct {
	started bool
	block   int
	open    string // "" | text | thinking | tool_use
}

func (anthropicWire) contentType() string { return "text/event-stream; charset=utf-8" }

func (a *anthropicWire) openBlock(kind string) string {
	var b strings.Builder
	if a.open == kind {
		return ""
	}
	if a.open != "" {
		b.WriteString(event("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, a.block)))
		a.block++
	}
	a.open = kind
	switch kind {
	case "text":
		b.WriteString(event("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"text","text":""}}`, a.block)))
	case "thinking":
		b.WriteString(event("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"thinking","thinking":"","signature":""}}`, a.block)))
	case "tool_use":
		b.WriteString(event("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{}}}`, a.block)))
	}
	return b.String()
}

func (a *anthropicWire) frames(o op, model string) string {
	delta := func(d string) string {
		return event("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":%s}`, a.block, d))
	}
	switch o {
	case opRole:
		a.started = true
		return event("message_start", fmt.Sprintf(`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":%q,"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1200,"cache_read_input_tokens":0,"cache_creation_input_tokens":0,"output_tokens":1}}}`, model))
	case opContent:
		return a.openBlock("text") + delta(`{"type":"text_delta","text":"Hello"}`)
	case opReasoning:
		return a.openBlock("thinking") + delta(`{"type":"thinking_delta","thinking":"Thinking"}`)
	case opTool:
		return a.openBlock("tool_use") + delta(`{"type":"input_json_delta","partial_json":""}`)
	case opToolArgs:
		return delta(`{"type":"input_json_delta","partial_json":"{\"city\":\"Paris\"}"}`)
	case opKeepalive:
		return event("ping", `{"type": "ping"}`)
	case opFinish, opFinishTool:
		reason := "end_turn"
		if o == opFinishTool {
			reason = "tool_use"
		}
		s := ""
		if a.open != "" {
			s = event("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, a.block))
			a.open = ""
		}
		return s + event("message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%q,"stop_sequence":null},"usage":{"output_tokens":3}}`, reason))
	case opUsage:
		return ""
	case opDone:
		return event("message_stop", `{"type":"message_stop"}`)
	case opError:
		return event("error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
	}
	return ""
}

func (anthropicWire) nonStreamed(model string) string {
	return fmt.Sprintf(`{"id":"msg_2","type":"message","role":"assistant","model":%q,"content":[{"type":"text","text":"Hello"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":1200,"output_tokens":1}}`, model)
}

type responsesWire struct {
	seq  int
	item bool
}

func (responsesWire) contentType() string { return "text/event-stream; charset=utf-8" }

func (r *responsesWire) ev(typ, fields string) string {
	r.seq++
	if fields != "" {
		fields = "," + fields
	}
	return event(typ, fmt.Sprintf(`{"type":%q,"sequence_number":%d%s}`, typ, r.seq, fields))
}

func (r *responsesWire) response(model, status string) string {
	usage := "null" // as the API sends it until the response completes
	if status == "completed" {
		usage = `{"input_tokens":1200,"output_tokens":3,"total_tokens":1203,"input_tokens_details":{"cached_tokens":0},"output_tokens_details":{"reasoning_tokens":0}}`
	}
	return fmt.Sprintf(`"response":{"id":"resp_1","object":"response","created_at":1764547200,"model":%q,"status":%q,"output":[],"usage":%s}`, model, status, usage)
}

func (r *responsesWire) frames(o op, model string) string {
	switch o {
	case opRole:
		return r.ev("response.created", r.response(model, "in_progress")) + r.ev("response.in_progress", r.response(model, "in_progress"))
	case opContent:
		s := ""
		if !r.item {
			r.item = true
			s = r.ev("response.output_item.added", `"output_index":0,"item":{"id":"msg_1","type":"message","status":"in_progress","role":"assistant","content":[]}`) +
				r.ev("response.content_part.added", `"item_id":"msg_1","output_index":0,"content_index":0,"part":{"type":"output_text","text":"","annotations":[]}`)
		}
		return s + r.ev("response.output_text.delta", `"item_id":"msg_1","output_index":0,"content_index":0,"delta":"Hello"`)
	case opReasoning:
		return r.ev("response.reasoning_summary_text.delta", `"item_id":"rs_1","output_index":0,"summary_index":0,"delta":"Thinking"`)
	case opTool:
		return r.ev("response.output_item.added", `"output_index":0,"item":{"id":"fc_1","type":"function_call","status":"in_progress","call_id":"call_1","name":"get_weather","arguments":""}`) +
			r.ev("response.function_call_arguments.delta", `"item_id":"fc_1","output_index":0,"delta":"{"`)
	case opToolArgs:
		return r.ev("response.function_call_arguments.delta", `"item_id":"fc_1","output_index":0,"delta":"\"city\":\"Paris\"}"`)
	case opKeepalive:
		return ": keep-alive\n\n"
	case opFinish, opFinishTool:
		return r.ev("response.completed", r.response(model, "completed"))
	case opError:
		return r.ev("error", `"code":"server_error","message":"upstream overloaded","param":null`)
	}
	return ""
}

func (responsesWire) nonStreamed(model string) string {
	return fmt.Sprintf(`{"id":"resp_2","object":"response","created_at":1764547200,"model":%q,"status":"completed","output":[{"id":"msg_2","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Hello","annotations":[]}]}],"usage":{"input_tokens":1200,"output_tokens":1,"total_tokens":1201}}`, model)
}
