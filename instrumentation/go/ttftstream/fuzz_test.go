package ttftstream

import (
	"bytes"
	"strings"
	"testing"
)

// fuzzStream feeds arbitrary bytes, cut into arbitrary reads, through the
// instrumented body: the SDK must read exactly those bytes, nothing panics,
// the span ends once, and the events stay within their bound.
func fuzzStream(f *testing.F, path string, seeds []string) {
	for i, s := range seeds {
		f.Add([]byte(s), uint8(i*7))
		f.Add([]byte(strings.ReplaceAll(s, "\n", "\r\n")), uint8(3))
	}
	f.Fuzz(func(t *testing.T, data []byte, split uint8) {
		r := run(t, call{path: path, steps: []step{{data: string(data)}}, maxRd: int(split % 64)})
		if !bytes.Equal(r.read, data) {
			t.Fatalf("the SDK read %q, want %q", r.read, data)
		}
		if r.span == nil || r.span.ended != 1 {
			t.Fatal("span not ended exactly once")
		}
		if n := len(r.span.chunkKinds()); n > DefaultEventsBeforeContent+3 {
			t.Fatalf("%d events", n)
		}
	})
}

func FuzzChatStream(f *testing.F) {
	fuzzStream(f, "/chat/completions", []string{
		joined(chatTimeline()),
		sse(`{"choices":[{"delta":{"tool_calls":[{"index":0}]}},{"delta":{"reasoning_content":"x"}}]}`, `{"error":{"type":"x"}}`),
		"data: {\"choices\":\ndata: []}\n\n: c\n\ndata: [DONE]\n\n",
	})
}

func FuzzResponsesStream(f *testing.F) {
	fuzzStream(f, "/responses", []string{sse(
		"response.created\x00"+`{"type":"response.created","response":{"model":"gpt-5","status":"in_progress"}}`,
		"response.output_text.delta\x00"+`{"type":"response.output_text.delta","delta":"Hi"}`,
		"response.function_call_arguments.delta\x00"+`{"type":"response.function_call_arguments.delta","delta":"{"}`,
		"error\x00"+`{"type":"error","code":"c","message":"m"}`,
		"response.completed\x00"+`{"type":"response.completed","response":{"status":"completed","usage":{"input_tokens":3,"output_tokens":1,"input_tokens_details":{"cached_tokens":1}}}}`),
	})
}

func FuzzAnthropicStream(f *testing.F) {
	fuzzStream(f, "/messages", []string{sse(
		"message_start\x00"+`{"type":"message_start","message":{"model":"claude","usage":{"input_tokens":3,"cache_read_input_tokens":2}}}`,
		"ping\x00"+`{"type": "ping"}`,
		"content_block_delta\x00"+`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"x"}}`,
		"content_block_delta\x00"+`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}`,
		"message_delta\x00"+`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}}`,
		"error\x00"+`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
		"message_stop\x00"+`{"type":"message_stop"}`),
	})
}

func FuzzGeminiStream(f *testing.F) {
	fuzzStream(f, "beta/models/gemini-2.5-flash:streamGenerateContent", []string{sse(
		`{"candidates":[{"content":{"parts":[{"text":"hm","thought":true},{"functionCall":{"name":"f","args":{"a":[1,{"b":"\""}]}}}],"role":"model"}}]}`,
		`{"candidates":[{"content":{"parts":[{"text":"Hi"}],"role":"model"},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":4,"candidatesTokenCount":2},"modelVersion":"g"}`,
		`{"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}}`),
	})
}
